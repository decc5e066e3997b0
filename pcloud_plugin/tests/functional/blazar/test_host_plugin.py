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
"""pcloud:host leases (IMMEDIATE, SCHEDULE, BEST-EFFORT) through Blazar's

own manager, with our plugin loaded from its entry point, Placement served
in-process and mirrored into the ledger, and the recording fake Nova.

Hosts (Placement, mirrored into the ledger):

* cn1: 16 VCPU, 32 GB, 500 GB, HW_CPU_X86_AVX2 -- pool "big";
* cn2: two NUMA children of 8 VCPU and 16 GB, 500 GB on the root -- "big";
* cn3: like cn1 but held for good by another pcloud -- "big", never leased;
* cn4: like cn1 without the trait, in availability zone az2 -- "big";
* cn5: like cn1, in no pool: for instances, never for host leases.
"""

import datetime
import time
from unittest import mock

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
from blazarclient import exception as client_exc
from keystoneauth1 import exceptions as ks_exc
import oslo_messaging as messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import host_plugin
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception
from pcloud_plugin.notifications import usage
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_lifecycle
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import lease_states
from pcloud_plugin.tests.functional.blazar import base

ENTRY_POINT = 'pcloud.host'
PCLOUD = '4b8d3c2a-1f0e-4d5c-9b8a-7f6e5d4c3b2a'
OTHERS_PCLOUD = '9e8d7c6b-5a49-4382-9180-7f6e5d4c3b2a'
OTHER_PROJECT = '99999999999999999999999999999999'
AVX2 = 'HW_CPU_X86_AVX2'
EVENTS = 'pcloud.host_reservation.'


def _reservation_of(lease):
    (reservation,) = lease['reservations']
    return reservation


