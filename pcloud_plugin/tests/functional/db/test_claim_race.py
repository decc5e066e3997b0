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

"""Real OS processes racing to claim on a real MariaDB / PostgreSQL.

Providers are sized so that exactly K claims fit: every claim's window
contains the same instant, so at that instant all of them overlap. Each
process reads usage, picks a provider that looks free and claims it, as a
scheduler does; the generation compare-and-swap is all that stands between
them and double-booking.
"""

import collections
import datetime
import multiprocessing
import random
import time

import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin.tests import base

PROCESSES = 8
ATTEMPTS_PER_PROCESS = 200
PROVIDERS = 10
VCPU_PER_PROVIDER = 64
MEMORY_PER_CLAIM = 256
K = PROVIDERS * VCPU_PER_PROVIDER
T_MID = datetime.datetime(2031, 6, 1)


def _claimer(url, worker, results):
    """One process: ATTEMPTS_PER_PROCESS claims, each until one sticks or

    the usage it reads shows no room anywhere in its window.
    """
    from pcloud_plugin import conf
    from pcloud_plugin import exception

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    conf.CONF.set_override('claim_retries', 50, group='ledger')
    context = context_mod.get_admin_context()
    rng = random.Random(worker)
    won, refused, capacity_misses = [], 0, 0
    for attempt in range(ATTEMPTS_PER_PROCESS):
        start = T_MID - datetime.timedelta(hours=rng.randint(1, 48))
        end = T_MID + datetime.timedelta(hours=rng.randint(1, 48))
        consumer = 'w%d-%d' % (worker, attempt)
        while True:
            forest = db_snapshots.load_forest(context, start, end)
            free = [p.uuid for p in forest if p.free('VCPU') >= 1]
            if not free:
                refused += 1
                break
            try:
                db_claims.claim(context, consumer, {rng.choice(free): {
                    'VCPU': 1, 'MEMORY_MB': MEMORY_PER_CLAIM}}, start, end)
                won.append(consumer)
                break
            except exception.CapacityExceeded:
                # Our snapshot was stale: someone took the last slot.
                capacity_misses += 1
    results.put((worker, won, refused, capacity_misses))


class ClaimRace(base.TestCase):
    DRIVER = 'mysql'

    def test_racing_processes_claim_exactly_k(self):
        database = base.scratch_database(self, self.DRIVER)
        self.conf.set_override('connection', database.url,
                               group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        for i in range(PROVIDERS):
            uuid = 'race-%02d' % i
            db_providers.create_provider(self.context, uuid, uuid)
            db_providers.set_inventories(self.context, uuid, {
                'VCPU': Inventory(VCPU_PER_PROVIDER),
                'MEMORY_MB': Inventory(VCPU_PER_PROVIDER * MEMORY_PER_CLAIM)})

        # Warm this process's usage cache: it must see the other
        # processes' claims through the generations they bump.
        at_mid = (T_MID, T_MID + datetime.timedelta(minutes=1))
        self.assertEqual({}, db_snapshots.load_forest(
            self.context, *at_mid)['race-00'].usage)
        spawn = multiprocessing.get_context('spawn')
        results = spawn.Queue()
        workers = [spawn.Process(target=_claimer,
                                 args=(database.url, n, results))
                   for n in range(PROCESSES)]
        began = time.monotonic()
        base.start_processes(self, workers)
        reports = base.reports_of(self, workers, results)
        elapsed = time.monotonic() - began
        for worker in workers:
            worker.join(timeout=60)
            self.assertEqual(0, worker.exitcode)

        won = [c for _w, w, _r, _m in reports for c in w]
        refused = sum(r for _w, _c, r, _m in reports)
        self.assertEqual(PROCESSES * ATTEMPTS_PER_PROCESS,
                         len(won) + refused)
        self.assertEqual(K, len(won))
        self.assertEqual(len(won), len(set(won)))

        with database.engine.connect() as conn:
            consumers = set(conn.execute(sa.text(
                'SELECT uuid FROM consumers')).scalars())
            rows = list(conn.execute(sa.text(
                'SELECT a.consumer_id, p.uuid, c.name, a.used, '
                'a.start_time, a.end_time FROM allocations a '
                'JOIN resource_providers p ON p.id = a.resource_provider_id '
                'JOIN resource_classes c ON c.id = a.resource_class_id')))
        # Nothing lost, nothing duplicated: the ledger holds exactly the
        # claims the processes were told they won, each whole.
        self.assertEqual(set(won), consumers)
        per_consumer = collections.Counter(r.consumer_id for r in rows)
        self.assertEqual({2}, set(per_consumer.values()))
        # No provider over capacity at any instant.
        claims = collections.defaultdict(list)
        for r in rows:
            claims[r.uuid, r.name].append((r.start_time, r.end_time, r.used))
        for (uuid, rc), rc_claims in claims.items():
            peak, _at = window_mod.max_in_sweep(
                rc_claims, datetime.datetime(2000, 1, 1), window_mod.FOREVER)
            limit = VCPU_PER_PROVIDER * (MEMORY_PER_CLAIM
                                         if rc == 'MEMORY_MB' else 1)
            self.assertEqual(limit, peak, '%s %s' % (uuid, rc))
        # Every claim spans T_MID, so every provider is full there.
        self.assertEqual(
            {'race-%02d' % i: {'VCPU': VCPU_PER_PROVIDER,
                               'MEMORY_MB': K // PROVIDERS * MEMORY_PER_CLAIM}
             for i in range(PROVIDERS)},
            {p.uuid: p.usage for p in db_snapshots.load_forest(
                self.context, *at_mid)})
        print('%s race: %d processes, %d attempts, %d claims won in %.1fs: '
              '%.1f claims/s won, %.1f attempts/s, %d stale-snapshot '
              'retries' % (self.DRIVER, PROCESSES,
                           PROCESSES * ATTEMPTS_PER_PROCESS, len(won),
                           elapsed, len(won) / elapsed,
                           PROCESSES * ATTEMPTS_PER_PROCESS / elapsed,
                           sum(m for _w, _c, _r, m in reports)))


class ClaimRacePostgreSQL(ClaimRace):
    DRIVER = 'postgresql'
