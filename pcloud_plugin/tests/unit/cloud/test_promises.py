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

"""What a provider's promise carries (cloud.promises.promised), checked

against a brute-force walk over every moment that matters.
"""

import datetime
import random
from unittest import mock

import fixtures

from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import promises
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin.tests import base

NOW = datetime.datetime(2026, 11, 24, 12)


def _at(hours):
    return NOW + datetime.timedelta(hours=hours)


def _claim(start, end, used, rid='r', rp='rp', rc='MEMORY_MB'):
    return (rp, rc, _at(start), _at(end), used, rid)


class PromisedTests(base.TestCase):

    def test_overlapping_claims_add_up(self):
        claims = [_claim(1, 3, 100, 'a'), _claim(2, 4, 50, 'b')]
        self.assertEqual({'rp': {'MEMORY_MB': 150}},
                         promises.promised(claims, NOW, {}, {}))

    def test_claims_at_different_times_are_promised_once(self):
        # Back to back: the first has ended when the second starts.
        claims = [_claim(1, 2, 100, 'a'), _claim(2, 3, 70, 'b')]
        self.assertEqual({'rp': {'MEMORY_MB': 100}},
                         promises.promised(claims, NOW, {}, {}))

    def test_what_holds_carry_is_not_promised_again(self):
        claims = [_claim(-1, 2, 100, 'a'), _claim(1, 3, 30, 'b')]
        # Peak 130 from 1 to 2; the hold of 'a' carries 100 of it.
        self.assertEqual({'rp': {'MEMORY_MB': 30}},
                         promises.promised(claims, NOW, {}, {'rp': {'a'}}))
        # Once 'a' ends before 'b' starts, nothing beyond the hold.
        claims = [_claim(-1, 1, 100, 'a'), _claim(1, 3, 30, 'b')]
        self.assertEqual({}, promises.promised(claims, NOW, {},
                                               {'rp': {'a'}}))

    def test_a_started_claim_whose_hold_placement_lacks_is_promised(self):
        # Whatever the reservation's state says: a start writes the hold
        # before it records the state, and one cut short leaves it there
        # or not. Counted by its state, it was promised again beside its
        # hold: Placement refused the next write on a full host.
        claims = [_claim(-1, 2, 100, 'a'), _claim(1, 3, 30, 'b')]
        self.assertEqual({'rp': {'MEMORY_MB': 130}}, promises.promised(
            claims, NOW, {}, placed={'rp': set()}))
        # Its hold on another provider carries nothing here.
        self.assertEqual({'rp': {'MEMORY_MB': 130}}, promises.promised(
            claims, NOW, {}, placed={'rq': {'a'}}))

    def test_a_hold_placement_has_carries_a_claim_restarted_after_now(self):
        # An update of an active reservation started its claim again at
        # its own now, a second after this writer's: the hold carries it.
        claims = [(
            'rp', 'MEMORY_MB', NOW + datetime.timedelta(seconds=1), _at(2),
            100, 'a'), _claim(1, 3, 30, 'b')]
        self.assertEqual({'rp': {'MEMORY_MB': 30}}, promises.promised(
            claims, NOW, {}, placed={'rp': {'a': {'MEMORY_MB': 100}}}))

    def test_holds_being_written_replace_their_claims(self):
        claims = [_claim(0, 2, 100, 'a'), _claim(1, 3, 30, 'b')]
        hold = {'rp': {'MEMORY_MB': 99}}
        self.assertEqual({'rp': {'MEMORY_MB': 30}}, promises.promised(
            claims, NOW, {'a': (hold, _at(2))}, {}))
        # Open-ended (instances running after the end): peak 129.
        self.assertEqual({'rp': {'MEMORY_MB': 30}}, promises.promised(
            claims, NOW, {'a': (hold, None)}, {}))
        self.assertEqual({'rp': {'MEMORY_MB': 130}}, promises.promised(
            claims, NOW, {'a': ({}, None)}, {}))

    def test_a_hold_over_max_unit_carries_it_and_the_promise_the_rest(
            self):
        # Ten 4-vCPU slots on a host whose VCPU max_unit is 32, and 10 x
        # 512 MB (the hold leaves out one 1 MB ticket a slot) under a
        # max_unit of 4096: Placement takes no allocation over max_unit.
        max_units = {'rp': {'VCPU': 32, 'MEMORY_MB': 4096}}
        claims = [_claim(-1, 2, 40, 'a', rc='VCPU'),
                  _claim(-1, 2, 5120, 'a'), _claim(1, 3, 30, 'b')]
        hold = {'rp': {'VCPU': 40, 'MEMORY_MB': 5110}}
        self.assertEqual({'a': {'rp': {'VCPU': 32, 'MEMORY_MB': 4086}}},
                         promises.carried({'a': (hold, _at(2))}, claims,
                                          max_units))
        written = promises.promised(claims, NOW, {'a': (hold, _at(2))}, {},
                                    max_units=max_units)
        self.assertEqual({'rp': {'VCPU': 8, 'MEMORY_MB': 1054}}, written)
        # Read back as it was written: the same promise; its tickets stay
        # free for its boots (hold + promise = a's claim - 10 MB + b's).
        self.assertEqual(written, promises.promised(
            claims, NOW, {}, placed={'rp': {'a': {}}}, max_units=max_units))
        # Within max_unit, as before: the hold carries it all.
        self.assertEqual({'a': hold}, promises.carried(
            {'a': (hold, _at(2))}, claims, {'rp': {'VCPU': 64,
                                                   'MEMORY_MB': 8192}}))

    def test_a_proposed_change_is_promised_beside_the_claim_it_replaces(
            self):
        # 'a' moves from [1, 3) x 100 to [2, 5) x 60 while 'b' holds 30
        # over [4, 6): at each moment the higher of a's two claims, plus b.
        claims = [_claim(1, 3, 100, 'a'), _claim(4, 6, 30, 'b')]
        proposed = {'a': ({'rp': {'MEMORY_MB': 60}}, _at(2), _at(5))}
        self.assertEqual({'rp': {'MEMORY_MB': 100}}, promises.promised(
            claims, NOW, {}, {}, proposed=proposed))
        # Larger and later: 150 over [4, 5) beside b's 30.
        proposed = {'a': ({'rp': {'MEMORY_MB': 150}}, _at(4), _at(5))}
        self.assertEqual({'rp': {'MEMORY_MB': 180}}, promises.promised(
            claims, NOW, {}, {}, proposed=proposed))
        # On another provider it adds, and never sums with itself.
        proposed = {'a': ({'rp': {'MEMORY_MB': 100}, 'rq': {'VCPU': 2}},
                          _at(1), _at(3))}
        self.assertEqual({'rp': {'MEMORY_MB': 100}, 'rq': {'VCPU': 2}},
                         promises.promised(claims, NOW, {}, {},
                                           proposed=proposed))

    def test_random_proposals_match_a_walk_over_every_moment(self):
        rng = random.Random(11)
        for _case in range(300):
            claims = [_claim(s, s + rng.randint(1, 5), rng.randint(1, 9),
                             rid) for rid in 'abc'
                      for s in [rng.randint(-2, 8)]]
            start = rng.randint(-2, 8)
            new = (start, start + rng.randint(1, 5), rng.randint(1, 9))
            proposed = {'a': ({'rp': {'MEMORY_MB': new[2]}}, _at(new[0]),
                              _at(new[1]))}
            live = [c for c in claims if c[3] > NOW]
            moments = {NOW} | {c[2] for c in live} | {_at(new[0])}
            peak = 0
            for t in (m for m in moments if m >= NOW):
                old_a = sum(c[4] for c in live
                            if c[5] == 'a' and c[2] <= t < c[3])
                new_a = new[2] if _at(new[0]) <= t < _at(new[1]) else 0
                others = sum(c[4] for c in live
                             if c[5] != 'a' and c[2] <= t < c[3])
                peak = max(peak, max(old_a, new_a) + others)
            expected = {'rp': {'MEMORY_MB': peak}} if peak else {}
            self.assertEqual(expected, promises.promised(
                live, NOW, {}, {}, proposed=proposed), (claims, new))

    def test_only_the_classes_of_slots(self):
        claims = [_claim(1, 2, 1, 'a', rc='CUSTOM_X')]
        self.assertEqual({}, promises.promised(claims, NOW, {}, {}))

    def test_random_claims_match_a_walk_over_every_moment(self):
        rng = random.Random(7)
        for _case in range(300):
            claims = []
            placed = {'p': set(), 'q': set()}
            for n in range(rng.randint(0, 8)):
                start = rng.randint(-5, 10)
                rp, rid = rng.choice(['p', 'q']), 'r%d' % n
                if rng.random() < 0.3:
                    # Started, its hold in Placement.
                    start = min(start, 0)
                    placed[rp].add(rid)
                claims.append(_claim(start, start + rng.randint(1, 6),
                                     rng.randint(1, 9), rid, rp=rp))
            live = [c for c in claims if c[3] > NOW]
            expected = {}
            for rp in ('p', 'q'):
                mine = [c for c in live if c[0] == rp]
                moments = {NOW} | {c[2] for c in mine if c[2] > NOW}
                peak = max((sum(c[4] for c in mine if c[2] <= t < c[3])
                            for t in moments), default=0)
                held = sum(c[4] for c in mine if c[5] in placed[rp])
                if peak > held:
                    expected[rp] = {'MEMORY_MB': peak - held}
            self.assertEqual(expected,
                             promises.promised(live, NOW, {}, placed),
                             claims)