class HostLeaseTestCase(base.BlazarTestCase):

    def setUp(self):
        self.useFixture(base.StillTime())
        super().setUp()
        # Leased hosts count against the units quota: QuotaTests say how;
        # the others are about hosts and time, each host worth 4 units.
        self.conf.set_override('units_quota', -1, group='pcloud')
        self._build_pools()
        self.host_plugin = self.manager.plugins[host_plugin.RESOURCE_TYPE]
        self.assertIsInstance(self.host_plugin, host_plugin.PcloudHostPlugin)
        self.assertFalse(self.host_plugin.monitor.is_polling_enabled())
        transport = messaging.get_notification_transport(
            self.conf, url='fake:/')
        topic = 'pcloud-host-test-%s' % uuidutils.generate_uuid()
        self.notifications = self.useFixture(
            base.Notifications(transport, topic))
        self.host_plugin.notifier = usage.HostUsageNotifier(
            self.conf, transport=transport, topics=[topic],
            driver='messaging')

    def _build_hosts(self):
        # Called by the base before it makes the manager: the manager
        # then loads both of our plugins, each from its entry point.
        self.conf.set_override('retry_interval', 0, group='pcloud_host')
        self.conf.set_override('plugins', [base.ENTRY_POINT, ENTRY_POINT],
                               group='manager')
        p = self.placement
        hosts = {}
        whole = {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768},
                 'DISK_GB': {'total': 500}}
        for name in ('cn1', 'cn3', 'cn4', 'cn5'):
            hosts[name] = p.create_provider(name)
            p.set_inventories(hosts[name], whole)
        p.set_traits(hosts['cn1'], [AVX2])
        hosts['cn2'] = p.create_provider('cn2')
        p.set_inventories(hosts['cn2'], {'DISK_GB': {'total': 500}})
        for n in (0, 1):
            name = 'cn2-numa%d' % n
            hosts[name] = p.create_provider(name, parent=hosts['cn2'])
            p.set_inventories(hosts[name], {
                'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 16384}})
            p.set_traits(hosts[name], ['HW_NUMA_ROOT'])
        return hosts

    def _build_pools(self):
        nova = self.nova
        pool = nova.add_pcloud_aggregate(
            codec.pool_name('big'), ['cn1', 'cn2', 'cn3', 'cn4'],
            kind=codec.TYPE_POOL)
        pool.metadata.update(codec.pool_metadata(
            codec.HostFlavor('big', 'whole hosts', 4)))
        pool.metadata.update((codec.node_key(h), h) for h in pool.hosts)
        zone = nova.aggregates.create('az2', 'az2')
        zone.availability_zone = 'az2'
        zone.hosts.append('cn4')
        self.pcloud = nova.add_pcloud_aggregate(codec.pcloud_name(PCLOUD),
                                                [])
        self.pcloud.metadata.update(codec.pcloud_metadata(
            PCLOUD, 'mine', base.PROJECT))
        others = nova.add_pcloud_aggregate(
            codec.pcloud_name(OTHERS_PCLOUD), [])
        others.metadata.update(codec.pcloud_metadata(
            OTHERS_PCLOUD, 'theirs', OTHER_PROJECT))
        nova.calls.clear()

    # --- helpers ---------------------------------------------------------

    @staticmethod
    def hosts_res(amount, lease_type=None, **values):
        reservation = {'resource_type': host_plugin.RESOURCE_TYPE,
                       'amount': amount, 'host_flavor': 'big',
                       'pcloud_id': PCLOUD}
        if lease_type:
            reservation['lease_type'] = lease_type
        reservation.update(values)
        return reservation

    def row(self, lease):
        return host_db.get(self.context, _reservation_of(lease)['id'])

    def leased(self, lease):
        return sorted(h['host_name'] for h in self.row(lease)['hosts'])

    def blazar_reservation(self, lease):
        return blazar_db.reservation_get(_reservation_of(lease)['id'])

    def states(self, rid):
        """The states of the notifications about one reservation."""
        return [(t[len(EVENTS):], p['state']) for t, p, _pub in
                self.notifications.events
                if t.startswith(EVENTS) and p['reservation_id'] == rid]

    def wait_states(self, rid, count):
        for _ in range(100):
            if len(self.states(rid)) >= count:
                break
            self.notifications.wait_for('never', timeout=0.05)
        return self.states(rid)

    def pcloud_view(self):
        return codec.Pcloud(self.pcloud.metadata)

    def pcloud_hosts(self):
        view = self.pcloud_view()
        return {name: (node, view.state(node))
                for name, node in view.all_hosts.items() if node}


class ScheduleTests(HostLeaseTestCase):

    def test_at_start_occupied_hosts_give_way_to_empty_ones(self):
        # Instances outlive leases: another project's runs on cn1 when
        # the lease that picked it starts.
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        self.assertEqual(['cn1'], self.leased(lease))
        self.nova.add_server('cn1', OTHER_PROJECT)
        self.start(lease['id'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn2'], self.leased(lease))
        self.assertEqual(['cn2'], sorted(self.pcloud.hosts))
        self.assertEqual({self.hosts['cn2'], self.hosts['cn2-numa0'],
                          self.hosts['cn2-numa1']}, set(self.claims(
                              _reservation_of(lease)['id'])['amounts']))

    def test_leased_hosts_take_the_pclouds_ratios_and_give_them_back(self):
        self.pcloud.metadata[codec.CPU_RATIO] = '4.0'
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        self.assertEqual(['cn1'], self.leased(lease))

        def ratios():
            theirs = self.placement.client.get(
                '/resource_providers/%s/inventories' % self.hosts['cn1']
            ).json()['inventories']['VCPU']['allocation_ratio']
            ours = db_providers.get_inventories(
                self.context, self.hosts['cn1'])['VCPU'].allocation_ratio
            return theirs, ours

        self.assertEqual((1.0, 1.0), ratios())
        self.start(lease['id'])
        # In Placement and, at once, in the ledger.
        self.assertEqual((4.0, 4.0), ratios())
        self.end(lease['id'])
        self.assertEqual((1.0, 1.0), ratios())
        self.assertEqual([], [k for k in self.pcloud.metadata
                              if k.startswith(codec.SAVED_RATIOS_PREFIX)])

    def test_a_start_with_too_few_empty_hosts_fails(self):
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        for host in ('cn1', 'cn2', 'cn4'):
            self.nova.add_server(host, OTHER_PROJECT)
        self.assertEqual(status.event.ERROR, self.run_event(
            lease['id'], 'start_lease')['status'])
        self.assertEqual(status.lease.ERROR,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual([], self.pcloud.hosts)

    def test_schedule_lifecycle(self):
        lease = self.create_lease(self.hosts_res(2), start=60, end=120)
        rid = _reservation_of(lease)['id']
        self.assertEqual(status.lease.PENDING, lease['status'])
        row = self.row(lease)
        self.assertEqual(('SCHEDULE', host_db.INACTIVE, None),
                         (row['lease_type'], row['state'], row['timeout']))
        # cn3 is another pcloud's for good: cn1 and cn2, by name.
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        # Whole hosts: every class of every provider of their trees.
        self.assertEqual({
            self.hosts['cn1']: {'VCPU': 16, 'MEMORY_MB': 32768,
                                'DISK_GB': 500},
            self.hosts['cn2']: {'DISK_GB': 500},
            self.hosts['cn2-numa0']: {'VCPU': 8, 'MEMORY_MB': 16384},
            self.hosts['cn2-numa1']: {'VCPU': 8, 'MEMORY_MB': 16384}},
            self.claims(rid)['amounts'])
        reservation = self.blazar_reservation(lease)
        self.assertEqual((status.reservation.PENDING, False),
                         (reservation['status'],
                          reservation['missing_resources']))
        self.assertEqual(
            [{'resource_id': self.hosts[h], 'reservations': [{
                'id': rid, 'lease_id': lease['id'],
                'start_date': lease['start_date'],
                'end_date': lease['end_date']}]}
             for h in sorted(('cn1', 'cn2'),
                             key=lambda h: self.hosts[h])],
            self.host_plugin.list_allocations({'lease_id': lease['id']}))
        # Nothing in Nova before the start.
        self.assertEqual({}, self.pcloud_hosts())

        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1', 'cn2'], sorted(self.pcloud.hosts))
        names = {h['name']: h['host_name'] for h in self.row(lease)['hosts']}
        self.assertEqual({name: (node, codec.ENABLED)
                          for name, node in names.items()},
                         self.pcloud_hosts())
        (lease_agg,) = [a for a in self.nova.aggregate_objs.values()
                        if a.name == host_lifecycle.AGGREGATE_PREFIX + rid]
        # The window, for the PcloudFilter to refuse boots after the end.
        row = self.row(lease)
        self.assertEqual({'filter_lease_id': lease['id'],
                          'pcloud:reservation_id': rid,
                          'pcloud:lease_pcloud': PCLOUD,
                          'pcloud:lease_start': codec.format_moment(
                              row['start_time']),
                          'pcloud:lease_end': codec.format_moment(
                              row['end_time'])}, lease_agg.metadata)
        self.assertEqual(['cn1', 'cn2'], sorted(lease_agg.hosts))
        self.assertEqual(status.reservation.ACTIVE,
                         self.blazar_reservation(lease)['status'])

        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease['id'])['status'])
        self.assertEqual(host_db.ENDED, self.row(lease)['state'])
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())
        self.assertNotIn(lease_agg.id, self.nova.aggregate_objs)
        self.assertIsNone(self.claims(rid))
        self.assertEqual([], self.host_plugin.list_allocations({}))
        self.assertEqual([('inactive', 'INACTIVE'), ('active', 'ACTIVE'),
                          ('ended', 'ENDED')], self.wait_states(rid, 3))
        (started,) = self.notifications.of(EVENTS + 'active')
        self.assertEqual(
            (lease['id'], base.PROJECT, PCLOUD, 'big', 2, 'SCHEDULE',
             'INACTIVE', sorted(names)),
            (started['lease_id'], started['project_id'],
             started['pcloud_id'], started['host_flavor'],
             started['amount'], started['lease_type'],
             started['previous_state'], sorted(started['hosts'])))

    def test_a_start_before_the_end_of_the_lease_before_it(self):
        first = self.create_lease(self.hosts_res(2), start=0, end=60)
        self.start(first['id'])
        second = self.create_lease(self.hosts_res(2), start=60, end=120)
        self.assertEqual(self.leased(first), self.leased(second))
        # Past both events, Blazar runs the second's start in a pass of
        # starts that began before the first's end came due.
        timeutils.set_time_override(timeutils.utcnow() + datetime.timedelta(
            minutes=61))
        self.assertEqual(status.event.DONE,
                         self.start_before_due_ends(second['id'])['status'])
        self.assertEqual(host_db.ENDED, self.row(first)['state'])
        self.assertEqual(host_db.ACTIVE, self.row(second)['state'])
        # Blazar's own end of the first, after, leaves the second's hosts
        # where they are.
        self.assertEqual(status.lease.TERMINATED,
                         self.end(first['id'])['status'])
        self.assertEqual(self.leased(second), sorted(self.pcloud.hosts))
        self.assertEqual(
            {codec.ENABLED}, {state for _node, state
                              in self.pcloud_hosts().values()})

    def test_a_taken_window_is_refused_with_the_earliest_free_one(self):
        first = self.create_lease(self.hosts_res(3), start=60, end=120)
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(first))
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease, self.hosts_res(1),
                              start=90, end=150)
        message = str(e)
        self.assertIn('0 of the 3 eligible hosts are free then', message)
        self.assertIn('earliest window of this length with 1 free starts '
                      'at %s:00' % self.minutes(120), message)
        self.assertEqual(1, len(blazar_db.lease_list()))
        # Right after it, the same hosts are free again.
        after = self.create_lease(self.hosts_res(3), start=120, end=180)
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(after))

    def test_anything_claimed_on_a_host_keeps_it_out(self):
        # Say an instance reservation holds one VCPU of a NUMA node of
        # cn2 then: cn2 cannot be leased whole.
        db_claims.claim(self.context, 'someone-else',
                        {self.hosts['cn2-numa1']: {'VCPU': 1}},
                        timeutils.utcnow() + datetime.timedelta(minutes=100),
                        timeutils.utcnow() + datetime.timedelta(minutes=110))
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                          self.create_lease, self.hosts_res(3))
        lease = self.create_lease(self.hosts_res(2))
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))
        # And a leased host is whole: nothing else fits on it.
        self.assertRaises(
            exception.CapacityExceeded, db_claims.claim, self.context,
            'another',
            {self.hosts['cn1']: {'VCPU': 1}},
            timeutils.utcnow() + datetime.timedelta(minutes=70),
            timeutils.utcnow() + datetime.timedelta(minutes=80))

    def test_traits_and_availability_zone_choose_the_hosts(self):
        lease = self.create_lease(self.hosts_res(1, required_traits=AVX2))
        self.assertEqual(['cn1'], self.leased(lease))
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable, self.create_lease,
                          self.hosts_res(1, required_traits=AVX2))
        lease = self.create_lease(self.hosts_res(
            1, required_traits=['!' + AVX2, 'HW_NUMA_ROOT']))
        self.assertEqual(['cn2'], self.leased(lease))
        lease = self.create_lease(self.hosts_res(
            1, availability_zone='az2'))
        self.assertEqual(['cn4'], self.leased(lease))
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable, self.create_lease,
                          self.hosts_res(1, availability_zone='nova'))

    def test_updates(self):
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        rid = _reservation_of(lease)['id']
        other = self.create_lease(self.hosts_res(2), start=60, end=120)
        self.assertEqual(['cn1'], self.leased(lease))
        self.assertEqual(['cn2', 'cn4'], self.leased(other))
        # Growing to 2 hosts then is refused, and changes nothing.
        before = self.claims(rid)
        # CantUpdateParameter (409): the lease stays as it was.
        self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                          lease['id'], reservations=[{'id': rid,
                                                      'amount': 2}])
        self.assertEqual(before, self.claims(rid))
        self.assertEqual(1, self.row(lease)['amount'])
        # Later it fits.
        self.update_lease(lease['id'], start_date=self.minutes(130),
                          end_date=self.minutes(190),
                          reservations=[{'id': rid, 'amount': 3}])
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(lease))
        self.assertEqual(self.minutes(130),
                         self.claims(rid)['start'].strftime('%Y-%m-%d %H:%M'))

        # Active: the end moves on the same hosts; the lease's aggregate
        # has it. (Growing it needs a free host: none is, here; resizes
        # are test_host_lease_resize's.)
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        self.update_lease(lease['id'], end_date=self.minutes(100))
        self.assertEqual(self.minutes(100),
                         self.claims(rid)['end'].strftime('%Y-%m-%d %H:%M'))
        self.assertEqual(self.minutes(100).replace(' ', 'T') + ':00Z',
                         self.lease_end(rid))
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'],
                              reservations=[{'id': rid, 'amount': 2}])
        self.assertIn('amount', str(e))
        # Into another lease's window: refused, and still ACTIVE.
        self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                          lease['id'], end_date=self.minutes(150))
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(self.minutes(100).replace(' ', 'T') + ':00Z',
                         self.lease_end(rid))

    def lease_end(self, rid):
        (agg,) = [a for a in self.nova.aggregate_objs.values()
                  if a.name == host_lifecycle.AGGREGATE_PREFIX + rid]
        return agg.metadata[codec.LEASE_END]

    def test_an_end_nova_cannot_take_leaves_the_lease_as_it_was(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])

        def held():
            return (self.claims(rid), self.row(lease)['end_time'],
                    self.lease_end(rid))
        before = held()
        self.nova.fail('aggregates.set_metadata')
        # Earlier: Nova first, the claim is not even touched. Later:
        # claimed first, then given back (a new generation).
        for end in (30, 90):
            e = self.assertRaises(mgr_exc.CantUpdateParameter,
                                  self.update_lease, lease['id'],
                                  end_date=self.minutes(end))
            self.assertIn('Nova failed', str(e))
            self.assertEqual(before, held())
            self.assertEqual(status.lease.ACTIVE,
                             blazar_db.lease_get(lease['id'])['status'])
            before[0]['generation'] += 2
        del self.nova.failures['aggregates.set_metadata']
        self.update_lease(lease['id'], end_date=self.minutes(30))
        self.assertEqual(self.minutes(30).replace(' ', 'T') + ':00Z',
                         self.lease_end(rid))
        self.assertEqual(self.minutes(30), self.claims(rid)['end'].strftime(
            '%Y-%m-%d %H:%M'))

    def test_deleting_a_pending_lease_frees_its_hosts(self):
        lease = self.create_lease(self.hosts_res(3))
        rid = _reservation_of(lease)['id']
        self.delete_lease(lease['id'])
        self.assertIsNone(self.claims(rid))
        self.assertEqual(['cn1', 'cn2', 'cn4'],
                         self.leased(self.create_lease(self.hosts_res(3))))

    def test_a_failed_leave_is_finished_by_sweep(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        self.nova.fail('aggregates.remove_host')
        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease['id'])['status'])
        row = self.row(lease)
        self.assertEqual(host_db.ENDED, row['state'])
        self.assertEqual([True], [h['joined'] for h in row['hosts']])
        self.assertIsNone(self.claims(rid))
        # It takes no new boots meanwhile.
        self.assertEqual(['cn1'], self.pcloud.hosts)
        self.assertEqual(codec.DISABLED,
                         self.pcloud_view().state(row['hosts'][0][
                             'host_name']))
        del self.nova.failures['aggregates.remove_host']
        self.host_plugin.sweep()
        row = self.row(lease)
        self.assertEqual(([False], None),
                         ([h['joined'] for h in row['hosts']],
                          row['aggregate_id']))
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())

    def test_an_active_lease_is_deleted_while_nova_is_unreachable(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        self.nova.fail('aggregates.list', ks_exc.ConnectFailure(
            'Unable to establish connection to http://nova'))
        self.delete_lease(lease['id'])
        self.assertIsNone(blazar_db.lease_get(lease['id']))
        self.assertIsNone(self.claims(rid))
        row = self.row(lease)
        self.assertEqual(host_db.ENDED, row['state'])
        self.assertEqual([True], [h['joined'] for h in row['hosts']])
        # Nova back, the next sweep takes the host out.
        del self.nova.failures['aggregates.list']
        self.host_plugin.sweep()
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())

    def test_a_start_waits_out_an_unreachable_nova(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        waits = self.nova_down_for_a_while('aggregates.add_host')
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual([1], waits)
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(self.leased(lease), self.pcloud.hosts)

    def test_a_start_waits_out_nova_unreachable_before_its_hosts_join(self):
        # Its hosts are looked at (are they empty?) before they join.
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        waits = self.nova_down_for_a_while('aggregates.list')
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual([1], waits)
        self.assertEqual(self.leased(lease), self.pcloud.hosts)

    def test_a_start_nova_misses_too_long_is_undone(self):
        self.conf.set_override('unreachable_patience', 0, group='pcloud')
        lease = self.create_lease(self.hosts_res(1), start=0, end=60)
        self.nova.fail('aggregates.add_host', ks_exc.ConnectFailure(
            'Unable to establish connection to http://nova'))
        event = self.run_event(lease['id'], 'start_lease')
        self.assertEqual(status.event.ERROR, event['status'])
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])
        self.assertEqual([], self.pcloud.hosts)

    def test_a_nova_failure_at_start_is_undone(self):
        lease = self.create_lease(self.hosts_res(2), start=0, end=60)
        self.nova.fail('aggregates.add_host')
        event = self.run_event(lease['id'], 'start_lease')
        self.assertEqual(status.event.ERROR, event['status'])
        self.assertEqual(status.reservation.ERROR,
                         self.blazar_reservation(lease)['status'])
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())
        self.assertEqual(
            [], [a for a in self.nova.aggregate_objs.values()
                 if a.name.startswith(host_lifecycle.AGGREGATE_PREFIX)])
        # Its hosts stay booked until the lease is deleted.
        self.assertIsNotNone(self.claims(_reservation_of(lease)['id']))
        self.delete_lease(lease['id'])
        self.assertIsNone(self.claims(_reservation_of(lease)['id']))


