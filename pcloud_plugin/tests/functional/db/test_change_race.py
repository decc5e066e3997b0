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

"""Every kind of ledger write racing in real OS processes on a real

MariaDB / PostgreSQL, with the session isolation forced to each level:
new claims, claims grown, shrunk, moved in time and to another provider,
releases, and whole-host claims that move between hosts (replace=True).

Every window contains T_MID, so all claims on a provider overlap there.
A thread of the test process reads the allocations over and over while
the race runs: at no moment may a provider be over capacity, and at the
end the ledger holds exactly what each process was told it holds.

One more process writes the usage snapshots over and over as the race
runs (as the leading manager does); the thread checks, in one consistent
read each time, that every snapshot of its provider's current generation
holds what that provider's claims sum to.
"""

import collections
import datetime
import multiprocessing
import random
import threading
import time

import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.db import galera

PROCESSES = 6
OPERATIONS = 300
PROVIDERS = 6
VCPU = 5
T_MID = datetime.datetime(2031, 6, 1)
PROVIDER_UUIDS = ['rp-%d' % i for i in range(PROVIDERS)]

# How each backend is told, per connection, to run at a level.
_LEVEL_SQL = {'mysql': 'SELECT @@tx_isolation',
              'postgresql': 'SHOW transaction_isolation'}


def _url_at(url, driver, level):
    url = sa.engine.make_url(url)
    if driver == 'mysql':
        query = {'init_command':
                 'SET SESSION TRANSACTION ISOLATION LEVEL %s' % level}
    else:
        query = {'options': '-c default_transaction_isolation=%s'
                 % level.lower().replace(' ', r'\ ')}
    return url.update_query_dict(query).render_as_string(hide_password=False)


def _window(rng):
    return (T_MID - datetime.timedelta(hours=rng.randint(1, 6)),
            T_MID + datetime.timedelta(hours=rng.randint(1, 6)))


def _racer(urls, driver, worker, start_line, results):
    """OPERATIONS random writes on one of ``urls`` (the nodes of a

    multi-writer cluster); reports what it holds at the end.
    """
    from pcloud_plugin import conf
    from pcloud_plugin.db import host_reservations as host_db
    from pcloud_plugin import exception

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', urls[worker % len(urls)],
                           group='pcloud_database')
    conf.CONF.set_override('claim_retries', 60, group='ledger')
    context = context_mod.get_admin_context()
    with db_api.get_engine().connect() as conn:
        level = conn.execute(sa.text(_LEVEL_SQL[driver])).scalar()
    rng = random.Random(worker)
    small = {}    # consumer -> (provider, vcpu)
    whole = {}    # consumer -> provider
    counts = collections.Counter()
    start_line.wait(timeout=300)
    for n in range(OPERATIONS):
        # Mostly claims and growths: the race that overbooked.
        op = rng.choice(['claim'] * 3 + ['grow'] * 3 + [
            'shrink', 'move', 'window', 'release', 'release', 'release',
            'host', 'host_move', 'host_move'])
        start, end = _window(rng)
        rp = rng.choice(PROVIDER_UUIDS)
        free = PROVIDER_UUIDS
        if op.startswith('host'):
            # Where the host looks free, as a scheduler would pick.
            busy = host_db.busy_intervals(context, PROVIDER_UUIDS, start,
                                          before=end)
            free = [u for u in PROVIDER_UUIDS if not busy[u]]
            rp = rng.choice(free or PROVIDER_UUIDS)
        try:
            if op == 'claim':
                consumer = 'w%d-%d' % (worker, n)
                db_claims.claim(context, consumer, {rp: {'VCPU': 1}},
                                start, end)
                small[consumer] = (rp, 1)
            elif op == 'host':
                consumer = 'h%d-%d' % (worker, n)
                host_db.claim_hosts(context, consumer, [rp], start, end)
                whole[consumer] = rp
            elif op == 'host_move' and whole:
                consumer = rng.choice(sorted(whole))
                if not free:
                    # Nowhere else looks free: a new window on its own
                    # host, which every claim's shared instant keeps free.
                    rp = whole[consumer]
                host_db.claim_hosts(context, consumer, [rp], start, end,
                                    replace=True)
                whole[consumer] = rp
            elif op in ('grow', 'shrink', 'move', 'window') and small:
                consumer = rng.choice(sorted(small))
                held, vcpu = small[consumer]
                if op == 'window':
                    db_claims.change_claim(context, consumer, start=start,
                                           end=end)
                    counts[op] += 1
                    continue
                if op == 'grow':
                    vcpu += 1
                elif op == 'shrink':
                    vcpu = max(1, vcpu - 1)
                else:
                    held = rp
                db_claims.change_claim(context, consumer,
                                       {held: {'VCPU': vcpu}})
                small[consumer] = (held, vcpu)
            elif op == 'release' and (small or whole):
                consumer = rng.choice(sorted(small) + sorted(whole))
                db_claims.release(context, consumer)
                small.pop(consumer, None)
                whole.pop(consumer, None)
            else:
                continue
            counts[op] += 1
        except (exception.CapacityExceeded, exception.HostBusy):
            counts['refused'] += 1
        except exception.ConcurrentUpdateDetected:
            counts['gave up'] += 1
    results.put((worker, level, small, whole, dict(counts)))


