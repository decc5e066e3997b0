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

"""The ledger API on a real database (SQLite here; the functional tier

runs the same tests on MariaDB and PostgreSQL).
"""

import datetime
import functools
import random
import sqlite3

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.tests import base

T0 = datetime.datetime(2030, 1, 1)
_RP = models.ResourceProvider.__table__


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class LedgerAPITests(base.LedgerTestCase):

    def setUp(self):
        super().setUp()
        self.cn1 = self._provider('cn1', VCPU=Inventory(8))
        self.cn2 = self._provider('cn2', VCPU=Inventory(8))

    def _provider(self, name, parent=None, **inventories):
        uuid = 'uuid-' + name
        db_providers.create_provider(self.context, uuid, name,
                                     parent_uuid=parent)
        if inventories:
            db_providers.set_inventories(self.context, uuid, inventories)
        return uuid

    def _claim(self, consumer, amounts, start=None, end=None):
        return db_claims.claim(self.context, consumer, amounts, start, end)

    def _vcpu_usage(self, provider, start=T0, end=None):
        return db_claims.get_usage(self.context, provider, start, end).get(
            'VCPU', 0)

    # --- providers --------------------------------------------------------

    def test_tree_links(self):
        numa = self._provider('numa0', parent=self.cn1)
        dev = self._provider('dev0', parent=numa)
        got = db_providers.get_provider(self.context, dev)
        self.assertEqual(numa, got['parent_provider_uuid'])
        self.assertEqual(self.cn1, got['root_provider_uuid'])
        root = db_providers.get_provider(self.context, self.cn1)
        self.assertEqual(self.cn1, root['root_provider_uuid'])
        self.assertIsNone(root['parent_provider_uuid'])

    def test_duplicate_provider_refused(self):
        self.assertRaises(exception.Conflict, db_providers.create_provider,
                          self.context, self.cn1, 'other')
        self.assertRaises(exception.Conflict, db_providers.create_provider,
                          self.context, 'uuid-other', 'cn1')

    def test_unknown_parent(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          db_providers.create_provider, self.context, 'u', 'n',
                          parent_uuid='nope')

    def test_delete_provider_with_live_claim_refused(self):
        self._claim('c1', {self.cn1: {'VCPU': 1}})
        self.assertRaises(exception.ResourceProviderInUse,
                          db_providers.delete_provider, self.context, self.cn1)
        db_claims.release(self.context, 'c1')
        db_providers.delete_provider(self.context, self.cn1)
        self.assertRaises(exception.ResourceProviderNotFound,
                          db_providers.get_provider, self.context, self.cn1)

    def test_provider_made_again_is_read_again(self):
        # SQLite gives the new row the deleted one's id, and the provider
        # reaches the same generation: only the deletion tells them apart.
        cn3 = self._provider('cn3', VCPU=Inventory(8))
        self.assertEqual(8, db_snapshots.load_forest(
            self.context)[cn3].inventories['VCPU'].total)
        db_providers.delete_provider(self.context, cn3)
        self._provider('cn3', VCPU=Inventory(4))
        self.assertEqual(4, db_snapshots.load_forest(
            self.context)[cn3].inventories['VCPU'].total)

    def test_delete_provider_with_children_refused(self):
        self._provider('numa0', parent=self.cn1)
        self.assertRaises(exception.Conflict, db_providers.delete_provider,
                          self.context, self.cn1)

    def test_set_parent_moves_subtree_root(self):
        child = self._provider('child')
        grandchild = self._provider('grandchild', parent=child)
        db_providers.set_parent(self.context, child, self.cn1)
        self.assertEqual(self.cn1, db_providers.get_provider(
            self.context, grandchild)['root_provider_uuid'])
        self.assertRaises(exception.Conflict, db_providers.set_parent,
                          self.context, child, self.cn2)

    # --- inventories, traits, aggregates ----------------------------------

    def test_capacity_uses_reserved_and_ratio(self):
        db_providers.set_inventories(self.context, self.cn1, {
            'VCPU': Inventory(8, reserved=2, allocation_ratio=1.5)})
        self._claim('c1', {self.cn1: {'VCPU': 9}})
        e = self.assertRaises(exception.CapacityExceeded, self._claim, 'c2',
                              {self.cn1: {'VCPU': 1}})
        self.assertEqual(9, e.kwargs['capacity'])
        self.assertEqual(1, e.kwargs['short'])

    def test_invalid_inventory_refused_and_nothing_written(self):
        before = db_providers.get_provider(self.context,
                                           self.cn1)['generation']
        for bad in (Inventory(8, reserved=9), Inventory(0),
                    Inventory(8, min_unit=4, max_unit=2),
                    Inventory(8, step_size=0),
                    Inventory(8, allocation_ratio=0),
                    Inventory(8, allocation_ratio=float('nan')),
                    Inventory(-1), Inventory('8')):
            self.assertRaises(exception.InvalidInventory,
                              db_providers.set_inventories, self.context,
                              self.cn1, {'VCPU': bad, 'DISK_GB': Inventory(
                                  100)})
        self.assertEqual({'VCPU': Inventory(8)},
                         db_providers.get_inventories(self.context, self.cn1))
        self.assertEqual(before, db_providers.get_provider(
            self.context, self.cn1)['generation'])

    def test_bad_resource_class_name_refused(self):
        e = self.assertRaises(exception.InvalidName,
                              db_providers.set_inventories,
                              self.context, self.cn1,
                              {'NOT_A_CLASS': Inventory(1)})
        self.assertIn('NOT_A_CLASS', e.message)
        db_providers.set_inventories(self.context, self.cn1,
                                     {'CUSTOM_GOLD': Inventory(1)})
        self.assertEqual({'CUSTOM_GOLD': Inventory(1)},
                         db_providers.get_inventories(self.context, self.cn1))

    def test_inventory_shrink_below_future_claims_refused(self):
        self._claim('c1', {self.cn1: {'VCPU': 6}}, hours(1), hours(2))
        e = self.assertRaises(exception.InventoryInUse,
                              db_providers.set_inventories, self.context,
                              self.cn1, {'VCPU': Inventory(5)})
        self.assertEqual(6, e.kwargs['used'])
        self.assertRaises(exception.InventoryInUse,
                          db_providers.set_inventories,
                          self.context, self.cn1,
                          {'MEMORY_MB': Inventory(5)})
        self.assertEqual({'VCPU': Inventory(8)},
                         db_providers.get_inventories(self.context, self.cn1))
        db_providers.set_inventories(self.context, self.cn1,
                                     {'VCPU': Inventory(6)})

    def test_inventory_shrink_ignores_past_claims(self):
        past = datetime.datetime(2000, 1, 1)
        self._claim('old', {self.cn1: {'VCPU': 8}}, past,
                    past + datetime.timedelta(days=1))
        db_providers.set_inventories(self.context, self.cn1,
                                     {'VCPU': Inventory(1)})

    def test_inventory_generation_check(self):
        gen = db_providers.get_provider(self.context, self.cn1)['generation']
        self.assertRaises(exception.Conflict, db_providers.set_inventories,
                          self.context, self.cn1, {'VCPU': Inventory(4)},
                          generation=gen + 1)
        db_providers.set_inventories(self.context, self.cn1,
                                     {'VCPU': Inventory(4)}, generation=gen)
        self.assertEqual(gen + 1, db_providers.get_provider(
            self.context, self.cn1)['generation'])

    def test_traits_and_aggregates(self):
        db_providers.set_traits(self.context, self.cn1,
                                ['HW_CPU_X86_AVX2', 'CUSTOM_RED'])
        db_providers.set_aggregates(self.context, self.cn1, ['agg-a', 'agg-b'])
        self.assertEqual({'HW_CPU_X86_AVX2', 'CUSTOM_RED'},
                         db_providers.get_traits(self.context, self.cn1))
        self.assertEqual({'agg-a', 'agg-b'},
                         db_providers.get_aggregates(self.context, self.cn1))
        db_providers.set_traits(self.context, self.cn1, ['CUSTOM_RED'])
        self.assertEqual({'CUSTOM_RED'},
                         db_providers.get_traits(self.context, self.cn1))
        self.assertRaises(exception.InvalidName, db_providers.set_traits,
                          self.context, self.cn1, ['lower_case'])

    # --- claims -----------------------------------------------------------

    def test_exactly_capacity_fits(self):
        for i in range(4):
            self._claim('c%d' % i, {self.cn1: {'VCPU': 2}}, hours(0),
                        hours(10))
        e = self.assertRaises(exception.CapacityExceeded, self._claim, 'c5',
                              {self.cn1: {'VCPU': 1}}, hours(5), hours(6))
        self.assertEqual(self.cn1, e.kwargs['provider'])
        self.assertEqual('VCPU', e.kwargs['resource_class'])
        self.assertEqual(8, e.kwargs['used'])
        self.assertEqual(1, e.kwargs['short'])
        self.assertIn('short by 1', e.message)

    def test_disjoint_and_touching_windows_share_capacity(self):
        self._claim('a', {self.cn1: {'VCPU': 8}}, hours(0), hours(2))
        self._claim('b', {self.cn1: {'VCPU': 8}}, hours(2), hours(4))
        self._claim('c', {self.cn1: {'VCPU': 8}}, hours(5), hours(6))
        self.assertRaises(exception.CapacityExceeded, self._claim, 'd',
                          {self.cn1: {'VCPU': 1}}, hours(1), hours(3))

    def test_peak_not_sum_of_overlapping(self):
        # Two claims of 4 that overlap a window but not each other.
        self._claim('a', {self.cn1: {'VCPU': 4}}, hours(0), hours(2))
        self._claim('b', {self.cn1: {'VCPU': 4}}, hours(3), hours(5))
        self._claim('c', {self.cn1: {'VCPU': 4}}, hours(0), hours(5))
        e = self.assertRaises(exception.CapacityExceeded, self._claim, 'd',
                              {self.cn1: {'VCPU': 1}}, hours(1), hours(4))
        self.assertEqual(8, e.kwargs['used'])
        self._claim('e', {self.cn1: {'VCPU': 4}}, hours(2), hours(3))

    def test_open_ended_claim_blocks_every_later_window(self):
        self._claim('forever', {self.cn1: {'VCPU': 8}}, hours(10))
        self._claim('before', {self.cn1: {'VCPU': 8}}, hours(0), hours(10))
        self.assertRaises(exception.CapacityExceeded, self._claim, 'later',
                          {self.cn1: {'VCPU': 1}}, hours(1000),
                          hours(1001))
        self.assertIsNone(db_claims.get_claims(self.context, 'forever')['end'])

    def test_multi_provider_claim_is_all_or_nothing(self):
        self._claim('hog', {self.cn2: {'VCPU': 8}}, hours(0), hours(1))
        e = self.assertRaises(
            exception.CapacityExceeded, self._claim, 'both',
            {self.cn1: {'VCPU': 4}, self.cn2: {'VCPU': 4}}, hours(0),
            hours(1))
        self.assertEqual(self.cn2, e.kwargs['provider'])
        self.assertIsNone(db_claims.get_claims(self.context, 'both'))
        self.assertEqual(0, self._vcpu_usage(self.cn1))
        self._claim('both', {self.cn1: {'VCPU': 4}, self.cn2: {'VCPU': 4}},
                    hours(1), hours(2))
        self.assertEqual({self.cn1: {'VCPU': 4}, self.cn2: {'VCPU': 4}},
                         db_claims.get_claims(self.context, 'both')['amounts'])

    def test_unit_rules(self):
        db_providers.set_inventories(self.context, self.cn1, {
            'DISK_GB': Inventory(1000, min_unit=5, max_unit=100,
                                 step_size=10)})
        for amount, rule in ((4, 'min_unit'), (110, 'max_unit'),
                             (15, 'step_size')):
            e = self.assertRaises(exception.UnitRuleViolation, self._claim,
                                  'c', {self.cn1: {'DISK_GB': amount}})
            self.assertEqual(rule, e.kwargs['rule'])
        self._claim('c', {self.cn1: {'DISK_GB': 20}})

    def test_unit_rules_of_a_claim_made_of_units_apply_to_each(self):
        # Six slots of 20 GB: 120 is over max_unit 100, each 20 is not.
        db_providers.set_inventories(self.context, self.cn1, {
            'DISK_GB': Inventory(1000, min_unit=5, max_unit=100,
                                 step_size=10)})
        self.assertRaises(exception.UnitRuleViolation, self._claim,
                          'one', {self.cn1: {'DISK_GB': 120}})
        db_claims.claim(self.context, 'slots', {self.cn1: {'DISK_GB': 120}},
                        unit={'DISK_GB': 20})
        db_claims.change_claim(self.context, 'slots',
                               amounts={self.cn1: {'DISK_GB': 880}},
                               unit={'DISK_GB': 20})
        # Capacity still caps the sum; each unit keeps its rules.
        e = self.assertRaises(exception.CapacityExceeded,
                              db_claims.change_claim, self.context, 'slots',
                              amounts={self.cn1: {'DISK_GB': 1020}},
                              unit={'DISK_GB': 20})
        self.assertEqual(20, e.kwargs['short'])
        for unit, rule in ((4, 'min_unit'), (110, 'max_unit'),
                           (15, 'step_size')):
            e = self.assertRaises(
                exception.UnitRuleViolation, db_claims.claim, self.context,
                'u%d' % unit, {self.cn1: {'DISK_GB': unit * 2}},
                unit={'DISK_GB': unit})
            self.assertEqual(rule, e.kwargs['rule'])
        self.assertRaises(exception.Invalid, db_claims.claim, self.context,
                          'odd', {self.cn1: {'DISK_GB': 50}},
                          unit={'DISK_GB': 20})
        self.assertEqual({self.cn1: {'DISK_GB': 880}}, db_claims.get_claims(
            self.context, 'slots')['amounts'])

    def test_the_end_of_time_is_refused_not_clamped(self):
        last_day = window_mod.FOREVER
        # Once clamped to an open end stored before their start, these
        # two never overlapped: both were admitted on a full provider.
        for name, start, end in (
                ('late', last_day.replace(hour=22), last_day.replace(
                    hour=23, minute=59)),
                ('past', last_day - datetime.timedelta(hours=1),
                 last_day + datetime.timedelta(minutes=1))):
            e = self.assertRaises(exception.InvalidWindow, self._claim,
                                  name, {self.cn1: {'VCPU': 8}}, start, end)
            self.assertEqual('start' if name == 'late' else 'end',
                             e.kwargs['field'])
            self.assertIsNone(db_claims.get_claims(self.context, name))
        # Up to FOREVER itself is held exactly: it conflicts as it should.
        self._claim('a', {self.cn1: {'VCPU': 8}},
                    last_day - datetime.timedelta(hours=2), last_day)
        self.assertRaises(exception.CapacityExceeded, self._claim, 'b',
                          {self.cn1: {'VCPU': 8}},
                          last_day - datetime.timedelta(hours=1), last_day)

    def test_bad_input_refused(self):
        for amount in (0, -1, 1.5, True, '2'):
            self.assertRaises(exception.InvalidAmount, self._claim, 'c',
                              {self.cn1: {'VCPU': amount}})
        self.assertRaises(exception.InvalidWindow, self._claim, 'c',
                          {self.cn1: {'VCPU': 1}}, hours(2), hours(2))
        self.assertRaises(exception.InvalidWindow, self._claim, 'c',
                          {self.cn1: {'VCPU': 1}}, hours(2), hours(1))
        self.assertRaises(exception.InvalidWindow, self._claim, 'c',
                          {self.cn1: {'VCPU': 1}}, '2030-01-01')
        self.assertRaises(exception.Invalid, self._claim, 'c', {})
        self.assertRaises(exception.UnknownResourceClass, self._claim, 'c',
                          {self.cn1: {'CUSTOM_NOPE': 1}})
        self.assertRaises(exception.InventoryNotFound, self._claim, 'c',
                          {self.cn1: {'MEMORY_MB': 1}})
        self.assertRaises(exception.ResourceProviderNotFound, self._claim,
                          'c', {'nope': {'VCPU': 1}})
        self.assertIsNone(db_claims.get_claims(self.context, 'c'))

    def test_consumer_claims_once(self):
        self._claim('c', {self.cn1: {'VCPU': 1}})
        self.assertRaises(exception.ConsumerExists, self._claim, 'c',
                          {self.cn2: {'VCPU': 1}})

    def _statements(self):
        """A list that gathers each statement run from now on."""
        seen = []

        def before(_conn, _cursor, statement, _params, _context, _many):
            seen.append(' '.join(statement.split()))
        sa.event.listen(self.engine, 'before_cursor_execute', before)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', before)
        return seen

    def test_a_new_consumer_on_kept_providers_reads_no_consumer_or_class(
            self):
        db_snapshots.load_slot_index(self.context)  # every provider kept
        statements = self._statements()
        self._claim('c', {self.cn1: {'VCPU': 3}})
        self.assertEqual([], [s for s in statements if 'FROM consumers' in s
                              or 'FROM resource_classes' in s])
        self.assertEqual(3, self._vcpu_usage(self.cn1))
        # Classes the kept providers have no inventory of: as before.
        db_snapshots.load_slot_index(self.context)
        self.assertRaises(exception.UnknownResourceClass, self._claim, 'd',
                          {self.cn1: {'CUSTOM_NOPE': 1}})
        self.assertRaises(exception.InventoryNotFound, self._claim, 'd',
                          {self.cn1: {'VCPU': 1, 'MEMORY_MB': 1}})
        self.assertRaises(exception.ConsumerExists, self._claim, 'c',
                          {self.cn2: {'VCPU': 1}})
        self.assertIsNone(db_claims.get_claims(self.context, 'd'))

    def test_claim_bumps_generation(self):
        before = db_providers.get_provider(self.context,
                                           self.cn1)['generation']
        self._claim('c', {self.cn1: {'VCPU': 1}})
        self.assertEqual(before + 1, db_providers.get_provider(
            self.context, self.cn1)['generation'])

    def test_release_frees_capacity(self):
        self._claim('c', {self.cn1: {'VCPU': 8}}, hours(0), hours(1))
        self.assertTrue(db_claims.release(self.context, 'c'))
        self.assertFalse(db_claims.release(self.context, 'c'))
        self._claim('d', {self.cn1: {'VCPU': 8}}, hours(0), hours(1))

    def test_release_bumps_generation_of_each_provider(self):
        self._claim('c', {self.cn1: {'VCPU': 1}, self.cn2: {'VCPU': 1}})
        before = [db_providers.get_provider(self.context, rp)['generation']
                  for rp in (self.cn1, self.cn2)]
        db_claims.release(self.context, 'c')
        self.assertEqual([g + 1 for g in before], [
            db_providers.get_provider(self.context, rp)['generation']
            for rp in (self.cn1, self.cn2)])

    # --- changes ----------------------------------------------------------

    def test_move_window(self):
        self._claim('a', {self.cn1: {'VCPU': 6}}, hours(0), hours(2))
        self._claim('b', {self.cn1: {'VCPU': 6}}, hours(4), hours(6))
        self.assertRaises(exception.CapacityExceeded, db_claims.change_claim,
                          self.context, 'b', start=hours(1), end=hours(3))
        self.assertEqual(hours(4), db_claims.get_claims(
            self.context, 'b')['start'])
        db_claims.change_claim(self.context, 'b', start=hours(2), end=hours(3))
        got = db_claims.get_claims(self.context, 'b')
        self.assertEqual((hours(2), hours(3)), (got['start'], got['end']))

    def test_change_amount_counts_only_others(self):
        self._claim('a', {self.cn1: {'VCPU': 6}}, hours(0), hours(2))
        # Growing to the full host is fine: its own 6 do not count.
        db_claims.change_claim(self.context, 'a', {self.cn1: {'VCPU': 8}})
        self.assertEqual(8, self._vcpu_usage(self.cn1))
        self._claim('b', {self.cn2: {'VCPU': 2}}, hours(0), hours(2))
        self.assertRaises(exception.CapacityExceeded, db_claims.change_claim,
                          self.context, 'b', {self.cn1: {'VCPU': 1}})
        self.assertEqual({self.cn2: {'VCPU': 2}},
                         db_claims.get_claims(self.context, 'b')['amounts'])

    def test_move_to_another_provider_bumps_both(self):
        self._claim('a', {self.cn1: {'VCPU': 6}}, hours(0), hours(2))
        before = [db_providers.get_provider(self.context, rp)['generation']
                  for rp in (self.cn1, self.cn2)]
        db_claims.change_claim(self.context, 'a', {self.cn2: {'VCPU': 6}})
        self.assertEqual([g + 1 for g in before], [
            db_providers.get_provider(self.context, rp)['generation']
            for rp in (self.cn1, self.cn2)])

    def test_change_to_open_end(self):
        self._claim('a', {self.cn1: {'VCPU': 1}}, hours(0), hours(2))
        db_claims.change_claim(self.context, 'a', open_end=True)
        self.assertIsNone(db_claims.get_claims(self.context, 'a')['end'])

    def test_change_unknown_consumer(self):
        self.assertRaises(exception.NotFound, db_claims.change_claim,
                          self.context, 'nobody', start=hours(1))

    # --- compare-and-swap -------------------------------------------------

    def _lose_races(self, times):
        real = db_api.bump_provider_generations
        lost = []

        def bump(session, providers):
            if len(lost) < times:
                lost.append(providers)
                raise db_api.GenerationConflict('cn1')
            return real(session, providers)
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.api.bump_provider_generations', bump))
        return lost

    def test_lost_race_is_retried(self):
        lost = self._lose_races(3)
        self._claim('c', {self.cn1: {'VCPU': 8}})
        self.assertEqual(3, len(lost))
        self.assertEqual(8, self._vcpu_usage(self.cn1, start=None))

    def test_too_many_lost_races_fail_with_nothing_written(self):
        self.conf.set_override('claim_retries', 2, group='ledger')
        lost = self._lose_races(100)
        e = self.assertRaises(exception.ConcurrentUpdateDetected,
                              self._claim, 'c', {self.cn1: {'VCPU': 8}})
        self.assertEqual((3, 3), (e.kwargs['attempts'], len(lost)))
        self.assertIn('(cn1)', str(e))
        self.assertIsNone(db_claims.get_claims(self.context, 'c'))
        self.assertEqual(0, self._vcpu_usage(self.cn1, start=None))

    def _claims_of_every_kind(self):
        """Open ends, touching claims and a moment before the epoch."""
        self._claim('a', {self.cn1: {'VCPU': 2}}, hours(0), hours(2))
        self._claim('b', {self.cn1: {'VCPU': 3}, self.cn2: {'VCPU': 1}},
                    hours(2), hours(5))
        self._claim('c', {self.cn2: {'VCPU': 4}}, hours(1))
        self._claim('d', {self.cn1: {'VCPU': 1}},
                    datetime.datetime(1969, 7, 20, 20, 17, 40), hours(1))

    def test_a_full_read_holds_the_steps_a_read_of_few_holds(self):
        # A full read (a process's first) takes every claim's bounds as
        # seconds from the database; a read of a few providers, as
        # moments. Open ends, touching claims and moments before the
        # epoch alike, on every backend.
        self._claims_of_every_kind()

        def read(scan_all):
            with fixtures.MockPatchObject(
                    provider_cache.ProviderCache, 'SCAN_ALL', scan_all):
                cache = provider_cache.ProviderCache()
                with db_api.reader(self.context) as session:
                    rows = session.execute(sa.select(
                        _RP.c.id, _RP.c.uuid, _RP.c.generation)).all()
                    return {uuid: cache.get(session, rows)[rp_id].usage
                            for rp_id, uuid, _gen in rows}

        # On MySQL a full read takes each provider's claims of a class as
        # one string, and reads row by row where one came back cut short.
        grouped = []
        real = provider_cache._every_claim_grouped
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.provider_cache._every_claim_grouped',
            lambda *args: grouped.append(real(*args)) or grouped[-1]))
        full, few = read(0), read(100)
        with fixtures.MonkeyPatch(
                'pcloud_plugin.db.provider_cache.GROUP_CONCAT_MAX_LEN', 8):
            cut_short = read(0)
        others = [full, cut_short]
        if self.engine.dialect.name == 'sqlite':
            # SQLite before 3.38 has no unixepoch: strftime instead.
            with fixtures.MockPatchObject(
                    self.engine.dialect.dbapi, 'sqlite_version_info',
                    (3, 37, 2)):
                others.append(read(0))
        self.assertEqual(
            [True, False] if self.engine.dialect.name == 'mysql' else [],
            [found is not None for found in grouped])
        for other in others:
            self.assertEqual(few.keys(), other.keys())
            for uuid, usage in few.items():
                self.assertEqual(usage.keys(), other[uuid].keys())
                for rc, steps in usage.items():
                    self.assertEqual(
                        (steps.times, steps.levels),
                        (other[uuid][rc].times, other[uuid][rc].levels))
        self.assertEqual(
            [datetime.datetime(1969, 7, 20, 20, 17, 40), hours(0), hours(1),
             hours(2), hours(5)], full[self.cn1]['VCPU'].times)
        self.assertEqual([1, 3, 2, 3, 0], full[self.cn1]['VCPU'].levels)
        self.assertEqual([hours(1), hours(2), hours(5), window_mod.FOREVER],
                         full[self.cn2]['VCPU'].times)

    def test_a_claim_committed_during_a_full_read_is_counted_once(self):
        # A full read leaves the consumers out. A claim committed between
        # the provider rows and the claims it reads must not be kept
        # under the generation before: its own process's claimed() would
        # then add it a second time.
        self._claim('a', {self.cn1: {'VCPU': 2}}, hours(0), hours(2))
        window = window_mod.Window.of(hours(1), hours(3))
        alloc = models.Allocation.__table__
        every = provider_cache._every_claim
        cache = provider_cache.ProviderCache()

        def claim_b_then_read(session):
            # As another thread of this process commits claim b.
            rp_id = session.execute(sa.select(_RP.c.id).where(
                _RP.c.uuid == self.cn1)).scalar()
            rc_id = session.execute(sa.select(models.ResourceClass.id).where(
                models.ResourceClass.name == 'VCPU')).scalar()
            session.execute(alloc.insert().values(
                resource_provider_id=rp_id, resource_class_id=rc_id,
                consumer_id='b', used=3, start_time=window.start,
                end_time=window.stored_end))
            session.execute(_RP.update().where(_RP.c.id == rp_id).values(
                generation=_RP.c.generation + 1))
            return every(session)

        def rows():
            with db_api.reader(self.context) as session:
                return session.execute(sa.select(
                    _RP.c.id, _RP.c.uuid, _RP.c.generation)).all()

        before = rows()
        with fixtures.MockPatchObject(provider_cache.ProviderCache,
                                      'SCAN_ALL', 0), \
                fixtures.MockPatch('pcloud_plugin.db.provider_cache.'
                                   '_every_claim', claim_b_then_read):
            with db_api.writer(self.context) as session:
                cache.get(session, before, complete=True)
        # Claim b's commit event, come after the read kept its entries.
        cache.claimed(self.engine,
                      [r._mapping for r in before if r.uuid == self.cn1],
                      {self.cn1: {'VCPU': 3}}, window, 'b')
        with db_api.reader(self.context) as session:
            now = rows()
            kept = cache.get(session, now)
            truth = provider_cache.ProviderCache().get(session, now)
        cn1 = [r.id for r in now if r.uuid == self.cn1][0]
        self.assertEqual([2, 5, 3, 0], truth[cn1].usage['VCPU'].levels)
        self.assertEqual(truth[cn1].usage['VCPU'].levels,
                         kept[cn1].usage['VCPU'].levels)

    def test_hosts_alike_share_their_inventories_traits_and_aggregates(self):
        # cn1 and cn2 (setUp) have the same VCPU inventory; a third
        # differs in one field only. One read makes one object of each
        # set of fields, with its capacity.
        cn3 = self._provider('cn3', VCPU=Inventory(8, reserved=1))
        for uuid in (self.cn1, self.cn2):
            db_providers.set_traits(self.context, uuid, {'CUSTOM_A'})
            db_providers.set_aggregates(self.context, uuid, {'agg'})
        with db_api.reader(self.context) as session:
            rows = session.execute(sa.select(
                _RP.c.id, _RP.c.uuid, _RP.c.generation)).all()
            details = provider_cache.ProviderCache().get(session, rows)
        vcpu = {uuid: details[rp_id].inventories['VCPU']
                for rp_id, uuid, _gen in rows}
        self.assertIs(vcpu[self.cn1], vcpu[self.cn2])
        self.assertIsNot(vcpu[self.cn1], vcpu[cn3])
        self.assertEqual((Inventory(8), Inventory(8, reserved=1)),
                         (vcpu[self.cn1], vcpu[cn3]))
        self.assertEqual((8, 7), (vcpu[self.cn1].capacity,
                                  vcpu[cn3].capacity))
        cn1, cn2 = (details[rp_id] for rp_id, uuid, _gen in rows
                    if uuid in (self.cn1, self.cn2))
        self.assertEqual(frozenset({'CUSTOM_A'}), cn1.traits)
        self.assertIs(cn1.traits, cn2.traits)
        self.assertIs(cn1.aggregates, cn2.aggregates)

    # --- usage snapshots: a process's first read without every claim -----

    def _read_anew(self, scan_all):
        """({uuid: {class: (times, levels)}} as a new process reads every

        provider, [the claim reads it made: 'every', or the ids read]).
        """
        reads = []
        every = provider_cache._every_claim
        of = provider_cache.ProviderCache._read_claims

        def read_every(session):
            reads.append('every')
            return every(session)

        def read_of(session, rp_ids):
            reads.append(sorted(rp_ids))
            return of(session, rp_ids)

        with fixtures.MockPatch('pcloud_plugin.db.provider_cache.'
                                '_every_claim', read_every), \
                fixtures.MockPatchObject(provider_cache.ProviderCache,
                                         '_read_claims',
                                         staticmethod(read_of)), \
                fixtures.MockPatchObject(provider_cache.ProviderCache,
                                         'SCAN_ALL', scan_all):
            with db_api.reader(self.context) as session:
                rows = session.execute(sa.select(
                    _RP.c.id, _RP.c.uuid, _RP.c.generation)).all()
                details = provider_cache.ProviderCache().get(
                    session, rows, complete=True)
        return {uuid: {rc: (steps.times, steps.levels)
                       for rc, steps in details[rp_id].usage.items()}
                for rp_id, uuid, _gen in rows}, reads

    def _snapshots(self):
        """{provider uuid: generation} of the snapshots written (uuid

        None: of a provider no more).
        """
        snap = provider_cache._SNAPSHOTS
        with db_api.reader(self.context) as session:
            return dict(session.execute(sa.select(
                _RP.c.uuid, snap.c.generation).select_from(snap).outerjoin(
                _RP, snap.c.resource_provider_id == _RP.c.id)).all())

    def test_a_first_read_takes_snapshots_of_providers_not_moved_since(self):
        cn3 = self._provider('cn3', VCPU=Inventory(8))
        self._claims_of_every_kind()
        self.assertEqual(3, db_snapshots.save_usage(self.context))
        self.assertEqual(0, db_snapshots.save_usage(self.context))
        expected, reads = self._read_anew(scan_all=100)
        self.assertEqual(3, len(reads[0]), 'a read of few reads claims')
        self.assertEqual((expected, []), self._read_anew(scan_all=1))
        self.assertEqual([1, 3, 2, 3, 0], expected[self.cn1]['VCPU'][1])
        self.assertEqual({}, expected[cn3])
        # A claim moves cn1: its snapshot is of a generation gone by.
        self._claim('e', {self.cn1: {'VCPU': 1}}, hours(1), hours(3))
        expected, _reads = self._read_anew(scan_all=100)
        self.assertEqual([1, 3, 3, 4, 3, 0], expected[self.cn1]['VCPU'][1])
        got, reads = self._read_anew(scan_all=1)
        self.assertEqual(expected, got)
        self.assertEqual(1, len(reads))
        self.assertEqual(1, len(reads[0]), "only cn1's claims read")
        # More moved than a read of few takes: every claim, as before.
        self.assertEqual((expected, ['every']), self._read_anew(scan_all=0))
        self.assertEqual(1, db_snapshots.save_usage(self.context))
        self.assertEqual((expected, []), self._read_anew(scan_all=1))
        # A provider's delete takes its snapshot along.
        db_providers.delete_provider(self.context, cn3)
        self.assertEqual({self.cn1, self.cn2}, set(self._snapshots()))

    def test_no_snapshot_of_a_provider_moved_while_it_was_read(self):
        self._claim('a', {self.cn1: {'VCPU': 2}, self.cn2: {'VCPU': 2}},
                    hours(0), hours(2))
        real = provider_cache.CACHE.get

        def get(session, rows, complete=False):
            found = real(session, rows, complete)
            # As if a claim on cn1 committed right after the read.
            session.execute(_RP.update().where(_RP.c.uuid == self.cn1)
                            .values(generation=_RP.c.generation + 1))
            return found

        with fixtures.MockPatchObject(provider_cache.CACHE, 'get', get):
            self.assertEqual(1, db_snapshots.save_usage(self.context))
        self.assertEqual([self.cn2], list(self._snapshots()))
        self.assertEqual(1, db_snapshots.save_usage(self.context))
        with db_api.reader(self.context) as session:
            generations = dict(session.execute(sa.select(
                _RP.c.uuid, _RP.c.generation)).all())
        self.assertEqual(generations, self._snapshots())
        expected, _reads = self._read_anew(scan_all=100)
        self.assertEqual((expected, []), self._read_anew(scan_all=1))

    def test_a_snapshot_pass_that_lost_a_race_writes_nothing_and_says_so(self):
        class SerializationFailure(Exception):
            pgcode = '40001'    # as psycopg2 reports it

        self._claim('a', {self.cn1: {'VCPU': 2}}, hours(0), hours(2))
        for lost in (db_exc.DBError(SerializationFailure('pivot')),
                     db_exc.DBDeadlock(), db_exc.DBDuplicateEntry()):
            with fixtures.MockPatchObject(provider_cache, 'save_usage',
                                          side_effect=lost):
                self.assertEqual(0, db_snapshots.save_usage(self.context))
        broken = db_exc.DBError(ValueError('not a race'))
        with fixtures.MockPatchObject(provider_cache, 'save_usage',
                                      side_effect=broken):
            self.assertRaises(db_exc.DBError, db_snapshots.save_usage,
                              self.context)
        self.assertEqual({}, self._snapshots())
        self.assertEqual(2, db_snapshots.save_usage(self.context))

    # --- the snapshot the candidates engine reads -------------------------

    def test_a_claim_is_known_without_reading_its_providers(self):
        self._claim('a', {self.cn1: {'VCPU': 2}}, hours(0), hours(2))
        db_snapshots.load_forest(self.context, hours(0), hours(1))
        self._claim('b', {self.cn1: {'VCPU': 3}, self.cn2: {'VCPU': 1}},
                    hours(1), hours(3))
        reads = []
        real = provider_cache.ProviderCache._read
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.provider_cache.ProviderCache._read',
            lambda cache, session, ids: reads.append(ids) or real(
                cache, session, ids)))
        forest = db_snapshots.load_forest(self.context, hours(1), hours(2))
        self.assertEqual([], reads)
        self.assertEqual({'VCPU': 5}, forest[self.cn1].usage)
        self.assertEqual({'VCPU': 1}, forest[self.cn2].usage)
        # A claim that lost its race leaves nothing behind.
        self._lose_races(100)
        self.assertRaises(exception.ConcurrentUpdateDetected, self._claim,
                          'c', {self.cn1: {'VCPU': 1}}, hours(1), hours(2))
        forest = db_snapshots.load_forest(self.context, hours(1), hours(2))
        self.assertEqual({'VCPU': 5}, forest[self.cn1].usage)

    def test_a_claim_checked_from_what_is_kept_fits_as_one_read(self):
        """Checked from what is kept, it fits when the database says so.

        A new consumer's claim is checked from the kept providers when
        they are current.
        """
        rng = random.Random(9)
        checked_from_kept = []
        real = provider_cache.ProviderCache.current

        def current(cache, session, rows):
            found = real(cache, session, rows)
            checked_from_kept.append(found is not None)
            return found
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.db.provider_cache.ProviderCache.current', current))
        for n in range(150):
            start = rng.randrange(30)
            window = (hours(start), hours(start + rng.randint(1, 8)))
            want = {self.cn1: rng.randint(1, 5), self.cn2: rng.randint(1, 5)}
            # What this process keeps, current: read right before.
            db_snapshots.load_forest(self.context, *window)
            with fixtures.MonkeyPatch('pcloud_plugin.db.provider_cache.CACHE',
                                      provider_cache.ProviderCache()):
                used = {rp: db_claims.get_usage(self.context, rp, *window).get(
                    'VCPU', 0) for rp in want}
            fits = all(used[rp] + n <= 8 for rp, n in want.items())
            try:
                self._claim('c%d' % n, {rp: {'VCPU': k}
                                        for rp, k in want.items()}, *window)
                self.assertTrue(fits, (n, used, want))
            except exception.CapacityExceeded:
                self.assertFalse(fits, (n, used, want))
        self.assertEqual([True] * 150, checked_from_kept)

    def test_load_forest_usage_is_window_peak(self):
        numa = self._provider('numa0', parent=self.cn1,
                              MEMORY_MB=Inventory(1024))
        db_providers.set_traits(self.context, numa, ['HW_NUMA_ROOT'])
        db_providers.set_aggregates(self.context, self.cn1, ['agg'])
        self._claim('a', {self.cn1: {'VCPU': 3}, numa: {'MEMORY_MB': 512}},
                    hours(0), hours(2))
        self._claim('b', {self.cn1: {'VCPU': 2}}, hours(1), hours(3))
        forest = db_snapshots.load_forest(self.context, hours(0), hours(1))
        self.assertEqual({'VCPU': 3}, forest[self.cn1].usage)
        self.assertEqual({'MEMORY_MB': 512}, forest[numa].usage)
        self.assertEqual(self.cn1, forest[numa].root_uuid)
        self.assertEqual(self.cn1, forest[numa].parent_uuid)
        self.assertEqual(frozenset(['HW_NUMA_ROOT']), forest[numa].traits)
        self.assertEqual(frozenset(['agg']), forest[self.cn1].aggregates)
        self.assertEqual(5, db_snapshots.load_forest(
            self.context, hours(0), hours(3))[self.cn1].usage['VCPU'])
        self.assertEqual({}, db_snapshots.load_forest(
            self.context, hours(3), hours(4))[self.cn1].usage)
        self.assertEqual(3, forest[self.cn1].free('VCPU') - 2)

    def test_forest_read_inside_a_write_that_rolls_back(self):
        class RolledBack(Exception):
            pass

        try:
            with db_api.writer(self.context):
                # The claim joins this write and is never committed.
                self._claim('a', {self.cn1: {'VCPU': 5}}, hours(0), hours(1))
                db_snapshots.load_forest(self.context, hours(0), hours(1))
                raise RolledBack()
        except RolledBack:
            pass
        # Takes the provider to the generation the rolled-back claim had.
        self._claim('b', {self.cn1: {'VCPU': 2}}, hours(0), hours(1))
        self.assertEqual({'VCPU': 2}, db_snapshots.load_forest(
            self.context, hours(0), hours(1))[self.cn1].usage)

    def test_load_forest_reuses_what_did_not_change(self):
        first = db_snapshots.load_forest(self.context)
        self.assertIs(first, db_snapshots.load_forest(self.context))
        self._claim('a', {self.cn1: {'VCPU': 2}})
        second = db_snapshots.load_forest(self.context)
        self.assertIsNot(first, second)
        self.assertEqual({'VCPU': 2}, second[self.cn1].usage)
        self.assertIs(first[self.cn2], second[self.cn2])
        # The forest given before is left as it was.
        self.assertEqual({}, first[self.cn1].usage)

    def test_rename_shows_in_the_next_load(self):
        db_snapshots.load_forest(self.context)
        generation = db_providers.get_provider(self.context,
                                               self.cn1)['generation']
        db_providers.rename_provider(self.context, self.cn1, 'renamed')
        self.assertEqual(
            'renamed', db_snapshots.load_forest(self.context)[self.cn1].name)
        self.assertEqual(generation + 1, db_providers.get_provider(
            self.context, self.cn1)['generation'])

    def test_set_parent_shows_in_the_next_load(self):
        # Only generations move: the next load reads again just the
        # providers whose generation did, the moved subtree's included.
        child = self._provider('child')
        grandchild = self._provider('grandchild', parent=child)
        db_snapshots.load_forest(self.context)
        db_providers.set_parent(self.context, child, self.cn1)
        forest = db_snapshots.load_forest(self.context)
        self.assertEqual(self.cn1, forest[child].parent_uuid)
        self.assertEqual(self.cn1, forest[grandchild].root_uuid)
        tree = forest.tree_of(grandchild)
        self.assertEqual(self.cn1, tree[0])
        self.assertEqual({self.cn1, child, grandchild}, set(tree))

    def test_unchanged_ledger_answers_every_window(self):
        # Nothing is written between these loads: each reuses the first
        # snapshot, and only the usage follows the window.
        self._claim('a', {self.cn1: {'VCPU': 3}}, hours(0), hours(2))
        self._claim('b', {self.cn2: {'VCPU': 1}}, hours(5))
        for start, end, cn1, cn2 in (
                (hours(0), hours(1), 3, 0),
                (hours(3), hours(4), 0, 0),
                (hours(1), hours(6), 3, 1),
                (hours(6), None, 0, 1),
                (hours(-2), hours(-1), 0, 0),
                (hours(0), hours(1), 3, 0)):
            forest = db_snapshots.load_forest(self.context, start, end)
            self.assertEqual(
                (cn1, cn2),
                (forest[self.cn1].usage.get('VCPU', 0),
                 forest[self.cn2].usage.get('VCPU', 0)),
                'window %s-%s' % (start, end))

    def test_provider_made_by_another_process_shows(self):
        # A deletion in another process does not reach this one's caches;
        # the provider made there next gets the same id back on SQLite and
        # the same generation, so only its created_at tells.
        cn3 = self._provider('cn3', VCPU=Inventory(8))
        db_snapshots.load_forest(self.context)
        with fixtures.MockPatchObject(provider_cache.CACHE, 'forget'):
            db_providers.delete_provider(self.context, cn3)
        cn4 = self._provider('cn4', VCPU=Inventory(8))
        forest = db_snapshots.load_forest(self.context)
        self.assertNotIn(cn3, forest.providers)
        self.assertIn(cn4, forest.providers)

    def test_load_forest_follows_every_kind_of_write(self):
        """Usage is cached between loads by provider generation.

        Every write to claims must show in the next load, and windows of
        any shape must give the peak an hour-by-hour count gives.
        """
        rng = random.Random(7)
        held = {}
        for step in range(60):
            if held and rng.random() < 0.4:
                consumer = rng.choice(sorted(held))
                if rng.random() < 0.5:
                    db_claims.release(self.context, consumer)
                    del held[consumer]
                    continue
                start = hours(rng.randrange(48))
                amounts = {rng.choice((self.cn1, self.cn2)): {
                    'VCPU': rng.randint(1, 3)}}
                change = functools.partial(
                    db_claims.change_claim, self.context, consumer, amounts,
                    start, start + datetime.timedelta(hours=rng.randint(
                        1, 24)))
            else:
                consumer = 'c%d' % step
                start = hours(rng.randrange(48))
                amounts = {rp: {'VCPU': rng.randint(1, 3)}
                           for rp in rng.sample((self.cn1, self.cn2),
                                                rng.randint(1, 2))}
                change = functools.partial(
                    self._claim, consumer, amounts, start,
                    None if rng.random() < 0.1 else start + datetime.
                    timedelta(hours=rng.randint(1, 24)))
            try:
                change()
            except exception.CapacityExceeded:
                continue
            held[consumer] = db_claims.get_claims(self.context, consumer)
            # The first load follows the write; the second, with nothing
            # written between, reuses its snapshot for another window.
            for _ in range(2):
                start = hours(rng.randrange(-2, 72))
                end = start + datetime.timedelta(hours=rng.randint(1, 30))
                forest = db_snapshots.load_forest(self.context, start, end)
                for rp in (self.cn1, self.cn2):
                    claims = [(c['start'], c['end'],
                               c['amounts'][rp]['VCPU'])
                              for c in held.values() if rp in c['amounts']]
                    self.assertEqual(
                        _peak_by_hour(claims, start, end),
                        forest[rp].usage.get('VCPU', 0),
                        'step %d, %s, window %s-%s'
                        % (step, rp, start, end))