class ReconcileTests(HostLeaseTestCase):

    def test_a_start_run_again_after_its_end_is_no_error(self):
        # Its first run's process died before Blazar marked it done;
        # meanwhile its end came due and our sweep ended it.
        lease = self.create_lease(self.hosts_res(1), start=0, end=120)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        self.host_plugin.end_reservation(rid)
        self.assertIsNone(self.host_plugin.on_start(rid))
        self.assertEqual(host_db.ENDED, self.row(lease)['state'])
        self.assertEqual([], self.pcloud.hosts)

    def test_sweep_ends_what_blazar_no_longer_holds(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=120)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        waiting = self.create_lease(self.hosts_res(1), start=60, end=90)
        self.assertEqual(1, len(self.pcloud.hosts))
        # Blazar forgets both leases without telling the plugin.
        blazar_db.lease_destroy(lease['id'])
        blazar_db.lease_destroy(waiting['id'])

        self.host_plugin.sweep()
        for gone in (rid, _reservation_of(waiting)['id']):
            self.assertIsNone(self.claims(gone))
            self.assertRaises(host_db.HostReservationNotFound, host_db.get,
                              self.context, gone)
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())
        self.assertEqual([], [
            a for a in self.nova.aggregate_objs.values()
            if a.name == host_lifecycle.AGGREGATE_PREFIX + rid])

    def test_a_lease_refused_midway_leaves_no_claim(self):
        # Three hosts of "big" are free for us (cn1, cn2, cn4): each
        # reservation alone fits, both together do not.
        e = self.assertRaises(
            mgr_exc.NotEnoughHostsAvailable, self.create_lease,
            self.hosts_res(2), self.hosts_res(2))
        self.assertIn('1 of the 3 eligible hosts are free', str(e))
        self.assertEqual([], blazar_db.lease_get_all())
        self.assertEqual([], host_db.list_reservations(self.context))
        self.assertEqual([], db_claims.list_consumers(self.context))


