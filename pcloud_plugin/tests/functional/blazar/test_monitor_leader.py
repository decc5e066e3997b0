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

"""The monitors of several managers: only the leader runs the tasks

(beside test_monitor: importing Blazar, they cannot run with the unit
tests, which import Nova).
"""

from unittest import mock

import fixtures
from tooz import coordination as tooz_coordination

from pcloud_plugin.blazar import monitor
from pcloud_plugin.cloud import coordination
from pcloud_plugin.tests import base


class MonitorLeaderTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = 'file://' + self.useFixture(fixtures.TempDir()).path
        self.ran = []

    def _manager(self, name):
        """A manager's monitor, with its own leader, and two tasks."""
        leader = coordination.Leader(self.url, 'lock', member_id=name)
        self.addCleanup(leader.stop)
        return leader, monitor.PollingMonitor(
            (lambda: self.ran.append((name, 'mirror')), lambda: 60),
            (lambda: self.ran.append((name, 'cleanup')), lambda: 3600),
            leader=leader)

    def test_only_the_leader_runs_the_tasks(self):
        _la, a = self._manager('a')
        _lb, b = self._manager('b')
        for poll in (a.poll, b.poll, b.poll, a.poll):
            self.assertEqual({}, poll())
        self.assertEqual([('a', 'mirror'), ('a', 'cleanup')], self.ran)

    def test_a_new_leader_runs_the_tasks_due_at_once(self):
        leader_a, a = self._manager('a')
        _lb, b = self._manager('b')
        a.poll()
        b.poll()
        leader_a.stop()  # a dies
        del self.ran[:]
        b.poll()
        self.assertEqual([('b', 'mirror'), ('b', 'cleanup')], self.ran)
        del self.ran[:]
        a.poll()  # back, it follows
        self.assertEqual([], self.ran)

    def test_unreachable_backend_runs_the_tasks_anyway(self):
        _la, a = self._manager('a')
        _lb, b = self._manager('b')
        a.poll()
        with mock.patch.object(
                tooz_coordination, 'get_coordinator',
                side_effect=tooz_coordination.ToozConnectionError('down')):
            b.poll()
        self.assertEqual([('a', 'mirror'), ('a', 'cleanup'),
                          ('b', 'mirror'), ('b', 'cleanup')], self.ran)

    def test_both_plugins_of_a_process_share_its_leader(self):
        self.useFixture(fixtures.MockPatchObject(
            coordination, '_process_leader', None))
        self.addCleanup(lambda: coordination._process_leader.stop())
        self.conf.set_override('backend_url', self.url, group='coordination')
        other = coordination.Leader(self.url, coordination.lock_name(),
                                    member_id='other manager')
        self.addCleanup(other.stop)
        for name in ('instances', 'hosts'):
            monitor.PollingMonitor(
                (lambda name=name: self.ran.append(name), lambda: 60)).poll()
        self.assertFalse(other.is_leader())
        self.assertEqual(['instances', 'hosts'], self.ran)
