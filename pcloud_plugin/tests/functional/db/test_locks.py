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

"""db.locks across real processes on MariaDB, PostgreSQL and a 3-node

Galera cluster with each process writing through its own node: holders
of one name (a lease's lock, a pcloud's allocation lock) never overlap,
and a holder that dies releases it.
"""

import contextlib
import multiprocessing
import os
import time

import fixtures

from pcloud_plugin.db import locks
from pcloud_plugin.pcloud import cloud
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.db import galera

PROCESSES = 4
ROUNDS = 15
PCLOUD = '6c1a7e4e-3b0f-4b9a-9d55-0d7f1c2b8e31'


def _configure(url, ttl):
    from pcloud_plugin import conf

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    conf.CONF.set_override('galera_lock_ttl', ttl, group='pcloud_database')


@contextlib.contextmanager
def _held(name):
    if name.startswith('pcloud:'):
        with cloud.pcloud_lock(name.split(':', 1)[1]):
            yield
    else:
        held = locks.acquire(name)
        try:
            yield
        finally:
            locks.release(held)


def _holder(url, name, log, start_line, results):
    """Hold ``name`` ROUNDS times, writing when it entered and left."""
    _configure(url, 30)
    start_line.wait(timeout=120)
    for _ in range(ROUNDS):
        with _held(name):
            entered = time.monotonic()
            time.sleep(0.005)
            left = time.monotonic()
        with open(log, 'a') as f:
            f.write('%r %r\n' % (entered, left))
    results.put(os.getpid())


def _dies_holding(url, name, ttl, holding):
    _configure(url, ttl)
    locks.acquire(name)
    holding.set()
    time.sleep(600)


class LockRace(base.TestCase):
    DRIVER = 'mysql'
    # How long a dead holder's lock may outlive it.
    RELEASED_WITHIN = 30

    def setUp(self):
        super().setUp()
        self.urls = self._databases()
        self.spawn = multiprocessing.get_context('spawn')

    def _databases(self):
        """Where the processes write: the n-th through urls[n % len]."""
        return [base.scratch_database(self, self.DRIVER).url]

    def _url(self, n):
        return self.urls[n % len(self.urls)]

    def _race(self, name):
        log = os.path.join(self.useFixture(fixtures.TempDir()).path,
                           'held')
        results = self.spawn.Queue()
        start_line = self.spawn.Barrier(PROCESSES)
        workers = [self.spawn.Process(target=_holder, args=(
            self._url(n), name, log, start_line, results))
            for n in range(PROCESSES)]
        base.start_processes(self, workers)
        base.reports_of(self, workers, results)
        with open(log) as f:
            spans = sorted(tuple(map(float, line.split())) for line in f)
        self.assertEqual(PROCESSES * ROUNDS, len(spans))
        for (_e1, left), (entered, _l2) in zip(spans, spans[1:]):
            self.assertLessEqual(left, entered)

    def test_holders_of_a_lease_lock_never_overlap(self):
        self._race('lease:x')

    def test_holders_of_a_pcloud_allocation_lock_never_overlap(self):
        self._race('pcloud:' + PCLOUD)

    def test_a_holder_that_dies_releases(self):
        holding = self.spawn.Event()
        holder = self.spawn.Process(target=_dies_holding, args=(
            self._url(1), 'lease:y', 3, holding))
        holder.start()
        self.addCleanup(holder.kill)
        self.assertTrue(holding.wait(120))
        self.conf.set_override('connection', self._url(0),
                               group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        # Held by another process: not taken without waiting.
        self.assertIsNone(locks.acquire('lease:y', wait=False))
        other = locks.acquire('lease:z', wait=False)
        self.assertIsNotNone(other)
        locks.release(other)
        holder.kill()
        holder.join(30)
        died = time.monotonic()
        held = locks.acquire('lease:y')
        self.assertLess(time.monotonic() - died, self.RELEASED_WITHIN)
        locks.release(held)


class LockRacePostgreSQL(LockRace):
    DRIVER = 'postgresql'


class LockRaceGalera(LockRace):
    """Each process writes through its own node of a Galera cluster,

    where a row lock holds on one node only.
    """
    # The dead holder's TTL (3 s) and a renewal's slack.
    RELEASED_WITHIN = 6

    def _databases(self):
        return galera.cluster(self).urls
