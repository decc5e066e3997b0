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

"""db.locks across real processes on MariaDB and PostgreSQL: holders of

one name never overlap, and a holder that dies releases it.
"""

import multiprocessing
import os
import time

import fixtures

from pcloud_plugin.db import locks
from pcloud_plugin.tests import base

PROCESSES = 4
ROUNDS = 15


def _holder(url, name, log, start_line, results):
    """Hold ``name`` ROUNDS times, writing when it entered and left."""
    from pcloud_plugin import conf

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    start_line.wait(timeout=120)
    for _ in range(ROUNDS):
        held = locks.acquire(name)
        entered = time.monotonic()
        time.sleep(0.005)
        left = time.monotonic()
        locks.release(held)
        with open(log, 'a') as f:
            f.write('%r %r\n' % (entered, left))
    results.put(os.getpid())


def _dies_holding(url, name, holding):
    from pcloud_plugin import conf

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    locks.acquire(name)
    holding.set()
    time.sleep(600)


class LockRace(base.TestCase):
    DRIVER = 'mysql'

    def setUp(self):
        super().setUp()
        self.database = base.scratch_database(self, self.DRIVER)
        self.spawn = multiprocessing.get_context('spawn')

    def test_holders_of_one_name_never_overlap(self):
        log = os.path.join(self.useFixture(fixtures.TempDir()).path,
                           'held')
        results = self.spawn.Queue()
        start_line = self.spawn.Barrier(PROCESSES)
        workers = [self.spawn.Process(target=_holder, args=(
            self.database.url, 'lease:x', log, start_line, results))
            for _ in range(PROCESSES)]
        base.start_processes(self, workers)
        base.reports_of(self, workers, results)
        with open(log) as f:
            spans = sorted(tuple(map(float, line.split())) for line in f)
        self.assertEqual(PROCESSES * ROUNDS, len(spans))
        for (_e1, left), (entered, _l2) in zip(spans, spans[1:]):
            self.assertLessEqual(left, entered)

    def test_a_holder_that_dies_releases(self):
        holding = self.spawn.Event()
        holder = self.spawn.Process(target=_dies_holding, args=(
            self.database.url, 'lease:y', holding))
        holder.start()
        self.addCleanup(holder.kill)
        self.assertTrue(holding.wait(120))
        self.conf.set_override('connection', self.database.url,
                               group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        # Held by another process: not taken without waiting.
        self.assertIsNone(locks.acquire('lease:y', wait=False))
        other = locks.acquire('lease:z', wait=False)
        self.assertIsNotNone(other)
        locks.release(other)
        holder.kill()
        holder.join(30)
        held = locks.acquire('lease:y')
        locks.release(held)


class LockRacePostgreSQL(LockRace):
    DRIVER = 'postgresql'
