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

"""Every Pcloud operation through python-novaclient against a real Nova."""

import fixtures
from novaclient import exceptions as nova_exc

from pcloud_plugin import exception
from pcloud_plugin.tests.functional.nova import base

ADMIN = base.ADMIN
ALICE = base.user('alice')
BOB = base.user('bob')


class HostFlavorTests(base.PcloudNovaTestCase):

    def _service_status(self, host):
        svc, = self.service.nova.services.list(host=host,
                                               binary='nova-compute')
        return svc.status

    def test_admin_manages_host_flavors_and_pools(self):
        made = self.service.create_host_flavor(ADMIN, 'big', '2x8 cores', 2)
        self.assertEqual({'id': 'big', 'description': '2x8 cores',
                          'units': 2}, made)
        self.assertRaises(exception.HostFlavorExists,
                          self.service.create_host_flavor, ADMIN, 'big',
                          '', 1)
        agg, = self.service.nova.aggregates.list()
        self.assertEqual('Pcloud:host_flavor:big', agg.name)
        self.assertEqual('host_flavor_pool', agg.metadata['pcloud:type'])

        # Enabled compute services are refused; so are busy hosts.
        e = self.assertRaises(exception.HostNotEligible,
                              self.service.add_pool_host, ADMIN, 'big',
                              'host1')
        self.assertIn('disable it first', str(e))
        server = self._create_server(host='host2', networks='none')
        self.disable_compute('host2')
        e = self.assertRaises(exception.HostNotEligible,
                              self.service.add_pool_host, ADMIN, 'big',
                              'host2')
        self.assertIn('runs 1 instance(s)', str(e))
        self._delete_server(server)

        for host in ('host1', 'host2'):
            self.disable_compute(host)
            self.service.add_pool_host(ADMIN, 'big', host)
            self.assertEqual('enabled', self._service_status(host))
        self.assertEqual([dict(made, free_hosts=2)],
                         self.service.list_host_flavors(ALICE))

        pcloud = self.service.create_pcloud(ALICE, 'mine')['id']
        self.service.allocate_host(ALICE, pcloud, 'web', 'big')
        (allocated, holder), = self.service.show_host_flavor(
            ADMIN, 'big')['allocated_hosts'].items()
        self.assertEqual(pcloud, holder)
        free, = self.service.show_host_flavor(ADMIN, 'big')['free_hosts']
        self.assertRaises(exception.HostAllocated,
                          self.service.remove_pool_host, ADMIN, 'big',
                          allocated)
        self.service.remove_pool_host(ADMIN, 'big', free)
        self.assertEqual('disabled', self._service_status(free))
        self.assertRaises(exception.HostFlavorInUse,
                          self.service.delete_host_flavor, ADMIN, 'big')
        self.service.release_host(ALICE, pcloud, 'web')
        self.service.remove_pool_host(ADMIN, 'big', allocated)
        self.service.delete_host_flavor(ADMIN, 'big')
        self.assertEqual([], self.service.list_host_flavors(ALICE))
        self.assertRaises(exception.Forbidden,
                          self.service.create_host_flavor, ALICE, 'x', '',
                          1)


