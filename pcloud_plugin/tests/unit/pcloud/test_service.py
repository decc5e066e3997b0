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

"""The Pcloud service against an honest fake Nova and Placement.

The same operations run against the real Nova API in
tests/functional/nova; here they are cheap enough to cover every refusal,
rollback and race.
"""

import threading

import fixtures
from novaclient import exceptions as nova_exc

from pcloud_plugin import context
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import leases as leases_mod
from pcloud_plugin.pcloud import service as service_mod
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.pcloud import fake_nova
from pcloud_plugin.tests.unit.pcloud import fake_placement


def _ctx(project_id, is_admin=False):
    return context.RequestContext(project_id=project_id, is_admin=is_admin)


ADMIN = _ctx('admin-project', is_admin=True)
ALICE = _ctx('alice')
BOB = _ctx('bob')


class ServiceTestCase(base.TestCase):

    HOSTS = ('cn1', 'cn2', 'cn3')

    def setUp(self):
        super().setUp()
        self.conf.set_override('allocate_retry_interval', 0.0, 'pcloud')
        self.conf.set_override('allocate_settle_timeout', 0.05, 'pcloud')
        self.nova = fake_nova.FakeNova()
        self.placement = fake_placement.FakePlacement()
        for host in self.HOSTS:
            # Hypervisor names differ from service hosts, as with libvirt.
            self.nova.add_compute(host, node=host + '.example.com')
            self.placement.add_provider(host + '.example.com')
        self.service = service_mod.PcloudService(
            self.nova, self.placement, self.conf,
            leases=leases_mod.NoLeases())

    def _pool(self, flavor_id='big', hosts=HOSTS, units=1):
        self.service.create_host_flavor(ADMIN, flavor_id, 'a big host',
                                        units)
        for host in hosts:
            self.service.add_pool_host(ADMIN, flavor_id, host)

    def _pcloud(self, ctx=ALICE, name='mine'):
        return self.service.create_pcloud(ctx, name)['id']


