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
"""The Pcloud API through Blazar's v1 app: policy, validation, states.

See pcloud_api_base for the users and the cloud behind the API.
"""

import json
import re
from urllib import parse

import fixtures
import hypothesis
from hypothesis import strategies as st
from keystoneauth1 import exceptions as ks_exc
import testtools

from pcloud_plugin.blazar.api import v1
from pcloud_plugin.clients import keystone as keystone_client
from pcloud_plugin import policies
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import pcloud_api_base as api_base
from pcloud_plugin.tests.unit.pcloud import fake_keystone

ALICE = api_base.ALICE
BOB = api_base.BOB
CAROL = 'ca000000000000000000000000000001'
# What Keystone knows: (id, name[, domain]); two projects named "twin".
PROJECTS = ((ALICE, 'alice'), (BOB, 'bob'), (CAROL, 'carol'),
            ('d0000000000000000000000000000001', 'twin'),
            ('d0000000000000000000000000000002', 'twin', 'd2'),
            ('e0000000000000000000000000000001', 'Ops team (été)'))


class RoutesTest(testtools.TestCase):

    def test_every_route_is_documented_by_a_policy(self):
        documented = {(op['method'], op['path'])
                      for rule in policies.list_rules()
                      for op in getattr(rule, 'operations', ())}
        for method, rule, _, _, _, _ in v1._routes:
            path = '/v1' + re.sub(r'<(\w+)>', r'{\1}', rule)
            self.assertIn((method, path), documented)


class APITestCase(api_base.PcloudAPITestCase):
    """With a fake Keystone (PROJECTS), where the Pcloud service resolves

    the projects named in its tenants calls.
    """

    def setUp(self):
        super().setUp()
        self.keystone = fake_keystone.FakeKeystone(PROJECTS)
        self.useFixture(fixtures.MockPatchObject(
            keystone_client, 'get_adapter', return_value=self.keystone))


class _OnePcloud(APITestCase):
    """alice's pcloud (``path``), with a host allocated."""

    def setUp(self):
        super().setUp()
        self.make_pool()
        self.pcloud = self.make_pcloud()
        self.allocate(self.pcloud)
        self.path = '/pclouds/%s' % self.pcloud


