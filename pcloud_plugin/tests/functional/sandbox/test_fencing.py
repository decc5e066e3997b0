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

"""An ACTIVE virtual:instance reservation holds its capacity in the real

cloud: in the sandbox (Nova's scheduler with the README's filters, real
Placement), boots that are not the reservation's own cannot take it.

Only compute1 serves plain boots and reservations here (the others are
put in a host flavor pool, disabled); the reservation takes all of its
free memory in two slots.

Each class runs again, as ``...BlazarFilters``, on a second sandbox whose
scheduler also runs Blazar's filters (BlazarFilter,
AggregateInstanceExtraSpecsFilter, AggregateMultiTenancyIsolation): the
README's nova.conf snippet keeps every guarantee beside them.
"""

import datetime
import re
import uuid

from pcloud_plugin.cloud import promises
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

HOST = 'compute1'
SLOTS = 2
BLAZAR_FILTERS = ('BlazarFilter', 'AggregateInstanceExtraSpecsFilter',
                  'AggregateMultiTenancyIsolation')


class _Fence(base.TestCase):
    """The shared sandbox and its clients (fixture.Clients)."""

    # The sandbox whose Nova also runs Blazar's filters, or the plain one.
    blazar_filters = False

    def setUp(self):
        super().setUp()
        cloud = self.useFixture(fixture.SandboxFixture(self.blazar_filters))
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        self.clients = fixture.Clients(self.sandbox)
        self.nova = self.clients.nova
        self.admin, self.demo = self.clients.admin, self.clients.demo
        with open(self.sandbox.path('nova', 'nova.conf')) as f:
            (enabled,) = [line for line in f
                          if line.startswith('enabled_filters')]
        self.assertEqual([self.blazar_filters] * 3,
                         [name in enabled for name in BLAZAR_FILTERS])

    def assert_refused_by_the_pcloud_filter(self):
        """The scheduler's last refusal: the PcloudFilter took out the

        host every filter before it let through (Blazar's, in that
        variant, run before it).
        """
        with open(self.sandbox.log('nova'), errors='replace') as f:
            last = [line for line in f
                    if 'Filtering removed all hosts' in line][-1]
        results = re.findall(r'(\w+): \(start: (\d+), end: (\d+)\)',
                             last)
        self.assertEqual(('PcloudFilter', '1', '0'), results[-1], last)
        ran = {name: (start, end) for name, start, end in results}
        self.assertEqual(
            [('1', '1') if self.blazar_filters else None] * 3,
            [ran.get(name) for name in BLAZAR_FILTERS], last)