class HostFlavorTests(ServiceTestCase):

    def test_create_list_show_delete(self):
        made = self.service.create_host_flavor(ADMIN, 'big', 'desc', 3)
        self.assertEqual({'id': 'big', 'description': 'desc', 'units': 3},
                         made)
        agg, = self.nova.aggregates.list()
        self.assertEqual('Pcloud:host_flavor:big', agg.name)
        self.assertEqual({'pcloud:type': 'host_flavor_pool',
                          'pcloud:flavor_id': 'big',
                          'pcloud:description': 'desc',
                          'pcloud:units': '3'}, agg.metadata)
        self.assertEqual([dict(made, free_hosts=0)],
                         self.service.list_host_flavors(ALICE))
        self.assertEqual(dict(made, free_hosts=[], allocated_hosts={}),
                         self.service.show_host_flavor(ADMIN, 'big'))
        self.service.delete_host_flavor(ADMIN, 'big')
        self.assertEqual([], self.nova.aggregates.list())
        self.assertRaises(exception.HostFlavorNotFound,
                          self.service.show_host_flavor, ADMIN, 'big')

    def test_duplicate_and_bad_input(self):
        self.service.create_host_flavor(ADMIN, 'big', '', 1)
        self.assertRaises(exception.HostFlavorExists,
                          self.service.create_host_flavor, ADMIN, 'big',
                          '', 1)
        e = self.assertRaises(exception.InvalidField,
                              self.service.create_host_flavor, ADMIN,
                              'other', '', -2)
        self.assertEqual('units', e.kwargs['field'])
        self.assertIn('units', str(e))

    def test_only_admins(self):
        self.assertRaises(exception.Forbidden,
                          self.service.create_host_flavor, ALICE, 'big',
                          '', 1)

    def test_interrupted_create_is_finished_by_a_retry(self):
        self.nova.fail_next('set_metadata')
        self.nova.fail_next('delete')  # and its rollback fails too
        self.assertRaises(exception.NovaError,
                          self.service.create_host_flavor, ADMIN, 'big',
                          '', 1)
        self.service.create_host_flavor(ADMIN, 'big', '', 1)
        self.assertEqual(['big'], [f['id'] for f in
                                   self.service.list_host_flavors(ADMIN)])

    def test_add_host_needs_disabled_empty_compute_and_enables_it(self):
        self.service.create_host_flavor(ADMIN, 'big', '', 1)
        self.nova.computes['cn1']['status'] = 'enabled'
        e = self.assertRaises(exception.HostNotEligible,
                              self.service.add_pool_host, ADMIN, 'big',
                              'cn1')
        self.assertIn('disable it first', str(e))
        self.nova.computes['cn1']['status'] = 'disabled'
        self.nova.nodes['cn1']['servers'] = ['vm-1']
        e = self.assertRaises(exception.HostNotEligible,
                              self.service.add_pool_host, ADMIN, 'big',
                              'cn1')
        self.assertIn('runs 1 instance', str(e))
        self.nova.nodes['cn1']['servers'] = []
        self.assertRaises(exception.ComputeHostNotFound,
                          self.service.add_pool_host, ADMIN, 'big', 'cn9')

        self.service.add_pool_host(ADMIN, 'big', 'cn1')
        self.assertEqual('enabled', self.nova.computes['cn1']['status'])
        pool, = self.nova.aggregates.list()
        self.assertEqual(['cn1'], pool.hosts)
        self.assertEqual('cn1.example.com',
                         pool.metadata['pcloud:hypervisor:cn1'])
        self.assertRaises(exception.HostNotEligible,
                          self.service.add_pool_host, ADMIN, 'big', 'cn1')

    def test_a_host_blazar_holds_cannot_join_a_pool(self):
        self.service.create_host_flavor(ADMIN, 'big', '', 1)
        freepool = self.nova.aggregates.create('freepool', None)
        self.nova.aggregates.add_host(freepool, 'cn1')
        leased = self.nova.aggregates.create('blazar-lease', None)
        self.nova.aggregates.set_metadata(leased, {'blazar:owner': 'bob'})
        self.nova.aggregates.add_host(leased, 'cn2')
        for host in ('cn1', 'cn2'):
            e = self.assertRaises(exception.HostNotEligible,
                                  self.service.add_pool_host, ADMIN, 'big',
                                  host)
            self.assertEqual(409, e.code)
            self.assertIn("Blazar's physical:host plugin holds it", str(e))
        self.assertEqual('disabled', self.nova.computes['cn1']['status'])
        # Another freepool name: cn1 is not Blazar's then.
        self.conf.set_override('blazar_freepool_name', 'blazar-free',
                               'pcloud')
        self.service.add_pool_host(ADMIN, 'big', 'cn1')

    def test_failed_enable_takes_the_host_back_out(self):
        self.service.create_host_flavor(ADMIN, 'big', '', 1)
        before = self.nova.state()
        self.nova.fail_next('enable')
        self.assertRaises(exception.NovaError, self.service.add_pool_host,
                          ADMIN, 'big', 'cn1')
        self.assertEqual(before, self.nova.state())

    def test_remove_host_refused_while_allocated(self):
        self._pool()
        pcloud = self._pcloud()
        self.service.allocate_host(ALICE, pcloud, 'a', 'big')
        show = self.service.show_host_flavor(ADMIN, 'big')
        self.assertEqual(2, len(show['free_hosts']))
        (allocated, holder), = show['allocated_hosts'].items()
        self.assertEqual(pcloud, holder)
        self.assertRaises(exception.HostAllocated,
                          self.service.remove_pool_host, ADMIN, 'big',
                          allocated)
        self.assertRaises(exception.HostFlavorInUse,
                          self.service.delete_host_flavor, ADMIN, 'big')
        free = show['free_hosts'][0]
        self.service.remove_pool_host(ADMIN, 'big', free)
        self.assertEqual('disabled', self.nova.computes[free]['status'])
        self.assertNotIn(free, self.service.show_host_flavor(
            ADMIN, 'big')['free_hosts'])