class FencedTests(base.TestCase):
    """What claims_on answers, the claims named and the others summed

    (res_db.fenced), promises and carries what every claim one by one
    would.
    """

    def test_random_claims_promise_the_same_named_or_summed(self):
        rng = random.Random(35)
        classes = ('VCPU', 'MEMORY_MB')
        providers = [(1, 'p', 4), (2, 'q', 7)]
        host = res_db.WHOLE_HOST + 'h'
        usage = db_claims.USAGE_PREFIX + 'u'
        for case in range(2000):
            # (provider id, class, start, end, used, consumer, left out)
            claims = []
            for n in range(rng.randint(0, 10)):
                rid = rng.choice(['r0', 'r1', 'r2', 'r3', 'r4', host,
                                  usage, 'booked'])
                start = rng.randint(-5, 10)
                end = (window_mod.FOREVER if rng.random() < 0.1
                       else _at(start + rng.randint(1, 6)))
                claims.append((rng.choice([1, 2]), rng.choice(classes),
                               _at(start), end, rng.randint(1, 9), rid,
                               rid in (host, usage, 'booked')))
            live = [c for c in claims if c[3] > NOW]
            rids = ['r0', 'r1', 'r2', 'r3', 'r4']
            holds = {rid: ({rp: {rc: rng.randint(0, 9) for rc in classes}
                            for rp in rng.sample('pq', rng.randint(0, 2))},
                           _at(rng.randint(1, 9)))
                     for rid in rng.sample(rids, rng.randint(0, 2))}
            proposed = {rid: ({'p': {'VCPU': rng.randint(1, 9)}},
                              _at(s), _at(s + rng.randint(1, 4)))
                        for rid in rng.sample(rids, rng.randint(0, 2))
                        for s in [rng.randint(-2, 8)]}
            placed = {rp: {rid: {} for rid in rng.sample(rids, 2)}
                      for rp in 'pq'}
            named = set(holds).union(proposed, *placed.values())
            max_units = {uuid: {rc: cap for rc in classes}
                         for _id, uuid, cap in providers}
            uuids = {rp_id: uuid for rp_id, uuid, _cap in providers}
            # As claims_on read them before: every claim one by one.
            each = [(uuids[c[0]],) + c[1:6] for c in live if not c[6]]
            details = {rp_id: provider_cache.Details(
                inventories={rc: inv_mod.Inventory(100, max_unit=cap)
                             for rc in classes},
                traits=frozenset(), aggregates=frozenset(),
                usage={rc: window_mod.UsageSteps(
                    [c[2:5] for c in claims if c[:2] == (rp_id, rc)])
                    for rc in classes})
                for rp_id, _uuid, cap in providers}
            rows = [c for c in live if c[5] in named or c[6]]
            answer = res_db.fenced([(rp_id, uuid, 0) for rp_id, uuid, _c
                                    in providers], details, rows, named)
            self.assertEqual(max_units, answer.max_units)
            self.assertEqual(
                promises.promised(each, NOW, holds, placed, proposed,
                                  max_units),
                promises.promised(answer.claims, NOW, holds, placed,
                                  proposed, max_units, answer.summed),
                (case, claims))
            self.assertEqual(promises.carried(holds, each, max_units),
                             promises.carried(holds, answer.claims,
                                              max_units), (case, claims))