class InstanceReservationFence(_Fence):

    def setUp(self):
        super().setUp()
        self.placement = self.clients.placement
        # A slot is half a host here: more than Nova's default quotas.
        project = self.clients.demo_session.get_project_id()
        before = self.nova.quotas.get(project)
        self.nova.quotas.update(project, ram=-1, cores=-1)
        self.addCleanup(self.nova.quotas.update, project, ram=before.ram,
                        cores=before.cores)
        others = sorted(c['name'] for c in self.sandbox.computes
                        if c['name'] != HOST)
        # The others out of reach of plain boots and of reservations.
        pool = 'fence-%s' % uuid.uuid4().hex[:6]
        self.admin.create_host_flavor(pool, 1)
        self.addCleanup(self.admin.delete_host_flavor, pool)
        for name in others:
            fixture.out_of_service(self, self.nova, name)
            self.admin.add_pool_host(pool, name)
            self.addCleanup(self.admin.remove_pool_host, pool, name)

    def _free_memory(self):
        (provider,) = self.placement.get(
            '/resource_providers?name=%s' % HOST).json()[
                'resource_providers']
        inventory = self.placement.get(
            '/resource_providers/%s/inventories' % provider['uuid']).json()[
                'inventories']['MEMORY_MB']
        used = self.placement.get(
            '/resource_providers/%s/usages' % provider['uuid']).json()[
                'usages'].get('MEMORY_MB', 0)
        return int((inventory['total'] - inventory['reserved'])
                   * inventory['allocation_ratio']) - used

    def _boot(self, name, flavor, user):
        found = fixture.boot(self, self.cli, name, flavor, user)
        self.assertEqual(HOST, found['OS-EXT-SRV-ATTR:host'])
        return found

    def _delete(self, server_id, user):
        fixture.delete_server(self.cli, server_id, user)

    def test_no_boot_takes_now_what_a_later_lease_was_promised(self):
        (provider,) = self.placement.get(
            '/resource_providers?name=%s' % HOST).json()[
                'resource_providers']
        memory = self._free_memory() // SLOTS
        start = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.demo._request('POST', '/leases', {
            'name': 'promised', 'events': [],
            'start_date': start.strftime('%Y-%m-%d %H:%M'),
            'end_date': (start + datetime.timedelta(hours=1)).strftime(
                '%Y-%m-%d %H:%M'),
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': SLOTS,
                'vcpus': 1, 'memory_mb': memory, 'disk_gb': 1,
                'affinity': None, 'resource_properties': ''}]})['lease']
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        # An hour before it starts, boots that would still run then (any
        # boot: Placement knows no end) find no room on its host.
        for user in (common.ALT_USER, common.DEMO_USER):
            commands.boot_fails(self.cli, 'before-%s' % user, 'm1.tiny', user)
        # The lease deleted (its claim goes at the next sweep), the room
        # is everyone's again.
        fixture.delete_lease(self.demo, lease['id'])
        self.cli.wait('the promise to go', (
            'openstack', 'reservation', 'lease', 'list'),
            lambda _found: not self.placement.get(
                '/allocations/%s' % promises.promise_consumer(
                    provider['uuid'])).json()['allocations'],
            user=common.DEMO_USER)
        self._boot('after', 'm1.tiny', common.ALT_USER)

    def _boot_check(self, flavor):
        return self.cli.json('openstack', 'pcloud', 'boot', 'check',
                             '--flavor', flavor, user=common.DEMO_USER)

    def test_only_the_reserved_flavor_boots_into_what_a_lease_holds(self):
        memory = self._free_memory() // SLOTS
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.demo._request('POST', '/leases', {
            'name': 'fenced', 'start_date': 'now', 'events': [],
            'end_date': end.strftime('%Y-%m-%d %H:%M'),
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': SLOTS,
                'vcpus': 1, 'memory_mb': memory, 'disk_gb': 1,
                'affinity': None, 'resource_properties': ''}]})['lease']
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        shown = self.cli.wait(
            'the lease to start', ('openstack', 'reservation', 'lease',
                                   'show', lease['id']),
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            user=common.DEMO_USER)
        self.assertEqual('ACTIVE', shown['status'])
        # The reserved flavor's id is the reservation's.
        flavor = fixture.reservation_of(self.sandbox, lease['id'])

        # Another project's plain boot, and the lessee's own: no room.
        for user in (common.ALT_USER, common.DEMO_USER):
            commands.boot_fails(self.cli, 'plain-%s' % user, 'm1.tiny', user)
        # The reserved flavor: one boot per slot, then no more; the boot
        # check says so, from Placement's candidates.
        self.assertTrue(self._boot_check(flavor)['bootable'])
        reserved = [self._boot('reserved-%d' % n, flavor, common.DEMO_USER)
                    for n in range(SLOTS)]
        commands.boot_fails(self.cli, 'reserved-extra', flavor,
                            common.DEMO_USER)
        found = self._boot_check(flavor)
        self.assertFalse(found['bootable'])
        self.assertIn('no room left for flavor', ' '.join(found['refused']))

        # Once the lease has ended (its end made due now), Placement holds
        # nothing for it: the capacity is everyone's again.
        for server in reserved:
            self._delete(server['id'], common.DEMO_USER)
        fixture.end_lease_now(self.sandbox, lease['id'])
        self.cli.wait('the lease to end', (
            'openstack', 'reservation', 'lease', 'show', lease['id']),
            lambda found: found['status'] == 'TERMINATED',
            user=common.DEMO_USER)
        self.assertEqual({}, self.placement.get(
            '/allocations/%s' % flavor).json()['allocations'])
        self.assertGreaterEqual(self._free_memory(), memory * SLOTS)


