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

"""One truth about capacity, across the sandbox's services (issue 15).

What a lease, an allocation for good, an instance left running and a
compute's own size take or give is seen by everything else that hands
out capacity, with no command run: the Pcloud API and both Blazar
plugins go by the capacity ledger, which blazar-manager mirrors from
Placement every ``[pcloud] placement_mirror_interval`` seconds (the
sandbox sets it short).
"""

import configparser
import datetime
import time
import uuid

from pcloud_plugin.cloud import mirror
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.pcloud import aggregates
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox.demo import placement
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture


def _minute(**delta):
    """A lease date ``delta`` from now, to the whole minute (UTC)."""
    return (datetime.datetime.utcnow()
            + datetime.timedelta(**delta)).strftime('%Y-%m-%d %H:%M')


class _Capacity(base.TestCase):
    """The shared sandbox, its clients, and what the tests make in it."""

    # The sandbox whose Nova also runs Blazar's filters, or the plain one.
    blazar_filters = False

    def setUp(self):
        super().setUp()
        cloud = self.useFixture(fixture.SandboxFixture(self.blazar_filters))
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        clients = fixture.Clients(self.sandbox)
        self.nova, self.placement = clients.nova, clients.placement
        self.admin, self.demo = clients.admin, clients.demo
        self.alt = pcloud_client.Client(
            fixture.session(self.sandbox, common.ALT_USER))
        self.computes = sorted(c['name'] for c in self.sandbox.computes)

    # --- pools and pclouds ------------------------------------------------

    def _pool(self, *hosts, units=1):
        """A new host flavor (of ``units``) whose pool holds ``hosts``."""
        flavor = 'truth-%s' % uuid.uuid4().hex[:6]
        self.admin.create_host_flavor(flavor, units)
        self.addCleanup(self.admin.delete_host_flavor, flavor)
        for host in hosts:
            self._pool_host(flavor, host)
        return flavor

    def _pool_host(self, flavor, host):
        # As the README says: out of service for plain boots first.
        fixture.out_of_service(self, self.nova, host)
        self.admin.add_pool_host(flavor, host)
        self.addCleanup(self.admin.remove_pool_host, flavor, host)

    def _pcloud(self, client):
        pcloud = client.create_pcloud('truth-%s' % uuid.uuid4().hex[:6])
        self.addCleanup(self._drop_pcloud, client, pcloud['id'])
        return pcloud['id']

    @staticmethod
    def _drop_pcloud(client, pcloud):
        # Its hosts for good first: one an allocation took when it
        # should not have included, so later tests find the pool empty.
        for host in client.list_hosts(pcloud):
            client.release_host(pcloud, host['name'])
        client.delete_pcloud(pcloud)

    def _holders(self, flavor):
        """{pool host: the pcloud that has it now, or None}."""
        return {h['host']: h['pcloud_id']
                for h in self.admin.list_pool_hosts(flavor)}

    # --- leases -----------------------------------------------------------

    def _lease(self, client, reservation, start='now', end=None):
        lease = client._request('POST', '/leases', {
            'name': 'truth-%s' % uuid.uuid4().hex[:6], 'events': [],
            'start_date': start, 'end_date': end or _minute(hours=1),
            'reservations': [reservation]})['lease']
        self.addCleanup(fixture.delete_lease, client, lease['id'])
        return lease

    def _host_lease(self, client, pcloud, flavor, amount=1, **window):
        return self._lease(client, {
            'resource_type': 'pcloud:host', 'amount': amount,
            'host_flavor': flavor, 'pcloud_id': pcloud,
            'lease_type': 'SCHEDULE' if window else 'IMMEDIATE'}, **window)

    def _took_after_move(self, lease, flavor, holders, server, hosts,
                         timeout):
        """The demo project's ``lease`` is ACTIVE as seeds/001 says (Blazar

        says ACTIVE while it waits), the pool's ``holders`` as given, and
        ``server`` runs on one of ``hosts``.
        """
        shown = self.cli.wait('lease %s to hold its hosts' % lease['name'], (
            'openstack', 'pcloud', 'lease', 'show', lease['id']),
            lambda found: found['state'] in ('ACTIVE', 'TIMEDOUT'),
            user=common.DEMO_USER, timeout=timeout)
        self.assertEqual('ACTIVE', shown['state'])
        self.assertEqual(holders, self._holders(flavor))
        found = self.cli.json('openstack', 'server', 'show', server)
        self.assertEqual('ACTIVE', found['status'])
        self.assertIn(found['OS-EXT-SRV-ATTR:host'], hosts)

    @staticmethod
    def _slot(memory_mb):
        return {'resource_type': 'virtual:instance', 'amount': 1,
                'vcpus': 1, 'memory_mb': memory_mb, 'disk_gb': 1,
                'affinity': None, 'resource_properties': ''}

    def _settled(self, lease, user, *statuses):
        """The lease's status once it is one of ``statuses``."""
        return self.cli.wait(
            'lease %s' % lease['name'], ('openstack', 'reservation', 'lease',
                                         'show', lease['id']),
            lambda found: found['status'] in statuses, user=user)['status']

    def _refused(self, call, *args, **kwargs):
        """The message of the 409 that ``call`` is refused with."""
        refused = self.assertRaises(pcloud_client.PcloudError, call, *args,
                                    **kwargs)
        self.assertEqual(409, refused.code, refused)
        return str(refused)

    def _slot_hosts(self, lease):
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        return fixture.ledger_sql(
            self.sandbox, 'SELECT host_name FROM '
            'pcloud_instance_reservation_slots WHERE reservation_id = :rid',
            rid=rid)

    # --- servers ----------------------------------------------------------

    def _boot(self, name, flavor, user, *options):
        """A server that runs: its host."""
        server = self.cli.json('openstack', 'server', 'create', '--flavor',
                               flavor, '--image', 'cirros', '--nic', 'none',
                               '--wait', *options, name, user=user)
        self.addCleanup(self._delete_server, server['id'])
        found = self.cli.json('openstack', 'server', 'show', server['id'])
        self.assertEqual('ACTIVE', found['status'], found)
        return server['id'], found['OS-EXT-SRV-ATTR:host']

    def _delete_server(self, server_id):
        try:
            self.cli.run('openstack', 'server', 'delete', '--wait',
                         server_id)
        except commands.CommandFailed as e:
            if 'No Server found' not in str(e):
                raise

    # --- Placement and the ledger -----------------------------------------

    def _provider(self, host):
        (found,) = self.placement.get('/resource_providers?name=%s'
                                      % host).json()['resource_providers']
        return found['uuid']

    def _memory_used(self, provider):
        """What Placement allocates of the provider's MEMORY_MB."""
        return self.placement.get(
            '/resource_providers/%s/usages' % provider).json()[
                'usages'].get('MEMORY_MB', 0)

    def _ledger_memory(self, consumer):
        """The MEMORY_MB a ledger consumer holds (0: none)."""
        return sum(fixture.ledger_sql(
            self.sandbox, 'SELECT a.used FROM allocations a JOIN '
            'resource_classes c ON c.id = a.resource_class_id WHERE '
            "a.consumer_id = :consumer AND c.name = 'MEMORY_MB'",
            consumer=consumer))

    def _blazar_option(self, name, fallback=None):
        """An integer option of the sandbox's blazar.conf [pcloud]."""
        conf = configparser.RawConfigParser()
        conf.read(self.sandbox.path('blazar', 'blazar.conf'))
        return conf.getint('pcloud', name, fallback=fallback)

    def _mirror_interval(self):
        return self._blazar_option('placement_mirror_interval')

    def _until(self, title, check, timeout):
        """Seconds until ``check()`` holds (at most ``timeout``)."""
        began = time.monotonic()
        while not check():
            if time.monotonic() - began > timeout:
                self.fail('%s: not after %ds' % (title, timeout))
            time.sleep(0.5)
        return time.monotonic() - began