class ImmediateTests(HostLeaseTestCase):

    def test_admitted_now_or_refused(self):
        lease = self.create_lease(self.hosts_res(3, 'IMMEDIATE'), start=0,
                                  end=60)
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1', 'cn2', 'cn4'], sorted(self.pcloud.hosts))
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.hosts_res(1, 'IMMEDIATE'), start=0)
        self.assertIn('0 of the 3 eligible hosts', str(e))
        self.assertEqual(1, len(blazar_db.lease_list()))

    def test_must_start_now(self):
        e = self.assertRaises(mgr_exc.MalformedParameter, self.create_lease,
                              self.hosts_res(1, 'IMMEDIATE'), start=60)
        self.assertIn('lease_type', str(e))
        self.assertIn('SCHEDULE', str(e))


class BestEffortTests(HostLeaseTestCase):

    def hold_everything(self, end=60):
        lease = self.create_lease(self.hosts_res(3, 'IMMEDIATE'), start=0,
                                  end=end)
        self.start(lease['id'])
        return lease

    def test_refused_at_once_when_even_an_emptied_pool_is_too_small(self):
        # Three hosts of "big" could ever be ours (cn3 is another
        # pcloud's for good): four will never come free.
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.hosts_res(4, 'BEST-EFFORT', timeout=30))
        self.assertIn('only 3 host(s) could ever serve it', str(e))
        self.assertEqual([], blazar_db.lease_get_all())
        self.assertEqual([], host_db.list_reservations(self.context))

    def test_hosts_of_blazars_physical_host_plugin_are_never_leased(self):
        # cn1 also registered with Blazar's own plugin (its freepool): a
        # broken partition (pcloud-status upgrade check says so), ours
        # keep off it.
        self.nova.aggregates.create('freepool', None).hosts.append('cn1')
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.hosts_res(3, 'BEST-EFFORT', timeout=30))
        self.assertIn('only 2 host(s) could ever serve it', str(e))

    def test_admitted_at_once_when_hosts_are_free(self):
        lease = self.create_lease(self.hosts_res(2, 'BEST-EFFORT'),
                                  start=30, end=90)
        row = self.row(lease)
        self.assertEqual((host_db.INACTIVE, 60),
                         (row['state'], row['timeout']))
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        self.start(lease['id'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])

    def test_waits_then_becomes_active_when_hosts_free_up(self):
        holder = self.hold_everything()
        lease = self.create_lease(
            self.hosts_res(2, 'BEST-EFFORT', timeout=120), start=0,
            end=180)
        rid = _reservation_of(lease)['id']
        self.assertEqual(status.lease.PENDING, lease['status'])
        row = self.row(lease)
        self.assertEqual((host_db.IN_PROGRESS, []),
                         (row['state'], row['hosts']))
        self.assertIsNone(self.claims(rid))
        reservation = self.blazar_reservation(lease)
        self.assertEqual((status.reservation.PENDING, True),
                         (reservation['status'],
                          reservation['missing_resources']))
        # Its lease starts, without hosts yet.
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])
        self.assertEqual(host_db.IN_PROGRESS,
                         self.host_plugin.retry_waiting()[rid])
        self.assertTrue(self.blazar_reservation(lease)['missing_resources'])

        # The holder ends: the waiting reservation takes the hosts.
        self.end(holder['id'])
        row = self.row(lease)
        self.assertEqual(host_db.ACTIVE, row['state'])
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        self.assertEqual(['cn1', 'cn2'], sorted(self.pcloud.hosts))
        claims = self.claims(rid)
        self.assertEqual(row['end_time'], claims['end'])
        reservation = self.blazar_reservation(lease)
        self.assertEqual((status.reservation.ACTIVE, False),
                         (reservation['status'],
                          reservation['missing_resources']))
        self.assertEqual([('in_progress', 'IN-PROGRESS'),
                          ('active', 'ACTIVE')], self.wait_states(rid, 2))
        self.assertEqual('IN-PROGRESS', self.notifications.of(
            EVENTS + 'active')[-1]['previous_state'])

        self.end(lease['id'])
        self.assertEqual(host_db.ENDED, self.row(lease)['state'])
        self.assertEqual([], self.pcloud.hosts)

    def test_times_out(self):
        holder = self.hold_everything(end=120)
        lease = self.create_lease(
            self.hosts_res(1, 'BEST-EFFORT', timeout=5), start=0, end=180)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        row = self.row(lease)
        self.assertEqual(row['start_time'] + datetime.timedelta(minutes=5),
                         row['deadline'])
        self.assertEqual({rid: host_db.IN_PROGRESS},
                         self.host_plugin.retry_waiting())

        timeutils.advance_time_delta(datetime.timedelta(minutes=6))
        self.assertEqual({rid: host_db.TIMEDOUT},
                         self.host_plugin.retry_waiting())
        self.assertEqual(host_db.TIMEDOUT, self.row(lease)['state'])
        self.assertEqual(status.reservation.ERROR,
                         self.blazar_reservation(lease)['status'])
        # Hosts freeing up later do not revive it.
        self.end(holder['id'])
        self.assertEqual(host_db.TIMEDOUT, self.row(lease)['state'])
        self.assertIsNone(self.claims(rid))
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual([('in_progress', 'IN-PROGRESS'),
                          ('timedout', 'TIMEDOUT')], self.wait_states(rid, 2))
        self.delete_lease(lease['id'])
        self.assertEqual(host_db.ENDED, self.row(lease)['state'])

    def test_a_waiting_lease_that_has_not_started_gets_hosts_ahead(self):
        holder = self.hold_everything(end=60)
        lease = self.create_lease(self.hosts_res(3, 'BEST-EFFORT'),
                                  start=30, end=90)
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])
        self.delete_lease(holder['id'])
        # Freed before its start: it holds the hosts, INACTIVE.
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(lease))
        self.assertFalse(self.blazar_reservation(lease)['missing_resources'])
        self.start(lease['id'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])

    def test_a_waiting_reservation_can_ask_for_less(self):
        holder = self.create_lease(self.hosts_res(2, 'IMMEDIATE'), start=0,
                                   end=60)
        lease = self.create_lease(self.hosts_res(2, 'BEST-EFFORT'),
                                  start=0, end=60)
        rid = _reservation_of(lease)['id']
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])
        self.update_lease(lease['id'],
                          reservations=[{'id': rid, 'amount': 1}])
        self.assertEqual((host_db.INACTIVE, ['cn4']),
                         (self.row(lease)['state'], self.leased(lease)))
        self.assertFalse(self.blazar_reservation(lease)['missing_resources'])
        self.start(holder['id'])
        self.start(lease['id'])
        self.assertEqual(['cn1', 'cn2', 'cn4'], sorted(self.pcloud.hosts))

    def test_the_polling_monitor_checks_waiting_reservations(self):
        self.conf.set_override('retry_interval', 30, group='pcloud_host')
        self.conf.set_override('placement_mirror_interval', 90,
                               group='pcloud')
        self.conf.set_override('usage_snapshot_interval', 60,
                               group='ledger')
        plugin = host_plugin.PcloudHostPlugin()
        self.assertEqual(30, plugin.monitor.get_polling_interval())
        self.assertTrue(plugin.monitor.is_polling_enabled())
        with mock.patch.object(plugin, 'retry_waiting') as retry, \
                mock.patch.object(plugin, 'sweep') as sweep, \
                mock.patch.object(plugin, 'mirror_placement') as mirror, \
                mock.patch.object(plugin, 'save_usage') as save:
            self.assertEqual({}, plugin.monitor.poll())
            retry.assert_called_once_with()
            sweep.assert_called_once_with()
            mirror.assert_called_once_with()
            save.assert_called_once_with()
            # 30 s later the waiting are checked again; the mirror, every
            # 90 s, and the usage snapshots, every 60 s, are not due yet.
            with mock.patch('time.monotonic', return_value=(
                    time.monotonic() + 30)):
                plugin.monitor.poll()
            self.assertEqual(2, retry.call_count)
            self.assertEqual(1, mirror.call_count)
            self.assertEqual(1, save.call_count)