class PiecesTest(base.TestCase):
    """A promise over a max_unit is written in allocations Placement takes."""

    def test_within_max_unit_one_allocation(self):
        self.assertEqual([{'VCPU': 16, 'MEMORY_MB': 4096}], promises.pieces(
            {'VCPU': 16, 'MEMORY_MB': 4096},
            {'VCPU': 16, 'MEMORY_MB': 32768}))

    def test_over_max_unit_cut_in_pieces_that_add_up(self):
        cut = promises.pieces({'VCPU': 37, 'MEMORY_MB': 100},
                              {'VCPU': 16, 'MEMORY_MB': 32768})
        self.assertEqual([{'VCPU': 16, 'MEMORY_MB': 100}, {'VCPU': 16},
                          {'VCPU': 5}], cut)

    def test_random_amounts_each_piece_within_max_unit(self):
        rng = random.Random(7)
        for _ in range(2000):
            units = {rc: rng.randint(1, 40) for rc in promises.resources
                     .SLOT_CLASSES}
            amounts = {rc: rng.randint(0, 10 * unit)
                       for rc, unit in units.items()}
            amounts = {rc: n for rc, n in amounts.items() if n}
            cut = promises.pieces(amounts, units)
            for rc in units:
                self.assertEqual(amounts.get(rc, 0),
                                 sum(p.get(rc, 0) for p in cut))
            for piece in cut:
                self.assertTrue(piece)
                for rc, n in piece.items():
                    self.assertLessEqual(n, units[rc])

    def test_past_the_most_pieces_the_last_takes_the_rest(self):
        cut = promises.pieces({'VCPU': 1000}, {'VCPU': 1})
        self.assertEqual(promises._MAX_PIECES, len(cut))
        self.assertEqual(1000 - promises._MAX_PIECES + 1, cut[-1]['VCPU'])

    def test_each_piece_its_own_consumer(self):
        names = {promises.promise_consumer('rp', k) for k in range(3)}
        self.assertEqual(3, len(names))
        self.assertNotIn(promises.promise_consumer('rp2'), names)

    def test_the_pieces_there_are_the_first_ones_there(self):
        there = {promises.promise_consumer('rp', k): {} for k in range(3)}
        there.update({'instance': {}, promises.promise_consumer('rp2'): {},
                      # Past a gap no write leaves.
                      promises.promise_consumer('rp', 4): {}})
        self.assertEqual(
            {promises.promise_consumer('rp', k) for k in range(3)},
            promises.pieces_there('rp', there))
        self.assertEqual(set(), promises.pieces_there('rp', {'x': {}}))


