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
"""virtual:instance reservation records and their slots."""

import datetime

import fixtures
import sqlalchemy

from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as db_host
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin.tests import base

T0 = datetime.datetime(2030, 1, 1)


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class RecordTests(base.LedgerTestCase):

    def values(self, **changes):
        values = {'lease_id': 'lease-1', 'project_id': 'p',
                  'resource_id': 'blazar-1', 'vcpus': 2, 'memory_mb': 512,
                  'disk_gb': 10, 'amount': 3, 'start_time': hours(0),
                  'end_time': hours(1), 'resource_class': 'CUSTOM_R1'}
        values.update(changes)
        return values

    def slot(self, uuid, name, slots, **more):
        return dict({'reservation_id': 'r1', 'host_uuid': uuid,
                     'host_name': name, 'slots': slots, 'placed': 0}, **more)

    def test_create_get_and_its_slots(self):
        res_db.create(self.context, 'r1', self.values(), [
            {'host_uuid': 'u2', 'host_name': 'h2', 'slots': 1},
            {'host_uuid': 'u1', 'host_name': 'h1', 'slots': 2,
             'placed': 1}])
        row = res_db.get(self.context, 'r1')
        # The state defaults to reserved; slots come by host name.
        self.assertEqual(res_db.RESERVED, row['state'])
        self.assertEqual([self.slot('u1', 'h1', 2, placed=1),
                          self.slot('u2', 'h2', 1)], row['slots'])
        self.assertEqual(dict(self.values(), reservation_id='r1',
                              state=res_db.RESERVED, affinity=None,
                              resource_properties=None, flavor_id=None,
                              availability_zone=None,
                              aggregate_id=None, server_group_id=None,
                              slots=row['slots']), row)
        self.assertEqual(row, res_db.get_by_resource_id(self.context,
                                                        'blazar-1'))
        e = self.assertRaises(exception.Conflict, res_db.create,
                              self.context, 'r1', self.values(), [])
        self.assertEqual('Conflict: instance reservation r1 already exists',
                         str(e))

    def test_not_found(self):
        e = self.assertRaises(res_db.ReservationNotFound, res_db.get,
                              self.context, 'r2')
        self.assertEqual('No instance reservation r2.', str(e))
        e = self.assertRaises(res_db.ReservationNotFound,
                              res_db.get_by_resource_id, self.context, 'x')
        self.assertEqual('No instance reservation with resource id x.',
                         str(e))
        e = self.assertRaises(res_db.ReservationNotFound, res_db.update,
                              self.context, 'r2', state=res_db.ACTIVE)
        self.assertEqual('No instance reservation r2.', str(e))

    def test_update_fields_and_slots(self):
        res_db.create(self.context, 'r1', self.values(state=res_db.ACTIVE),
                      [{'host_uuid': 'u1', 'host_name': 'h1', 'slots': 2}])
        res_db.set_placed(self.context, 'r1', 'u1', 2)
        self.assertEqual([self.slot('u1', 'h1', 2, placed=2)],
                         res_db.get(self.context, 'r1')['slots'])
        res_db.update(self.context, 'r1', state=res_db.ENDING, amount=1)
        row = res_db.get(self.context, 'r1')
        self.assertEqual((res_db.ENDING, 1, [self.slot('u1', 'h1', 2,
                                                       placed=2)]),
                         (row['state'], row['amount'], row['slots']))
        res_db.update(self.context, 'r1', slots=[
            {'host_uuid': 'u3', 'host_name': 'h3', 'slots': 1}])
        self.assertEqual([self.slot('u3', 'h3', 1)],
                         res_db.get(self.context, 'r1')['slots'])
        e = self.assertRaises(exception.Invalid, res_db.update,
                              self.context, 'r1', colour='red', size=1)
        self.assertEqual('Invalid input: unknown fields colour, size',
                         str(e))

    def test_list_filters_and_delete(self):
        res_db.create(self.context, 'r1', self.values(), [
            {'host_uuid': 'u1', 'host_name': 'h1', 'slots': 1}])
        res_db.create(self.context, 'r2', self.values(
            lease_id='lease-2', project_id='q', resource_id='blazar-2',
            end_time=hours(5), state=res_db.ACTIVE), [
            {'host_uuid': 'u1', 'host_name': 'h1', 'slots': 2}])

        def listed(**filters):
            return [(r['reservation_id'], len(r['slots'])) for r in
                    res_db.list_reservations(self.context, **filters)]

        self.assertEqual([('r1', 1), ('r2', 1)], listed())
        self.assertEqual([('r2', 1)], listed(lease_id='lease-2'))
        self.assertEqual([('r1', 1)], listed(reservation_id='r1'))
        self.assertEqual([('r2', 1)], listed(state=res_db.ACTIVE))
        self.assertEqual([('r2', 1)], listed(ending_after=hours(1)))
        self.assertEqual([('r1', 1)], listed(project_id='p'))
        self.assertEqual([], listed(project_id='p', state=res_db.ACTIVE))
        self.assertEqual({'r1', 'r2'}, res_db.reservation_ids(self.context))
        res_db.delete(self.context, 'r1')
        self.assertEqual([('r2', 1)], listed())
        self.assertRaises(res_db.ReservationNotFound, res_db.get,
                          self.context, 'r1')
        self.assertEqual({'r2'}, res_db.reservation_ids(self.context))