class LeaseAndAllocation(_Capacity):
    """A host booked by a lease and a host allocated for good refuse

    each other, in either order: both are claims in the ledger.
    """

    def test_each_refuses_the_other_in_either_order(self):
        host = self.computes[-1]
        flavor = self._pool(host)
        pcloud = self._pcloud(self.demo)

        # A lease books the pool's one host for later: no allocation for
        # good may take it now, and the refusal says from when.
        start, end = _minute(hours=2), _minute(hours=3)
        lease = self._host_lease(self.demo, pcloud, flavor, start=start,
                                 end=end)
        self.assertEqual('PENDING', self._settled(lease, common.DEMO_USER,
                                                  'PENDING', 'ERROR'))
        refusal = self._refused(self.demo.allocate_host, pcloud, 'for-good',
                                flavor)
        self.assertIn('booked from %s' % start.replace(' ', 'T'), refusal)
        self.assertEqual({host: None}, self._holders(flavor))

        # Allocated for good (claimed whole in the ledger, open-ended): a
        # lease for more hosts than are left is refused, later too.
        fixture.delete_lease(self.demo, lease['id'])
        self.demo.allocate_host(pcloud, 'for-good', flavor)
        self.assertEqual({host: pcloud}, self._holders(flavor))
        self.assertEqual(1, len(fixture.ledger_sql(
            self.sandbox, 'SELECT id FROM consumers WHERE uuid = :consumer',
            consumer=res_db.WHOLE_HOST + self._provider(host))))
        for window in ({}, {'start': start, 'end': end}):
            self._refused(self._host_lease, self.demo, pcloud, flavor,
                          **window)


