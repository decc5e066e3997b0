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

"""What virtual:instance leases are promised is out of reach of other

boots in real Placement (cloud.promises), before they start and while
they run, and Placement's own usage counts at admission. Hosts as in
base.BlazarTestCase: cn1 has 7680 MB for 7 slots of 1024 MB; cn2 two NUMA
nodes of 4096 MB, 2 slots each.
"""

import datetime
from unittest import mock

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.cloud import mirror
from pcloud_plugin.cloud import promises
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.reservations import instance_lifecycle
from pcloud_plugin.tests.functional.blazar import base


def _rid(lease):
    (reservation,) = lease['reservations']
    return reservation['id']


class PromiseTests(base.BlazarTestCase):

    def setUp(self):
        self.useFixture(base.StillTime())
        super().setUp()

    def promise(self, host):
        held = self.placement.client.get('/allocations/%s' % (
            promises.promise_consumer(self.hosts[host]))).json()
        return {rc: n for a in held['allocations'].values()
                for rc, n in a['resources'].items()}

    def boot(self, host, memory_mb, vcpus=0):
        """An on-demand boot's allocation, as Nova writes it: its status."""
        resources_ = {'MEMORY_MB': memory_mb}
        if vcpus:
            resources_['VCPU'] = vcpus
        return self.placement.client.put(
            '/allocations/%s' % uuidutils.generate_uuid(), json={
                'allocations': {self.hosts[host]: {
                    'resources': resources_}},
                'project_id': 'other', 'user_id': 'other',
                'consumer_generation': None},
            microversion='1.28', raise_exc=False).status_code

    def test_capacity_promised_for_later_is_out_of_reach_now(self):
        self.create_lease(self.reservation(7, affinity=True))
        self.assertEqual({'VCPU': 14, 'MEMORY_MB': 7168, 'DISK_GB': 70},
                         self.promise('cn1'))
        # 7680 MB: a boot of what is left fits, one slot's worth does not.
        self.assertEqual(409, self.boot('cn1', 1024))
        self.assertEqual(204, self.boot('cn1', 512))

    def test_leases_at_different_times_are_promised_once(self):
        self.create_lease(self.reservation(7, affinity=True))
        self.create_lease(self.reservation(7, affinity=True),
                          start=180, end=240)
        self.assertEqual(7168, self.promise('cn1')['MEMORY_MB'])
        self.assertEqual(409, self.boot('cn1', 1024))

    def test_start_moves_the_promise_into_the_hold(self):
        lease = self.create_lease(self.reservation(7, affinity=True),
                                  start=0)
        self.start(lease['id'])
        self.assertEqual({}, self.promise('cn1'))
        held = self.placement.client.get(
            '/allocations/%s' % _rid(lease)).json()['allocations']
        self.assertEqual(7168 - 7 * resources.TICKET_MB,
                         held[self.hosts['cn1']]['resources']['MEMORY_MB'])
        self.assertEqual(409, self.boot('cn1', 1024))

    def test_a_deleted_lease_is_no_longer_promised(self):
        lease = self.create_lease(self.reservation(7, affinity=True))
        self.delete_lease(lease['id'])
        # Blazar tells the plugin nothing of a deleted pending lease: its
        # periodic sweep finds it gone.
        self.plugin.sweep()
        self.assertEqual({}, self.promise('cn1'))
        self.assertEqual(204, self.boot('cn1', 7168))

    def test_a_consumer_placement_kept_without_allocations_is_reused(self):
        # Placement makes a new consumer, then its allocations, and
        # removes the consumer when they fail: killed in between (the
        # soak kills it), it keeps the consumer with none, and shows no
        # generation for it. Its cleanup left out here, as by that kill.
        consumer = promises.promise_consumer(self.hosts['cn1'])
        with mock.patch('placement.handlers.allocation.delete_consumers'):
            refused = self.placement.client.post('/allocations', json={
                consumer: {'allocations': {self.hosts['cn1']: {
                    'resources': {'VCPU': 100000}}},
                    'consumer_generation': None,
                    'project_id': 'p', 'user_id': 'u'}},
                microversion='1.28', raise_exc=False)
        self.assertEqual(409, refused.status_code)
        self.assertEqual({'allocations': {}}, self.placement.client.get(
            '/allocations/%s' % consumer, microversion='1.28').json())
        # Every write of cn1's promise met that consumer: refused as a
        # concurrent update, again and again, until the lease was.
        self.create_lease(self.reservation(7, affinity=True))
        self.assertEqual({'VCPU': 14, 'MEMORY_MB': 7168, 'DISK_GB': 70},
                         self.promise('cn1'))
        self.assertEqual(409, self.boot('cn1', 1024))

    def others_write_first(self):
        """Other writers get to Placement first, as often as one sync

        tries (no pause between its tries): the writes they beat.
        """
        write = resources.PlacementSlots.write_allocations
        lost = []

        def others_first(placement, writes):
            if len(lost) < promises._RETRIES:
                lost.append(writes)
                return False
            return write(placement, writes)
        self.useFixture(fixtures.MockPatchObject(
            resources.PlacementSlots, 'write_allocations', autospec=True,
            side_effect=others_first))
        self.useFixture(fixtures.MockPatchObject(promises, '_sleep'))
        return lost

    def back_to_back(self, start_first=True):
        """A on the whole of cn1 for 60 minutes from now, B after it; the

        clock past A's end. (A, B)
        """
        a = self.create_lease(self.reservation(7, affinity=True), start=0,
                              end=60)
        if start_first:
            self.start(a['id'])
        else:
            # A's start died after writing its hold; Blazar runs it again
            # later (reconcile puts its event back to do).
            self.plugin._place_slots(res_db.get(self.context, _rid(a)))
        b = self.create_lease(self.reservation(7, affinity=True), start=60,
                              end=120)
        self.assertEqual([self.hosts['cn1']], list(db_claims.get_claims(
            self.context, _rid(b))['amounts']))
        timeutils.set_time_override(timeutils.utcnow() + datetime.timedelta(
            minutes=61))
        self.addCleanup(timeutils.clear_time_override)
        return a, b

    def assert_starts_in_place_of(self, b, a):
        """B's start runs, B is ACTIVE, and holds what A held on cn1."""
        self.assertEqual(status.event.DONE,
                         self.start_before_due_ends(b['id'])['status'])
        self.assertEqual('ACTIVE', blazar_db.lease_get(b['id'])['status'])
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % _rid(a)).json()['allocations'])
        self.assertEqual(409, self.boot('cn1', 1024))

    def test_a_start_before_the_end_of_the_lease_before_it(self):
        # Past both events, Blazar runs B's start in a pass of starts
        # that began before A's end came due: A's hold is still in
        # Placement, and B's beside it is more than cn1 has.
        a, b = self.back_to_back()
        self.assert_starts_in_place_of(b, a)
        self.assertEqual(204, self.boot('cn1', 512))
        # Blazar's own end of A, after: A is already ended.
        self.assertEqual('TERMINATED', self.end(a['id'])['status'])
        self.assertIsNone(db_claims.get_claims(self.context, _rid(a)))
        self.assertEqual('ACTIVE', blazar_db.lease_get(b['id'])['status'])

    def test_a_hold_that_outlived_its_claim_gives_way_to_a_start(self):
        a, b = self.back_to_back()
        # A's end cannot run: its lease is mid-change (an update, or its
        # manager died in one), and Blazar skips its events.
        blazar_db.lease_update(a['id'], {'status': status.lease.UPDATING})
        self.assertEqual(status.event.DONE,
                         self.start_before_due_ends(b['id'])['status'])
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % _rid(a)).json()['allocations'])
        self.assertIsNone(db_claims.get_claims(self.context, _rid(a)))
        self.assertEqual(409, self.boot('cn1', 1024))
        blazar_db.lease_update(a['id'], {'status': status.lease.ACTIVE})
        self.assertEqual('TERMINATED', self.end(a['id'])['status'])

    def test_a_hold_dropped_as_the_start_looks_gives_way(self):
        a, b = self.back_to_back()
        # A's end is not due to the start's sweep (its lease mid-change)
        # but runs in another thread all the same: it drops A's hold
        # between Placement's refusal of B's and B's look at cn1.
        blazar_db.lease_update(a['id'], {'status': status.lease.UPDATING})
        look = self.plugin._end_outlived_holds
        pauses = []

        def a_ends_first(*args):
            if not pauses:
                self.plugin._finish(res_db.get(self.context, _rid(a)))
            return look(*args)
        self.useFixture(fixtures.MockPatchObject(
            self.plugin, '_end_outlived_holds', side_effect=a_ends_first))
        self.useFixture(fixtures.MockPatchObject(
            instance_lifecycle, '_sleep', side_effect=pauses.append))
        self.assertEqual(status.event.DONE,
                         self.start_before_due_ends(b['id'])['status'])
        self.assertEqual(1, len(pauses))
        self.assertEqual('ACTIVE', blazar_db.lease_get(b['id'])['status'])
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % _rid(a)).json()['allocations'])
        self.assertEqual(409, self.boot('cn1', 1024))
        blazar_db.lease_update(a['id'], {'status': status.lease.ACTIVE})
        self.assertEqual('TERMINATED', self.end(a['id'])['status'])

    def test_a_hold_whose_own_end_runs_as_the_start_ends_it_gives_way(self):
        a, b = self.back_to_back()
        blazar_db.lease_update(a['id'], {'status': status.lease.UPDATING})
        finish = self.plugin._finish

        def its_end_meanwhile(row):
            # A's own end (another manager's sweep, or Blazar's event)
            # finishes it first: its row is gone when ours goes on.
            if row['reservation_id'] == _rid(a):
                finish(res_db.get(self.context, _rid(a)))
            return finish(row)
        self.useFixture(fixtures.MockPatchObject(
            self.plugin, '_finish', side_effect=its_end_meanwhile))
        self.assert_starts_in_place_of(b, a)

    def test_a_start_that_keeps_meeting_writers_tries_again_later(self):
        lease = self.create_lease(self.reservation(2), start=0)
        lost, pauses = self.others_write_first(), []
        self.useFixture(fixtures.MockPatchObject(
            instance_lifecycle, '_sleep', side_effect=pauses.append))
        self.assertEqual('ACTIVE', self.start(lease['id'])['status'])
        self.assertEqual(promises._RETRIES, len(lost))
        self.assertEqual(1, len(pauses))
        self.assertNotEqual({}, self.placement.client.get(
            '/allocations/%s' % _rid(lease)).json()['allocations'])

    def test_a_start_that_died_midway_and_ended_gives_way(self):
        a, b = self.back_to_back(start_first=False)
        self.assertEqual(status.event.DONE,
                         self.start_before_due_ends(b['id'])['status'])
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % _rid(a)).json()['allocations'])
        # A's start again, past its end: nothing to start, then its end.
        self.assertEqual('TERMINATED', self.start(a['id'])['status'])
        self.assertEqual('ACTIVE', blazar_db.lease_get(b['id'])['status'])
        self.assertEqual(409, self.boot('cn1', 1024))

    def test_a_hold_written_meanwhile_is_not_asked_for_twice(self):
        # A and B fill cn1 together from now on.
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn2-numa0']: {'MEMORY_MB': 4096},
            self.hosts['cn2-numa1']: {'MEMORY_MB': 4096}})
        self.sync()
        a = self.create_lease(self.reservation(4, affinity=True), start=0)
        b = self.create_lease(self.reservation(3, affinity=True), start=0)
        a_row = res_db.get(self.context, _rid(a))
        # A's start runs elsewhere (below), not in this manager's pass.
        a_start = self.event(a['id'], 'start_lease')
        blazar_db.event_update(a_start['id'], {
            'time': timeutils.utcnow() + datetime.timedelta(days=1)})
        read, hold = resources.PlacementSlots.consumers_on, self.plugin._hold
        holding, meanwhile = [], []

        def b_holds(row, *args):
            holding.append(row['reservation_id'])
            return hold(row, *args)

        def a_starts_as_b_reads(placement, provider):
            found = read(placement, provider)
            if holding == [_rid(b)] and not meanwhile:
                # A's start, in another thread, writes its hold just after
                # B's start read who is on cn1.
                meanwhile.append(provider)
                hold(a_row)
            return found
        self.useFixture(fixtures.MockPatchObject(
            self.plugin, '_hold', side_effect=b_holds))
        self.useFixture(fixtures.MockPatchObject(
            resources.PlacementSlots, 'consumers_on', autospec=True,
            side_effect=a_starts_as_b_reads))
        self.assertEqual('ACTIVE', self.start(b['id'])['status'])
        self.assertEqual([self.hosts['cn1']], meanwhile)
        self.assertEqual(409, self.boot('cn1', 1024))

    def test_a_creation_that_keeps_meeting_writers_claims_again(self):
        lost = self.others_write_first()
        lease = self.create_lease(self.reservation(7, affinity=True))
        self.assertEqual(promises._RETRIES, len(lost))
        self.assertEqual({'VCPU': 14, 'MEMORY_MB': 7168, 'DISK_GB': 70},
                         self.promise('cn1'))
        self.assertEqual([self.hosts['cn1']], list(db_claims.get_claims(
            self.context, _rid(lease))['amounts']))

    def test_an_update_that_keeps_meeting_writers_is_refused(self):
        lease = self.create_lease(self.reservation(2))
        rid = _rid(lease)
        before = db_claims.get_claims(self.context, rid)
        # Every write of the promises meets another writer's.
        self.useFixture(fixtures.MockPatchObject(
            resources.PlacementSlots, 'write_allocations',
            return_value=False))
        self.useFixture(fixtures.MockPatchObject(promises, '_sleep'))
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'],
                              reservations=[{'id': rid, 'amount': 3}])
        self.assertIn('concurrent', str(e))
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(lease['id'])['status'])
        after = db_claims.get_claims(self.context, rid)
        self.assertEqual((before['amounts'], before['start'], before['end']),
                         (after['amounts'], after['start'], after['end']))

    def test_an_earlier_end_stands_when_placement_keeps_meeting_writers(
            self):
        # Instances fill cn2: A runs 3 slots on cn1 until 120, B takes 4
        # more from 60; A's earlier end at 60 lowers cn1's promise.
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn2-numa0']: {'MEMORY_MB': 4096},
            self.hosts['cn2-numa1']: {'MEMORY_MB': 4096}})
        self.sync()
        lease = self.create_lease(self.reservation(3), start=0, end=120)
        self.start(lease['id'])
        rid = _rid(lease)
        self.create_lease(self.reservation(4), start=60, end=120)
        self.assertEqual(4096, self.promise('cn1')['MEMORY_MB'])
        self.useFixture(fixtures.MockPatchObject(
            resources.PlacementSlots, 'write_allocations',
            return_value=False))
        self.useFixture(fixtures.MockPatchObject(promises, '_sleep'))
        # What it lets go may be another lease's the moment it is let go:
        # the shorter claim is kept, and Placement's older, larger hold
        # stays until its next write.
        self.update_lease(lease['id'], end_date=self.minutes(60))
        self.assertEqual(self.minutes(60), db_claims.get_claims(
            self.context, rid)['end'].strftime('%Y-%m-%d %H:%M'))
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(4096, self.promise('cn1')['MEMORY_MB'])

    def test_a_refused_change_never_lets_the_old_claim_go(self):
        # A holds the whole of cn1 in an hour and asks to move a week on.
        # Placement refuses every write of A's change (boots the mirror
        # has not read took cn1); while the first is written, another
        # lease asks for A's hour on cn1.
        a = self.create_lease(self.reservation(7, affinity=True))
        rid = _rid(a)
        before = db_claims.get_claims(self.context, rid)
        sync, meanwhile = promises.Promises.sync, []

        def no_room_for_a(promises_, providers, **kwargs):
            if len(meanwhile) == 1:
                return sync(promises_, providers, **kwargs)  # the other's
            if not meanwhile:
                meanwhile.append(None)
                try:
                    meanwhile[0] = self.create_lease(
                        self.reservation(7, affinity=True))
                except errors.CapacityRefused as e:
                    meanwhile[0] = e
                meanwhile.append('done')
            raise promises.NoRoomInPlacement(
                providers=self.hosts['cn1'], uuids={self.hosts['cn1']},
                detail='boots took it')

        with mock.patch.object(promises.Promises, 'sync', autospec=True,
                               side_effect=no_room_for_a):
            week = 7 * 24 * 60
            self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              a['id'], start_date=self.minutes(60 + week),
                              end_date=self.minutes(120 + week))
        # A keeps its hour on cn1, which the other lease never had.
        self.assertIsInstance(meanwhile[0], errors.CapacityRefused)
        after = db_claims.get_claims(self.context, rid)
        self.assertEqual((before['amounts'], before['start'], before['end']),
                         (after['amounts'], after['start'], after['end']))
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(a['id'])['status'])
        self.assertEqual({'VCPU': 14, 'MEMORY_MB': 7168, 'DISK_GB': 70},
                         self.promise('cn1'))

    def promised_in_pieces(self, host):
        """{class: n} of every allocation of the host's promise."""
        uuid = self.hosts[host]
        on_host = self.placement.client.get(
            '/resource_providers/%s/allocations' % uuid).json()
        total = {}
        pieces = promises.pieces_there(uuid, on_host['allocations'])
        for consumer, held in on_host['allocations'].items():
            if consumer in pieces:
                for rc, n in held['resources'].items():
                    total[rc] = total.get(rc, 0) + n
        return total

    def _cn1_of_4_core_units(self):
        """One boot takes at most 4 cores of cn1 (its max_unit); the host

        holds 16 (8 x 2.0). Instances fill cn2: every slot goes to cn1.
        """
        self.placement.set_inventories(self.hosts['cn1'], {
            'VCPU': {'total': 8, 'allocation_ratio': 2.0, 'max_unit': 4},
            'MEMORY_MB': {'total': 8192, 'reserved': 512},
            'DISK_GB': {'total': 200}})
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn2-numa0']: {'MEMORY_MB': 4096},
            self.hosts['cn2-numa1']: {'MEMORY_MB': 4096}})
        self.sync()

    def _held_on_cn1(self, rid):
        """(what the reservation's hold, and the promise, carry of cn1)."""
        hold = self.placement.client.get(
            '/allocations/%s' % rid).json()['allocations']
        return (hold.get(self.hosts['cn1'], {}).get('resources', {}),
                self.promised_in_pieces('cn1'))

    def test_slots_over_max_unit_in_sum_are_held_and_grow_in_place(self):
        # Six 2-vCPU slots on one host are six instances: 12 cores, over
        # the max_unit of 4 that one allocation may take, within the 16
        # the host holds. Before, refused.
        self._cn1_of_4_core_units()
        lease = self.create_lease(self.reservation(6, affinity=True),
                                  start=0)
        rid = _rid(lease)
        self.assertEqual({self.hosts['cn1']: {
            'VCPU': 12, 'MEMORY_MB': 6144, 'DISK_GB': 60}},
            db_claims.get_claims(self.context, rid)['amounts'])
        self.assertEqual(12, self.promised_in_pieces('cn1')['VCPU'])
        self.start(lease['id'])
        # The hold is one allocation, within max_unit; the promise's
        # pieces carry the rest: 12 cores out of other boots' reach.
        hold, promised = self._held_on_cn1(rid)
        self.assertEqual((4, 8), (hold['VCPU'], promised['VCPU']))
        self.assertEqual(6144 - 6 * resources.TICKET_MB, hold['MEMORY_MB'])
        # Grown in place to 7 slots (14 cores): admitted, held the same way.
        self.update_lease(lease['id'], reservations=[{'id': rid,
                                                      'amount': 7}])
        self.assertEqual(14, db_claims.get_claims(
            self.context, rid)['amounts'][self.hosts['cn1']]['VCPU'])
        self.assertEqual({'cn1': 7}, {
            h: inv['total'] for h, inv in self.reservation_inventories(
                resources.resource_class(rid)).items()})
        hold, promised = self._held_on_cn1(rid)
        self.assertEqual((4, 10), (hold['VCPU'], promised['VCPU']))
        # 16 - 14 cores are left to boots outside reservations; a boot
        # into the reservation takes its ticket.
        self.assertEqual(204, self.boot('cn1', 1, vcpus=2))
        self.assertEqual(409, self.boot('cn1', 1, vcpus=1))
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn1']: {'MEMORY_MB': resources.TICKET_MB},
            resources.child_uuid(self.hosts['cn1']): {
                resources.resource_class(rid): 1}})
        self.delete_lease(lease['id'])
        self.plugin.sweep()

    def test_a_promise_over_a_max_unit_is_written_in_pieces(self):
        # A promise carries the slots of every reservation on a host, in
        # allocations each within max_unit.
        self._cn1_of_4_core_units()
        leases = [self.create_lease(self.reservation(2, affinity=True))
                  for _ in range(3)]
        for lease in leases:
            self.assertEqual([self.hosts['cn1']], list(db_claims.get_claims(
                self.context, _rid(lease))['amounts']))
        self.assertEqual(12, self.promised_in_pieces('cn1')['VCPU'])
        # 16 - 12 cores are left to boots outside reservations.
        self.assertEqual(204, self.boot('cn1', 1, vcpus=4))
        self.assertEqual(409, self.boot('cn1', 1, vcpus=1))
        for lease in leases:
            self.delete_lease(lease['id'])
        self.plugin.sweep()
        self.assertEqual({}, self.promised_in_pieces('cn1'))

    def _unseen(self):
        """Boots the mirror has not read yet: only Placement knows."""
        self.useFixture(fixtures.MockPatchObject(
            mirror.Mirror, 'refresh', return_value=False))

    def _slots_go_elsewhere(self):
        # Instances hold 5 GB of cn2's 8 in Placement; cn2 is the tightest
        # fit for 4 slots on one host, but cn1 must take them.
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn2-numa0']: {'MEMORY_MB': 4096},
            self.hosts['cn2-numa1']: {'MEMORY_MB': 1024}})
        lease = self.create_lease(self.reservation(4, affinity=True))
        claims = db_claims.get_claims(self.context, _rid(lease))
        self.assertEqual([self.hosts['cn1']], list(claims['amounts']))
        self.assertEqual(4096, self.promise('cn1')['MEMORY_MB'])

    def test_running_instances_send_the_slots_elsewhere(self):
        # The admission's freshness check puts the usage in the ledger.
        self._slots_go_elsewhere()
        self.assertEqual(
            {self.hosts['cn2-numa0']: {'MEMORY_MB': 4096}},
            db_claims.get_claims(self.context, mirror.usage_consumer(
                self.hosts['cn2-numa0']))['amounts'])

    def test_placement_sends_the_slots_elsewhere_before_the_mirror(self):
        self._unseen()
        self._slots_go_elsewhere()

    def test_running_instances_refuse_what_fits_nowhere_else(self):
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn1']: {'MEMORY_MB': 4096}})
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                          self.create_lease,
                          self.reservation(5, affinity=True))
        self.assertEqual([mirror.usage_consumer(self.hosts['cn1'])], [
            c for c in db_claims.list_consumers(self.context)
            if not c.startswith('pcloud-host:')])
        self.assertEqual({}, self.promise('cn1'))

    def test_running_instances_are_not_promised_again(self):
        # An on-demand boot holds 512 MB of cn1 in Placement (and,
        # mirrored, in the ledger): the promise carries only the
        # reservation's 7 GB, so both fit in cn1's 7.5.
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn1']: {'MEMORY_MB': 512}})
        lease = self.create_lease(self.reservation(7, affinity=True))
        self.assertEqual([self.hosts['cn1']], list(db_claims.get_claims(
            self.context, _rid(lease))['amounts']))
        self.assertEqual(7168, self.promise('cn1')['MEMORY_MB'])

    def test_placement_refuses_what_the_mirror_has_not_seen(self):
        self._unseen()
        self.placement.allocate(uuidutils.generate_uuid(), {
            self.hosts['cn1']: {'MEMORY_MB': 4096}})
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.reservation(5, affinity=True))
        self.assertIn('instances running outside reservations', str(e))
        self.assertEqual([], [
            c for c in db_claims.list_consumers(self.context)
            if not c.startswith('pcloud-host:')])
        self.assertEqual({}, self.promise('cn1'))