class ClaimsOnTests(base.LedgerTestCase):
    """What promises fence: the claims on the providers asked for."""

    def setUp(self):
        super().setUp()
        for name in ('cn1', 'cn2'):
            db_providers.create_provider(self.context, 'u-' + name, name)
            db_providers.set_inventories(self.context, 'u-' + name, {
                'VCPU': inv_mod.Inventory(8),
                'MEMORY_MB': inv_mod.Inventory(4096)})

    def _claim(self, consumer, amounts, start=0, end=2):
        db_claims.claim(self.context, consumer, amounts, hours(start),
                        hours(end))

    def _claims_on(self, uuids, after, consumers=()):
        """claims_on's claims, and of its sums from ``after`` on, a claim

        of consumer None for each level.
        """
        fenced = res_db.claims_on(self.context, uuids, after, consumers)
        claims = list(fenced.claims)
        for (uuid, rc), steps in fenced.summed.items():
            levels = []
            for moment, level in steps.between(after, window_mod.FOREVER):
                if not levels or level != levels[-1][1]:
                    levels.append((moment, level))
            levels.append((window_mod.FOREVER, 0))
            claims.extend(
                (uuid, rc, start, end, level, None)
                for (start, level), (end, _n) in zip(levels, levels[1:])
                if level)
        return claims

    @staticmethod
    def _named(claims):
        return sorted(claim for claim in claims if claim[5] is not None)

    @staticmethod
    def _summed(claims):
        """{(provider uuid, class): [(start, end, used)]} of the claims

        of consumer None: the others', summed.
        """
        found = {}
        for uuid, rc, start, end, used, consumer in sorted(
                claims, key=lambda c: c[:4]):
            if consumer is None:
                found.setdefault((uuid, rc), []).append((start, end, used))
        return found

    def test_next_start_is_the_first_fenced_claim_not_started(self):
        self._claim('started', {'u-cn1': {'VCPU': 1}}, -1, 5)
        self.assertIsNone(res_db.next_start(self.context, ['u-cn1'],
                                            hours(0)))
        self._claim('next', {'u-cn1': {'VCPU': 1}}, 3, 9)
        self._claim('first', {'u-cn1': {'VCPU': 1}}, 2, 3)
        # Not fenced, or on another provider: passed over.
        self._claim(res_db.WHOLE_HOST + 'x', {'u-cn1': {'VCPU': 1}}, 1, 2)
        self._claim(db_claims.USAGE_PREFIX + 'y', {'u-cn1': {'VCPU': 1}},
                    1, 2)
        self._claim('elsewhere', {'u-cn2': {'VCPU': 1}}, 1, 2)
        self.assertEqual(hours(2), res_db.next_start(
            self.context, ['u-cn1'], hours(0)))
        self.assertEqual(hours(3), res_db.next_start(
            self.context, ['u-cn1'], hours(2)))

    def test_the_max_units_of_the_providers_known(self):
        db_providers.set_inventories(self.context, 'u-cn2', {
            'VCPU': inv_mod.Inventory(8, max_unit=4)})
        self.assertEqual(
            {'u-cn1': {'VCPU': inv_mod.MAX_AMOUNT,
                       'MEMORY_MB': inv_mod.MAX_AMOUNT},
             'u-cn2': {'VCPU': 4}},
            res_db.claims_on(self.context, {'u-cn1', 'u-cn2', 'u-none'},
                             hours(0)).max_units)

    def test_named_claims_one_by_one_the_others_summed(self):
        self._claim('r1', {'u-cn1': {'VCPU': 2, 'MEMORY_MB': 512}})
        self._claim('r2', {'u-cn1': {'MEMORY_MB': 128}, 'u-cn2': {
            'VCPU': 1}})
        self._claim('r4', {'u-cn1': {'VCPU': 3}}, start=1, end=3)
        # Left out, named or not: whole hosts, Placement's usage; and
        # claims ended.
        self._claim(res_db.WHOLE_HOST + 'x', {'u-cn1': {'VCPU': 1}})
        self._claim(db_claims.USAGE_PREFIX + 'y', {'u-cn1': {'VCPU': 1}})
        self._claim('r3', {'u-cn1': {'VCPU': 1}}, end=1)
        claims = self._claims_on({'u-cn1', 'u-none'}, hours(1), {
            'r1', 'r3', res_db.WHOLE_HOST + 'x', 'nobody'})
        self.assertEqual(
            [('u-cn1', 'MEMORY_MB', hours(0), hours(2), 512, 'r1'),
             ('u-cn1', 'VCPU', hours(0), hours(2), 2, 'r1')],
            self._named(claims))
        self.assertEqual(
            {('u-cn1', 'MEMORY_MB'): [(hours(1), hours(2), 128)],
             ('u-cn1', 'VCPU'): [(hours(1), hours(3), 3)]},
            self._summed(claims))
        # None named: r1 in the sum too.
        claims = self._claims_on({'u-cn1', 'u-cn2'}, hours(1))
        self.assertEqual([], self._named(claims))
        self.assertEqual(
            {('u-cn1', 'MEMORY_MB'): [(hours(1), hours(2), 640)],
             ('u-cn1', 'VCPU'): [(hours(1), hours(2), 5),
                                 (hours(2), hours(3), 3)],
             ('u-cn2', 'VCPU'): [(hours(1), hours(2), 1)]},
            self._summed(claims))
        self.assertEqual([], self._claims_on({'u-none'}, hours(1)))

    def _rows_read(self):
        """A list of how many rows each read of allocations returned."""
        seen = []

        def after(conn, cursor, statement, params, _context, _many):
            if not statement.lstrip().upper().startswith('SELECT') or \
                    'FROM allocations' not in statement:
                return
            if cursor.rowcount >= 0:
                seen.append(cursor.rowcount)
                return
            # SQLite says -1 until they are fetched: counted apart.
            counter = conn.connection.dbapi_connection.cursor()
            try:
                counter.execute('SELECT count(*) FROM (%s) AS counted'
                                % statement, params)
                seen.append(counter.fetchone()[0])
            finally:
                counter.close()
        sqlalchemy.event.listen(self.engine, 'after_cursor_execute', after)
        self.addCleanup(sqlalchemy.event.remove, self.engine,
                        'after_cursor_execute', after)
        return seen

    def _record(self, rid):
        res_db.create(self.context, rid, dict(
            lease_id='l', project_id='p', resource_id='b', vcpus=1,
            memory_mb=256, disk_gb=0, amount=1, start_time=hours(0),
            end_time=hours(2), resource_class='CUSTOM_R1'), [])

    def test_rows_read_are_the_named_not_every_claim_there(self):
        for n in range(20):
            self._claim('o%d' % n, {'u-cn1': {'MEMORY_MB': 100}},
                        start=n % 3, end=n % 3 + 2)
        self._claim('r1', {'u-cn1': {'VCPU': 2}})
        first = self._claims_on({'u-cn1'}, hours(0), {'r1'})
        rows = self._rows_read()
        self.assertEqual(first, self._claims_on({'u-cn1'}, hours(0),
                                                {'r1'}))
        self.assertEqual([1], rows, "r1's claim alone")
        self.assertEqual([('u-cn1', 'VCPU', hours(0), hours(2), 2, 'r1')],
                         self._named(first))
        # 7 claims at each start, 7 + 7 + 6 from hour 1 to hour 2.
        self.assertEqual(
            {('u-cn1', 'MEMORY_MB'): [
                (hours(0), hours(1), 700), (hours(1), hours(2), 1400),
                (hours(2), hours(3), 1300), (hours(3), hours(4), 600)]},
            self._summed(first))
        # Another process's claim moves the generation: the provider's
        # claims are read again, once.
        self._another_process_claims('r2', 3)
        del rows[:]
        claims = self._claims_on({'u-cn1'}, hours(1), {'r1'})
        self.assertEqual([22, 1], rows)
        self.assertEqual({('u-cn1', 'VCPU'): [(hours(1), hours(3), 3)],
                          ('u-cn1', 'MEMORY_MB'): [
                              (hours(1), hours(2), 1400),
                              (hours(2), hours(3), 1300),
                              (hours(3), hours(4), 600)]},
                         self._summed(claims))
        # None named: r1's 2 and r2's 3 summed while both last.
        self.assertEqual([(hours(1), hours(2), 5), (hours(2), hours(3), 3)],
                         self._summed(self._claims_on(
                             {'u-cn1'}, hours(1)))['u-cn1', 'VCPU'])
        self.assertEqual([22, 1, 0], rows)

    def test_this_processs_claim_is_in_the_sum_without_a_read(self):
        self._claim('r1', {'u-cn1': {'VCPU': 2}})
        self._claims_on({'u-cn1', 'u-cn2'}, hours(0))
        self._claim('r2', {'u-cn1': {'VCPU': 1, 'MEMORY_MB': 64},
                           'u-cn2': {'VCPU': 4}}, start=1, end=3)
        rows = self._rows_read()
        self.assertEqual(
            {('u-cn1', 'VCPU'): [(hours(0), hours(1), 2),
                                 (hours(1), hours(2), 3),
                                 (hours(2), hours(3), 1)],
             ('u-cn1', 'MEMORY_MB'): [(hours(1), hours(3), 64)],
             ('u-cn2', 'VCPU'): [(hours(1), hours(3), 4)]},
            self._summed(self._claims_on({'u-cn1', 'u-cn2'}, hours(0))))
        self.assertEqual([0], rows)
        # Released: the generations move, and it is gone.
        db_claims.release(self.context, 'r2')
        self.assertEqual(
            {('u-cn1', 'VCPU'): [(hours(0), hours(2), 2)]},
            self._summed(self._claims_on({'u-cn1', 'u-cn2'}, hours(0))))

    def _generation_reads(self):
        """A list that gathers each read of providers' generations."""
        return self._statements(
            lambda statement: statement.lstrip().upper().startswith(
                'SELECT') and 'resource_providers.generation' in statement)

    def test_after_this_processs_claim_generations_are_read_once(self):
        self._claims_on({'u-cn1', 'u-cn2'}, hours(0))
        self._claim('r1', {'u-cn1': {'VCPU': 2}, 'u-cn2': {'VCPU': 1}})
        reads = self._generation_reads()
        expected = {('u-cn1', 'VCPU'): [(hours(0), hours(2), 2)],
                    ('u-cn2', 'VCPU'): [(hours(0), hours(2), 1)]}
        self.assertEqual(expected, self._summed(
            self._claims_on({'u-cn1', 'u-cn2'}, hours(0))))
        self.assertEqual(1, len(reads), 'the read after the rows only')
        # Once only: a later call reads them before and after.
        self.assertEqual(expected, self._summed(
            self._claims_on({'u-cn1', 'u-cn2'}, hours(0))))
        self.assertEqual(3, len(reads))

    def test_a_write_between_this_processs_claim_and_the_read_counts(self):
        self._claims_on({'u-cn1'}, hours(0))
        self._claim('r1', {'u-cn1': {'VCPU': 2}})
        # Another process's claim, after ours: our claim's generation is
        # not the database's any more.
        self._another_process_claims('r2', 3, start=hours(1))
        self.assertEqual(
            {('u-cn1', 'VCPU'): [(hours(0), hours(1), 2),
                                 (hours(1), hours(2), 5),
                                 (hours(2), hours(3), 3)]},
            self._summed(self._claims_on({'u-cn1'}, hours(0))))

    def test_a_claim_recorded_later_as_a_host_reservations_is_left_out(
            self):
        # Read between a host lease's claim and its record (which moves
        # no generation): once the record is there, it is left out,
        # named or not.
        self._claim('h1', {'u-cn1': {'VCPU': 8}})
        self.assertEqual({('u-cn1', 'VCPU'): [(hours(0), hours(2), 8)]},
                         self._summed(self._claims_on({'u-cn1'}, hours(0))))
        db_host.create(self.context, 'h1', dict(
            lease_id='l', project_id='p', pcloud_id='pc', host_flavor='f',
            amount=1, lease_type='IMMEDIATE', start_time=hours(0),
            end_time=hours(2), state=db_host.INACTIVE))
        self.assertEqual([], self._claims_on({'u-cn1'}, hours(0)))
        self.assertEqual([], self._claims_on({'u-cn1'}, hours(0), {'h1'}))

    def test_after_a_full_read_no_claim_is_read_but_the_named(self):
        # A full read (a first snapshot) leaves the consumers out.
        self.useFixture(fixtures.MockPatchObject(
            provider_cache.ProviderCache, 'SCAN_ALL', 0))
        self._claim('r1', {'u-cn1': {'VCPU': 2}})
        self._claim('r2', {'u-cn1': {'VCPU': 1}}, start=1, end=3)
        reads = self._reads_of_claims()
        rows = self._rows_read()
        expected = ([('u-cn1', 'VCPU', hours(0), hours(2), 2, 'r1')],
                    {('u-cn1', 'VCPU'): [(hours(1), hours(3), 1)]})
        claims = self._claims_on({'u-cn1'}, hours(0), {'r1'})
        self.assertEqual(expected, (self._named(claims),
                                    self._summed(claims)))
        # (MySQL's full read is a row for each provider and class.)
        self.assertEqual(2, len(rows), 'a full read, then the named')
        self.assertEqual(1, rows[1])
        self.assertNotIn('consumer_id', reads[0])
        claims = self._claims_on({'u-cn1'}, hours(0), {'r1'})
        self.assertEqual(expected, (self._named(claims),
                                    self._summed(claims)))
        self.assertEqual(3, len(rows))
        self.assertEqual(1, rows[2])

    def _statements(self, wanted):
        """A list that gathers each statement run for which wanted(it)."""
        seen = []

        def before(_conn, _cursor, statement, _params, _context, _many):
            if wanted(statement):
                seen.append(statement)
        sqlalchemy.event.listen(self.engine, 'before_cursor_execute',
                                before)
        self.addCleanup(sqlalchemy.event.remove, self.engine,
                        'before_cursor_execute', before)
        return seen

    def _reads_of_claims(self):
        """A list that gathers each read of allocations' windows made."""
        return self._statements(
            lambda statement: 'allocations.start_time' in statement)

    def _another_process_claims(self, consumer, used, start=hours(0)):
        """A claim of ``used`` VCPU on u-cn1 from start to hour 3, by

        plain SQL on a connection of its own, as another process writes
        it (it bumps the provider's generation, as every ledger write).
        """
        with self.engine.begin() as conn:
            conn.execute(sqlalchemy.text(
                "INSERT INTO allocations (resource_provider_id, "
                "resource_class_id, consumer_id, used, start_time, "
                "end_time) SELECT rp.id, rc.id, :c, :u, :s, :e FROM "
                "resource_providers rp, resource_classes rc WHERE "
                "rp.uuid = 'u-cn1' AND rc.name = 'VCPU'"),
                {'c': consumer, 'u': used, 's': start, 'e': hours(3)})
            conn.execute(sqlalchemy.text(
                "UPDATE resource_providers SET generation = generation + 1"
                " WHERE uuid = 'u-cn1'"))

    def test_a_write_between_the_sum_and_the_named_is_read_again(self):
        # Another process's claim committed after the steps were read,
        # before the named rows: under READ COMMITTED (PostgreSQL's and
        # SQLite's way) the rows see it, so all is read again; under
        # REPEATABLE READ (MariaDB's default) neither does.
        read_committed = self.engine.dialect.name != 'mysql'
        self._claim('r1', {'u-cn1': {'VCPU': 2}})
        real = res_db._named_or_left_out
        writes = []

        def named_or_left_out(*args):
            if not writes:
                writes.append(1)
                self._another_process_claims('r2', 3)
            return real(*args)

        with fixtures.MockPatchObject(res_db, '_named_or_left_out',
                                      named_or_left_out):
            claims = self._claims_on({'u-cn1'}, hours(0), {'r2'})
        r1_alone = {('u-cn1', 'VCPU'): [(hours(0), hours(2), 2)]}
        self.assertEqual(
            ([('u-cn1', 'VCPU', hours(0), hours(3), 3, 'r2')]
             if read_committed else [], r1_alone),
            (self._named(claims), self._summed(claims)))

        def always(*args):
            self._another_process_claims('r%d' % (3 + len(writes)), 0)
            writes.append(1)
            return real(*args)

        with fixtures.MockPatchObject(res_db, '_named_or_left_out', always):
            if read_committed:
                self.assertRaises(exception.ConcurrentUpdateDetected,
                                  self._claims_on, {'u-cn1'}, hours(0))
            else:
                self.assertEqual(
                    {('u-cn1', 'VCPU'): [(hours(0), hours(2), 5),
                                         (hours(2), hours(3), 3)]},
                    self._summed(self._claims_on({'u-cn1'}, hours(0))))