class PcloudTests(base.PcloudNovaTestCase):

    def setUp(self):
        super().setUp()
        self.make_pool(units=2)

    def _aggregates(self):
        return sorted((a.name, sorted(a.hosts), sorted(a.metadata.items()))
                      for a in self.service.nova.aggregates.list())

    def test_lifecycle_and_users_never_see_a_hostname(self):
        made = self.service.create_pcloud(ALICE, 'my cloud')
        pcloud = made['id']
        self.assertEqual(['alice'], made['tenants'])
        self.assertEqual([made], self.service.list_pclouds(ALICE))
        self.assertEqual([], self.service.list_pclouds(BOB))
        self.assertRaises(exception.PcloudNotFound,
                          self.service.show_pcloud, BOB, pcloud)

        self.service.allocate_host(ALICE, pcloud, 'db', 'big')
        self.service.allocate_host(ALICE, pcloud, 'web', 'big')
        self.assertRaises(exception.PcloudHostNameExists,
                          self.service.allocate_host, ALICE, pcloud, 'web',
                          'big')
        self.service.enable_host(ALICE, pcloud, 'web')
        server, = self.boot(self.tenant_api('alice'), pcloud)
        seen = repr([
            self.service.show_pcloud(ALICE, pcloud),
            self.service.list_pclouds(ALICE),
            self.service.list_hosts(ALICE, pcloud),
            self.service.list_host_flavors(ALICE),
        ])
        for host in self.HOSTS:
            self.assertNotIn(host, seen)
        self.assertEqual(
            [{'name': 'db', 'state': 'disabled', 'flavor_id': 'big',
              'instances': []},
             {'name': 'web', 'state': 'enabled', 'flavor_id': 'big',
              'instances': [server['id']]}],
            self.service.list_hosts(ALICE, pcloud))

        self.assertRaises(exception.PcloudNotEmpty,
                          self.service.delete_pcloud, ALICE, pcloud)
        self.service.release_host(ALICE, pcloud, 'db')
        self.service.disable_host(ALICE, pcloud, 'web')
        self.assertRaises(exception.PcloudHostBusy,
                          self.service.release_host, ALICE, pcloud, 'web')
        self._delete_server(server)
        self.service.release_host(ALICE, pcloud, 'web')
        self.service.delete_pcloud(ALICE, pcloud)
        self.assertEqual([], self.service.list_pclouds(ALICE))
        self.assertEqual(3, self.service.list_host_flavors(
            ALICE)[0]['free_hosts'])

    def test_quota_refused_before_any_aggregate_is_touched(self):
        self.flags(units_quota=3, group='pcloud')
        pcloud = self.service.create_pcloud(ALICE, 'mine')['id']
        self.service.allocate_host(ALICE, pcloud, 'a', 'big')
        before = self._aggregates()
        e = self.assertRaises(exception.QuotaExceeded,
                              self.service.allocate_host, ALICE, pcloud, 'b',
                              'big')
        self.assertIn('would hold 4 quota units, over its limit of 3',
                      str(e))
        self.assertEqual(before, self._aggregates())
        self.flags(project_units_quota={'alice': 4}, group='pcloud')
        self.service.allocate_host(ALICE, pcloud, 'b', 'big')

    def test_nova_failing_midway_leaves_no_half_allocated_host(self):
        pcloud = self.service.create_pcloud(ALICE, 'mine')['id']
        before = self._aggregates()
        # Nova's own aggregate code fails: the API answers 500.
        with fixtures.MockPatch(
                'nova.compute.api.AggregateAPI.add_host_to_aggregate',
                side_effect=RuntimeError('compute DB went away')):
            e = self.assertRaises(exception.NovaError,
                                  self.service.allocate_host, ALICE, pcloud,
                                  'a', 'big')
        self.assertIn('add a host to pcloud', str(e))
        self.assertEqual(before, self._aggregates())

        # Nova fails after the host joined, when it is counted: given back.
        nova = self.service.nova
        real_list = nova.aggregates.list
        calls = []

        def list_failing_second_time():
            calls.append(1)
            if len(calls) == 2:
                raise nova_exc.ClientException(503, 'Service Unavailable')
            return real_list()
        self.useFixture(fixtures.MockPatchObject(
            nova.aggregates, 'list', side_effect=list_failing_second_time))
        self.assertRaises(exception.NovaError, self.service.allocate_host,
                          ALICE, pcloud, 'a', 'big')
        self.assertEqual(before, self._aggregates())

        # Either way, trying again just works.
        self.service.allocate_host(ALICE, pcloud, 'a', 'big')
        self.assertEqual(['a'], self.service.show_pcloud(
            ALICE, pcloud)['hosts'])

    def test_ratios_set_in_placement_and_restored_on_release(self):
        pcloud = self.service.create_pcloud(ALICE, 'mine')['id']
        self.service.allocate_host(ALICE, pcloud, 'a', 'big')
        rp = self._get_provider_uuid_by_host(self.pcloud_hosts(pcloud)['a'])

        def ratios():
            inv = self._get_provider_inventory(rp)
            return (inv['VCPU']['allocation_ratio'],
                    inv['MEMORY_MB']['allocation_ratio'])
        own = ratios()
        shown = self.service.set_allocation_ratios(
            ALICE, pcloud, cpu_allocation_ratio=2.0,
            ram_allocation_ratio=1.25)
        self.assertEqual((2.0, 1.25), (shown['cpu_allocation_ratio'],
                                       shown['ram_allocation_ratio']))
        self.assertEqual((2.0, 1.25), ratios())
        md = {a.name: a.metadata for a in
              self.service.nova.aggregates.list()}['Pcloud:' + pcloud]
        self.assertEqual(('2.0', '1.25'),
                         (md['pcloud:cpu_allocation_ratio'],
                          md['pcloud:ram_allocation_ratio']))
        e = self.assertRaises(exception.InvalidField,
                              self.service.set_allocation_ratios, ALICE,
                              pcloud, cpu_allocation_ratio='many')
        self.assertEqual('cpu_allocation_ratio', e.kwargs['field'])
        self.service.release_host(ALICE, pcloud, 'a')
        self.assertEqual(own, ratios())