class PcloudTests(ServiceTestCase):

    def test_create_list_show_delete(self):
        made = self.service.create_pcloud(ALICE, 'my cloud')
        self.assertEqual({'id': made['id'], 'name': 'my cloud',
                          'owner': 'alice', 'tenants': ['alice'],
                          'cpu_allocation_ratio': None,
                          'ram_allocation_ratio': None, 'hosts': [],
                          'own': True}, made)
        agg, = self.nova.aggregates.list()
        self.assertEqual('Pcloud:' + made['id'], agg.name)
        self.assertEqual('pcloud-tenant', agg.metadata['pcloud:alice'])
        self.assertEqual([made], self.service.list_pclouds(ALICE))
        self.assertEqual([], self.service.list_pclouds(BOB))
        self.assertEqual(made, self.service.show_pcloud(ALICE, made['id']))
        # Another project's pcloud does not exist for bob.
        self.assertRaises(exception.PcloudNotFound,
                          self.service.show_pcloud, BOB, made['id'])
        self.service.delete_pcloud(ALICE, made['id'])
        self.assertEqual([], self.service.list_pclouds(ALICE))

    def test_bad_ids_name_the_field(self):
        e = self.assertRaises(exception.InvalidField,
                              self.service.show_pcloud, ALICE, 'nope')
        self.assertEqual('pcloud_id', e.kwargs['field'])
        e = self.assertRaises(exception.InvalidField,
                              self.service.create_pcloud, ALICE, '  ')
        self.assertEqual('name', e.kwargs['field'])

    def test_tenants(self):
        pcloud = self._pcloud()
        self.assertEqual(['alice', 'bob'], self.service.authorize_tenant(
            ALICE, pcloud, 'bob'))
        self.assertEqual(['bob'], self.service.deauthorize_tenant(
            ALICE, pcloud, 'alice'))
        self.assertEqual(['bob'],
                         self.service.show_pcloud(ALICE, pcloud)['tenants'])
        self.assertRaises(exception.PcloudNotFound,
                          self.service.authorize_tenant, BOB, pcloud, 'bob')
        e = self.assertRaises(exception.InvalidField,
                              self.service.authorize_tenant, ALICE, pcloud,
                              'type')
        self.assertEqual('tenant_id', e.kwargs['field'])

    def test_delete_refused_while_it_holds_hosts(self):
        self._pool()
        pcloud = self._pcloud()
        self.service.allocate_host(ALICE, pcloud, 'a', 'big')
        self.assertRaises(exception.PcloudNotEmpty,
                          self.service.delete_pcloud, ALICE, pcloud)


