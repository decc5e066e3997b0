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

"""Whole-host claims racing, in real OS processes on a real database,

with each other and with small claims on the same hosts' NUMA children (as
instance reservations make). Every window contains the same instant, so a
host taken whole can have no other claim at all: the generation
compare-and-swap on every provider of its tree is what guarantees it.
"""

import collections
import datetime
import multiprocessing
import random

import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin.tests import base

WHOLE_PROCESSES = 3
SMALL_PROCESSES = 2
HOSTS = 12
T_MID = datetime.datetime(2031, 6, 1)


def _racer(url, worker, whole, start_line, results):
    """Claims until nothing it could claim is free."""
    from pcloud_plugin import conf
    from pcloud_plugin.db import host_reservations as host_db
    from pcloud_plugin import exception

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    conf.CONF.set_override('claim_retries', 50, group='ledger')
    context = context_mod.get_admin_context()
    rng = random.Random(worker)
    roots = ['host-%02d' % i for i in range(HOSTS)]
    won, lost = [], 0
    # Everyone starts at once: a process still importing would find
    # every host taken, and the race would not be one.
    start_line.wait(timeout=300)
    for attempt in range(200):
        start = T_MID - datetime.timedelta(hours=rng.randint(1, 48))
        end = T_MID + datetime.timedelta(hours=rng.randint(1, 48))
        consumer = 'w%d-%d' % (worker, attempt)
        busy = host_db.busy_intervals(context, roots, start, before=end)
        if whole:
            free = [r for r in roots if not busy[r]]
        else:
            # Small claims go where no whole-host claim is, as far as
            # this read tells.
            forest = db_snapshots.load_forest(context, start, end)
            free = [r for r in roots
                    if forest[r + '-numa'].free('VCPU') >= 1
                    and forest[r].free('DISK_GB') == 100]
        if not free:
            break
        host = rng.choice(free)
        try:
            if whole:
                host_db.claim_hosts(context, consumer, [host], start, end)
            else:
                db_claims.claim(context, consumer,
                                {host + '-numa': {'VCPU': 1}}, start, end)
            won.append((consumer, host))
        except (exception.HostBusy, exception.CapacityExceeded):
            lost += 1
    results.put((worker, whole, won, lost))


class HostClaimRace(base.TestCase):
    DRIVER = 'mysql'

    def test_a_host_taken_whole_has_no_other_claim(self):
        database = base.scratch_database(self, self.DRIVER)
        self.conf.set_override('connection', database.url,
                               group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        for i in range(HOSTS):
            root = 'host-%02d' % i
            db_providers.create_provider(self.context, root, root)
            db_providers.set_inventories(self.context, root,
                                         {'DISK_GB': Inventory(100)})
            db_providers.create_provider(self.context, root + '-numa',
                                         root + '-numa', parent_uuid=root)
            db_providers.set_inventories(self.context, root + '-numa',
                                         {'VCPU': Inventory(4)})

        spawn = multiprocessing.get_context('spawn')
        results = spawn.Queue()
        kinds = [True] * WHOLE_PROCESSES + [False] * SMALL_PROCESSES
        start_line = spawn.Barrier(len(kinds))
        workers = [spawn.Process(target=_racer, args=(
            database.url, n, whole, start_line, results))
            for n, whole in enumerate(kinds)]
        base.start_processes(self, workers)
        reports = base.reports_of(self, workers, results)
        for worker in workers:
            worker.join(timeout=60)
            self.assertEqual(0, worker.exitcode)

        whole_won = [w for _n, whole, won, _l in reports if whole
                     for w in won]
        small_won = [w for _n, whole, won, _l in reports if not whole
                     for w in won]
        with database.engine.connect() as conn:
            rows = list(conn.execute(sa.text(
                'SELECT a.consumer_id, r.uuid AS root FROM allocations a '
                'JOIN resource_providers p '
                'ON p.id = a.resource_provider_id '
                'JOIN resource_providers r ON r.id = p.root_provider_id')))
        holders = collections.defaultdict(set)
        for row in rows:
            holders[row.root].add(row.consumer_id)
        # The ledger holds exactly what the processes were told they won.
        self.assertEqual({c for c, _h in whole_won + small_won},
                         {row.consumer_id for row in rows})
        whole_hosts = collections.Counter(h for _c, h in whole_won)
        for host, count in whole_hosts.items():
            # One whole claim a host, and nothing else on its tree.
            self.assertEqual(1, count, host)
            self.assertEqual(1, len(holders[host]), host)
        # Small claims fill what is left, 4 a host.
        small_hosts = collections.Counter(h for _c, h in small_won)
        self.assertFalse(set(small_hosts) & set(whole_hosts))
        self.assertLessEqual(max(small_hosts.values(), default=0), 4)
        self.assertEqual(HOSTS, len(whole_hosts) + len(small_hosts))
        self.assertTrue(whole_hosts)


class HostClaimRacePostgreSQL(HostClaimRace):
    DRIVER = 'postgresql'