class PolicyTest(_OnePcloud):
    """Each rule lets in whom it should and no one else."""

    def check(self, method, path, allowed, denied, json=None,
              allowed_status=None, denied_status=403):
        """Denied users get denied_status; allowed ones anything but."""
        for token in denied:
            resp = self.call(token, method, path, json, expect=denied_status)
            if denied_status == 404:
                # As if it did not exist: nothing says whose it is.
                self.assertEqual('PcloudNotFound',
                                 resp.json()['error_name'])
        for token in allowed:
            resp = self.call(token, method, path, json)
            if allowed_status is not None:
                self.assertEqual(allowed_status, resp.status_code,
                                 '%s %s as %s: %s' % (method, path, token,
                                                      resp.text))
            else:
                self.assertNotIn(resp.status_code, (401, 403, 404),
                                 resp.text)

    def test_boot_checks_are_for_any_member_of_their_own_project(self):
        self.check('GET', '/pcloud-boot-check?pcloud=%s' % self.pcloud,
                   ['admin', 'alice-member', 'bob-member'],
                   ['alice-reader', 'alice-norole'], allowed_status=200)
        # bob, not authorized on alice's pcloud, learns nothing of it.
        found = self.call('bob-member', 'GET', '/pcloud-boot-check?pcloud=%s'
                          % self.pcloud).json()['boot_check']
        self.assertEqual(['no_such_pcloud'],
                         [r['reason'] for r in found['refused']])
        self.assertNotIn(ALICE, str(found))

    def test_availability_is_for_any_member(self):
        path = '/pcloud-availability/hosts?host_flavor=big&hours=2'
        self.check('GET', path, ['admin', 'alice-member', 'bob-member'],
                   ['alice-reader', 'alice-norole'], allowed_status=200)
        # Counts only, whoever asks.
        found = self.call('bob-member', 'GET', path,
                          expect=200).json()['availability']
        self.assertEqual({'host_flavor', 'start', 'step_minutes', 'hosts',
                          'free'}, set(found))
        base.override_policy(self, {'pcloud:availability:hosts':
                                    'role:admin'})
        self.check('GET', path, ['admin'], ['alice-member', 'bob-member'],
                   allowed_status=200)
        slots = ('/pcloud-availability/instances?vcpus=1&memory_mb=64'
                 '&disk_gb=1&hours=2')
        self.check('GET', slots, ['admin', 'alice-member', 'bob-member'],
                   ['alice-reader', 'alice-norole'], allowed_status=200)
        self.assertEqual({'start', 'step_minutes', 'free'}, set(
            self.call('bob-member', 'GET', slots,
                      expect=200).json()['availability']))

    def test_host_flavor_reads_are_for_any_reader(self):
        self.check('GET', '/pcloud-host-flavors',
                   ['admin', 'alice-reader', 'bob-member'],
                   ['alice-norole'], allowed_status=200)
        self.check('GET', '/pcloud-host-flavors/big',
                   ['admin', 'alice-reader', 'bob-member'],
                   ['alice-norole'], allowed_status=200)

    def test_only_admins_see_pools(self):
        user = self.call('alice-reader', 'GET', '/pcloud-host-flavors/big',
                         expect=200).json()['host_flavor']
        self.assertEqual({'id': 'big', 'description': 'a big host',
                          'units': 1, 'free_hosts': 2}, user)
        admin = self.call('admin', 'GET', '/pcloud-host-flavors/big',
                          expect=200).json()['host_flavor']
        self.assertEqual(['cn1', 'cn2', 'cn3'],
                         [h['host'] for h in admin['hosts']])
        self.assertEqual([self.pcloud], [h['pcloud_id'] for h in
                                         admin['hosts'] if h['pcloud_id']])
        self.check('GET', '/pcloud-host-flavors/big/hosts', ['admin'],
                   ['alice-member', 'alice-reader', 'bob-member',
                    'alice-norole'], allowed_status=200)

    def test_host_flavor_writes_are_for_admins(self):
        users = ['alice-member', 'alice-reader', 'bob-member',
                 'alice-norole']
        self.check('POST', '/pcloud-host-flavors', ['admin'], users,
                   json={'id': 'small', 'units': 1}, allowed_status=201)
        self.check('DELETE', '/pcloud-host-flavors/small', ['admin'], users,
                   allowed_status=204)
        self.check('POST', '/pcloud-host-flavors/big/hosts', ['admin'],
                   users, json={'host': api_base.SPARE_HOST},
                   allowed_status=201)
        self.check('DELETE', '/pcloud-host-flavors/big/hosts/%s'
                   % api_base.SPARE_HOST, ['admin'], users,
                   allowed_status=204)

    def test_pcloud_create(self):
        self.check('POST', '/pclouds', ['alice-member', 'bob-member',
                                        'admin'],
                   ['alice-reader', 'alice-norole'], json={'name': 'x'},
                   allowed_status=201)

    def test_pcloud_list_shows_own_project_or_all_to_admins(self):
        bobs = self.make_pcloud('bob-member', 'bobs')

        def listed(token, **params):
            return sorted(p['id'] for p in self.call(
                token, 'GET', '/pclouds', params=params,
                expect=200).json()['pclouds'])

        self.assertEqual([self.pcloud], listed('alice-reader'))
        self.assertEqual([bobs], listed('bob-member'))
        self.assertEqual(sorted([self.pcloud, bobs]), listed('admin'))
        self.assertEqual([bobs], listed('admin', project_id=BOB))
        self.assertEqual([], listed('alice-member', project_id=BOB))
        self.call('alice-norole', 'GET', '/pclouds', expect=403)

    def test_pcloud_reads(self):
        for path in (self.path, self.path + '/hosts',
                     self.path + '/hosts/h1', self.path + '/tenants',
                     self.path + '/allocation-ratios'):
            self.check('GET', path, ['admin', 'alice-member',
                                     'alice-reader'],
                       ['alice-norole'], allowed_status=200)
            self.check('GET', path, [], ['bob-member'], denied_status=404)

    def test_pcloud_writes(self):
        readers = ['alice-reader', 'alice-norole']
        cases = [
            ('PUT', self.path + '/hosts/h1', {'state': 'enabled'}, 200),
            ('PATCH', self.path + '/hosts/h1', {'state': 'disabled'}, 200),
            ('POST', self.path + '/hosts', {'name': 'h2',
                                            'flavor_id': 'big'}, 201),
            ('DELETE', self.path + '/hosts/h2', None, 204),
            # Not bob: a project authorized on it sees it (403, not 404).
            ('POST', self.path + '/tenants', {'tenant_id': CAROL}, 201),
            ('DELETE', self.path + '/tenants/%s' % CAROL, None, 204),
            ('PUT', self.path + '/allocation-ratios',
             {'cpu_allocation_ratio': 4.0}, 200),
            ('PATCH', self.path + '/allocation-ratios',
             {'ram_allocation_ratio': 1.5}, 200),
        ]
        for method, path, body, status in cases:
            self.check(method, path, [], readers, json=body)
            self.check(method, path, [], ['bob-member'], json=body,
                       denied_status=404)
            self.check(method, path, ['alice-member'], [], json=body,
                       allowed_status=status)
        self.check('DELETE', self.path, [], readers)
        self.check('DELETE', self.path, [], ['bob-member'],
                   denied_status=404)

    def test_admins_manage_every_pcloud(self):
        self.call('admin', 'PUT', self.path + '/hosts/h1',
                  {'state': 'enabled'}, expect=200)
        self.call('admin', 'POST', self.path + '/tenants',
                  {'tenant_id': BOB}, expect=201)
        self.call('admin', 'PUT', self.path + '/hosts/h1',
                  {'state': 'disabled'}, expect=200)
        self.call('admin', 'DELETE', self.path + '/hosts/h1', expect=204)
        self.call('admin', 'DELETE', self.path, expect=204)
        self.call('alice-member', 'GET', self.path, expect=404)

    def test_overridden_rule_is_enforced(self):
        """An operator's policy file changes our rules."""
        base.override_policy(self, {
            'pcloud:host_flavor:list': 'role:admin',
            'pcloud:pcloud:get': 'role:member and project_id:%(project_id)s'})
        self.call('alice-reader', 'GET', '/pcloud-host-flavors', expect=403)
        self.call('admin', 'GET', '/pcloud-host-flavors', expect=200)
        self.call('alice-reader', 'GET', self.path, expect=403)
        self.call('alice-member', 'GET', self.path, expect=200)
        # Even admins, now: the rule no longer names them.
        self.call('admin', 'GET', self.path, expect=404)


