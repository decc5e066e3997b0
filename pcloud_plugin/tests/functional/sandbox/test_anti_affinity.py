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

"""seeds/003's scenario, booted in the sandbox: a virtual:instance lease

with affinity false, its servers booted as the spec says (the reserved
flavor and ``--hint group=<the reservation's server group>``), each on a
host of its own; with affinity true, all on one host. One more boot of
the reserved flavor than the lease's amount is refused.

Three computes are left for the reservations; the others are put in a
host flavor pool, disabled (out of reach of plain boots and of
reservations, as in test_fencing). Each test runs again on a sandbox
whose Nova also runs Blazar's filters.
"""

import datetime
import uuid

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

# Computes left in service for the reservations.
HOSTS = 3


class InstanceReservationAffinity(base.TestCase):

    # Nova also runs Blazar's filters (the ...BlazarFilters class), or not.
    blazar_filters = False

    def setUp(self):
        super().setUp()
        cloud = self.useFixture(fixture.SandboxFixture(self.blazar_filters))
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        clients = fixture.Clients(self.sandbox)
        self.demo = clients.demo
        computes = sorted(c['name'] for c in self.sandbox.computes)
        self.assertGreater(len(computes), HOSTS, 'the sandbox needs one '
                           'compute more than the reservations use')
        self.hosts = computes[:HOSTS]
        pool = 'spread-%s' % uuid.uuid4().hex[:6]
        clients.admin.create_host_flavor(pool, 1)
        self.addCleanup(clients.admin.delete_host_flavor, pool)
        for name in computes[HOSTS:]:
            fixture.out_of_service(self, clients.nova, name)
            clients.admin.add_pool_host(pool, name)
            self.addCleanup(clients.admin.remove_pool_host, pool, name)

    def _lease(self, name, amount, affinity):
        """An ACTIVE lease of ``amount`` small slots, as the demo member:

        (the reserved flavor, the reservation's server group).
        """
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.demo._request('POST', '/leases', {
            'name': name, 'start_date': 'now', 'events': [],
            'end_date': end.strftime('%Y-%m-%d %H:%M'),
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': amount,
                'vcpus': 1, 'memory_mb': 256, 'disk_gb': 1,
                'affinity': affinity, 'resource_properties': ''}]})['lease']
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        shown = self.cli.wait(
            'lease %s to start' % name, ('openstack', 'reservation', 'lease',
                                         'show', lease['id']),
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            user=common.DEMO_USER)
        self.assertEqual('ACTIVE', shown['status'])
        # What the lease shows its owner: seeds/003's flavor and group.
        (reservation,) = self.demo._request(
            'GET', '/leases/%s' % lease['id'])['lease']['reservations']
        self.assertEqual(fixture.reservation_of(self.sandbox, lease['id']),
                         reservation['id'])
        self.assertEqual(reservation['id'], reservation['flavor_id'])
        group = self.cli.json('openstack', 'server', 'group', 'show',
                              reservation['server_group_id'])
        self.assertEqual(['affinity' if affinity else 'anti-affinity'],
                         _policies(group))
        return reservation['flavor_id'], reservation['server_group_id']

    def _boot(self, name, flavor, group):
        """Boot as the demo member into the reservation; its host."""
        return fixture.boot(self, self.cli, name, flavor, common.DEMO_USER,
                            '--hint', 'group=%s' % group)[
                                'OS-EXT-SRV-ATTR:host']

    def _boot_all(self, prefix, amount, affinity):
        """The lease's servers, then one more: refused. Their hosts."""
        flavor, group = self._lease(prefix, amount, affinity)
        hosts = [self._boot('%s-%d' % (prefix, n), flavor, group)
                 for n in range(amount)]
        # Without the group hint: only the reservation's count refuses it.
        commands.boot_fails(self.cli, '%s-extra' % prefix, flavor,
                            common.DEMO_USER)
        self.assertLessEqual(set(hosts), set(self.hosts))
        return hosts

    def test_anti_affinity_puts_each_server_on_a_host_of_its_own(self):
        hosts = self._boot_all('spread', HOSTS, False)
        self.assertEqual(HOSTS, len(set(hosts)), hosts)

    def test_affinity_puts_every_server_on_one_host(self):
        hosts = self._boot_all('together', 2, True)
        self.assertEqual(1, len(set(hosts)), hosts)


def _policies(group):
    """A server group's policies, whichever microversion showed them."""
    if group.get('policy'):
        return [group['policy']]
    policies = group['policies']
    return policies.split(', ') if isinstance(policies, str) else policies


class InstanceReservationAffinityBlazarFilters(InstanceReservationAffinity):
    """The same with BlazarFilter, AggregateInstanceExtraSpecsFilter and

    AggregateMultiTenancyIsolation enabled too: the reserved flavor's
    affinity_id extra spec must match the reservation's aggregate.
    """
    blazar_filters = True
