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

"""The ledger part of the sandbox demo, as a user runs it (test_cloud runs
the whole story).
"""

import os
import subprocess
import sys

import fixtures

from pcloud_plugin.tests import base


class SandboxDemo(base.TestCase):

    def _sandbox(self, *args):
        state = self.useFixture(fixtures.TempDir()).path
        return subprocess.run(
            [sys.executable, '-m', 'pcloud_plugin.cmd.sandbox',
             '--state-dir', state, *args],
            capture_output=True, text=True, timeout=300,
            cwd=os.path.dirname(state))

    def test_demo_passes_every_step(self):
        result = self._sandbox('--demo', '--ledger-only')
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn('Demo passed', result.stdout)
        self.assertNotIn('[FAIL]', result.stdout)
        self.assertIn('short by 4', result.stdout)

    def test_demo_on_mariadb(self):
        database = base.scratch_database(self, 'mysql')
        result = self._sandbox('--demo', '--ledger-only', '--db',
                               database.url)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn('Demo passed', result.stdout)