class ValidationTest(APITestCase):
    """Bad input is a 400 naming the field (or a 415), never a 500."""

    def setUp(self):
        super().setUp()
        self.make_pool()
        self.pcloud = self.make_pcloud()
        self.path = '/pclouds/%s' % self.pcloud

    def assertRefused(self, resp, field=None, status=400):
        self.assertEqual(status, resp.status_code, resp.text)
        error = resp.json()
        self.assertEqual(status, error['error_code'])
        if field is not None:
            self.assertIn(field, error['error_message'])
        return error

    def post(self, path, data, content_type='application/json',
             token='admin'):
        return self.call(token, 'POST', path, data=data,
                         headers={'Content-Type': content_type})

    def test_malformed_json(self):
        for data in (b'{', b'{"id": "x",}', b'\xff\xfe', b'[' * 100000,
                     b'nul', b'{"units": 1e99999}'):
            resp = self.post('/pcloud-host-flavors', data)
            self.assertIn(resp.status_code, (400,), data[:20])
            self.assertEqual(400, resp.json()['error_code'])

    def test_wrong_or_missing_content_type(self):
        body = json.dumps({'id': 'x', 'units': 1})
        for content_type in ('text/plain', 'application/x-www-form-'
                             'urlencoded', 'multipart/form-data', ''):
            self.assertRefused(
                self.post('/pcloud-host-flavors', body, content_type),
                status=415)

    def test_empty_body(self):
        self.assertRefused(self.post('/pcloud-host-flavors', b''), 'body')

    def test_body_not_an_object(self):
        for body in ([], 'x', 3, None):
            self.assertRefused(self.call('admin', 'POST',
                                         '/pcloud-host-flavors', body),
                               'body')

    def test_unknown_field(self):
        error = self.assertRefused(self.call(
            'admin', 'POST', '/pcloud-host-flavors',
            {'id': 'x', 'units': 1, 'colour': 'red'}), 'colour')
        self.assertEqual('SchemaViolation', error['error_name'])

    def test_missing_field(self):
        self.assertRefused(self.call('admin', 'POST',
                                     '/pcloud-host-flavors',
                                     {'id': 'x'}), 'units')
        self.assertRefused(self.call('alice-member', 'POST',
                                     self.path + '/hosts',
                                     {'name': 'h1'}), 'flavor_id')

    def test_wrong_types_and_values(self):
        cases = [
            ('/pcloud-host-flavors', {'id': 'x', 'units': '1'}, 'units'),
            ('/pcloud-host-flavors', {'id': 'x', 'units': -1}, 'units'),
            ('/pcloud-host-flavors', {'id': 'x', 'units': True}, 'units'),
            ('/pcloud-host-flavors', {'id': 'x y', 'units': 1}, 'id'),
            ('/pcloud-host-flavors', {'id': 'x\n', 'units': 1}, 'id'),
            ('/pcloud-host-flavors', {'id': 'x', 'units': 1,
                                      'description': 'd' * 256},
             'description'),
            ('/pcloud-host-flavors/big/hosts', {'host': 'a/b'}, 'host'),
            ('/pclouds', {'name': ''}, 'name'),
            ('/pclouds', {'name': '   '}, 'name'),
            ('/pclouds', {'name': 7}, 'name'),
            # Nova's aggregate names are utf8mb3 on MySQL: 4 bytes a 502.
            ('/pclouds', {'name': 'pc \U0001F600'}, 'name'),
            (self.path + '/hosts', {'name': '-x', 'flavor_id': 'big'},
             'name'),
            # A project's id or name, as Keystone's: 1 to 64 characters.
            (self.path + '/tenants', {'tenant_id': ''}, 'tenant_id'),
            (self.path + '/tenants', {'tenant_id': 'x' * 65}, 'tenant_id'),
            (self.path + '/tenants', {'tenant_id': 7}, 'tenant_id'),
            (self.path + '/tenants', {'tenant_id': 'pc \U0001F600'},
             'tenant_id'),
        ]
        for path, body, field in cases:
            self.assertRefused(self.call('admin', 'POST', path, body), field)

    def test_host_state_and_ratios(self):
        self.call('alice-member', 'POST', self.path + '/hosts',
                  {'name': 'h1', 'flavor_id': 'big'}, expect=201)
        for body in ({'state': 'on'}, {}, {'state': 'enabled', 'x': 1}):
            self.assertRefused(self.call('alice-member', 'PUT',
                                         self.path + '/hosts/h1', body))
        for body, field in (({}, 'body'),
                            ({'cpu_allocation_ratio': 0},
                             'cpu_allocation_ratio'),
                            ({'ram_allocation_ratio': 'x'},
                             'ram_allocation_ratio'),
                            ({'cpu_allocation_ratio': -1.0,
                              'ram_allocation_ratio': None},
                             'cpu_allocation_ratio')):
            self.assertRefused(self.call(
                'alice-member', 'PUT', self.path + '/allocation-ratios',
                body), field)

    def test_queries(self):
        self.assertRefused(self.call('admin', 'GET', '/pcloud-host-flavors',
                                     params={'limit': '3'}), 'limit')
        self.assertRefused(self.call('admin', 'GET', '/pclouds',
                                     params={'project_id': 'a b'}),
                           'project_id')
        self.assertRefused(self.call('admin', 'GET',
                                     '/pclouds?project_id=a&project_id=b'),
                           'project_id')
        self.assertRefused(self.call('alice-member', 'GET',
                                     self.path + '/hosts',
                                     params={'state': 'off'}), 'state')

    def test_bad_ids_in_paths(self):
        self.assertRefused(self.call('admin', 'GET', '/pclouds/not-a-uuid'),
                           'pcloud_id')
        self.assertRefused(self.call('admin', 'GET',
                                     '/pcloud-host-flavors/-x'),
                           'flavor_id')
        self.assertRefused(self.call('admin', 'GET',
                                     self.path + '/hosts/-x'), 'name')
        self.assertRefused(self.call('admin', 'DELETE', self.path
                                     + '/tenants/' + 'x' * 65), 'tenant_id')

    def test_unknown_things_are_404(self):
        self.assertRefused(self.call(
            'admin', 'GET', '/pclouds/%s' % ('0' * 8 + '-0000' * 3 + '-'
                                             + '0' * 12)), status=404)
        self.assertRefused(self.call('admin', 'GET',
                                     '/pcloud-host-flavors/none'),
                           status=404)
        self.assertRefused(self.call('alice-reader', 'GET',
                                     '/pcloud-host-flavors/none'),
                           status=404)
        self.assertRefused(self.call('alice-member', 'GET',
                                     self.path + '/hosts/none'), status=404)
        resp = self.call('admin', 'GET', '/pclouds-nothing')
        self.assertEqual(404, resp.status_code)
        resp = self.call('admin', 'POST', self.path)
        self.assertEqual(405, resp.status_code)

    def test_microversions(self):
        """Blazar's microversion header works here as on its own routes."""
        header = 'OpenStack-API-Version'
        resp = self.call('admin', 'GET', '/pclouds', expect=200,
                         headers={header: 'reservation 1.0'})
        self.assertEqual('reservation 1.0', resp.headers[header])
        self.call('admin', 'GET', '/pclouds', expect=406,
                  headers={header: 'reservation 99.0'})
        self.call('admin', 'GET', '/pclouds', expect=400,
                  headers={header: 'reservation one'})

    def test_unauthenticated(self):
        self.assertEqual(401, self.call('no-such-token', 'GET',
                                        '/pclouds').status_code)


