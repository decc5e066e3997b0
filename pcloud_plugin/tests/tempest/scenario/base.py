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

"""What the scenarios share: three projects, their clients, boots, waits."""

import time

from tempest.common import waiters
from tempest import config
from tempest.lib.common import api_microversion_fixture
from tempest.lib.common import api_version_utils
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import exceptions as lib_exc
from tempest import test

from pcloud_plugin.tests.tempest import clients

CONF = config.CONF
# 2.37: servers with no network ('networks': 'none'), so no Neutron;
# 2.53: compute services by uuid; 2.74: an admin's boot asking for a host,
# which the scheduler's filters still judge.
COMPUTE_MICROVERSION = '2.74'
# Nova's fault message when the scheduler finds no host.
NO_VALID_HOST = 'No valid host'


class ScenarioTest(test.BaseTestCase):
    """The member (primary), another project (alt) and an admin."""

    credentials = ['primary', 'alt', 'admin']

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.service_available.pcloud:
            raise cls.skipException('pcloud-plugin is not deployed '
                                    '([service_available] pcloud)')
        if not CONF.service_available.nova:
            raise cls.skipException('Nova is not available')
        api_version_utils.check_skip_with_microversion(
            COMPUTE_MICROVERSION, 'latest', CONF.compute.min_microversion,
            CONF.compute.max_microversion)

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.servers = cls.os_primary.servers_client
        cls.alt_servers = cls.os_alt.servers_client
        cls.admin_servers = cls.os_admin.servers_client
        cls.pcloud = clients.client_of(cls.os_primary)
        cls.admin_pcloud = clients.client_of(cls.os_admin)

    def setUp(self):
        super().setUp()
        # Added first, so the test's own clean-ups still run with it.
        self.useFixture(api_microversion_fixture.APIMicroversionFixture(
            compute_microversion=COMPUTE_MICROVERSION))

    def wait_for(self, what, read, done, timeout):
        """``read()`` again until ``done`` holds for it; return it."""
        deadline = time.monotonic() + timeout
        while True:
            found = read()
            if done(found):
                return found
            if time.monotonic() > deadline:
                raise lib_exc.TimeoutException(
                    '%s: still %s after %d s' % (what, found, timeout))
            time.sleep(CONF.compute.build_interval)

    def boot(self, servers_client, flavor, **kwargs):
        """A server of no network, deleted at the end of the test.

        Returned once the scheduler has decided: ACTIVE or ERROR.
        """
        server = servers_client.create_server(
            name=data_utils.rand_name(prefix='pcloud-tempest',
                                      name='server'),
            imageRef=CONF.compute.image_ref, flavorRef=flavor,
            networks='none', **kwargs)['server']
        self.addCleanup(self._delete_server, servers_client, server['id'])
        return self.wait_for(
            'server %s to be built' % server['id'],
            lambda: servers_client.show_server(server['id'])['server'],
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            CONF.compute.build_timeout)

    @staticmethod
    def _delete_server(servers_client, server_id):
        test_utils.call_and_ignore_notfound_exc(servers_client.delete_server,
                                                server_id)
        waiters.wait_for_server_termination(servers_client, server_id,
                                            ignore_error=True)

    def host_of(self, server):
        """The compute host of a server (an admin's view), or None."""
        return self.admin_servers.show_server(server['id'])['server'][
            'OS-EXT-SRV-ATTR:host']

    def assert_on(self, server, hosts):
        """The server is ACTIVE on one of ``hosts``."""
        self.assertEqual('ACTIVE', server['status'],
                         'server %s: %s' % (server['id'],
                                            server.get('fault')))
        self.assertIn(self.host_of(server), hosts)

    def assert_no_valid_host(self, server):
        """The scheduler refused the server a host: ERROR, saying so."""
        self.assertEqual('ERROR', server['status'],
                         'server %s is %s on %s, not refused'
                         % (server['id'], server['status'],
                            self.host_of(server)))
        fault = server.get('fault') or {}
        self.assertIn(NO_VALID_HOST, fault.get('message', ''))
