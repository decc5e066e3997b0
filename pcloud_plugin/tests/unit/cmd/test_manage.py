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

"""pcloud-manage as an operator runs it: db sync (and its old name,
upgrade), and one line on stderr, no traceback, when what a command
needs is not configured.
"""

import os
import subprocess
import sys

import fixtures
import sqlalchemy as sa

from pcloud_plugin.db import migration
from pcloud_plugin.tests import base


class ManageCommand(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.ledger = 'sqlite:///%s/ledger.db' % self.tmp

    def manage(self, config, *args):
        path = os.path.join(self.tmp, 'pcloud.conf')
        with open(path, 'w') as f:
            f.write(config)
        return subprocess.run(
            [sys.executable, '-m', 'pcloud_plugin.cmd.manage',
             '--config-file', path, *args],
            capture_output=True, text=True, timeout=120)

    def assertOneLineError(self, result, *words):
        self.assertEqual(1, result.returncode, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(1, len(lines), result.stderr)
        self.assertTrue(lines[0].startswith('ERROR: '), lines[0])
        for word in words:
            self.assertIn(word, lines[0])

    def revision(self):
        engine = sa.create_engine(self.ledger)
        self.addCleanup(engine.dispose)
        return migration.current_revision(engine)

    def test_db_sync_brings_the_ledger_to_head(self):
        result = self.manage(
            '[pcloud_database]\nconnection = %s\n' % self.ledger,
            'db', 'sync')
        self.assertEqual(0, result.returncode, result.stderr)
        head = migration.head_revision()
        self.assertIn('Ledger schema at %s' % head, result.stdout)
        self.assertEqual(head, self.revision())

    def test_db_upgrade_is_db_sync_by_its_old_name(self):
        result = self.manage(
            '[pcloud_database]\nconnection = %s\n' % self.ledger,
            'db', 'upgrade', '--revision', '0001_initial')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('0001_initial', self.revision())

    def test_no_database_connection_is_one_line(self):
        for action in ('sync', 'version'):
            self.assertOneLineError(
                self.manage('[DEFAULT]\n', 'db', action),
                '[pcloud_database] connection is not set')

    def test_an_empty_database_connection_is_one_line(self):
        self.assertOneLineError(
            self.manage('[pcloud_database]\nconnection =\n', 'db', 'sync'),
            '[pcloud_database] connection is not set')

    def test_a_database_that_cannot_be_opened_is_one_line(self):
        self.assertOneLineError(
            self.manage('[pcloud_database]\nconnection = '
                        'sqlite:///%s/no/such/dir/ledger.db\n' % self.tmp,
                        'db', 'sync'),
            '[pcloud_database] connection')

    def test_no_placement_credentials_is_one_line(self):
        self.assertOneLineError(
            self.manage('[pcloud_database]\nconnection = %s\n' % self.ledger,
                        'placement', 'sync'),
            '[pcloud_placement] auth_type is not set')

    def test_incomplete_placement_credentials_is_one_line(self):
        self.assertOneLineError(
            self.manage('[pcloud_database]\nconnection = %s\n'
                        '[pcloud_placement]\nauth_type = password\n'
                        % self.ledger, 'placement', 'sync'),
            '[pcloud_placement] auth_url not set')

    def test_unreachable_placement_is_one_line(self):
        # Port 9 (discard) on loopback: nothing answers.
        self.assertOneLineError(
            self.manage('[pcloud_database]\nconnection = %s\n'
                        '[pcloud_placement]\nauth_type = admin_token\n'
                        'endpoint = http://127.0.0.1:9/\ntoken = t\n'
                        % self.ledger, 'placement', 'sync'),
            'cannot reach Placement with [pcloud_placement]')