class StateTest(APITestCase):
    """A pcloud's life through the API, and the 409s on its way."""

    def test_life(self):
        self.make_pool(hosts=('cn1', 'cn2'))
        flavors = self.call('bob-member', 'GET', '/pcloud-host-flavors',
                            expect=200).json()['host_flavors']
        self.assertEqual([{'id': 'big', 'description': 'a big host',
                           'units': 1, 'free_hosts': 2}], flavors)
        made = self.call('alice-member', 'POST', '/pclouds',
                         {'name': 'mine'}, expect=201).json()['pcloud']
        path = '/pclouds/%s' % made['id']
        self.assertEqual({'id': made['id'], 'name': 'mine', 'owner': ALICE,
                          'tenants': [ALICE], 'hosts': [], 'own': True,
                          'cpu_allocation_ratio': None,
                          'ram_allocation_ratio': None}, made)

        host = self.allocate(made['id'])
        self.assertEqual({'name': 'h1', 'state': 'disabled',
                          'flavor_id': 'big', 'instances': []}, host)
        self.call('alice-member', 'POST', path + '/hosts',
                  {'name': 'h1', 'flavor_id': 'big'}, expect=409)
        self.allocate(made['id'], 'h2')
        error = self.call('alice-member', 'POST', path + '/hosts',
                          {'name': 'h3', 'flavor_id': 'big'},
                          expect=409).json()
        self.assertEqual('NoFreeHost', error['error_name'])

        shown = self.call('alice-member', 'PUT', path + '/hosts/h1',
                          {'state': 'enabled'}, expect=200).json()['host']
        self.assertEqual('enabled', shown['state'])
        # Setting it again changes nothing and is no error.
        self.call('alice-member', 'PATCH', path + '/hosts/h1',
                  {'state': 'enabled'}, expect=200)
        hosts = self.call('alice-reader', 'GET', path + '/hosts',
                          params={'state': 'enabled'},
                          expect=200).json()['hosts']
        self.assertEqual(['h1'], [h['name'] for h in hosts])

        # Enabled: not released; a pcloud with hosts is not deleted; nor
        # is a host flavor with hosts.
        error = self.call('alice-member', 'DELETE', path + '/hosts/h1',
                          expect=409).json()
        self.assertEqual('PcloudHostBusy', error['error_name'])
        self.call('alice-member', 'DELETE', path, expect=409)
        self.call('admin', 'DELETE', '/pcloud-host-flavors/big', expect=409)
        self.call('admin', 'POST', '/pcloud-host-flavors',
                  {'id': 'big', 'units': 2}, expect=409)
        # cn1 or cn2 is taken: an admin may not pull it out of the pool.
        pool = self.call('admin', 'GET', '/pcloud-host-flavors/big/hosts',
                         expect=200).json()['hosts']
        taken = [h['host'] for h in pool if h['pcloud_id']]
        self.assertEqual(2, len(taken))
        self.call('admin', 'DELETE', '/pcloud-host-flavors/big/hosts/%s'
                  % taken[0], expect=409)

        ratios = self.call('alice-member', 'PUT',
                           path + '/allocation-ratios',
                           {'cpu_allocation_ratio': 4.0,
                            'ram_allocation_ratio': 1.0},
                           expect=200).json()['allocation_ratios']
        self.assertEqual({'cpu_allocation_ratio': 4.0,
                          'ram_allocation_ratio': 1.0}, ratios)
        self.assertEqual(ratios, self.call(
            'alice-reader', 'GET', path + '/allocation-ratios',
            expect=200).json()['allocation_ratios'])
        # null: the hosts' own ratio back.
        ratios = self.call('alice-member', 'PATCH',
                           path + '/allocation-ratios',
                           {'cpu_allocation_ratio': None},
                           expect=200).json()['allocation_ratios']
        self.assertEqual({'cpu_allocation_ratio': None,
                          'ram_allocation_ratio': 1.0}, ratios)

        tenants = self.call('alice-member', 'POST', path + '/tenants',
                            {'tenant_id': BOB}, expect=201).json()
        self.assertEqual({'tenants': sorted([ALICE, BOB])}, tenants)
        self.call('alice-member', 'DELETE', path + '/tenants/%s' % BOB,
                  expect=204)
        self.assertEqual([ALICE], self.call(
            'alice-member', 'GET', path + '/tenants',
            expect=200).json()['tenants'])

        for name in ('h1', 'h2'):
            self.call('alice-member', 'PUT', path + '/hosts/%s' % name,
                      {'state': 'disabled'}, expect=200)
            self.call('alice-member', 'DELETE', path + '/hosts/%s' % name,
                      expect=204)
        self.call('alice-member', 'GET', path + '/hosts/h1', expect=404)
        self.call('alice-member', 'DELETE', path, expect=204)
        self.call('alice-member', 'GET', path, expect=404)
        for host in ('cn1', 'cn2'):
            self.call('admin', 'DELETE', '/pcloud-host-flavors/big/hosts/%s'
                      % host, expect=204)
        self.call('admin', 'DELETE', '/pcloud-host-flavors/big', expect=204)
        self.assertEqual([], self.call(
            'admin', 'GET', '/pcloud-host-flavors',
            expect=200).json()['host_flavors'])

    def test_users_never_see_compute_hosts(self):
        self.make_pool()
        pcloud = self.make_pcloud()
        self.allocate(pcloud)
        path = '/pclouds/%s' % pcloud
        for token in ('alice-member', 'alice-reader', 'bob-member'):
            for url in ('/pcloud-host-flavors', '/pcloud-host-flavors/big',
                        '/pclouds', path, path + '/hosts',
                        path + '/hosts/h1', path + '/tenants',
                        path + '/allocation-ratios'):
                text = self.call(token, 'GET', url).text
                self.assertNotIn('example.com', text)
                self.assertNotIn('"cn', text)

    def test_nova_failure_is_a_502_that_says_little(self):
        self.make_pool()
        pcloud = self.make_pcloud()
        self.nova.fail_next('add_host')
        error = self.call('alice-member', 'POST',
                          '/pclouds/%s/hosts' % pcloud,
                          {'name': 'h1', 'flavor_id': 'big'},
                          expect=502).json()
        self.assertNotIn('cn', error['error_message'])
        self.assertEqual('NovaError', error['error_name'])

    def test_an_unreachable_nova_is_a_503_with_nothing_half_written(self):
        self.make_pool()
        pcloud = self.make_pcloud()
        self.nova.fail_next('add_host', ks_exc.ConnectFailure(
            'Unable to establish connection to http://nova'))
        error = self.call('alice-member', 'POST',
                          '/pclouds/%s/hosts' % pcloud,
                          {'name': 'h1', 'flavor_id': 'big'},
                          expect=503).json()
        self.assertEqual('NovaUnreachable', error['error_name'])
        self.assertEqual('Nova cannot be reached; try again later.',
                         error['error_message'])
        self.assertEqual([], self.call(
            'alice-member', 'GET', '/pclouds/%s/hosts' % pcloud,
            expect=200).json()['hosts'])
        (agg,) = [a for a in self.nova.aggregates.list()
                  if a.metadata.get('pcloud:id') == pcloud]
        self.assertEqual([], [k for k in agg.metadata
                              if k.startswith('pcloud:host')])
        # Nova back, the same request succeeds.
        self.allocate(pcloud)

    def test_quota(self):
        self.conf.set_override('units_quota', 1, 'pcloud')
        self.make_pool()
        pcloud = self.make_pcloud()
        self.allocate(pcloud)
        error = self.call('alice-member', 'POST',
                          '/pclouds/%s/hosts' % pcloud,
                          {'name': 'h2', 'flavor_id': 'big'},
                          expect=403).json()
        self.assertEqual('QuotaExceeded', error['error_name'])