class LeasedHostRatiosAndQuota(_Capacity):
    """A host a lease takes into a pcloud runs at the pcloud's allocation

    ratios while it is held and at its own again after (nothing of them
    left in the pcloud), and counts against the project's units quota
    meanwhile.
    """

    def _vcpu_ratios(self, host):
        """(Placement's, the ledger's) VCPU allocation ratio of a host."""
        provider = self._provider(host)
        placement = self.placement.get(
            '/resource_providers/%s/inventories/VCPU' % provider).json()[
                'allocation_ratio']
        (ledger,) = fixture.ledger_sql(
            self.sandbox, 'SELECT i.allocation_ratio FROM inventories i '
            'JOIN resource_classes c ON c.id = i.resource_class_id JOIN '
            'resource_providers p ON p.id = i.resource_provider_id WHERE '
            "c.name = 'VCPU' AND p.uuid = :uuid", uuid=provider)
        return placement, ledger

    def test_a_leased_host_takes_the_pclouds_ratio_and_gives_it_back(self):
        host = self.computes[-1]
        flavor = self._pool(host)
        pcloud = self._pcloud(self.demo)
        own, _ledger = self._vcpu_ratios(host)
        self.demo.set_allocation_ratios(pcloud, cpu=own * 2)

        lease = self._host_lease(self.demo, pcloud, flavor)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual((own * 2, own * 2), self._vcpu_ratios(host))

        fixture.delete_lease(self.demo, lease['id'])
        self.assertEqual((own, own), self._vcpu_ratios(host))
        self.assertEqual([], [
            key for aggregate in self.nova.aggregates.list()
            for key in aggregate.metadata
            if key.startswith(aggregates.SAVED_RATIOS_PREFIX)])

    def test_a_leased_host_counts_against_the_units_quota(self):
        quota = self._blazar_option('units_quota', fallback=10)
        # Each host of the flavor takes the project's whole quota.
        flavor = self._pool(*self.computes[-2:], units=quota)
        pcloud = self._pcloud(self.demo)
        lease = self._host_lease(self.demo, pcloud, flavor)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.demo.allocate_host, pcloud,
            'for-good', flavor)
        self.assertEqual(403, refused.code, refused)
        self.assertIn('quota units', str(refused))

        fixture.delete_lease(self.demo, lease['id'])
        self.demo.allocate_host(pcloud, 'for-good', flavor)


