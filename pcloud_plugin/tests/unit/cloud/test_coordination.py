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

"""The leader of the periodic work: its backend, its lock, its election

(on tooz's file:// driver, whose locks exclude in one process too).
"""

import logging
from unittest import mock

import fixtures
import tooz
from tooz import coordination as tooz_coordination

from pcloud_plugin.cloud import coordination
from pcloud_plugin.tests import base


class BackendTest(base.TestCase):

    def _url(self, connection, backend_url=None):
        self.conf.set_override('connection', connection,
                               group='pcloud_database')
        self.conf.set_override('backend_url', backend_url,
                               group='coordination')
        return coordination.backend_url(self.conf)

    def test_the_ledger_server_by_default(self):
        self.assertEqual(
            'mysql://pcloud:s3cret@db.example:3307/pcloud?charset=utf8',
            self._url('mysql+pymysql://pcloud:s3cret@db.example:3307/'
                      'pcloud?charset=utf8'))
        self.assertEqual('mysql://pcloud:pw@db/pcloud',
                         self._url('mysql://pcloud:pw@db/pcloud'))
        self.assertEqual(
            'postgresql://pcloud:pw@db/pcloud',
            self._url('postgresql+psycopg2://pcloud:pw@db/pcloud'))

    def test_no_election_on_sqlite_or_without_a_ledger(self):
        self.assertIsNone(self._url('sqlite:////var/lib/pcloud/ledger.db'))
        self.assertIsNone(self._url('sqlite://'))
        self.assertIsNone(self._url(None))

    def test_the_option_first(self):
        self.assertEqual('etcd3+http://etcd:2379', self._url(
            'mysql+pymysql://pcloud:pw@db/pcloud', 'etcd3+http://etcd:2379'))
        self.assertEqual('file:///var/lock/pcloud', self._url(
            'sqlite:////tmp/l.db', 'file:///var/lock/pcloud'))

    def test_one_lock_per_ledger_database_within_mysql_limits(self):
        self.conf.set_override('connection', 'mysql+pymysql://u@db/pcloud',
                               group='pcloud_database')
        self.assertEqual('pcloud-plugin-periodic-leader:pcloud',
                         coordination.lock_name(self.conf))
        names = set()
        for db in ('a' * 40, 'a' * 41):
            self.conf.set_override('connection', 'mysql://u@db/' + db,
                                   group='pcloud_database')
            names.add(coordination.lock_name(self.conf))
        self.assertEqual(2, len(names))
        for name in names:
            self.assertLessEqual(len(name), 64)
            self.assertTrue(name.startswith(coordination.LOCK_NAME + ':'))


class LeaderTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = 'file://' + self.useFixture(fixtures.TempDir()).path
        self.log = self.useFixture(fixtures.FakeLogger(
            name=coordination.__name__, level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def _leader(self, url=None, member='m'):
        leader = coordination.Leader(url or self.url, 'leader-lock',
                                     member_id=member)
        self.addCleanup(leader.stop)
        return leader

    def test_no_backend_always_leads(self):
        with mock.patch.object(tooz_coordination,
                               'get_coordinator') as get:
            self.assertTrue(coordination.Leader(None, 'x').is_leader())
        get.assert_not_called()

    def test_one_leads_and_another_takes_over_when_it_leaves(self):
        first, second = self._leader(member='a'), self._leader(member='b')
        self.assertTrue(first.is_leader())
        self.assertFalse(second.is_leader())
        self.assertTrue(first.is_leader())
        self.assertFalse(second.is_leader())
        first.stop()
        self.assertTrue(second.is_leader())
        self.assertFalse(first.is_leader())
        self.assertIn('INFO This process leads', self.log.output)
        self.assertIn('INFO Another process leads', self.log.output)

    def test_renewed_lead_is_kept(self):
        self.useFixture(fixtures.MockPatchObject(
            coordination, 'RENEW_AFTER', 0))
        first, second = self._leader(member='a'), self._leader(member='b')
        for _ in range(3):
            self.assertTrue(first.is_leader())
            self.assertFalse(second.is_leader())

    def test_unreachable_backend_leads_and_joins_later(self):
        down = self._leader()
        other = self._leader(member='b')
        self.assertTrue(other.is_leader())
        with mock.patch.object(
                tooz_coordination, 'get_coordinator',
                side_effect=tooz_coordination.ToozConnectionError('down')):
            self.assertTrue(down.is_leader())
            self.assertTrue(down.is_leader())
        self.assertEqual(1, self.log.output.count('WARNING'))
        self.assertIn('file unreachable (down)', self.log.output)
        # Back: it joins, and another leads.
        self.assertFalse(down.is_leader())
        self.assertIn('reachable again', self.log.output)

    def test_a_real_server_down(self):
        # Nothing listens on port 1: refused at once.
        leader = self._leader('mysql://nobody@127.0.0.1:1/pcloud')
        self.assertTrue(leader.is_leader())
        self.assertIn('WARNING Coordination backend mysql unreachable',
                      self.log.output)
        self.assertNotIn('nobody', self.log.output)

    def test_a_lock_lost_under_the_leader_is_found_at_renewal(self):
        first = self._leader(member='a')
        self.assertTrue(first.is_leader())
        # Its connection closed: the lock is free, and releasing raises.
        real, first._held = first._held, mock.Mock(**{
            'release.side_effect': tooz.ToozError('connection closed')})
        real.release()
        second = self._leader(member='b')
        self.assertTrue(second.is_leader())
        self.useFixture(fixtures.MockPatchObject(
            coordination, 'RENEW_AFTER', 0))
        # The old leader runs its passes once more, then follows.
        self.assertTrue(first.is_leader())
        self.assertIn('connection closed', self.log.output)
        self.assertFalse(first.is_leader())
        self.assertTrue(second.is_leader())


class ProcessLeaderTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatchObject(
            coordination, '_process_leader', None))
        self.addCleanup(lambda: coordination._process_leader and
                        coordination._process_leader.stop())

    def test_one_per_process_following_the_configuration(self):
        one = coordination.process_leader(self.conf)
        self.assertIs(one, coordination.process_leader(self.conf))
        self.assertIsNone(one.url)
        url = 'file://' + self.useFixture(fixtures.TempDir()).path
        self.conf.set_override('backend_url', url, group='coordination')
        two = coordination.process_leader(self.conf)
        self.assertIsNot(one, two)
        self.assertEqual(url, two.url)
        self.assertTrue(two.is_leader())