class ProjectsTest(_OnePcloud):
    """Projects authorized by id or name, resolved by the service in

    Keystone; what an authorized project sees of the pcloud.
    """

    def add(self, project, expect=201, token='alice-member'):
        return self.call(token, 'POST', self.path + '/tenants',
                         {'tenant_id': project}, expect=expect).json()

    def remove(self, project, expect=204):
        return self.call('alice-member', 'DELETE', self.path + '/tenants/'
                         + parse.quote(project, safe=''), expect=expect)

    def tenants(self):
        return self.call('alice-reader', 'GET', self.path + '/tenants',
                         expect=200).json()['tenants']

    def test_by_name_or_id_the_id_is_stored(self):
        self.assertEqual({'tenants': sorted([ALICE, BOB])}, self.add('bob'))
        self.assertEqual({'tenants': sorted([ALICE, BOB, CAROL])},
                         self.add(CAROL))
        self.add('Ops team (été)')
        self.assertIn('e0000000000000000000000000000001', self.tenants())
        self.remove('bob')
        self.remove('Ops team (été)')
        self.remove(CAROL)
        self.assertEqual([ALICE], self.tenants())
        # Not authorized (any more): nothing to do.
        self.remove('bob')

    def test_unknown_is_404_and_ambiguous_409_nothing_stored(self):
        for value in ('garbage', 'f' * 32, 'Bob'):
            error = self.add(value, expect=404)
            self.assertEqual('ProjectNotFound', error['error_name'])
            self.assertIn('"%s"' % value, error['error_message'])
        error = self.add('twin', expect=409)
        self.assertEqual('ProjectNameAmbiguous', error['error_name'])
        self.assertIn('give the id', error['error_message'])
        self.add('d0000000000000000000000000000002')
        self.remove('d0000000000000000000000000000002')
        self.assertEqual([ALICE], self.tenants())
        error = self.remove('garbage', expect=404).json()
        self.assertEqual('ProjectNotFound', error['error_name'])

    def test_removing_what_keystone_no_longer_knows(self):
        self.add(CAROL)
        del self.keystone.projects[CAROL]
        self.remove(CAROL)
        self.assertEqual([ALICE], self.tenants())

    def test_policy_first_then_keystone(self):
        error = self.add('garbage', expect=404, token='bob-member')
        self.assertEqual('PcloudNotFound', error['error_name'])
        self.add('garbage', expect=403, token='alice-reader')
        self.assertEqual([], self.keystone.calls)

    def test_keystone_down_is_503_and_its_refusal_502(self):
        self.keystone.fail_next(ks_exc.ConnectFailure('no keystone'))
        error = self.add('bob', expect=503)
        self.assertEqual('KeystoneUnreachable', error['error_name'])
        self.assertEqual('Keystone cannot be reached; try again later.',
                         error['error_message'])
        self.keystone.fail_next(403)
        error = self.add('bob', expect=502)
        self.assertEqual('KeystoneError', error['error_name'])
        self.assertEqual([ALICE], self.tenants())

    def listed(self, token, **params):
        return {p['id']: p for p in self.call(
            token, 'GET', '/pclouds', params=params,
            expect=200).json()['pclouds']}

    def test_an_authorized_project_sees_it_without_its_hosts(self):
        bobs = self.make_pcloud('bob-member', 'bobs')
        self.assertEqual([bobs], list(self.listed('bob-member')))
        self.call('bob-member', 'GET', self.path, expect=404)

        self.add('bob')
        self.add('carol')
        seen = {'id': self.pcloud, 'name': 'mine', 'owner': ALICE,
                'own': False, 'hosts': [], 'tenants': [BOB],
                'cpu_allocation_ratio': None, 'ram_allocation_ratio': None}
        listed = self.listed('bob-member')
        self.assertEqual(seen, listed[self.pcloud])
        self.assertTrue(listed[bobs]['own'])
        self.assertEqual(seen, self.call('bob-member', 'GET', self.path,
                                         expect=200).json()['pcloud'])
        self.assertEqual({bobs, self.pcloud},
                         set(self.listed('bob-member', project_id=BOB)))
        self.assertEqual([self.pcloud],
                         list(self.listed('bob-member', project_id=ALICE)))
        # Its owner and admins see it whole.
        owners = self.listed('alice-reader')[self.pcloud]
        self.assertEqual((True, ['h1'], sorted([ALICE, BOB, CAROL])),
                         (owners['own'], owners['hosts'], owners['tenants']))
        admins = self.listed('admin', project_id=BOB)
        self.assertEqual({bobs, self.pcloud}, set(admins))
        self.assertEqual(['h1'], admins[self.pcloud]['hosts'])
        self.assertFalse(admins[self.pcloud]['own'])

        # Nothing else of it: 403 now that it knows the pcloud is there.
        for method, path in (('GET', '/hosts'), ('GET', '/hosts/h1'),
                             ('GET', '/tenants'),
                             ('GET', '/allocation-ratios'),
                             ('DELETE', '/tenants/%s' % BOB),
                             ('DELETE', '')):
            self.call('bob-member', method, self.path + path, expect=403)
        for url in ('/pclouds', self.path):
            text = self.call('bob-member', 'GET', url).text
            for secret in ('h1', 'cn', 'example.com', CAROL):
                self.assertNotIn(secret, text)

        self.remove('bob')
        self.assertEqual([bobs], list(self.listed('bob-member')))
        self.call('bob-member', 'GET', self.path, expect=404)

    def test_its_own_rule(self):
        self.add('bob')
        base.override_policy(self, {'pcloud:pcloud:get_authorized': '!'})
        self.assertEqual({}, self.listed('bob-member'))
        self.call('bob-member', 'GET', self.path, expect=404)
        self.call('alice-reader', 'GET', self.path, expect=200)


