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
"""Offerings against a brute-force search over the ledger's rows.

Random small ledgers (seeded): flat hosts, one of them in a pcloud, and
claims of parts of hosts and of whole hosts, some ending at odd seconds.
For each random request the brute force tries every minute from the
moment asked for to past the last claim's end, and says whether the
request fits there by summing the allocation rows itself (peak usage
per host and class over the window; a host is free for a whole-host
lease when no row on it overlaps). The answer must be the first
count starts that fit among the moment asked for and the minutes
(rounded up) at which claims end, and its first start the first minute
that fits at all. Half the requests bound the starts, as a flexible
lease's latest end does: the answer is then the brute force's up to
the bound, and its first start, the window such a lease books, the
first minute that fits by then.
"""

import datetime
import random
import types

import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import models
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import offerings
from pcloud_plugin.reservations import slots as slots_mod
from pcloud_plugin.tests import base

T0 = datetime.datetime(2031, 1, 1)
MINUTE = datetime.timedelta(minutes=1)
CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
LEDGERS = 8
QUERIES = 40
PCLOUD_ID = '4b8d3c2a-1f0e-4d5c-9b8a-7f6e5d4c3b2a'


def _agg(name, metadata, hosts):
    return types.SimpleNamespace(name=name, uuid=name, metadata=metadata,
                                 hosts=list(hosts), availability_zone=None)