class HostTests(ServiceTestCase):

    def setUp(self):
        super().setUp()
        self._pool()
        self.pcloud = self._pcloud()

    def _agg(self):
        for agg in self.nova.aggregates.list():
            if agg.name == 'Pcloud:' + self.pcloud:
                return agg

    def test_allocate_enable_list_disable_release(self):
        got = self.service.allocate_host(ALICE, self.pcloud, 'web1', 'big')
        self.assertEqual({'name': 'web1', 'state': 'disabled',
                          'flavor_id': 'big'}, got)
        agg = self._agg()
        host, = agg.hosts
        node = host + '.example.com'
        self.assertEqual(node, agg.metadata['pcloud:host:web1'])
        self.assertEqual('disabled',
                         agg.metadata['pcloud:host_state:' + node])

        self.service.enable_host(ALICE, self.pcloud, 'web1')
        self.assertEqual('enabled',
                         self._agg().metadata['pcloud:host_state:' + node])
        self.nova.nodes[host]['servers'] = ['vm-2', 'vm-1']
        hosts = self.service.list_hosts(ALICE, self.pcloud)
        self.assertEqual([{'name': 'web1', 'state': 'enabled',
                           'flavor_id': 'big',
                           'instances': ['vm-1', 'vm-2']}], hosts)

        e = self.assertRaises(exception.PcloudHostBusy,
                              self.service.release_host, ALICE,
                              self.pcloud, 'web1')
        self.assertIn('disable it first', str(e))
        self.service.disable_host(ALICE, self.pcloud, 'web1')
        e = self.assertRaises(exception.PcloudHostBusy,
                              self.service.release_host, ALICE,
                              self.pcloud, 'web1')
        self.assertIn('2 instance(s)', str(e))
        self.nova.nodes[host]['servers'] = []
        self.service.release_host(ALICE, self.pcloud, 'web1')
        agg = self._agg()
        self.assertEqual([], agg.hosts)
        self.assertEqual(['pcloud:alice', 'pcloud:id', 'pcloud:name',
                          'pcloud:owner', 'pcloud:type'],
                         sorted(agg.metadata))

    def test_users_never_see_a_hostname(self):
        self.service.allocate_host(ALICE, self.pcloud, 'web1', 'big')
        self.service.enable_host(ALICE, self.pcloud, 'web1')
        seen = repr([
            self.service.list_pclouds(ALICE),
            self.service.show_pcloud(ALICE, self.pcloud),
            self.service.list_hosts(ALICE, self.pcloud),
            self.service.list_host_flavors(ALICE),
            self.service.set_allocation_ratios(ALICE, self.pcloud, 2.0),
        ])
        for host in self.HOSTS:
            self.assertNotIn(host, seen)

    def test_names_are_unique_within_a_pcloud(self):
        self.service.allocate_host(ALICE, self.pcloud, 'web1', 'big')
        self.assertRaises(exception.PcloudHostNameExists,
                          self.service.allocate_host, ALICE, self.pcloud,
                          'web1', 'big')
        other = self._pcloud(BOB)
        self.service.allocate_host(BOB, other, 'web1', 'big')

    def test_no_free_host(self):
        for name in ('a', 'b', 'c'):
            self.service.allocate_host(ALICE, self.pcloud, name, 'big')
        e = self.assertRaises(exception.NoFreeHost,
                              self.service.allocate_host, ALICE,
                              self.pcloud, 'd', 'big')
        self.assertEqual(409, e.code)
        self.assertIn('No free host of host flavor big', str(e))

    def test_hosts_blazar_holds_are_never_allocated(self):
        # In the pool before Blazar took them (an overlap from before
        # the guards; pcloud-status upgrade check reports it).
        freepool = self.nova.aggregates.create('freepool', None)
        self.nova.aggregates.add_host(freepool, 'cn1')
        leased = self.nova.aggregates.create('blazar-lease', None)
        self.nova.aggregates.set_metadata(leased, {'blazar:owner': 'bob'})
        self.nova.aggregates.add_host(leased, 'cn2')
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        self.assertEqual(['cn3'], self._agg().hosts)
        e = self.assertRaises(exception.NoFreeHost,
                              self.service.allocate_host, ALICE,
                              self.pcloud, 'b', 'big')
        self.assertEqual(409, e.code)
        self.assertIn("2 free one(s) are held by Blazar's physical:host "
                      "plugin", str(e))

    def test_availability_zone(self):
        az = self.nova.aggregates.create('az-east', 'east')
        self.nova.aggregates.add_host(az, 'cn2')
        self.service.allocate_host(ALICE, self.pcloud, 'e', 'big', 'east')
        self.assertEqual(['cn2'], self._agg().hosts)
        self.assertRaises(exception.NoFreeHost, self.service.allocate_host,
                          ALICE, self.pcloud, 'e2', 'big', 'east')
        self.service.allocate_host(ALICE, self.pcloud, 'n', 'big', 'nova')
        self.assertRaises(exception.HostFlavorNotFound,
                          self.service.allocate_host, ALICE, self.pcloud,
                          'x', 'small')

    def test_quota_is_refused_before_any_aggregate_is_touched(self):
        self.conf.set_override('units_quota', 2, 'pcloud')
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        self.service.allocate_host(ALICE, self.pcloud, 'b', 'big')
        before, writes = self.nova.state(), self.nova.writes
        e = self.assertRaises(exception.QuotaExceeded,
                              self.service.allocate_host, ALICE,
                              self.pcloud, 'c', 'big')
        self.assertEqual(403, e.code)
        self.assertIn('limit of 2', str(e))
        self.assertEqual((before, writes),
                         (self.nova.state(), self.nova.writes))
        # A per-project override lifts it for alice alone.
        self.conf.set_override('project_units_quota', {'alice': 3},
                               'pcloud')
        self.service.allocate_host(ALICE, self.pcloud, 'c', 'big')

    def test_failed_add_leaves_nothing_behind(self):
        before = self.nova.state()
        self.nova.fail_next('add_host')
        self.assertRaises(exception.NovaError, self.service.allocate_host,
                          ALICE, self.pcloud, 'a', 'big')
        self.assertEqual(before, self.nova.state())
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')

    def _placement_conflict(self):
        # What Nova answers when a concurrent request updated the host's
        # resource provider in Placement first.
        self.conf.set_override('allocate_retry_interval', 0, 'pcloud')
        return nova_exc.Conflict(409, 'Another thread concurrently updated '
                                 'the resource provider data')

    def test_add_meeting_a_placement_conflict_is_retried(self):
        self.nova.fail_next('add_host', self._placement_conflict())
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        self.assertEqual(1, len(self._agg().hosts))

    def test_give_back_meeting_a_placement_conflict_is_retried(self):
        conflict = self._placement_conflict()
        self.conf.set_override('allocate_settle_timeout', 0, 'pcloud')
        other = self.service.create_pcloud(BOB, 'other')['id']
        thief = [a for a in self.nova.aggregates.list()
                 if a.name == 'Pcloud:' + other][0]
        stolen = self.nova.aggregates_by_id[thief.id]['hosts']
        real_add = self.nova.aggregates.add_host

        def add_host(agg, host):
            result = real_add(agg, host)
            if not stolen:
                # Taken at once by another pcloud, so ours gives it back,
                # and Placement is busy the first time it does.
                real_add(thief, host)
                self.nova.fail_next('remove_host', conflict)
            return result
        self.nova.aggregates.add_host = add_host
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        mine = self._agg().hosts
        self.assertEqual(1, len(mine))
        self.assertEqual(1, len(stolen))
        self.assertNotEqual(stolen, mine)

    def test_failure_after_the_add_gives_the_host_back(self):
        self.conf.set_override('units_quota', 1, 'pcloud')
        before = self.nova.state()
        self.service.set_allocation_ratios(ALICE, self.pcloud, 2.0)
        self.placement.providers.clear()   # Placement lost them
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.service.allocate_host, ALICE, self.pcloud,
                          'a', 'big')
        after = self.nova.state()
        for agg_id, agg in before.items():
            self.assertEqual(agg['hosts'], after[agg_id]['hosts'])
        md = self._agg().metadata
        self.assertFalse([k for k in md if k.startswith('pcloud:host')])

    def test_lost_race_gives_back_and_retries(self):
        """Another pcloud takes the picked host between pick and count."""
        other = self.service.create_pcloud(BOB, 'other')['id']
        real_add = self.nova.aggregates.add_host
        stolen = []

        def add_host(agg, host):
            result = real_add(agg, host)
            if not stolen:
                stolen.append(host)
                thief = [a for a in self.nova.aggregates.list()
                         if a.name == 'Pcloud:' + other][0]
                real_add(thief, host)
            return result
        self.nova.aggregates.add_host = add_host
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        mine = self._agg().hosts
        self.assertEqual(1, len(mine))
        self.assertNotEqual(stolen, mine)

    def test_lowest_pcloud_id_waits_for_the_others_and_keeps_it(self):
        self.conf.set_override('allocate_settle_timeout', 5, 'pcloud')
        self.conf.set_override('allocate_retry_interval', 0.01, 'pcloud')
        ids = iter(['00000000-0000-4000-8000-000000000001',
                    'ffffffff-0000-4000-8000-000000000001'])
        self.useFixture(fixtures.MockPatch(
            'oslo_utils.uuidutils.generate_uuid', side_effect=ids.__next__))
        low = self._pcloud(ALICE, 'low')
        high = self._pcloud(BOB, 'high')
        real_add = self.nova.aggregates.add_host
        taken = []

        def add_host(agg, host):
            result = real_add(agg, host)
            if not taken:
                # The other pcloud took it too, and gives it back soon.
                taken.append(host)
                other = [a for a in self.nova.aggregates.list()
                         if a.name == 'Pcloud:' + high][0]
                real_add(other, host)
                threading.Timer(0.05, self.nova.aggregates.remove_host,
                                (other, host)).start()
            return result
        self.nova.aggregates.add_host = add_host
        self.service.allocate_host(ALICE, low, 'a', 'big')
        held, = [a.hosts for a in self.nova.aggregates.list()
                 if a.name == 'Pcloud:' + low]
        self.assertEqual(taken, held)

    def test_retries_exhausted(self):
        self.conf.set_override('allocate_retries', 2, 'pcloud')
        other = self.service.create_pcloud(BOB, 'other')['id']
        real_add = self.nova.aggregates.add_host
        attempts = []

        def add_host(agg, host):
            attempts.append(host)
            result = real_add(agg, host)
            thief = [a for a in self.nova.aggregates.list()
                     if a.name == 'Pcloud:' + other][0]
            real_add(thief, host)   # every host is stolen at once
            return result
        self.nova.aggregates.add_host = add_host
        # Given back at once (no settling): every pause is a retry's.
        self.conf.set_override('allocate_settle_timeout', 0, 'pcloud')
        pauses = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        self.assertRaises(exception.NoFreeHost, self.service.allocate_host,
                          ALICE, self.pcloud, 'a', 'big')
        self.assertEqual([], self._agg().hosts)
        self.assertEqual((3, 2), (len(attempts), pauses.call_count))

    def test_a_host_already_out_of_the_aggregate_is_released(self):
        # Nova carried out an earlier removal whose answer was lost (it
        # was killed as it answered): the soak saw a 502 for this.
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        real_remove = self.nova.aggregates.remove_host

        def remove_host(agg, host):
            real_remove(agg, host)
            return real_remove(agg, host)
        self.nova.aggregates.remove_host = remove_host
        self.service.release_host(ALICE, self.pcloud, 'a')
        self.assertEqual([], self._agg().hosts)
        self.assertEqual([], self.service.list_hosts(ALICE, self.pcloud))

    def test_interrupted_release_is_finished_by_a_retry(self):
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        self.nova.fail_next('set_metadata')
        self.assertRaises(exception.NovaError, self.service.release_host,
                          ALICE, self.pcloud, 'a')
        self.assertEqual([], self._agg().hosts)
        self.assertEqual([], self.service.list_hosts(ALICE, self.pcloud))
        self.service.release_host(ALICE, self.pcloud, 'a')
        self.assertFalse([k for k in self._agg().metadata
                          if k.startswith('pcloud:host')])
        self.assertRaises(exception.PcloudHostNotFound,
                          self.service.release_host, ALICE, self.pcloud,
                          'a')


