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

"""Why a boot would be refused: boot_rule's reasons, and the boot check

of the pcloud service on a recording Nova (the real cloud's answers are
the sandbox story test_boot_check's).
"""

import datetime
import types

import fixtures

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import boot_check
from pcloud_plugin.pcloud import boot_rule
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.pcloud import test_service

PCLOUD = 'aaaaaaaa-1111-4a6b-9c1d-0123456789ab'
OTHER = 'bbbbbbbb-1111-4a6b-9c1d-0123456789ab'
NOW = datetime.datetime(2031, 1, 1, 12)
ALICE = test_service.ALICE
BOB = test_service.BOB


def _agg(agg_id, name, **metadata):
    return types.SimpleNamespace(id=agg_id, name=name, metadata=metadata)


def _pcloud(pcloud_id=PCLOUD, tenant='p1', state=codec.ENABLED):
    return _agg(1, codec.pcloud_name(pcloud_id), **{
        codec.TYPE: codec.TYPE_PCLOUD, codec.ID: pcloud_id,
        codec.tenant_key(tenant): codec.TENANT,
        codec.host_state_key('node1'): state})


def _lease(pcloud_id, start, end):
    return _agg(7, 'lease-7', **dict(
        codec.lease_window_metadata(pcloud_id, start, end),
        **{codec.LEASE_ID: 'lease-7'}))


class BootRuleTest(base.TestCase):

    def _why(self, hint, *aggregates, project='p1'):
        return boot_rule.refusal(hint, project, NOW)(aggregates, 'node1')

    def test_no_hint_takes_only_hosts_outside_pclouds_pools_and_leases(self):
        self.assertIsNone(self._why(None))
        self.assertIsNone(self._why(None, _agg(3, 'az1')))
        pool = _agg(2, codec.pool_name('big'),
                    **{codec.TYPE: codec.TYPE_POOL})
        for aggregate in (pool, _pcloud(),
                          _lease(PCLOUD, NOW, NOW + datetime.timedelta(1))):
            self.assertEqual(boot_rule.IN_PCLOUD_OR_POOL,
                             self._why(None, aggregate))

    def test_several_hints_or_no_project_take_nothing(self):
        self.assertEqual(boot_rule.BAD_HINT,
                         self._why([PCLOUD, OTHER], _pcloud()))
        self.assertEqual(boot_rule.BAD_HINT,
                         self._why(PCLOUD, _pcloud(), project=None))

    def test_a_pcloud_hint_says_which_of_its_rules_refused(self):
        self.assertIsNone(self._why(PCLOUD, _pcloud()))
        self.assertEqual(boot_rule.NOT_IN_PCLOUD, self._why(PCLOUD))
        self.assertEqual(boot_rule.NOT_IN_PCLOUD,
                         self._why(OTHER, _pcloud()))
        self.assertEqual(boot_rule.NOT_AUTHORIZED,
                         self._why(PCLOUD, _pcloud(tenant='p2')))
        self.assertEqual(boot_rule.HOST_DISABLED,
                         self._why(PCLOUD, _pcloud(state=codec.DISABLED)))
        # A pool aggregate named as a pcloud is not one.
        self.assertEqual(boot_rule.NOT_IN_PCLOUD, self._why(PCLOUD, _agg(
            2, codec.pcloud_name(PCLOUD), **{codec.TYPE: codec.TYPE_POOL})))

    def test_a_lease_lets_its_pcloud_boot_in_its_window_only(self):
        hour = datetime.timedelta(hours=1)
        self.assertIsNone(self._why(
            PCLOUD, _pcloud(), _lease(PCLOUD, NOW - hour, NOW + hour)))
        for lease in (_lease(PCLOUD, NOW - 2 * hour, NOW),
                      _lease(PCLOUD, NOW + hour, NOW + 2 * hour),
                      _lease(OTHER, NOW - hour, NOW + hour)):
            self.assertEqual(boot_rule.LEASE_ELSEWHERE,
                             self._why(PCLOUD, _pcloud(), lease))