class HandedOver(_Capacity):
    """A pool host an ended lease left running the alt project's instance:

    an allocation for good is refused; the next lease moves the instance
    away and takes the host, its lessee having been told before.
    """

    def _leftover(self, busy, flavor, end=None):
        """The alt project's lease of ``busy`` (its end at ``end`` or an

        hour away), and its server booted there with the pcloud hint.
        """
        alt_pcloud = self._pcloud(self.alt)
        lease = self._host_lease(self.alt, alt_pcloud, flavor, start='now',
                                 end=end or _minute(hours=1))
        self.assertEqual('ACTIVE', self._settled(lease, common.ALT_USER,
                                                 'ACTIVE', 'ERROR'))
        server, host = self._boot('left-behind', 'm1.tiny', common.ALT_USER,
                                  '--hint', 'pcloud=%s' % alt_pcloud)
        self.assertEqual(busy, host)
        return lease, server

    def test_an_allocation_for_good_gets_no_host_an_ended_lease_left(self):
        busy = self.computes[-1]
        flavor = self._pool(busy)
        lease, server = self._leftover(busy, flavor)
        fixture.end_lease_now(self.sandbox, lease['id'])
        self.assertEqual('TERMINATED', self._settled(
            lease, common.ALT_USER, 'TERMINATED', 'ERROR'))
        self.assertEqual({busy: None}, self._holders(flavor))
        refusal = self._refused(self.demo.allocate_host,
                                self._pcloud(self.demo), 'h1', flavor)
        self.assertIn('runs 1 instance(s) an ended lease left', refusal)
        # Nothing moves where no next holder waits (seeds/001).
        self.assertEqual(
            ('ACTIVE', busy), tuple(self.cli.json(
                'openstack', 'server', 'show', server)[key]
                for key in ('status', 'OS-EXT-SRV-ATTR:host')))

    def test_the_next_lease_starts_on_the_host_its_last_lessee_left(self):
        busy = self.computes[-1]
        others = [h for h in self.computes if h != busy]
        flavor = self._pool(busy)
        change = _minute(minutes=2)
        first, server = self._leftover(busy, flavor, end=change)
        pcloud = self._pcloud(self.demo)
        following = self._host_lease(self.demo, pcloud, flavor,
                                     start=change, end=_minute(hours=1))
        # The first lessee is told at once (its end is within the lead).
        shown = self.cli.wait('the first lessee to be told', (
            'openstack', 'pcloud', 'lease', 'show', first['id']),
            lambda found: found['reservations'][0]['hand_over'],
            user=common.ALT_USER)
        (name,) = shown['reservations'][0]['hosts']
        self.assertEqual([name],
                         shown['reservations'][0]['hand_over']['hosts'])
        rid = fixture.reservation_of(self.sandbox, first['id'])
        with open(self.sandbox.log('blazar'), errors='replace') as f:
            self.assertTrue([line for line in f
                             if 'pcloud.host_reservation.hand_over' in line
                             and rid in line])

        # At the change the server moves off and the next lease is ACTIVE.
        self._took_after_move(following, flavor, {busy: pcloud}, server,
                              others, timeout=240)
        # The next lessee's boot lands on the host.
        _server, host = self._boot('next', 'm1.tiny', common.DEMO_USER,
                                   '--hint', 'pcloud=%s' % pcloud)
        self.assertEqual(busy, host)


class HandedOverBlazarFilters(HandedOver):
    blazar_filters = True