class OfferingsBruteForceTest(base.LedgerTestCase):

    def build(self, rng):
        """Hosts h0.. (h0 in a pcloud) and random claims; the pools."""
        self.caps = {}
        names = ['h%d' % n for n in range(rng.randint(3, 5))]
        for name in names:
            db_providers.create_provider(self.context, 'rp-' + name, name)
            inventories = {
                'VCPU': Inventory(rng.randint(4, 16), allocation_ratio=(
                    rng.choice((1.0, 2.0)))),
                'MEMORY_MB': Inventory(1024 * rng.randint(4, 16),
                                       reserved=rng.choice((0, 512))),
                'DISK_GB': Inventory(rng.randint(50, 400))}
            db_providers.set_inventories(self.context, 'rp-' + name,
                                         inventories)
            self.caps[name] = {rc: inv.capacity
                               for rc, inv in inventories.items()}
        for n in range(rng.randint(4, 14)):
            host = rng.choice(names)
            start = T0 + datetime.timedelta(
                minutes=rng.randrange(0, 300, 5),
                seconds=rng.choice((0, 0, 0, 17)))
            end = start + datetime.timedelta(minutes=rng.randint(10, 200))
            try:
                if rng.random() < 0.3:
                    host_db.claim_hosts(self.context, 'whole-%d' % n,
                                        ['rp-' + host], start, end)
                else:
                    cap = self.caps[host]
                    db_claims.claim(self.context, 'part-%d' % n, {
                        'rp-' + host: {
                            rc: rng.randint(1, max(1, cap[rc] // 2))
                            for rc in CLASSES}}, start, end)
            except (exception.CapacityExceeded, exception.HostBusy):
                pass
        pool = _agg('pcloud-pool-big', dict(
            codec.pool_metadata(codec.HostFlavor('big', '', 1))), names)
        pcloud = _agg('pcloud-mine', codec.pcloud_metadata(
            PCLOUD_ID, 'mine', 'p'), [names[0]])
        pcloud.metadata['pcloud:type'] = 'pcloud'
        self.pools = host_requests.Pools([pool, pcloud], 'nova')
        self.names = names
        self.rows = self.read_rows()

    def read_rows(self):
        """(host name, class, start, end, used) of every allocation row."""
        alloc = models.Allocation.__table__
        rp = models.ResourceProvider.__table__
        rc = models.ResourceClass.__table__
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(
                sa.select(rp.c.name, rc.c.name, alloc.c.start_time,
                          alloc.c.end_time, alloc.c.used)
                .join(rp, rp.c.id == alloc.c.resource_provider_id)
                .join(rc, rc.c.id == alloc.c.resource_class_id))]

    # --- brute force: the rows, summed -------------------------------------

    def peak(self, host, rc, start, end):
        rows = [(s, e, u) for h, c, s, e, u in self.rows
                if h == host and c == rc and s < end and e > start]
        moments = {start} | {s for s, _e, _u in rows if s > start}
        return max((sum(u for s, e, u in rows if s <= t < e)
                    for t in moments), default=0)

    def slots_fit(self, need, amount, affinity, start, end):
        counts = []
        for host in self.names[1:]:  # h0 is in a pcloud
            counts.append(min(
                (self.caps[host][rc] - self.peak(host, rc, start, end))
                // n for rc, n in need.items() if n))
        if affinity is True:
            return max(counts) >= amount
        if affinity is False:
            return sum(1 for c in counts if c >= 1) >= amount
        return sum(counts) >= amount

    def hosts_fit(self, amount, start, end):
        free = [h for h in self.names[1:]
                if not any(r[0] == h and r[4] > 0 and r[2] < end
                           and r[3] > start for r in self.rows)]
        return len(free) >= amount

    def expected(self, fits, relevant, not_before, duration, count):
        """(first count starts that fit among the freeing moments, the

        first minute that fits at all).
        """
        first = offerings.ceil_minute(not_before)
        ends = [r[3] for r in self.rows if relevant(r) and r[3] > not_before]
        freeing = {first} | {offerings.ceil_minute(e) for e in ends}
        last = max(freeing)
        found, first_fit, moment = [], None, first
        while moment <= last:
            if fits(moment, moment + duration):
                if first_fit is None:
                    first_fit = moment
                if moment in freeing and len(found) < count:
                    found.append(moment)
            moment += MINUTE
        return found, first_fit

    # --- the test --------------------------------------------------------

    def check(self, seed):
        """QUERIES random requests on the ledger of seed."""
        rng = random.Random(seed)
        self.build(rng)
        cases = 0
        for _n in range(QUERIES):
            not_before = T0 + datetime.timedelta(
                minutes=rng.randint(-30, 300),
                seconds=rng.choice((0, 0, 30)))
            duration = datetime.timedelta(minutes=rng.randint(10, 120))
            count = rng.randint(1, 5)
            amount = rng.randint(1, 4)
            # A flexible lease's bound: no start after it.
            latest_start = rng.choice((None, not_before + datetime.timedelta(
                minutes=rng.randint(0, 400))))
            kind = rng.choice(('slots', 'hosts'))
            if kind == 'slots':
                need = {'VCPU': rng.randint(1, 4),
                        'MEMORY_MB': 512 * rng.randint(1, 6),
                        'DISK_GB': rng.choice((0, 10, 40))}
                affinity = rng.choice((True, False, None))
                request = slots_mod.SlotRequest(
                    need, amount, affinity=affinity,
                    excluded_hosts={self.names[0]})
                found, _ = offerings.slot_offerings(
                    self.context, request, duration, not_before, count,
                    latest_start)
                want, first_fit = self.expected(
                    lambda s, e: self.slots_fit(need, amount, affinity,
                                                s, e),
                    lambda r: r[1] in request.resources and r[4] > 0,
                    not_before, duration, count)
            else:
                params = {'amount': amount, 'host_flavor': 'big',
                          'availability_zone': None,
                          'required_traits': None}
                found, _ = offerings.host_offerings(
                    self.context, db_snapshots.load_forest(self.context),
                    self.pools, params, duration, not_before, count,
                    latest_start)
                want, first_fit = self.expected(
                    lambda s, e: self.hosts_fit(amount, s, e),
                    lambda r: r[0] != self.names[0] and r[4] > 0,
                    not_before, duration, count)
            if latest_start is not None:
                # Starts are in order: the bound cuts a prefix.
                want = [start for start in want if start <= latest_start]
                if first_fit is not None and first_fit > latest_start:
                    first_fit = None
            starts = [w['start'] for w in found]
            what = 'seed %d, %s from %s for %s, starting by %s' % (
                seed, kind, not_before, duration, latest_start)
            self.assertEqual(want, starts, what)
            self.assertEqual(want[:1], [first_fit] if first_fit else [],
                             what)
            for w in found:
                self.assertEqual((w['start'] + duration, amount),
                                 (w['end'], w['amount']))
            cases += 1
        self.assertEqual(QUERIES, cases)


def _seeded(seed):
    def test(self):
        self.check(seed)
    test.__name__ = 'test_offerings_match_a_brute_force_search_%d' % seed
    return test


for _seed in range(LEDGERS):
    _test = _seeded(_seed)
    setattr(OfferingsBruteForceTest, _test.__name__, _test)