class FlavorResourcesTest(base.TestCase):

    def test_root_ephemeral_and_swap_disk_and_extra_specs(self):
        flavor = types.SimpleNamespace(**{
            'vcpus': 2, 'ram': 2048, 'disk': 10, 'swap': 1500,
            'OS-FLV-EXT-DATA:ephemeral': 5})
        self.assertEqual(
            ({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 17}, [], []),
            boot_check.flavor_resources(flavor, {}))
        self.assertEqual(
            ({'MEMORY_MB': 2048, 'DISK_GB': 17, 'CUSTOM_RESERVATION_R': 1},
             ['HW_CPU_X86_AVX2'], ['CUSTOM_SLOW']),
            boot_check.flavor_resources(flavor, {
                'resources:VCPU': '0', 'resources:CUSTOM_RESERVATION_R': '1',
                'trait:HW_CPU_X86_AVX2': 'required',
                'trait:CUSTOM_SLOW': 'forbidden',
                'hw:cpu_policy': 'dedicated'}))

    def test_no_swap_is_an_empty_string_before_nova_2_75(self):
        flavor = types.SimpleNamespace(vcpus=1, ram=512, disk=1, swap='')
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                         boot_check.flavor_resources(flavor, {})[0])


def _visible_to(ctx):
    return lambda pcloud: (pcloud['owner'] == ctx.project_id
                           or ctx.project_id in pcloud['tenants'])