def _snapshotter(url, driver, stop, results):
    """Write the usage snapshots until ``stop`` is set; report (level,

    passes, snapshots written).
    """
    from pcloud_plugin import conf
    from pcloud_plugin.db import snapshots as db_snapshots

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    context = context_mod.get_admin_context()
    with db_api.get_engine().connect() as conn:
        level = conn.execute(sa.text(_LEVEL_SQL[driver])).scalar()
    passes = written = 0
    while not stop.is_set():
        written += db_snapshots.save_usage(context)
        passes += 1
    results.put((level, passes, written))


def _snapshot_wrong(conn):
    """The first (provider id, what its current snapshot holds, what its

    claims sum to) where the two differ, in one read; and how many
    snapshots of a current generation were checked.
    """
    generations = dict(conn.execute(sa.text(
        'SELECT id, generation FROM resource_providers')).all())
    names = dict(conn.execute(sa.text(
        'SELECT id, name FROM resource_classes')).all())
    claims = collections.defaultdict(list)
    for rp_id, rc_id, start, end, used in conn.execute(sa.text(
            'SELECT resource_provider_id, resource_class_id, start_time, '
            'end_time, used FROM allocations')):
        claims[rp_id, names[rc_id]].append((start, end, used))
    checked = 0
    for rp_id, generation, steps in conn.execute(sa.text(
            'SELECT resource_provider_id, generation, steps '
            'FROM usage_snapshots')):
        if generations.get(rp_id) != generation:
            continue
        checked += 1
        held = {rc: (s.times, s.levels) for rc, s in
                provider_cache._decoded(steps, names).items()}
        summed = {rc: (s.times, s.levels) for rc, s in (
            (rc, window_mod.UsageSteps(found))
            for (rp, rc), found in claims.items() if rp == rp_id)}
        if held != summed:
            return (rp_id, held, summed), checked
    return None, checked


def _over_capacity(rows):
    """The first (provider, peak) over VCPU among allocation ``rows``."""
    claims = collections.defaultdict(list)
    for uuid, start, end, used in rows:
        claims[uuid].append((start, end, used))
    for uuid, found in sorted(claims.items()):
        peak, _at = window_mod.max_in_sweep(
            found, datetime.datetime(2000, 1, 1), window_mod.FOREVER)
        if peak > VCPU:
            return uuid, peak
    return None


class _Observer(threading.Thread):
    """Reads every allocation in one statement until told to stop, and

    keeps the first over-capacity state it sees.
    """

    def __init__(self, engine):
        super().__init__(daemon=True)
        self.engine = engine
        self.stop = threading.Event()
        self.reads = 0
        self.overbooked = None
        # The first snapshot found wrong; how many were checked.
        self.snapshot_wrong = None
        self.snapshots_checked = 0

    def run(self):
        query = sa.text(
            'SELECT p.uuid, a.start_time, a.end_time, a.used '
            'FROM allocations a JOIN resource_providers p '
            'ON p.id = a.resource_provider_id')
        # One snapshot of the database for the reads of each check.
        with self.engine.connect().execution_options(
                isolation_level='REPEATABLE READ') as conn:
            while not self.stop.is_set() and self.overbooked is None \
                    and self.snapshot_wrong is None:
                self.overbooked = _over_capacity(conn.execute(query).all())
                conn.rollback()
                self.check_snapshots(conn)
                self.reads += 1
                time.sleep(0.01)

    def check_snapshots(self, conn):
        wrong, checked = _snapshot_wrong(conn)
        conn.rollback()
        self.snapshot_wrong = self.snapshot_wrong or wrong
        self.snapshots_checked += checked