class _Migrating(HostLeaseTestCase):
    """With [pcloud_host] live_migrate_others: other projects' instances

    leave a starting lease's hosts first, for cn5 (the only host outside
    pools and pclouds, 32 GB).
    """

    def setUp(self):
        super().setUp()
        self.conf.set_override('live_migrate_others', True,
                               group='pcloud_host')

    def server(self, host, project=OTHER_PROJECT, ram=4096):
        return self.nova.add_server(host, project, ram=ram)

    def migrating(self):
        return sorted(s.id for s in self.nova.server_objs.values()
                      if s.status == 'MIGRATING')


class LiveMigrationTests(_Migrating):
    """BEST-EFFORT leases."""

    def on_cn1(self, **values):
        """A BEST-EFFORT lease of one host, starting now: cn1 (AVX2)."""
        lease = self.create_lease(self.hosts_res(
            1, 'BEST-EFFORT', required_traits=AVX2, **values), start=0,
            end=60)
        self.assertEqual(['cn1'], self.leased(lease))
        return lease, _reservation_of(lease)['id']

    def test_active_only_once_other_projects_instances_have_moved(self):
        mine = self.server('cn1', base.PROJECT)
        theirs = self.server('cn1')
        self.server('cn3')  # not on a host leased
        lease, rid = self.on_cn1()
        self.assertEqual([], self.migrating())  # not before it starts
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        # The other project's instance moves; the owner's stays. The
        # lease waits for it, holding cn1.
        row = self.row(lease)
        self.assertEqual((host_db.IN_PROGRESS, ['cn1']),
                         (row['state'], self.leased(lease)))
        self.assertEqual([{'server': theirs.id, 'host': 'cn1', 'tries': 1,
                           'status': 'migrating'}], row['migrations'])
        self.assertEqual([theirs.id], self.migrating())
        self.assertNotIn(mine.id, self.migrating())
        self.assertIsNotNone(self.claims(rid))
        self.assertEqual([self.hosts['cn1']], [
            a['resource_id'] for a in self.host_plugin.list_allocations(
                {'lease_id': lease['id']})])
        self.assertTrue(self.blazar_reservation(lease)['missing_resources'])
        self.assertEqual([], self.pcloud.hosts)
        # Nobody else gets cn1 meanwhile.
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable, self.create_lease,
                          self.hosts_res(1, 'IMMEDIATE',
                                         required_traits=AVX2), start=0)
        # Still migrating at the next check: still waiting.
        self.assertEqual({rid: host_db.IN_PROGRESS},
                         self.host_plugin.retry_waiting())
        self.assertEqual([], self.pcloud.hosts)

        # Moved: the next check puts cn1 in the pcloud.
        self.nova.end_migration(theirs.id, to='cn5')
        self.host_plugin.poll()
        row = self.row(lease)
        self.assertEqual((host_db.ACTIVE, 'moved'),
                         (row['state'], row['migrations'][0]['status']))
        self.assertEqual(['cn1'], self.pcloud.hosts)
        reservation = self.blazar_reservation(lease)
        self.assertEqual((status.reservation.ACTIVE, False),
                         (reservation['status'],
                          reservation['missing_resources']))
        self.assertEqual([('inactive', 'INACTIVE'),
                          ('in_progress', 'IN-PROGRESS'),
                          ('active', 'ACTIVE')], self.wait_states(rid, 3))
        self.assertEqual('IN-PROGRESS', self.notifications.of(
            EVENTS + 'active')[-1]['previous_state'])

    def test_a_failed_migration_is_tried_again_until_the_deadline(self):
        theirs = self.server('cn1')
        lease, rid = self.on_cn1(timeout=10)
        self.start(lease['id'])
        # Nova found no host for it: back on cn1, not migrating. The
        # next check starts it again.
        self.nova.end_migration(theirs.id)
        self.assertEqual({rid: host_db.IN_PROGRESS},
                         self.host_plugin.retry_waiting())
        self.assertEqual([theirs.id], self.migrating())
        self.assertEqual(2, self.row(lease)['migrations'][0]['tries'])
        # In ERROR: Nova refuses to move it; each check tries again.
        self.nova.end_migration(theirs.id, error=True)
        for tries in (3, 4):
            self.assertEqual({rid: host_db.IN_PROGRESS},
                             self.host_plugin.retry_waiting())
            self.assertEqual(
                {'server': theirs.id, 'host': 'cn1', 'tries': tries,
                 'status': 'failed'}, self.row(lease)['migrations'][0])
        self.assertIsNotNone(self.claims(rid))

        # Past its deadline (start + 10 minutes): TIMEDOUT, cn1 given back.
        timeutils.advance_time_delta(datetime.timedelta(minutes=11))
        self.assertEqual({rid: host_db.TIMEDOUT},
                         self.host_plugin.retry_waiting())
        row = self.row(lease)
        self.assertEqual((host_db.TIMEDOUT, []), (row['state'], row['hosts']))
        self.assertIsNone(self.claims(rid))
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual({}, self.pcloud_hosts())
        self.assertEqual(status.reservation.ERROR,
                         self.blazar_reservation(lease)['status'])
        self.assertEqual([('inactive', 'INACTIVE'),
                          ('in_progress', 'IN-PROGRESS'),
                          ('timedout', 'TIMEDOUT')], self.wait_states(rid, 3))
        # cn1 is free for the next lease.
        self.assertEqual(['cn1'], self.leased(self.create_lease(
            self.hosts_res(1, 'IMMEDIATE', required_traits=AVX2), start=0)))
        self.delete_lease(lease['id'])
        self.assertEqual(host_db.ENDED, self.row(lease)['state'])

    def test_a_restarted_manager_carries_on(self):
        theirs = self.server('cn1')
        lease, rid = self.on_cn1()
        self.start(lease['id'])
        # The start run again (the reconciler does after a crash): the
        # instance, migrating, is not asked to move again.
        self.host_plugin.on_start(rid)
        self.assertEqual((host_db.IN_PROGRESS, 1),
                         (self.row(lease)['state'],
                          self.row(lease)['migrations'][0]['tries']))
        # A new plugin, as a restarted blazar-manager loads, goes on from
        # the ledger.
        restarted = host_plugin.PcloudHostPlugin()
        restarted.notifier = self.host_plugin.notifier
        self.nova.end_migration(theirs.id, to='cn5')
        # Nova fails as cn1 joins: undone, and tried again.
        self.nova.fail('aggregates.add_host')
        self.assertEqual({}, restarted.retry_waiting())
        row = self.row(lease)
        self.assertEqual((host_db.IN_PROGRESS, [False]),
                         (row['state'], [h['joined'] for h in row['hosts']]))
        self.assertEqual([], self.pcloud.hosts)
        del self.nova.failures['aggregates.add_host']
        restarted.poll()
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1'], self.pcloud.hosts)
        self.assertEqual([('inactive', 'INACTIVE'),
                          ('in_progress', 'IN-PROGRESS'),
                          ('active', 'ACTIVE')], self.wait_states(rid, 3))

    def test_no_change_while_instances_move(self):
        self.server('cn1')
        lease, rid = self.on_cn1()
        self.start(lease['id'])
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'], end_date=self.minutes(90))
        self.assertIn('moving off its hosts', str(e))
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])

    def test_admission_prefers_hosts_with_less_to_move(self):
        self.server('cn1', ram=20000)
        self.server('cn2', ram=20000)
        # cn4 runs nothing of others: it, then cn1 (in name order).
        lease = self.create_lease(self.hosts_res(2, 'BEST-EFFORT'))
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))

    def test_refused_when_even_an_emptied_pool_cannot_serve_it(self):
        # Two of these fill cn5, the only room outside pools and pclouds.
        for host in ('cn1', 'cn2', 'cn4'):
            self.server(host, ram=20000)
        e = self.assertRaises(errors.CapacityRefused, self.create_lease,
                              self.hosts_res(2, 'BEST-EFFORT'))
        self.assertEqual(409, e.code)
        self.assertIn('Cannot reserve 2 host(s) of host flavor big: its '
                      'hosts cannot be emptied. Even the 2 eligible host(s) '
                      'running the least of other projects\' instances run '
                      '2 of them, and 1 of these cannot move', str(e))
        self.assertEqual([], blazar_db.lease_get_all())
        self.assertEqual([], host_db.list_reservations(self.context))
        self.assertEqual([], db_claims.list_consumers(self.context))
        # One host can be emptied.
        lease = self.create_lease(self.hosts_res(1, 'BEST-EFFORT'))
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])

    def test_a_disabled_compute_is_no_room_for_a_move(self):
        """Nova moves nothing to cn5 once its compute service is

        disabled (the trait it sets on the provider).
        """
        self.server('cn1')
        self.server('cn2')
        self.server('cn4')
        self.placement.set_traits(self.hosts['cn5'],
                                  ['COMPUTE_STATUS_DISABLED'])
        self.sync()
        e = self.assertRaises(errors.CapacityRefused, self.create_lease,
                              self.hosts_res(1, 'BEST-EFFORT'))
        self.assertEqual(409, e.code)
        self.assertIn('run 1 of them, and 1 of these cannot move', str(e))
        self.placement.set_traits(self.hosts['cn5'], [])
        self.sync()
        lease = self.create_lease(self.hosts_res(1, 'BEST-EFFORT'))
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])

    def test_one_that_would_wait_is_refused_too(self):
        holder = self.create_lease(self.hosts_res(3, 'IMMEDIATE'), start=0)
        self.start(holder['id'])
        for host in ('cn1', 'cn2', 'cn4'):
            self.server(host, ram=20000)
        self.assertRaises(errors.CapacityRefused, self.create_lease,
                          self.hosts_res(2, 'BEST-EFFORT'))
        self.assertEqual([holder['id']],
                         [lease['id'] for lease in blazar_db.lease_get_all()])
        # Once the holder's hosts are free, one of them could be emptied.
        lease = self.create_lease(self.hosts_res(1, 'BEST-EFFORT'))
        self.assertEqual((host_db.IN_PROGRESS, []),
                         (self.row(lease)['state'], self.row(lease)['hosts']))

    def test_waits_when_there_is_no_room_at_its_start(self):
        lease, rid = self.on_cn1()
        big = self.server('cn1', ram=40000)  # cn5 has 32768
        self.start(lease['id'])
        # Its host cannot be emptied: it gives it back and waits.
        self.assertEqual((host_db.IN_PROGRESS, []),
                         (self.row(lease)['state'], self.row(lease)['hosts']))
        self.assertIsNone(self.claims(rid))
        self.assertTrue(self.blazar_reservation(lease)['missing_resources'])
        self.assertEqual([], self.migrating())
        self.assertEqual([], self.pcloud.hosts)
        self.assertEqual([('inactive', 'INACTIVE'),
                          ('in_progress', 'IN-PROGRESS')],
                         self.wait_states(rid, 2))
        # Gone (deleted): cn1 is taken at the next check.
        del self.nova.server_objs[big.id]
        self.assertEqual({rid: host_db.ACTIVE},
                         self.host_plugin.retry_waiting())
        self.assertEqual(['cn1'], self.pcloud.hosts)

    def test_off_by_default(self):
        # Nothing moves: the lease waits for an empty host, as hosts are
        # handed over only empty.
        self.conf.set_override('live_migrate_others', False,
                               group='pcloud_host')
        server = self.server('cn1')
        lease, _rid = self.on_cn1()
        self.start(lease['id'])
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])
        self.assertEqual([], self.migrating())
        del self.nova.server_objs[server.id]
        self.host_plugin.retry_waiting()
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1'], self.leased(lease))