def _peak_by_hour(claims, start, end):
    """The peak of claims within [start, end), checked hour by hour

    (every claim and window here is on whole hours).
    """
    peak, moment = 0, start
    while moment < end:
        peak = max(peak, sum(used for c_start, c_end, used in claims
                             if c_start <= moment
                             and (c_end is None or moment < c_end)))
        moment += datetime.timedelta(hours=1)
    return peak


class SQLiteLockedTests(base.LedgerTestCase):
    """A transaction that read and then cannot write because another

    committed since (SQLite's "database is locked", at once) is run whole
    again, as a deadlock is; other errors are not.
    """

    def _stale_write(self, path):
        """A real "database is locked": a transaction reads, another

        connection commits, the first then writes; raised as SQLAlchemy
        raises what the driver said.
        """
        first = sqlite3.connect(path, isolation_level=None)
        other = sqlite3.connect(path, isolation_level=None)
        self.addCleanup(first.close)
        self.addCleanup(other.close)
        first.execute('PRAGMA journal_mode=WAL')
        first.execute('CREATE TABLE IF NOT EXISTS t (n INTEGER)')
        first.execute('BEGIN')
        first.execute('SELECT count(*) FROM t').fetchall()
        other.execute('INSERT INTO t VALUES (1)')
        try:
            first.execute('INSERT INTO t VALUES (2)')
        except sqlite3.OperationalError as e:
            first.execute('ROLLBACK')
            raise sa.exc.OperationalError('INSERT INTO t', {}, e)
        self.fail('SQLite let a stale transaction write')

    def test_database_is_locked_is_run_again(self):
        path = self.useFixture(fixtures.TempDir()).join('locked.db')
        calls = []

        @db_api.retry_on_deadlock
        def write():
            calls.append(1)
            if len(calls) == 1:
                self._stale_write(path)
            return 'written'

        self.assertEqual('written', write())
        self.assertEqual(2, len(calls))

    def test_other_sqlite_errors_are_not(self):
        calls = []

        @db_api.retry_on_deadlock
        def write():
            calls.append(1)
            engine = sa.create_engine('sqlite://')
            with engine.connect() as conn:
                conn.exec_driver_sql('SELECT * FROM nowhere')

        self.assertRaises(sa.exc.OperationalError, write)
        self.assertEqual(1, len(calls))
