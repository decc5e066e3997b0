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

"""Several managers' monitors, real processes on MariaDB, PostgreSQL and

a 3-node Galera cluster, each manager on its own node (the ledger's
server as the coordination backend, as by default): each interval's
pass runs once in all, and when the leader is killed -9 another runs it
within one polling interval (on Galera, once the dead leader's lock has
expired).
"""

import multiprocessing
import os
import signal
import time

import fixtures
from testtools import content

from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.db import galera

MANAGERS = 3
# The task's interval, and so the monitor's polling interval.
INTERVAL = 1.0
# Seconds watched with all managers up, then after the kill.
WINDOW = 5
# What a loaded machine adds to the bound (one polling interval).
SLACK = 2.0


def _manager(url, log, ready, ttl):
    """A blazar-manager's monitor: polled every INTERVAL, as Blazar does,

    with one task writing which process ran it, and when.
    """
    # Blazar registers options of its command line on import: first.
    from pcloud_plugin.blazar import monitor
    from pcloud_plugin import conf

    conf.CONF([], project='pcloud')
    conf.CONF.set_override('connection', url, group='pcloud_database')
    conf.CONF.set_override('galera_lock_ttl', ttl, group='pcloud_database')

    def task():
        with open(log, 'a') as f:
            f.write('%d %r\n' % (os.getpid(), time.monotonic()))

    polling = monitor.PollingMonitor((task, lambda: INTERVAL))
    polling.poll()
    ready.put(os.getpid())
    due = time.monotonic()
    while True:
        due += INTERVAL
        time.sleep(max(0, due - time.monotonic()))
        polling.poll()


class LeaderElection(base.TestCase):
    DRIVER = 'mysql'
    # A dead leader's lock, where it expires rather than goes with its
    # connection (Galera): seconds.
    TTL = 2
    # The bound of a takeover: one polling interval.
    TAKEOVER = INTERVAL + SLACK

    def setUp(self):
        super().setUp()
        self.urls = self._databases()
        self.spawn = multiprocessing.get_context('spawn')
        self.log = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'passes')

    def _databases(self):
        """Where the managers write: the n-th through urls[n % len]."""
        return [base.scratch_database(self, self.DRIVER).url]

    def _passes(self, since, until):
        """[(pid, when)] of the passes run in [since, until)."""
        with open(self.log) as f:
            passes = [(int(pid), float(when)) for pid, when in
                      (line.split() for line in f)]
        return [(p, w) for p, w in passes if since <= w < until]

    def _watch(self):
        """The passes of WINDOW seconds from now: one leader's, one an

        interval (not one per manager); that leader's pid.
        """
        since = time.monotonic()
        time.sleep(WINDOW)
        passes = self._passes(since, since + WINDOW)
        self.assertEqual(1, len({pid for pid, _when in passes}), passes)
        self.assertGreaterEqual(len(passes), WINDOW / INTERVAL - 1)
        self.assertLessEqual(len(passes), WINDOW / INTERVAL + 1)
        return passes[0][0]

    def test_one_pass_an_interval_and_a_new_leader_within_one(self):
        ready = self.spawn.Queue()
        managers = {}
        for n in range(MANAGERS):
            process = self.spawn.Process(target=_manager, args=(
                self.urls[n % len(self.urls)], self.log, ready, self.TTL))
            managers[process] = None
        base.start_processes(self, list(managers))
        self.addCleanup(self._stop, list(managers))
        base.reports_of(self, list(managers), ready, timeout=60)
        leader = self._watch()

        os.kill(leader, signal.SIGKILL)
        killed = time.monotonic()
        deadline = killed + self.TAKEOVER
        while True:
            taken = self._passes(killed, deadline)
            if taken or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertTrue(taken, 'no pass in %.1fs after the leader was '
                        'killed' % self.TAKEOVER)
        self.assertNotEqual(leader, taken[0][0])
        self.addDetail('takeover', content.text_content(
            '%.2fs' % (taken[0][1] - killed)))

        self.assertNotIn(self._watch(), (leader,))

    @staticmethod
    def _stop(processes):
        # Before the database is dropped: PostgreSQL refuses to while
        # they are connected.
        for process in processes:
            process.kill()
        for process in processes:
            process.join(30)


class LeaderElectionPostgreSQL(LeaderElection):
    DRIVER = 'postgresql'


class LeaderElectionGalera(LeaderElection):
    """Each manager writes through its own node of a Galera cluster,

    where tooz's GET_LOCK would hold on one node only: the ledger's own
    lock elects there, and a dead leader's expires.
    """
    TAKEOVER = INTERVAL + LeaderElection.TTL + SLACK

    def _databases(self):
        return galera.cluster(self).urls