class HandOverTests(_Migrating):
    """The first lease of cn1 (AVX2) ends with another project's instance

    still on it; the next lease of cn1, not BEST-EFFORT, starts after.
    """

    def setUp(self):
        super().setUp()
        self.first = self.create_lease(self.avx2(), start=0, end=10)
        self.start(self.first['id'])
        self.assertEqual(['cn1'], self.leased(self.first))
        self.left = self.server('cn1')

    def avx2(self):
        return self.hosts_res(1, required_traits=AVX2)

    def next_lease(self):
        lease = self.create_lease(self.avx2(), start=10, end=30)
        self.assertEqual(['cn1'], self.leased(lease))
        return lease, _reservation_of(lease)['id']

    def test_moved_at_the_end_the_next_start_finds_the_host_empty(self):
        lease, rid = self.next_lease()
        self.end(self.first['id'])
        self.assertEqual([self.left.id], self.migrating())
        self.nova.end_migration(self.left.id, to='cn5')
        self.start(lease['id'])
        self.assertEqual(host_db.ACTIVE, self.row(lease)['state'])
        self.assertEqual(['cn1'], self.pcloud.hosts)

    def test_nova_failing_at_the_end_leaves_the_moves_to_the_start(self):
        lease, rid = self.next_lease()
        self.nova.fail('servers.list')
        self.assertEqual(status.lease.TERMINATED,
                         self.end(self.first['id'])['status'])
        self.assertEqual(host_db.ENDED, self.row(self.first)['state'])
        self.assertEqual([], self.migrating())
        del self.nova.failures['servers.list']
        self.start(lease['id'])
        self.assertEqual([self.left.id], self.migrating())
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])

    def test_the_next_start_waits_for_what_is_still_moving(self):
        lease, rid = self.next_lease()
        self.end(self.first['id'])
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        row = self.row(lease)
        self.assertEqual((host_db.IN_PROGRESS, ['cn1'], 'migrating'),
                         (row['state'], self.leased(lease),
                          row['migrations'][0]['status']))
        self.assertIsNotNone(row['deadline'])
        self.assertEqual([], self.pcloud.hosts)
        self.nova.end_migration(self.left.id, to='cn5')
        self.assertEqual({rid: host_db.ACTIVE},
                         self.host_plugin.retry_waiting())
        self.assertEqual(['cn1'], self.pcloud.hosts)
        self.assertFalse(self.blazar_reservation(lease)['missing_resources'])

    def test_nothing_moves_where_no_next_holder_waits(self):
        self.end(self.first['id'])
        self.assertEqual([], self.migrating())
        # Nor for a next holder starting past the warning's lead.
        self.conf.set_override('hand_over_warning', 5, group='pcloud_host')
        again = self.create_lease(self.avx2(), start=0, end=10)
        self.start(again['id'])
        self.assertEqual(host_db.IN_PROGRESS, self.row(again)['state'])
        self.nova.end_migration(self.left.id, to='cn5')
        self.host_plugin.retry_waiting()
        later = self.create_lease(self.avx2(), start=10, end=30)
        self.assertEqual(['cn1'], self.leased(later))
        self.left = self.server('cn1')
        self.end(again['id'])
        self.assertEqual([], self.migrating())

    def test_what_cannot_move_gives_the_next_holder_other_hosts(self):
        self.server('cn1', ram=40000)  # cn5 has 32768
        lease = self.create_lease(self.hosts_res(1), start=10, end=30)
        self.assertEqual(['cn1'], self.leased(lease))
        self.end(self.first['id'])
        self.assertEqual([], self.migrating())  # not tried in vain
        self.start(lease['id'])
        (host,) = self.leased(lease)
        self.assertNotEqual('cn1', host)
        self.assertEqual((host_db.ACTIVE, [host]),
                         (self.row(lease)['state'], self.pcloud.hosts))
        self.assertEqual([], self.migrating())

    def test_with_no_other_host_it_waits_then_times_out(self):
        self.server('cn1', ram=40000)
        lease, rid = self.next_lease()
        self.end(self.first['id'])
        self.start(lease['id'])
        row = self.row(lease)
        self.assertEqual((host_db.IN_PROGRESS, ['cn1'], []),
                         (row['state'], self.leased(lease),
                          row['migrations']))
        self.assertEqual({rid: host_db.IN_PROGRESS},
                         self.host_plugin.retry_waiting())
        timeutils.set_time_override(row['deadline'])
        self.addCleanup(timeutils.clear_time_override)
        self.assertEqual({rid: host_db.TIMEDOUT},
                         self.host_plugin.retry_waiting())
        self.assertIsNone(self.claims(rid))
        self.assertEqual(status.reservation.ERROR,
                         self.blazar_reservation(lease)['status'])
        self.assertEqual([], self.pcloud.hosts)

    def test_it_takes_its_host_once_what_was_left_is_gone(self):
        big = self.server('cn1', ram=40000)
        lease, rid = self.next_lease()
        self.end(self.first['id'])
        self.start(lease['id'])
        self.assertEqual(host_db.IN_PROGRESS, self.row(lease)['state'])
        del self.nova.server_objs[big.id]
        self.assertEqual({rid: host_db.IN_PROGRESS},
                         self.host_plugin.retry_waiting())
        # The rest can move now.
        self.nova.end_migration(self.left.id, to='cn5')
        self.assertEqual({rid: host_db.ACTIVE},
                         self.host_plugin.retry_waiting())
        self.assertEqual(['cn1'], self.pcloud.hosts)