class HostLeaseFence(_Fence):
    """A pcloud:host lease's host, in the real cloud: only the pcloud's

    boots land there while the lease is ACTIVE (the lessee's and the
    tenants it authorized, with the pcloud hint), none of another project
    or without the hint, none once the lease's end has passed even before
    Blazar's end event has run, and none once the lease has ended.
    """

    def setUp(self):
        super().setUp()
        self.host = sorted(c['name'] for c in self.sandbox.computes)[-1]
        flavor = 'lease-%s' % uuid.uuid4().hex[:6]
        # As the README says an operator pools a host: out of service
        # for plain boots first.
        service = fixture.out_of_service(self, self.nova, self.host)
        self.admin.create_host_flavor(flavor, 1)
        self.addCleanup(self.admin.delete_host_flavor, flavor)
        self.admin.add_pool_host(flavor, self.host)
        self.addCleanup(self.admin.remove_pool_host, flavor, self.host)
        self.nova.services.enable(service.id)
        # The others out of service: a plain boot could go nowhere else.
        for name in sorted(c['name'] for c in self.sandbox.computes):
            if name != self.host:
                fixture.out_of_service(self, self.nova, name)
        self.pcloud = self.demo.create_pcloud('fenced-%s' % flavor)
        self.addCleanup(self.demo.delete_pcloud, self.pcloud['id'])
        self.flavor = flavor

    def test_only_the_lessees_pcloud_boots_on_a_leased_host(self):
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.demo.create_host_lease(
            'fenced-host', 'now', end.strftime('%Y-%m-%d %H:%M'),
            {'amount': 1, 'host_flavor': self.flavor,
             'pcloud_id': self.pcloud['id'], 'lease_type': 'IMMEDIATE'})
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        self.cli.wait('the lease to start', (
            'openstack', 'reservation', 'lease', 'show', lease['id']),
            lambda found: found['status'] == 'ACTIVE',
            user=common.DEMO_USER)
        hint = ('--hint', 'pcloud=%s' % self.pcloud['id'])

        # The lessee, into its pcloud: on the leased host.
        server = fixture.boot(self, self.cli, 'in-lease', 'm1.tiny',
                              common.DEMO_USER, *hint)
        self.assertEqual(self.host, server['OS-EXT-SRV-ATTR:host'])
        # Another project, not authorized, with the hint; anyone without
        # it (the leased host is the only one in service).
        commands.boot_fails(self.cli, 'alt-in-lease', 'm1.tiny',
                            common.ALT_USER, *hint)
        for user in (common.ALT_USER, common.DEMO_USER):
            commands.boot_fails(self.cli, 'plain-%s' % user, 'm1.tiny', user)
        fixture.delete_server(self.cli, server['id'], common.DEMO_USER)

        # A tenant the lessee authorizes on its pcloud, with the hint.
        alt = fixture.session(self.sandbox, common.ALT_USER).get_project_id()
        self.demo.add_tenant(self.pcloud['id'], alt)
        server = fixture.boot(self, self.cli, 'authorized-in-lease',
                              'm1.tiny', common.ALT_USER, *hint)
        self.assertEqual(self.host, server['OS-EXT-SRV-ATTR:host'])
        fixture.delete_server(self.cli, server['id'], common.ALT_USER)

        # The end moved later: the lease's aggregate has it, for the
        # PcloudFilter.
        end += datetime.timedelta(hours=1)
        self.demo._request('PUT', '/leases/%s' % lease['id'], {
            'end_date': end.strftime('%Y-%m-%d %H:%M')})
        aggregate = self._lease_aggregate(lease['id'])
        self.assertEqual(end.strftime('%Y-%m-%dT%H:%M:00Z'),
                         aggregate.metadata['pcloud:lease_end'])
        # Its end passed, Blazar's end event not run yet (late, or its
        # manager down): the host is still in the pcloud, enabled, and
        # takes no boot.
        past = datetime.datetime.utcnow() - datetime.timedelta(minutes=1)
        self.nova.aggregates.set_metadata(aggregate.id, {
            'pcloud:lease_end': past.strftime('%Y-%m-%dT%H:%M:%SZ')})
        self.assertEqual(['enabled'], [h['state'] for h in
                                       self.demo.list_hosts(
                                           self.pcloud['id'])])
        commands.boot_fails(self.cli, 'past-the-end', 'm1.tiny',
                            common.DEMO_USER, *hint)
        self.assert_refused_by_the_pcloud_filter()

        # Ended: the host has left the pcloud; the hint boots nowhere.
        fixture.end_lease_now(self.sandbox, lease['id'])
        self.cli.wait('the lease to end', (
            'openstack', 'reservation', 'lease', 'show', lease['id']),
            lambda found: found['status'] == 'TERMINATED',
            user=common.DEMO_USER)
        commands.boot_fails(self.cli, 'after-lease', 'm1.tiny',
                            common.DEMO_USER, *hint)

    def _lease_aggregate(self, lease_id):
        name = 'pcloud-lease:%s' % fixture.reservation_of(self.sandbox,
                                                          lease_id)
        (found,) = [a for a in self.nova.aggregates.list()
                    if a.name == name]
        return found


class InstanceReservationFenceBlazarFilters(InstanceReservationFence):
    blazar_filters = True


class HostLeaseFenceBlazarFilters(HostLeaseFence):
    blazar_filters = True