class CheckBootTest(test_service.ServiceTestCase):
    """Alice's pcloud holds two of pool 'big''s three hosts: web1

    enabled, web2 disabled. cn4 is outside every pool.
    """

    HOSTS = ('cn1', 'cn2', 'cn3', 'cn4')

    def setUp(self):
        super().setUp()
        self._pool(hosts=('cn1', 'cn2', 'cn3'))
        self.pcloud = self._pcloud()
        self.service.allocate_host(ALICE, self.pcloud, 'web1', 'big')
        self.service.allocate_host(ALICE, self.pcloud, 'web2', 'big')
        self.service.enable_host(ALICE, self.pcloud, 'web1')
        for host in self.HOSTS:
            self.nova.computes[host]['status'] = 'enabled'
        # Which of the pool's hosts web1 is, the allocation picked.
        pcloud, = [agg for agg in self.nova.aggregates.list()
                   if agg.name == codec.pcloud_name(self.pcloud)]
        self.web1 = codec.Pcloud(pcloud.metadata).all_hosts['web1'].split(
            '.')[0]
        self.roots = {'cn1.example.com', 'cn2.example.com',
                      'cn3.example.com', 'cn4.example.com'}
        self.asked = []

        def candidate_roots(adapter, resources, required, forbidden):
            self.asked.append((resources, required, forbidden))
            return self.roots
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.clients.placement.candidate_roots',
            candidate_roots))

    def _check(self, ctx=ALICE, hint=None, flavor=None):
        return self.service.check_boot(ctx, hint, flavor, _visible_to(ctx))

    def _refused(self, found):
        return {r['reason']: r['hosts'] for r in found['refused']}

    def test_the_pclouds_enabled_host_takes_the_boot(self):
        found = self._check(hint=self.pcloud)
        self.assertEqual((True, 1), (found['bootable'], found['hosts']))
        # The pcloud's other host is disabled; hosts outside it are not
        # the tenant's business.
        self.assertEqual({boot_rule.HOST_DISABLED: 1}, self._refused(found))
        self.assertIn('openstack pcloud host set --enable',
                      found['refused'][0]['message'])

    def test_a_pcloud_named_by_its_name_is_pointed_to_its_id(self):
        found = self._check(hint='mine')
        self.assertFalse(found['bootable'])
        self.assertEqual({boot_check.PCLOUD_NAMED: 0}, self._refused(found))
        self.assertIn('--hint pcloud=%s' % self.pcloud,
                      found['refused'][0]['message'])

    def test_another_projects_pcloud_is_no_pcloud_until_authorized(self):
        for hint in (self.pcloud, 'mine'):
            found = self._check(BOB, hint)
            self.assertEqual({boot_check.NO_SUCH_PCLOUD: 0},
                             self._refused(found))
            self.assertNotIn('alice', str(found))
        self.service.authorize_tenant(ALICE, self.pcloud, 'bob')
        self.assertTrue(self._check(BOB, self.pcloud)['bootable'])

    def test_the_owner_no_longer_a_tenant_is_told(self):
        self.service.authorize_tenant(ALICE, self.pcloud, 'bob')
        self.service.deauthorize_tenant(ALICE, self.pcloud, 'alice')
        found = self._check(hint=self.pcloud)
        self.assertEqual({boot_rule.NOT_AUTHORIZED: 2}, self._refused(found))

    def test_a_down_or_disabled_compute_service(self):
        self.nova.nodes[self.web1]['state'] = 'down'
        self.assertEqual({boot_rule.HOST_DISABLED: 1,
                          boot_check.COMPUTE_DOWN: 1},
                         self._refused(self._check(hint=self.pcloud)))
        self.nova.nodes[self.web1]['state'] = 'up'
        self.nova.computes[self.web1]['status'] = 'disabled'
        self.assertFalse(self._check(hint=self.pcloud)['bootable'])

    def test_no_hint_goes_outside_pools_and_pclouds(self):
        found = self._check()
        self.assertEqual((True, 1), (found['bootable'], found['hosts']))
        self.assertEqual({boot_rule.IN_PCLOUD_OR_POOL: 3},
                         self._refused(found))

    def test_no_pcloud_without_hosts(self):
        empty = self._pcloud(name='empty')
        self.assertEqual({boot_check.NO_HOSTS: 0},
                         self._refused(self._check(hint=empty)))

    def test_placement_says_whether_the_flavor_has_room(self):
        self.nova.add_flavor('f1', 'm1.big', vcpus=4, ram=4096, disk=40,
                             extra_specs={'trait:CUSTOM_SLOW': 'forbidden'})
        self.assertTrue(self._check(hint=self.pcloud,
                                    flavor='m1.big')['bootable'])
        self.assertEqual(
            [({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40}, [],
              ['CUSTOM_SLOW'])], self.asked)
        self.roots = {'cn4.example.com'}  # room on no host of the pcloud
        found = self._check(hint=self.pcloud, flavor='f1')
        self.assertEqual((False, 'f1'), (found['bootable'], found['flavor']))
        self.assertEqual({boot_rule.HOST_DISABLED: 1, boot_check.NO_ROOM: 1},
                         self._refused(found))
        self.assertIn('no room left for flavor m1.big (DISK_GB 40, '
                      'MEMORY_MB 4096, VCPU 4)', str(found))

    def test_a_private_flavor_of_another_project_is_not_found(self):
        self.nova.add_flavor('r1', 'reserved', projects=['bob'])
        self.assertRaises(exception.FlavorNotFound, self._check,
                          hint=self.pcloud, flavor='r1')
        self.assertRaises(exception.FlavorNotFound, self._check,
                          hint=self.pcloud, flavor='nope')
        self.assertEqual('r1', self._check(BOB, flavor='reserved')['flavor'])


class CandidateRootsTest(base.TestCase):

    def test_query_and_roots(self):
        asked = []

        def call(adapter, method, url, ok, microversion):
            asked.append(url)
            return types.SimpleNamespace(status_code=200, json=lambda: {
                'provider_summaries': {
                    'numa0': {'root_provider_uuid': 'rp1'},
                    'rp1': {'root_provider_uuid': 'rp1'}}})
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.clients.placement.call', call))
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.clients.placement.list_providers',
            lambda adapter: [{'uuid': 'rp1', 'name': 'cn1'},
                             {'uuid': 'rp2', 'name': 'cn2'}]))
        self.assertEqual({'cn1'}, placement_client.candidate_roots(
            None, {'VCPU': 1, 'DISK_GB': 1}, ['A'], ['B']))
        self.assertEqual(['/allocation_candidates?resources=DISK_GB%3A1%2C'
                          'VCPU%3A1&required=A%2C%21B'], asked)