class HandOverWarningTests(HostLeaseTestCase):
    """An active lease of every eligible pool host, ending in 20 minutes: its

    lessee is told, once, which of them another reservation has next.
    """

    def setUp(self):
        super().setUp()
        self.lease = self.create_lease(self.hosts_res(3), start=0, end=20)
        self.start(self.lease['id'])
        self.rid = _reservation_of(self.lease)['id']
        self.names = {h['host_name']: h['name']
                      for h in self.row(self.lease)['hosts']}

    def test_told_once_which_hosts_the_next_holder_has_and_when(self):
        # Nobody has them next: nothing to tell.
        self.assertEqual({}, self.host_plugin.warn_hand_overs())
        following = self.create_lease(self.hosts_res(1), start=20, end=40)
        (taken,) = self.leased(following)
        # Not within the lead time yet.
        self.conf.set_override('hand_over_warning', 10, group='pcloud_host')
        self.assertEqual({}, self.host_plugin.warn_hand_overs())
        self.conf.set_override('hand_over_warning', 0, group='pcloud_host')
        self.assertEqual({}, self.host_plugin.warn_hand_overs())

        self.conf.set_override('hand_over_warning', 30, group='pcloud_host')
        next_from = self.row(following)['start_time'].isoformat()
        told = self.host_plugin.warn_hand_overs()
        self.assertEqual({self.rid}, set(told))
        self.assertEqual(([self.names[taken]], next_from),
                         (told[self.rid]['hosts'],
                          told[self.rid]['next_from']))
        self.assertEqual({}, self.host_plugin.warn_hand_overs())
        (event,) = self.notifications.wait_for(EVENTS + 'hand_over')
        self.assertEqual((self.rid, base.PROJECT, told[self.rid]),
                         (event['reservation_id'], event['project_id'],
                          event['hand_over']))
        # What "openstack pcloud lease show" says.
        (lease,) = lease_states.find(self.context, self.lease['id'])
        (shown,) = lease['reservations']
        self.assertEqual(told[self.rid], shown['hand_over'])


class QuotaTests(HostLeaseTestCase):
    """Leased hosts count against the units quota while held: 8 units,

    2 hosts of "big" (4 units each) at any one moment, leases and hosts
    for good together.
    """

    def setUp(self):
        super().setUp()
        self.conf.set_override('units_quota', 8, group='pcloud')

    def test_leases_count_only_while_they_hold(self):
        self.create_lease(self.hosts_res(2), start=60, end=120)
        e = self.assertRaises(errors.QuotaRefused, self.create_lease,
                              self.hosts_res(1), start=90, end=150)
        self.assertEqual(403, e.code)
        self.assertIn('would hold 12 quota units, over its limit of 8',
                      str(e))
        # Once the first has ended, the same two hosts' worth is fine.
        self.create_lease(self.hosts_res(2), start=120, end=180)
        self.assertEqual(2, len(host_db.list_reservations(self.context)))

    def test_hosts_for_good_and_leases_count_together(self):
        pclouds = self.host_plugin.pclouds()
        self.create_lease(self.hosts_res(1), start=60, end=120)
        pclouds.allocate_host(self.context, PCLOUD, 'mine-1', 'big')
        e = self.assertRaises(exception.QuotaExceeded, pclouds.allocate_host,
                              self.context, PCLOUD, 'mine-2', 'big')
        self.assertIn('would hold 12 quota units', str(e))
        # A lease beside both is refused; after the first, it fits.
        self.assertRaises(errors.QuotaRefused, self.create_lease,
                          self.hosts_res(1), start=90, end=150)
        self.create_lease(self.hosts_res(1), start=120, end=180)

    def test_growing_a_lease_over_the_quota_is_refused(self):
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        rid = _reservation_of(lease)['id']
        e = self.assertRaises(
            mgr_exc.CantUpdateParameter, self.update_lease, lease['id'],
            reservations=[{'id': rid, 'amount': 3}])
        self.assertIn('over its limit of 8', str(e))
        self.assertEqual(1, self.row(lease)['amount'])


class ValidationTests(HostLeaseTestCase):

    def assertRefused(self, error, field, reservation, **kwargs):
        e = self.assertRaises(error, self.create_lease, reservation,
                              **kwargs)
        self.assertIn(field, str(e))
        self.assertEqual(400, e.code)
        self.assertEqual([], blazar_db.lease_list())
        return e

    def test_each_error_names_its_field(self):
        reservation = self.hosts_res(1)
        del reservation['pcloud_id']
        self.assertRefused(mgr_exc.MissingParameter, 'pcloud_id',
                           reservation)
        for field, value in (('amount', 0), ('amount', 'many'),
                             ('host_flavor', '-bad'),
                             ('host_flavor', 'tiny'),
                             ('pcloud_id', 'not-a-uuid'),
                             ('pcloud_id', OTHERS_PCLOUD),
                             ('lease_type', 'WHENEVER'),
                             ('timeout', 10),
                             ('required_traits', 'NO_SUCH_TRAIT'),
                             ('required_traits', 'CUSTOM_A,!CUSTOM_A'),
                             ('availability_zone', 7)):
            reservation = self.hosts_res(1)
            reservation[field] = value
            self.assertRefused(mgr_exc.MalformedParameter, field,
                               reservation)
        self.assertRefused(mgr_exc.MalformedParameter, 'timeout',
                           self.hosts_res(1, 'BEST-EFFORT', timeout=0))
        e = self.assertRefused(mgr_exc.MalformedParameter, 'pcloud_id',
                               self.hosts_res(1, pcloud_id=OTHERS_PCLOUD))
        self.assertIn('no pcloud %s of project' % OTHERS_PCLOUD, str(e))

    def test_terms_and_defaults(self):
        self.conf.set_override('best_effort_timeout', 45,
                               group='pcloud_host')
        params = host_requests.parse_params(self.hosts_res(
            2, 'best_effort', required_traits=['HW_NUMA_ROOT',
                                               '!CUSTOM_SLOW']))
        self.assertEqual(('BEST-EFFORT', 45, 'HW_NUMA_ROOT&!CUSTOM_SLOW'),
                         (params['lease_type'], params['timeout'],
                          params['required_traits']))
        current = host_requests.parse_params(self.hosts_res(
            2, 'BEST-EFFORT', timeout=30))
        self.assertEqual(current, host_requests.parse_params({}, current))
        changed = host_requests.parse_params({'lease_type': 'SCHEDULE'},
                                             current)
        self.assertEqual(('SCHEDULE', None),
                         (changed['lease_type'], changed['timeout']))
        self.assertEqual('SCHEDULE', host_requests.parse_params(
            self.hosts_res(1))['lease_type'])