class RatioTests(ServiceTestCase):

    def setUp(self):
        super().setUp()
        self._pool()
        self.pcloud = self._pcloud()

    def test_set_applies_to_hosts_and_release_restores(self):
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        node = self._node('a')
        shown = self.service.set_allocation_ratios(ALICE, self.pcloud,
                                                   cpu_allocation_ratio=2,
                                                   ram_allocation_ratio=0.9)
        self.assertEqual((2.0, 0.9), (shown['cpu_allocation_ratio'],
                                      shown['ram_allocation_ratio']))
        self.assertEqual({'VCPU': 2.0, 'MEMORY_MB': 0.9},
                         self.placement.ratios(node))
        # Hosts allocated later get the pcloud's ratios too.
        self.service.allocate_host(ALICE, self.pcloud, 'b', 'big')
        self.assertEqual({'VCPU': 2.0, 'MEMORY_MB': 0.9},
                         self.placement.ratios(self._node('b')))
        # Changing one ratio keeps the other.
        self.service.set_allocation_ratios(ALICE, self.pcloud,
                                           cpu_allocation_ratio=3)
        self.assertEqual({'VCPU': 3.0, 'MEMORY_MB': 0.9},
                         self.placement.ratios(node))
        self.service.release_host(ALICE, self.pcloud, 'a')
        self.assertEqual({'VCPU': 16.0, 'MEMORY_MB': 1.5},
                         self.placement.ratios(node))

    def test_unset_gives_hosts_their_own_back(self):
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        node = self._node('a')
        self.service.set_allocation_ratios(ALICE, self.pcloud,
                                           cpu_allocation_ratio=2,
                                           ram_allocation_ratio=0.9)
        shown = self.service.set_allocation_ratios(
            ALICE, self.pcloud, unset=['cpu_allocation_ratio'])
        self.assertEqual((None, 0.9), (shown['cpu_allocation_ratio'],
                                       shown['ram_allocation_ratio']))
        self.assertEqual({'VCPU': 16.0, 'MEMORY_MB': 0.9},
                         self.placement.ratios(node))
        # The host's own ratios are kept while the pcloud has one.
        self.assertIn(codec.saved_ratios_key(node), self._metadata())
        shown = self.service.set_allocation_ratios(
            ALICE, self.pcloud, unset=['ram_allocation_ratio'])
        self.assertEqual((None, None), (shown['cpu_allocation_ratio'],
                                        shown['ram_allocation_ratio']))
        self.assertEqual({'VCPU': 16.0, 'MEMORY_MB': 1.5},
                         self.placement.ratios(node))
        self.assertEqual([], [k for k in self._metadata()
                              if 'ratio' in k])
        # Hosts allocated later keep their own.
        self.service.allocate_host(ALICE, self.pcloud, 'b', 'big')
        self.assertEqual({'VCPU': 16.0, 'MEMORY_MB': 1.5},
                         self.placement.ratios(self._node('b')))

    def test_unset_again_finishes_an_interrupted_unset(self):
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        node = self._node('a')
        self.service.set_allocation_ratios(ALICE, self.pcloud,
                                           cpu_allocation_ratio=2,
                                           ram_allocation_ratio=0.9)
        # Stopped after forgetting the pcloud's ratios, before the host.
        self.nova.aggregates.set_metadata(
            self._aggregate(), {codec.CPU_RATIO: None,
                                codec.RAM_RATIO: None})
        self.service.set_allocation_ratios(
            ALICE, self.pcloud,
            unset=['cpu_allocation_ratio', 'ram_allocation_ratio'])
        self.assertEqual({'VCPU': 16.0, 'MEMORY_MB': 1.5},
                         self.placement.ratios(node))
        self.assertNotIn(codec.saved_ratios_key(node), self._metadata())

    def test_generation_conflict_is_retried(self):
        self.service.allocate_host(ALICE, self.pcloud, 'a', 'big')
        self.placement.bump_next = 2
        self.service.set_allocation_ratios(ALICE, self.pcloud, 4.0)
        self.assertEqual(4.0, self.placement.ratios(self._node('a'))['VCPU'])

    def test_bad_ratios(self):
        e = self.assertRaises(exception.InvalidField,
                              self.service.set_allocation_ratios, ALICE,
                              self.pcloud, ram_allocation_ratio=-1)
        self.assertEqual('ram_allocation_ratio', e.kwargs['field'])
        self.assertRaises(exception.InvalidField,
                          self.service.set_allocation_ratios, ALICE,
                          self.pcloud)
        e = self.assertRaises(exception.InvalidField,
                              self.service.set_allocation_ratios, ALICE,
                              self.pcloud, cpu_allocation_ratio=2,
                              unset=['cpu_allocation_ratio'])
        self.assertEqual('cpu_allocation_ratio', e.kwargs['field'])

    def _aggregate(self):
        for agg in self.nova.aggregates.list():
            if agg.name == 'Pcloud:' + self.pcloud:
                return agg

    def _metadata(self):
        return self._aggregate().metadata

    def _node(self, name):
        return self._metadata()[codec.host_key(name)]