class SyncTests(base.TestCase):
    """Writers that meet one another read again, apart in time."""

    def setUp(self):
        super().setUp()
        hour = datetime.timedelta(hours=1)
        later = datetime.datetime.utcnow() + hour
        self.placement = mock.Mock()
        self.placement.consumers_on.return_value = {}
        self.placement.allocations_of.return_value = (None, {})
        self.useFixture(fixtures.MockPatch(
            'pcloud_plugin.db.reservations.claims_on',
            return_value=res_db.Fenced(
                [('rp', 'MEMORY_MB', later, later + hour, 100, 'r')], {},
                {})))
        self.waits = self.useFixture(fixtures.MockPatchObject(
            promises, '_sleep')).mock

    def test_a_concurrent_writer_is_met_by_reading_again_later(self):
        placement, waits = self.placement, self.waits
        # Two lost races to other writers, then written.
        placement.write_allocations.side_effect = [False, False, True]
        promises.Promises(placement, None).sync(['rp'])
        self.assertEqual(3, placement.write_allocations.call_count)
        self.assertEqual(2, waits.call_count)
        first, second = [c.args[0] for c in waits.call_args_list]
        self.assertLessEqual(first, promises._BACKOFF)
        self.assertLessEqual(second, 2 * promises._BACKOFF)

    def test_writers_that_always_meet_give_up_as_a_lost_race(self):
        self.placement.write_allocations.return_value = False
        self.assertRaises(exception.ConcurrentUpdateDetected,
                          promises.Promises(self.placement, None).sync,
                          ['rp'])
        self.assertEqual(promises._RETRIES,
                         self.placement.write_allocations.call_count)
        self.assertIsInstance(exception.ConcurrentUpdateDetected(
            attempts=1, providers='rp'), exception.PLAN_OUTDATED)

    def test_a_refusal_says_whether_boots_or_unit_rules_caused_it(self):
        for body, why in (
                ('Unable to allocate inventory: Unable to create allocation '
                 "for 'VCPU' on resource provider 'rp'. The requested amount "
                 'would violate inventory constraints.',
                 "break the inventory's min_unit, max_unit or step_size"),
                ("Unable to create allocation for 'VCPU' on resource "
                 "provider 'rp'. The requested amount would exceed the "
                 'capacity.', 'instances running outside reservations')):
            self.placement.write_allocations.side_effect = (
                placement_client.PlacementFailure(
                    status=409, body=body, method='POST', url='/allocations'))
            e = self.assertRaises(promises.NoRoomInPlacement,
                                  promises.Promises(self.placement, None).sync,
                                  ['rp'])
            self.assertIn(why, e.message)
