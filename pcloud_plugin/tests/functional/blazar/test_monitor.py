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

"""The plugins' periodic tasks: due ones run, failures are logged."""

import logging

import fixtures
from keystoneauth1 import exceptions as ks_exc
from oslotest import base

from pcloud_plugin.blazar import monitor


class PollingMonitorTests(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=monitor.__name__, level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def _poll(self, error):
        def task():
            raise error
        monitor.PollingMonitor((task, lambda: 5)).poll()

    def test_unreachable_cloud_is_a_warning_without_traceback(self):
        self._poll(ks_exc.ConnectFailure('connection refused'))
        self.assertIn('WARNING', self.log.output)
        self.assertIn('connection refused', self.log.output)
        self.assertNotIn('Traceback', self.log.output)

    def test_other_failures_keep_their_traceback(self):
        self._poll(KeyError('bug'))
        self.assertIn('ERROR', self.log.output)
        self.assertIn('Traceback', self.log.output)

    def test_every_task_runs_when_due_and_only_then(self):
        ran = []
        tasks = monitor.PollingMonitor(
            (lambda: ran.append('often'), lambda: 1),
            (lambda: ran.append('never'), lambda: 0),
            (lambda: ran.append('rarely'), lambda: 3600))
        self.assertEqual(1, tasks.get_polling_interval())
        tasks.poll()
        tasks.poll()
        self.assertEqual(['often', 'rarely'], ran)