class MovedOffAnEndedLease(_Capacity):
    """seeds/001's BEST-EFFORT case: the alt project's instance, booted

    with ``--hint pcloud=<its pcloud>`` while its lease held a pool host,
    still runs there after the lease ended; the demo project's
    BEST-EFFORT lease over that pool moves it to an ordinary host (Nova
    keeps the hint for the move) and is ACTIVE, or, when no ordinary
    host could take it now, is refused at once.
    """

    def _traits_known(self, hosts, disabled):
        """Wait until the ledger has the computes of ``hosts`` as

        ``disabled`` or not (Nova's COMPUTE_STATUS_DISABLED trait, which
        Nova's event brings).
        """
        want = set(hosts) if disabled else set()
        deadline = time.monotonic() + 60
        while set(hosts) & set(fixture.ledger_sql(
                self.sandbox, 'SELECT r.name FROM resource_providers r '
                'JOIN resource_provider_traits rt ON '
                'rt.resource_provider_id = r.id JOIN traits t ON t.id = '
                "rt.trait_id WHERE t.name = 'COMPUTE_STATUS_DISABLED'")
                ) != want:
            if time.monotonic() > deadline:
                self.fail('the ledger does not have %s %s' % (
                    sorted(hosts), 'disabled' if disabled else 'enabled'))
            time.sleep(0.2)

    def test_best_effort_moves_the_instance_an_ended_lease_left(self):
        busy = self.computes[-1]
        others = [h for h in self.computes if h != busy]
        flavor = self._pool(busy)
        alt_pcloud = self._pcloud(self.alt)
        lease = self._host_lease(self.alt, alt_pcloud, flavor)
        self.assertEqual('ACTIVE', self._settled(lease, common.ALT_USER,
                                                 'ACTIVE', 'ERROR'))
        server, host = self._boot('left-behind', 'm1.tiny', common.ALT_USER,
                                  '--hint', 'pcloud=%s' % alt_pcloud)
        self.assertEqual(busy, host)
        fixture.end_lease_now(self.sandbox, lease['id'])
        self.assertEqual('TERMINATED', self._settled(
            lease, common.ALT_USER, 'TERMINATED', 'ERROR'))
        pcloud = self._pcloud(self.demo)
        best_effort = {
            'resource_type': 'pcloud:host', 'amount': 1,
            'host_flavor': flavor, 'pcloud_id': pcloud,
            'lease_type': 'BEST-EFFORT', 'timeout': 5}

        # No ordinary host takes new instances: refused at once, saying
        # how many cannot move, and nothing is left of the lease.
        services = [fixture.out_of_service(self, self.nova, h)
                    for h in others]
        self._traits_known(others, disabled=True)
        refusal = self._refused(self._lease, self.demo, best_effort)
        self.assertIn('run 1 of them, and 1 of these cannot move', refusal)
        self.assertEqual([0], fixture.ledger_sql(
            self.sandbox, 'SELECT COUNT(*) FROM pcloud_host_reservations '
            'WHERE pcloud_id = :pcloud', pcloud=pcloud))
        self.assertEqual({busy: None}, self._holders(flavor))

        # With room on them again, the lease moves the instance there and
        # takes the host.
        for service in services:
            self.nova.services.enable(service.id)
        self._traits_known(others, disabled=False)
        moving = self._lease(self.demo, best_effort)
        self._took_after_move(moving, flavor, {busy: pcloud}, server, others,
                              timeout=120)


class MovedOffAnEndedLeaseBlazarFilters(MovedOffAnEndedLease):
    blazar_filters = True