class ChangeRace(base.TestCase):
    DRIVER = 'mysql'

    def _database(self):
        """(URL of the test's ledger, [URL of each node to write on])."""
        database = base.scratch_database(self, self.DRIVER)
        return database.url, [database.url]

    def _race(self, level):
        url, nodes = self._database()
        self.conf.set_override('connection', url, group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        for uuid in PROVIDER_UUIDS:
            db_providers.create_provider(self.context, uuid, uuid)
            db_providers.set_inventories(self.context, uuid,
                                         {'VCPU': Inventory(VCPU)})

        urls = [_url_at(node, self.DRIVER, level) for node in nodes]
        spawn = multiprocessing.get_context('spawn')
        results = spawn.Queue()
        start_line = spawn.Barrier(PROCESSES)
        workers = [spawn.Process(target=_racer, args=(
            urls, self.DRIVER, n, start_line, results))
            for n in range(PROCESSES)]
        stop_snapshots = spawn.Event()
        snapshots = spawn.Queue()
        snapshotter = spawn.Process(target=_snapshotter, args=(
            urls[-1], self.DRIVER, stop_snapshots, snapshots))
        base.start_processes(self, workers + [snapshotter])
        engine = sa.create_engine(url)
        self.addCleanup(engine.dispose)
        observer = _Observer(engine)
        observer.start()
        try:
            reports = base.reports_of(self, workers, results)
        finally:
            stop_snapshots.set()
            observer.stop.set()
            observer.join(timeout=60)
        (level_seen, passes, written), = base.reports_of(
            self, [snapshotter], snapshots)
        for worker in workers + [snapshotter]:
            worker.join(timeout=60)
            self.assertEqual(0, worker.exitcode)
        # And once more with everything at rest.
        with engine.connect().execution_options(
                isolation_level='REPEATABLE READ') as conn:
            observer.check_snapshots(conn)
        self.assertIsNone(observer.snapshot_wrong)
        self.assertEqual(level.replace(' ', '-').lower(),
                         level_seen.replace(' ', '-').lower())
        self.assertGreater(observer.snapshots_checked, 0)

        # The race ran at the level asked for, and was one.
        self.assertEqual(
            {level.replace(' ', '-').lower()},
            {lvl.replace(' ', '-').lower() for _w, lvl, _s, _h, _c
             in reports})
        counts = sum((collections.Counter(c) for *_x, c in reports),
                     collections.Counter())
        for op in ('claim', 'grow', 'move', 'window', 'release', 'host',
                   'host_move', 'refused'):
            self.assertGreater(counts[op], 0, op)
        self.assertIsNone(observer.overbooked)
        self.assertGreater(observer.reads, 0)

        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT a.consumer_id, p.uuid, a.start_time, a.end_time, '
                'a.used FROM allocations a JOIN resource_providers p '
                'ON p.id = a.resource_provider_id')).all()
        self.assertIsNone(_over_capacity([r[1:] for r in rows]))
        # Nothing lost, nothing left over: each claim is where and as
        # large as its process was told.
        held = {(r.consumer_id, r.uuid): r.used for r in rows}
        expected = {}
        for _w, _l, small, whole, _c in reports:
            expected.update(((c, rp), vcpu)
                            for c, (rp, vcpu) in small.items())
            expected.update(((c, rp), VCPU) for c, rp in whole.items())
        self.assertEqual(expected, held)
        print('%s %s: %s, %d observer reads; %d snapshot passes wrote '
              '%d, %d checked' % (
                  self.DRIVER, level, dict(sorted(counts.items())),
                  observer.reads, passes, written,
                  observer.snapshots_checked))

    def test_read_committed(self):
        self._race('READ COMMITTED')

    def test_repeatable_read(self):
        self._race('REPEATABLE READ')

    def test_serializable(self):
        self._race('SERIALIZABLE')


class ChangeRacePostgreSQL(ChangeRace):
    DRIVER = 'postgresql'


class ChangeRaceGalera(ChangeRace):
    """The same race with its writers spread over the three nodes of a

    Galera cluster, where a commit can fail certification.
    """

    # Galera keeps SERIALIZABLE to one node's transactions.
    test_serializable = None

    def _database(self):
        self.nodes = galera.cluster(self).urls
        return self.nodes[0], self.nodes

    def _race(self, level):
        super()._race(level)
        # Commits did fail certification (or were aborted for one that
        # passed it) on some node, and were run again.
        conflicts = 0
        for url in self.nodes:
            engine = sa.create_engine(url)
            with engine.connect() as conn:
                for name in ('wsrep_local_cert_failures',
                             'wsrep_local_bf_aborts'):
                    conflicts += int(conn.exec_driver_sql(
                        "SHOW STATUS LIKE '%s'" % name).fetchone()[1])
            engine.dispose()
        self.assertGreater(conflicts, 0)