# What the fuzzer sends.

_SCALARS = (st.none() | st.booleans() | st.integers()
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.text(max_size=20))
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (st.lists(inner, max_size=3)
                   | st.dictionaries(st.text(max_size=8), inner,
                                     max_size=3)),
    max_leaves=8)
_CONTENT_TYPES = st.sampled_from([
    'application/json', 'application/json; charset=utf-8', 'text/plain',
    '', 'application/xml', 'application/x-www-form-urlencoded',
    'application/json-patch+json', 'multipart/form-data; boundary=x'])
_FIELDS = ('id', 'description', 'units', 'host', 'name', 'flavor_id',
           'availability_zone', 'state', 'tenant_id',
           'cpu_allocation_ratio', 'ram_allocation_ratio', 'hosts',
           'start_date', 'end_date', 'reason', 'accept_unmovable')
_QUERY_KEYS = ('project_id', 'state', 'limit', 'marker', 'all_projects',
               'amount', 'duration', 'start', 'end', 'count', 'host',
               'vcpus', 'memory_mb', 'affinity', 'resource_properties',
               'pcloud', 'flavor', 'host_flavor', 'availability_zone',
               'required_traits', 'hours')


@st.composite
def _bodies(draw):
    """(content type, raw body): near-misses of the real bodies, JSON of

    any shape, text and bytes of any kind.
    """
    kind = draw(st.sampled_from(['object', 'json', 'text', 'bytes']))
    if kind == 'object':
        value = draw(st.dictionaries(
            st.sampled_from(_FIELDS) | st.text(max_size=8), _JSON,
            max_size=4))
    elif kind == 'json':
        value = draw(_JSON)
    if kind in ('object', 'json'):
        raw = json.dumps(value).encode()
    elif kind == 'text':
        raw = draw(st.text(max_size=40)).encode('utf-8', 'surrogatepass')
    else:
        raw = draw(st.binary(max_size=40))
    return draw(_CONTENT_TYPES), raw