class AllocationRaceTests(ServiceTestCase):
    """Real threads, a fake Nova with latency so they interleave."""

    HOSTS = ('cn1', 'cn2', 'cn3', 'cn4', 'cn5')

    def test_ten_allocations_three_free_hosts(self):
        self.conf.set_override('allocate_retry_interval', 0.01, 'pcloud')
        self._pool(hosts=self.HOSTS[:3])
        self.nova.latency = 0.005
        projects = ['project%d' % i for i in range(10)]
        pclouds = {p: self._pcloud(_ctx(p)) for p in projects}
        results = {}
        start = threading.Barrier(len(projects))

        def allocate(project):
            start.wait()
            try:
                results[project] = self.service.allocate_host(
                    _ctx(project), pclouds[project], 'h', 'big')
            except exception.PcloudException as e:
                results[project] = e
        threads = [threading.Thread(target=allocate, args=(p,))
                   for p in projects]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        won = [p for p, r in results.items() if isinstance(r, dict)]
        lost = [r for r in results.values() if not isinstance(r, dict)]
        self.assertEqual(3, len(won), results)
        self.assertTrue(all(isinstance(e, exception.NoFreeHost)
                            for e in lost), lost)
        held = [h for agg in self.nova.aggregates.list()
                if codec.is_pcloud(agg.metadata) for h in agg.hosts]
        self.assertEqual(sorted(self.HOSTS[:3]), sorted(held))