class EarliestWindowTests(HostLeaseTestCase):

    def test_earliest_window_from_the_ledger(self):
        hour = datetime.timedelta(hours=1)
        now = timeutils.utcnow().replace(second=0, microsecond=0)
        self.create_lease(self.hosts_res(2), start=60, end=120)
        self.create_lease(self.hosts_res(1, availability_zone='az2'),
                          start=0, end=90)

        def earliest(amount, duration, **kwargs):
            found = self.host_plugin.earliest_window(
                'big', amount, duration, not_before=now, **kwargs)
            return found and (found['start'].strftime('%Y-%m-%d %H:%M'),
                              found['end'] - found['start'])

        # cn1 and cn2 are free for the next hour, cn4 from 90 on.
        self.assertEqual((self.minutes(0), hour), earliest(2, hour))
        self.assertEqual((self.minutes(90), 2 * hour), earliest(1, 2 * hour))
        self.assertEqual((self.minutes(120), hour), earliest(3, hour))
        self.assertEqual((self.minutes(90), hour),
                         earliest(1, hour, availability_zone='az2'))
        self.assertEqual((self.minutes(0), hour),
                         earliest(1, hour, required_traits=AVX2))
        self.assertEqual((self.minutes(120), 2 * hour),
                         earliest(1, 2 * hour, required_traits=AVX2))
        self.assertIsNone(earliest(4, hour))
        self.assertIsNone(earliest(3, hour, latest_start=now + hour))
        # A SCHEDULE lease in the window given is accepted.
        found = self.host_plugin.earliest_window('big', 3, hour)
        self.create_lease(self.hosts_res(3), start=120, end=180)
        self.assertEqual(self.minutes(120),
                         found['start'].strftime('%Y-%m-%d %H:%M'))


class LeaseAPITests(HostLeaseTestCase, base.BlazarAPITestCase):
    """Through Blazar's v1 API and python-blazarclient."""

    def test_lease_through_blazarclient(self):
        lease = self.client.lease.create(
            'hosts', self.minutes(60), self.minutes(120),
            [self.hosts_res(2, 'SCHEDULE', required_traits='!CUSTOM_SLOW')],
            [])
        reservation = _reservation_of(lease)
        self.assertEqual((host_plugin.RESOURCE_TYPE, 'pending'),
                         (reservation['resource_type'],
                          reservation['status']))
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        self.assertEqual(lease, self.client.lease.get(lease['id']))
        self.client.lease.delete(lease['id'])
        self.assertIsNone(self.claims(reservation['id']))

    def _pcloud_call(self, method, path, body=None):
        session, url = self.api
        return session.request(url + '/pclouds/%s%s' % (PCLOUD, path),
                               method, json=body, raise_exc=False)

    def test_what_a_lease_holds_cannot_be_taken_through_the_pcloud_api(self):
        scheduled = self.create_lease(self.hosts_res(1), start=60, end=120)
        # Even a lease that has not started keeps its pcloud.
        refused = self._pcloud_call('DELETE', '')
        self.assertEqual(409, refused.status_code, refused.text)
        self.assertIn('lease %s (INACTIVE' % scheduled['id'],
                      refused.json()['error_message'])
        self.delete_lease(scheduled['id'])

        lease = self.create_lease(self.hosts_res(1), start=0, end=120)
        self.start(lease['id'])
        (host,) = self.row(lease)['hosts']
        for method, path, body, action in (
                ('PUT', '/hosts/%s' % host['name'], {'state': 'disabled'},
                 'disable its host'),
                ('DELETE', '/hosts/%s' % host['name'], None,
                 'release its host'),
                ('DELETE', '', None, 'be deleted')):
            refused = self._pcloud_call(method, path, body)
            self.assertEqual(409, refused.status_code, refused.text)
            message = refused.json()['error_message']
            self.assertIn('cannot %s: lease %s (ACTIVE' % (
                action, lease['id']), message)
        # Nothing changed: the host is still in the pcloud, enabled.
        self.assertEqual({host['name']: (host['host_name'], codec.ENABLED)},
                         self.pcloud_hosts())
        # Once the lease ended, the pcloud is the tenant's to delete.
        self.end(lease['id'])
        self.assertEqual(204, self._pcloud_call('DELETE', '').status_code)

    def _allocate(self, name):
        return self._pcloud_call('POST', '/hosts', {'name': name,
                                                    'flavor_id': 'big'})

    def test_a_lease_first_keeps_its_hosts_from_a_permanent_allocation(self):
        # cn1, cn2 and cn4 are free in "big"; the lease books two later.
        lease = self.create_lease(self.hosts_res(2), start=60, end=120)
        booked = set(self.leased(lease))
        made = self._allocate('mine-1')
        self.assertEqual(201, made.status_code, made.text)
        (allocated,) = set(self.pcloud.hosts)
        self.assertNotIn(allocated, booked)
        refused = self._allocate('mine-2')
        self.assertEqual(409, refused.status_code, refused.text)
        self.assertIn('every free one is reserved in the ledger (one is '
                      'booked from ', refused.json()['error_message'])
        self.assertEqual([allocated], self.pcloud.hosts)
        # Once the lease is gone, a booked host may be allocated for good.
        self.delete_lease(lease['id'])
        self.assertEqual(201, self._allocate('mine-2').status_code)
        self.assertEqual(2, len(self.pcloud.hosts))

    def test_a_permanent_allocation_first_is_seen_by_leases(self):
        made = self._allocate('mine-1')
        self.assertEqual(201, made.status_code, made.text)
        # Service hosts and hypervisors share their names here.
        (node,) = self.pcloud.hosts
        self.assertIsNotNone(self.claims(
            'pcloud-host:%s' % self.hosts[node]))
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'three', self.minutes(60), self.minutes(120),
            [self.hosts_res(3)], [])
        self.assertEqual(409, e.kwargs['code'])
        lease = self.create_lease(self.hosts_res(2), start=60, end=120)
        self.assertNotIn(node, self.leased(lease))
        # Released (disabled first), the host is free for leases again.
        self.assertEqual(200, self._pcloud_call(
            'PUT', '/hosts/mine-1', {'state': 'disabled'}).status_code)
        self.assertEqual(204, self._pcloud_call(
            'DELETE', '/hosts/mine-1').status_code)
        self.assertIsNone(self.claims('pcloud-host:%s' % self.hosts[node]))
        self.create_lease(self.hosts_res(1), start=60, end=120)

    def test_a_window_past_what_the_ledger_holds_is_400(self):
        self.assert_last_day_is_400(self.hosts_res(1))
        self.assertEqual([], host_db.list_reservations(self.context))

    def test_a_capacity_refusal_is_409_with_the_reason(self):
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'too-many', self.minutes(60), self.minutes(120),
            [self.hosts_res(4)], [])
        self.assertEqual(409, e.kwargs['code'])
        self.assertIn('Cannot reserve 4 host(s) of host flavor big', str(e))
        self.assertEqual([], self.client.lease.list())

    def test_bad_terms_are_400_naming_the_field(self):
        for field, value in (('amount', 0), ('lease_type', 'SOMEDAY'),
                             ('pcloud_id', OTHERS_PCLOUD),
                             ('required_traits', ['A', 5])):
            reservation = self.hosts_res(1)
            reservation[field] = value
            e = self.assertRaises(
                client_exc.BlazarClientException, self.client.lease.create,
                'bad', self.minutes(60), self.minutes(120), [reservation],
                [])
            self.assertEqual(400, e.kwargs['code'])
            self.assertIn(field, str(e))
        self.assertEqual([], self.client.lease.list())