_QUERIES = st.dictionaries(
    st.sampled_from(_QUERY_KEYS) | st.text(min_size=1, max_size=8),
    st.text(max_size=20), max_size=3)


class FuzzTest(APITestCase):
    """Whatever comes, no route answers with a 5xx."""

    def test_no_route_fails_on_any_input(self):
        self.make_pool()
        pcloud = self.make_pcloud()
        self.allocate(pcloud)
        known = {'flavor_id': ['big'], 'host': ['cn1', 'cn4'],
                 'pcloud_id': [pcloud], 'name': ['h1', 'h2'],
                 'tenant_id': [ALICE, BOB], 'lease_id': ['no-lease'],
                 'maintenance_id': ['no-maintenance']}
        routes = [(method, rule, body is not None)
                  for method, rule, _, _, body, _ in v1._routes]
        self.assertEqual(36, len(routes))
        for method, rule, takes_body in routes:
            self._fuzz(method, rule, takes_body, known)

    def _fuzz(self, method, rule, takes_body, known):
        params = [p.strip('<>') for p in rule.split('/')
                  if p.startswith('<')]
        path_values = st.fixed_dictionaries({
            p: st.sampled_from(known[p]) | st.text(min_size=1, max_size=20)
            for p in params})
        bodies = _bodies() if takes_body else st.none() | _bodies()

        @hypothesis.settings(max_examples=30, deadline=None,
                             database=None, derandomize=False,
                             suppress_health_check=list(
                                 hypothesis.HealthCheck))
        @hypothesis.given(token=st.sampled_from(['admin', 'alice-member',
                                                 'bob-member']),
                          values=path_values, body=bodies,
                          query=_QUERIES)
        def run(token, values, body, query):
            path = rule
            for name, value in values.items():
                path = path.replace('<%s>' % name,
                                    parse.quote(value, safe=''))
            kwargs = {'params': query}
            if body is not None:
                content_type, raw = body
                kwargs['data'] = raw
                kwargs['headers'] = {'Content-Type': content_type}
            resp = self.call(token, method, path, **kwargs)
            self.assertLess(resp.status_code, 500,
                            '%s %s %r: %s' % (method, path, kwargs,
                                              resp.text))
            if resp.status_code >= 400:
                self.assertIn('error_message', resp.json())
            elif resp.status_code != 204:
                self.assertIsInstance(resp.json(), dict)

        run()
