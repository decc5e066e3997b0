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
"""Slots laid from the ledger's slot index against the engine's answer on
the window's forest, and against brute force, on random ledgers (SQLite).
"""

import datetime
import itertools
import random
from unittest import mock

import fixtures
import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import slot_index
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import slots
from pcloud_plugin.tests import base

T0 = datetime.datetime(2030, 1, 1)
PCLOUD_AGG = '6f7c7e4e-5b0e-4d7a-9a64-3f1f3f6c2a11'
FLAVORS = ({'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 0},
           {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 10},
           {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 20})


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class IndexedPlacementTests(base.LedgerTestCase):

    def _ledger(self, rng, hosts, numa=False):
        """Random hosts, traits and aggregates; their uuids.

        Some hosts have a child of a class slots never take (with numa,
        of MEMORY_MB).
        """
        uuids = []
        # New uuids each time: a ledger emptied and filled again is no
        # cloud's (uuids are never used twice).
        prefix = rng.getrandbits(32)
        for n in range(hosts):
            uuid = 'host-%d-%d' % (prefix, n)
            db_providers.create_provider(self.ctx, uuid, 'cn%02d' % n)
            inventories = {
                'VCPU': Inventory(rng.choice((2, 4, 8)),
                                  allocation_ratio=rng.choice((1.0, 2.0))),
                'MEMORY_MB': Inventory(
                    rng.choice((4096, 8192)), reserved=rng.choice((0, 512)),
                    max_unit=rng.choice((2048, 8192))),
                'DISK_GB': Inventory(rng.choice((40, 100)),
                                     step_size=rng.choice((1, 1, 5)))}
            db_providers.set_inventories(self.ctx, uuid, inventories)
            if rng.random() < 0.3:
                db_providers.set_traits(self.ctx, uuid, ['CUSTOM_FAST'])
            if rng.random() < 0.3:
                db_providers.set_aggregates(self.ctx, uuid, [PCLOUD_AGG])
            if rng.random() < 0.3:
                child = uuid + '-child'
                db_providers.create_provider(self.ctx, child, 'cn%02d-r' % n,
                                             parent_uuid=uuid)
                rc = 'MEMORY_MB' if numa else 'CUSTOM_RESERVATION_X'
                db_providers.set_inventories(self.ctx, child,
                                             {rc: Inventory(8)})
            uuids.append(uuid)
        return uuids

    def _claims(self, rng, uuids, count):
        for _n in range(count):
            flavor = rng.choice(FLAVORS)
            start = rng.randrange(0, 40)
            amounts = {rng.choice(uuids): {
                rc: amount * rng.randint(1, 2)
                for rc, amount in flavor.items() if amount}}
            try:
                db_claims.claim(self.ctx, 'c-%d' % rng.getrandbits(64),
                                amounts, hours(start),
                                hours(start + rng.randint(1, 20)))
            except (exception.CapacityExceeded,
                    exception.UnitRuleViolation):
                pass  # it does not fit: a ledger without it

    def _request(self, rng, uuids):
        traits = rng.choice(('required', 'forbidden', None, None, None))
        return slots.SlotRequest(
            rng.choice(FLAVORS), rng.randint(1, 6),
            affinity=rng.choice((True, False, None)),
            required=['CUSTOM_FAST'] if traits == 'required' else (),
            forbidden=['CUSTOM_FAST'] if traits == 'forbidden' else (),
            forbidden_aggregates=([PCLOUD_AGG] if rng.random() < 0.5
                                  else ()),
            excluded_hosts=rng.sample(uuids, rng.choice((0, 0, 1))),
            # An availability zone's aggregate, as Nova's prefilter asks.
            member_of=[PCLOUD_AGG] if rng.random() < 0.25 else ())

    @staticmethod
    def _result_of(place):
        try:
            plan = place()
        except slots.SlotsUnavailable as e:
            return 'refused', e.kwargs['placed']
        return plan.hosts, plan.amounts

    def setUp(self):
        super().setUp()
        self.ctx = self.context

    def _empty(self):
        """A ledger with nothing in it, for the next random one."""
        with self.engine.begin() as conn:
            for table in reversed(models.BASE.metadata.sorted_tables):
                if table.name != 'alembic_version':
                    conn.execute(table.delete())

    def test_index_places_as_the_engine_does(self):
        rng = random.Random(20)
        compared = 0
        for ledger in range(12):
            self._empty()
            uuids = self._ledger(rng, rng.randint(2, 9))
            self._claims(rng, uuids, rng.randint(0, 30))
            for n in range(15):
                request = self._request(rng, uuids)
                start = rng.randrange(0, 50)
                end = start + rng.randint(1, 30)
                index = db_snapshots.load_slot_index(self.ctx)
                fast = self._result_of(lambda: slots.place_indexed(
                    index, request, hours(start), hours(end)))
                forest = self._fresh_forest(hours(start), hours(end))
                engine = self._result_of(lambda: slots.place(forest, request))
                self.assertEqual(engine, fast, 'ledger %d, request %d: %s'
                                 % (ledger, n, request.describe()))
                compared += 1
                if fast[0] != 'refused':
                    # A write between, as the next admission sees it: the
                    # index is patched, not built again.
                    db_claims.claim(self.ctx, 'new-%d-%d' % (ledger, n),
                                    fast[1], hours(start), hours(end),
                                    unit=request.resources)
        self.assertEqual(12 * 15, compared)

    def test_the_engine_counts_each_host_as_the_index_does(self):
        # Availability's counts: the index's where it answers, else the
        # engine's (slots.host_counts); where both answer, the same.
        rng = random.Random(34)
        compared = 0
        for ledger in range(10):
            self._empty()
            uuids = self._ledger(rng, rng.randint(2, 9))
            self._claims(rng, uuids, rng.randint(0, 30))
            index = db_snapshots.load_slot_index(self.ctx)
            for n in range(15):
                request = self._request(rng, uuids)
                start = rng.randrange(0, 50)
                counts = index.counts(request, hours(start),
                                      hours(start + 1))
                if counts is None:
                    continue
                fast = {index.uuids[i]: int(c)
                        for i, c in enumerate(counts.count) if c}
                engine = slots.host_counts(self._fresh_forest(
                    hours(start), hours(start + 1)), request)
                self.assertEqual(fast, engine, 'ledger %d, request %d: %s'
                                 % (ledger, n, request.describe()))
                self.assertEqual(
                    slots.total_slots(fast.values(), request.affinity),
                    slots.total_slots(counts.count, request.affinity))
                compared += 1
        self.assertGreater(compared, 50)

    def test_total_slots(self):
        self.assertEqual((7, 4, 2), tuple(
            slots.total_slots([4, 0, 3], affinity)
            for affinity in (None, True, False)))
        self.assertEqual((0, 0, 0), tuple(
            slots.total_slots([], affinity)
            for affinity in (None, True, False)))

    def _fresh_forest(self, start, end):
        """The window's forest read whole from the database, not from

        what this process keeps (which the index shares).
        """
        with mock.patch.object(provider_cache, 'CACHE',
                               provider_cache.ProviderCache()):
            return db_snapshots.load_forest(self.ctx, start, end)

    def test_a_patched_index_counts_as_one_built_anew(self):
        rng = random.Random(7)
        uuids = self._ledger(rng, 8)
        self._claims(rng, uuids, 20)
        request = slots.SlotRequest(FLAVORS[0], 1)
        before = db_snapshots.load_slot_index(self.ctx)
        self._claims(rng, uuids[:3], 10)
        db_providers.set_traits(self.ctx, uuids[4], ['CUSTOM_FAST'])
        db_providers.set_inventories(self.ctx, uuids[5], {
            'VCPU': Inventory(64), 'MEMORY_MB': Inventory(65536),
            'DISK_GB': Inventory(1000)})
        patched = db_snapshots.load_slot_index(self.ctx)
        self.assertIsNot(before, patched)
        with mock.patch.object(provider_cache, 'CACHE',
                               provider_cache.ProviderCache()):
            anew = db_snapshots.load_slot_index(self.ctx)
        self.assertIsNot(patched, anew)
        for start in range(0, 60, 7):
            counts = [index.counts(request, hours(start), hours(start + 9))
                      for index in (patched, anew)]
            self.assertEqual(counts[1].count.tolist(),
                             counts[0].count.tolist())
            self.assertEqual(counts[1].busy.tolist(),
                             counts[0].busy.tolist())

    def test_own_claims_patch_the_index_without_reading_providers(self):
        rng = random.Random(8)
        uuids = self._ledger(rng, 6)
        request = slots.SlotRequest(FLAVORS[0], 1)
        db_snapshots.load_slot_index(self.ctx)
        read = []
        real = db_snapshots._rows_of
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.snapshots._rows_of',
            lambda session, ids: read.append(ids) or real(session, ids)))

        def counts(index):
            return index.counts(request, hours(0), hours(30)).count.tolist()

        def fresh():
            with mock.patch.object(provider_cache, 'CACHE',
                                   provider_cache.ProviderCache()):
                return counts(db_snapshots.load_slot_index(self.ctx))

        self._claims(rng, uuids, 5)
        self.assertEqual(fresh(),
                         counts(db_snapshots.load_slot_index(self.ctx)))
        self.assertEqual([], read)
        # Another process's write (a generation bumped behind this
        # process's back): the providers are read again.
        with self.engine.begin() as conn:
            conn.execute(sa.text('UPDATE resource_providers SET generation '
                                 '= generation + 1 WHERE uuid = :u'),
                         {'u': uuids[0]})
        self._claims(rng, uuids, 3)
        self.assertEqual(fresh(),
                         counts(db_snapshots.load_slot_index(self.ctx)))
        self.assertNotEqual([], read)

    def test_an_index_patched_from_answers_as_before(self):
        # Another thread may still be placing slots on the index that a
        # claim patched: the series the claim added must not show in it.
        rng = random.Random(9)
        uuids = self._ledger(rng, 6)
        request = slots.SlotRequest(FLAVORS[1], 1)

        def counts(index):
            return index.counts(request, hours(0), hours(60)).count.tolist()

        with mock.patch.object(provider_cache, 'CACHE',
                               provider_cache.ProviderCache()):
            expected = counts(db_snapshots.load_slot_index(self.ctx))
        before = db_snapshots.load_slot_index(self.ctx)
        self._claims(rng, uuids, 5)
        after = db_snapshots.load_slot_index(self.ctx)
        self.assertGreater(after.series.count, before.series.count)
        self.assertEqual(expected, counts(before))
        self.assertNotEqual(expected, counts(after))

    def _generation_reads(self, call):
        """call()'s answer, and the statements it ran that read every

        provider's generation or a run of them.
        """
        reads = []

        def executed(conn, cursor, statement, *args):
            if statement.startswith(
                    'SELECT resource_providers.id, '
                    'resource_providers.generation') and (
                    'WHERE' not in statement or 'BETWEEN' in statement):
                reads.append(statement)

        sa.event.listen(self.engine, 'before_cursor_execute', executed)
        try:
            return call(), reads
        finally:
            sa.event.remove(self.engine, 'before_cursor_execute', executed)

    def _read_after_bumps(self, request, *rp_ids):
        """Another process's write to these providers, then the index

        patched, which must count as one built anew; the one statement
        it read generations with.
        """
        def counts(index):
            return index.counts(request, hours(0), hours(60)).count.tolist()

        with self.engine.begin() as conn:
            conn.execute(sa.text('UPDATE resource_providers SET generation '
                                 '= generation + 1 WHERE id IN :ids')
                         .bindparams(sa.bindparam('ids', expanding=True)),
                         {'ids': list(rp_ids)})
        index, reads = self._generation_reads(
            lambda: db_snapshots.load_slot_index(self.ctx))
        with mock.patch.object(provider_cache, 'CACHE',
                               provider_cache.ProviderCache()):
            self.assertEqual(counts(db_snapshots.load_slot_index(self.ctx)),
                             counts(index))
        self.assertEqual(1, len(reads), reads)
        return reads[0]

    def test_another_process_write_reads_the_generations_of_its_run(self):
        rng = random.Random(10)
        uuids = self._ledger(rng, 3 * db_snapshots._RUN // 2)
        request = slots.SlotRequest(FLAVORS[0], 1)
        db_snapshots.load_slot_index(self.ctx)
        with self.engine.connect() as conn:
            rp_id = conn.execute(sa.text(
                'SELECT id FROM resource_providers WHERE uuid = :u'),
                {'u': uuids[-1]}).scalar()
        self._claims(rng, [uuids[-1]], 3)
        # Only the run of ids that moved, not every provider's row.
        self.assertIn('BETWEEN', self._read_after_bumps(request, rp_id))

    def test_many_runs_moved_read_every_generation(self):
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.snapshots._RUNS_READ', 1))
        rng = random.Random(11)
        self._ledger(rng, 3 * db_snapshots._RUN // 2)
        request = slots.SlotRequest(FLAVORS[0], 1)
        db_snapshots.load_slot_index(self.ctx)
        self.assertNotIn('WHERE', self._read_after_bumps(
            request, 1, db_snapshots._RUN + 1))

    def test_providers_made_or_deleted_meanwhile_are_no_patch(self):
        # As a write committed after the fingerprint shows them (READ
        # COMMITTED): the index is then built anew.
        self._ledger(random.Random(12), 3 * db_snapshots._RUN // 2)
        with self.engine.connect() as conn:
            now = db_snapshots._Generations(dict(conn.execute(sa.text(
                'SELECT id, generation FROM resource_providers')).all()))
            self.assertEqual(now, db_snapshots._generations_now(conn, now))
            for rp_id in (1, max(now)):
                # The last index did not have it: made since.
                made = db_snapshots._Generations(
                    {k: v for k, v in now.items() if k != rp_id})
                self.assertIsNone(db_snapshots._generations_now(conn, made))
            # The last index had one more (no row has id 0): deleted
            # since.
            deleted = db_snapshots._Generations({**now, 0: 1})
            self.assertIsNone(db_snapshots._generations_now(conn, deleted))

    def test_an_unchanged_ledger_gives_the_same_index(self):
        self._ledger(random.Random(1), 3)
        self.assertIs(db_snapshots.load_slot_index(self.ctx),
                      db_snapshots.load_slot_index(self.ctx))

    def test_a_class_a_child_offers_is_left_to_the_engine(self):
        rng = random.Random(3)
        uuids = self._ledger(rng, 6, numa=True)
        self.assertTrue(any(db_providers.get_provider(self.ctx, u + '-child')
                            for u in uuids if self._has_child(u)))
        index = db_snapshots.load_slot_index(self.ctx)
        self.assertIsNone(slots.place_indexed(
            index, slots.SlotRequest(FLAVORS[1], 1), hours(0), hours(1)))
        # A slot of no class the children offer is the index's.
        self.assertIsNotNone(slots.place_indexed(
            index, slots.SlotRequest({'VCPU': 1}, 1), hours(0), hours(1)))

    def _has_child(self, uuid):
        try:
            db_providers.get_provider(self.ctx, uuid + '-child')
        except exception.ResourceProviderNotFound:
            return False
        return True

    def test_more_hosts_than_max_candidates_is_left_to_the_engine(self):
        self._ledger(random.Random(4), 5)
        index = db_snapshots.load_slot_index(self.ctx)
        request = slots.SlotRequest({'VCPU': 1}, 1)
        self.assertIsNone(slots.place_indexed(
            index, request, hours(0), hours(1), max_candidates=4))
        self.assertIsNotNone(slots.place_indexed(
            index, request, hours(0), hours(1), max_candidates=5))

    def test_never_refuses_what_fits_nor_overbooks(self):
        """Brute force: every way to lay the slots on small ledgers."""
        rng = random.Random(11)
        for ledger in range(25):
            self._empty()
            uuids = self._ledger(rng, rng.randint(1, 4))
            self._claims(rng, uuids, rng.randint(0, 12))
            for _n in range(8):
                request = slots.SlotRequest(
                    rng.choice(FLAVORS), rng.randint(1, 5),
                    affinity=rng.choice((True, False, None)))
                start = rng.randrange(0, 50)
                window = (hours(start), hours(start + rng.randint(1, 30)))
                forest = self._fresh_forest(*window)
                fits = self._every_layout(forest, uuids, request)
                try:
                    plan = slots.place_indexed(
                        db_snapshots.load_slot_index(self.ctx), request,
                        *window)
                except slots.SlotsUnavailable:
                    self.assertEqual([], fits, request.describe())
                    continue
                self.assertIn(plan.hosts, fits, request.describe())

    @staticmethod
    def _every_layout(forest, uuids, request):
        """{host: slots} of every layout that fits beside the window's

        peak usage and keeps the affinity, counted apart from our code.
        """
        def fits(host, n):
            provider = forest[host]
            for rc, amount in request.resources.items():
                inv = provider.inventories.get(rc)
                if n and (inv is None or amount < inv.min_unit
                          or amount % inv.step_size
                          or amount > inv.max_unit
                          or provider.usage.get(rc, 0) + amount * n
                          > inv.capacity):
                    return False
            return True

        found = []
        wanted = request.amount
        for counts in itertools.product(range(wanted + 1),
                                        repeat=len(uuids)):
            used = [n for n in counts if n]
            if (sum(counts) != wanted
                    or (request.affinity is True and len(used) != 1)
                    or (request.affinity is False and max(used) > 1)):
                continue
            if all(fits(h, n) for h, n in zip(uuids, counts)):
                found.append({h: n for h, n in zip(uuids, counts) if n})
        return found


class SeriesTests(base.TestCase):
    """The slot index's usage series, patched claim after claim, against

    series built anew from the same steps.
    """

    @staticmethod
    def _steps(rng):
        claims = []
        for _n in range(rng.randrange(0, 5)):
            start = rng.randrange(0, 50)
            claims.append((hours(start), hours(start + rng.randrange(1, 20)),
                           rng.randrange(1, 9)))
        return window_mod.UsageSteps(claims)

    @staticmethod
    def _peaks(series):
        return [series.peaks(hours(start), hours(start + length)).tolist()
                for start in range(-5, 75, 4) for length in (1, 7, 30)]

    def test_a_replaced_series_peaks_as_one_built_anew(self):
        # Merged at every change, every few changes, and as in production.
        for patch_max in (0, 3, slot_index._PATCH_MAX):
            self.useFixture(fixtures.MonkeyPatch(
                'pcloud_plugin.capacity.slot_index._PATCH_MAX', patch_max))
            rng = random.Random(patch_max)
            steps = [self._steps(rng) for _n in range(12)]
            series = slot_index._Series(steps)
            merged = 0
            for _change in range(40):
                changes = {pos: self._steps(rng) for pos in rng.sample(
                    range(len(steps)), rng.randrange(1, 4))}
                added = [self._steps(rng) for _n in range(rng.randrange(3))]
                before, answered = series, self._peaks(series)
                series = series.replaced(changes, added)
                merged += series.keys is not before.keys
                steps = [changes.get(pos, s) for pos, s in enumerate(steps)]
                steps += added
                self.assertEqual(self._peaks(slot_index._Series(steps)),
                                 self._peaks(series))
                # The series replaced still answers as it did: another
                # thread may be reading it.
                self.assertEqual(answered, self._peaks(before))
            # Each way was taken: always merged, both, never.
            if patch_max == 0:
                self.assertEqual(40, merged)
            elif patch_max == 3:
                self.assertTrue(0 < merged < 40, merged)
            else:
                self.assertEqual(0, merged)
