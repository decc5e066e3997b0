# Copyright 2026 The pcloud-plugin Authors
#
#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""The Pcloud API in Blazar's v1 app, served over HTTP on loopback.

keystonemiddleware (its AuthTokenFixture) answers for the tokens of a few
users: a cloud admin, a member and a reader of project alice, a member of
project bob, and a user of alice's project with no role of ours. Nova is
the fake of tests/unit/pcloud (honest about aggregates, services and
hypervisors), Placement its fake too; the ledger is an empty SQLite
file; neither Blazar's manager nor its database takes part.
"""

import logging
import threading
from wsgiref import simple_server

from blazar.api.v1 import app as blazar_app
import fixtures
from keystoneauth1 import fixture as ks_fixture
from keystonemiddleware import fixture as ksm_fixture
import requests

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.blazar.api import policy
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.pcloud import fake_nova
from pcloud_plugin.tests.unit.pcloud import fake_placement

ENTRY_POINT = 'pcloud.host'
KEYSTONE = 'http://127.0.0.1/identity'

ADMIN_PROJECT = 'ad000000000000000000000000000001'
ALICE = 'a1000000000000000000000000000001'
BOB = 'b0b00000000000000000000000000001'

# token id -> (user id, project id, roles)
USERS = {
    'admin': ('u-admin', ADMIN_PROJECT, ('admin', 'member', 'reader')),
    'alice-member': ('u-alice-member', ALICE, ('member', 'reader')),
    'alice-reader': ('u-alice-reader', ALICE, ('reader',)),
    'alice-norole': ('u-alice-norole', ALICE, ('creator',)),
    'bob-member': ('u-bob-member', BOB, ('member', 'reader')),
}
POOL_HOSTS = ('cn1', 'cn2', 'cn3')
SPARE_HOST = 'cn4'


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class PcloudAPITestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='blazar', default_config_files=[])
        self.conf.set_override('plugins', [ENTRY_POINT], group='manager')
        self.conf.set_override('www_authenticate_uri', KEYSTONE,
                               group='keystone_authtoken')
        self.conf.set_override('allocate_retry_interval', 0.0, 'pcloud')
        self.conf.set_override('allocate_settle_timeout', 0.05, 'pcloud')

        auth = self.useFixture(ksm_fixture.AuthTokenFixture())
        for token_id, (user, project, roles) in USERS.items():
            token = ks_fixture.V3Token(user_id=user, project_id=project)
            for role in roles:
                token.add_role(name=role)
            token.add_service('identity').add_standard_endpoints(
                public=KEYSTONE, internal=KEYSTONE, admin=KEYSTONE,
                region='RegionOne')
            auth.add_token(token, token_id=token_id)
        # Blazar's request log middleware answers nothing at all unless
        # its logger takes INFO.
        self.useFixture(fixtures.FakeLogger(
            name='blazar.api.v1.request_log', level=logging.INFO))

        # blazar-api reads the ledger: who holds pclouds and hosts.
        self.useFixture(base.SQLiteLedgerFile(self.conf))
        self.nova = fake_nova.FakeNova()
        self.placement = fake_placement.FakePlacement()
        for host in POOL_HOSTS + (SPARE_HOST,):
            # Hypervisor names differ from service hosts, as with libvirt.
            self.nova.add_compute(host, node=host + '.example.com')
            self.placement.add_provider(host + '.example.com')
        self.useFixture(fixtures.MockPatchObject(
            nova_client, 'get_client', return_value=self.nova))
        self.useFixture(fixtures.MockPatchObject(
            placement_client, 'get_adapter', return_value=self.placement))
        for module in (handlers, policy):
            module.reset()
            self.addCleanup(module.reset)

        server = simple_server.make_server(
            '127.0.0.1', 0, blazar_app.make_app(),
            handler_class=_QuietHandler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d/v1' % server.server_port
        self.http = requests.Session()
        self.addCleanup(self.http.close)

    def call(self, token, method, path, json=None, expect=None, **kwargs):
        """One request as token's user; checks the status if expect."""
        headers = dict(kwargs.pop('headers', {}), **{'X-Auth-Token': token})
        resp = self.http.request(method, self.url + path, json=json,
                                 headers=headers, timeout=30, **kwargs)
        if expect is not None:
            self.assertEqual(expect, resp.status_code,
                             '%s %s as %s: %s' % (method, path, token,
                                                  resp.text))
        return resp

    # Steps most tests start with.

    def make_pool(self, flavor_id='big', hosts=POOL_HOSTS, units=1):
        self.call('admin', 'POST', '/pcloud-host-flavors',
                  {'id': flavor_id, 'description': 'a big host',
                   'units': units}, expect=201)
        for host in hosts:
            self.call('admin', 'POST', '/pcloud-host-flavors/%s/hosts'
                      % flavor_id, {'host': host}, expect=201)

    def make_pcloud(self, token='alice-member', name='mine'):
        return self.call(token, 'POST', '/pclouds', {'name': name},
                         expect=201).json()['pcloud']['id']

    def allocate(self, pcloud_id, name='h1', token='alice-member',
                 flavor_id='big'):
        return self.call(token, 'POST', '/pclouds/%s/hosts' % pcloud_id,
                         {'name': name, 'flavor_id': flavor_id},
                         expect=201).json()['host']