class UsageOutsideReservations(_Capacity):
    """An on-demand boot's memory is not promised to a reservation: the

    ledger holds it (the Placement mirror), with no pcloud-manage run.
    Only one compute is open to boots and reservations here (the others
    in a host flavor pool).
    """

    def test_an_on_demand_boot_takes_what_a_reservation_cannot_have(self):
        host = self.computes[0]
        self._pool(*self.computes[1:])
        provider = self._provider(host)
        free = placement.free(self.sandbox, 'MEMORY_MB')[host]
        flavor = max((f for f in self.nova.flavors.list()
                      if f.name.startswith('m1.') and f.ram <= free),
                     key=lambda f: f.ram)
        server, booted_on = self._boot('on-demand', flavor.name,
                                       common.ALT_USER)
        self.assertEqual(host, booted_on)
        # A slot that fits only if the server's memory were free.
        slot = self._slot(free - flavor.ram // 2)
        self._refused(self._lease, self.demo, slot)

        # The ledger holds what Placement says others use, open-ended.
        interval = self._mirror_interval()
        usage = mirror.usage_consumer(provider)
        self._until('the ledger to hold the boot', lambda: (
            self._ledger_memory(usage) == self._memory_used(provider)
            >= flavor.ram), 4 * interval)

        # Gone from Placement, gone from the ledger: the slot fits.
        self._delete_server(server)
        self._until('the ledger to let the boot go', lambda: (
            self._ledger_memory(usage) == 0), 4 * interval)
        lease = self._lease(self.demo, slot)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual([host], self._slot_hosts(lease))


class EndedReservation(_Capacity):
    """A host whose instance reservation ended takes boots at once, also

    when its nova-compute knows the reservation's provider (it caches its
    provider tree; here Nova restarts while the lease is active).
    """

    def test_a_host_takes_boots_right_after_its_reservation_ends(self):
        host = self.computes[0]
        self._pool(*self.computes[1:])
        lease = self._lease(self.demo, self._slot(512))
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual([host], self._slot_hosts(lease))
        self.sandbox.restart('nova')

        fixture.delete_lease(self.demo, lease['id'])
        _server, booted_on = self._boot('after-lease', 'm1.tiny',
                                        common.ALT_USER)
        self.assertEqual(host, booted_on)


class CapacityChange(_Capacity):
    """A compute that grew is reservable within the mirror's interval,

    with no command run: nova-compute reports the resized host to
    Placement, and the ledger follows.
    """

    def test_a_grown_compute_is_reservable_without_a_command(self):
        interval = self._mirror_interval()
        # The roomiest compute, then a slot more than it has free.
        free = placement.free(self.sandbox, 'MEMORY_MB')
        host = max(free, key=free.get)
        provider = self._provider(host)
        total = self.placement.get(
            '/resource_providers/%s/inventories/MEMORY_MB' % provider).json(
        )['total']
        slot = self._slot(free[host] + 1024)
        self._refused(self._lease, self.demo, slot)

        def ledger_total(expected):
            return fixture.ledger_sql(
                self.sandbox, 'SELECT i.total FROM inventories i JOIN '
                'resource_classes c ON c.id = i.resource_class_id WHERE '
                "c.name = 'MEMORY_MB' AND i.resource_provider_id = (SELECT "
                'id FROM resource_providers WHERE uuid = :uuid)',
                uuid=provider) == [expected]

        # Set in Placement by hand, nova-compute would put its own figure
        # back when it next reads its provider from Placement.
        (compute,) = [c for c in self.sandbox.computes if c['name'] == host]
        self.sandbox.resize_compute(host,
                                    memory_mb=compute['memory_mb'] + 2048)
        # The next test finds the ledger as Placement is again.
        self.addCleanup(self._until, 'the ledger to see it shrink back',
                        lambda: ledger_total(total), 6 * interval)
        self.addCleanup(self.sandbox.resize_compute, host,
                        memory_mb=compute['memory_mb'])
        took = self._until('the ledger to see it grow',
                           lambda: ledger_total(total + 2048), 6 * interval)
        # One pass, give or take the pass under way.
        self.assertLessEqual(took, 2 * interval, took)
        lease = self._lease(self.demo, slot)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual([host], self._slot_hosts(lease))

    def test_an_added_compute_is_reservable_without_a_command(self):
        interval = self._mirror_interval()
        free = max(placement.free(self.sandbox, 'MEMORY_MB').values())
        slot = self._slot(free + 1024)
        self._refused(self._lease, self.demo, slot)

        # As an operator adds a host: nova-compute starts on it, reports
        # to Placement, and discovery maps it; nothing of ours is run.
        host = self.sandbox.add_compute(vcpus=4, memory_mb=free + 4096,
                                        disk_gb=100)
        self.addCleanup(self._remove_compute, host)
        # Its memory, not only its provider: nova-compute makes the
        # provider before it reports the inventory, and a mirror pass in
        # between records the provider bare (the next one, the memory).
        self._until('the ledger to see the new compute', lambda: (
            fixture.ledger_sql(
                self.sandbox, 'SELECT i.total FROM inventories i JOIN '
                'resource_providers p ON p.id = i.resource_provider_id '
                'JOIN resource_classes c ON c.id = i.resource_class_id '
                "WHERE p.name = :name AND c.name = 'MEMORY_MB'",
                name=host)), 6 * interval)
        lease = self._lease(self.demo, slot)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual([host], self._slot_hosts(lease))

    def _remove_compute(self, host):
        """The host leaves as it came: its compute stops, its service is

        deleted (and with it Nova's record in Placement).
        """
        self.sandbox.remove_compute(host)
        (service,) = self.nova.services.list(host=host,
                                             binary='nova-compute')
        self.nova.services.delete(service.id)
