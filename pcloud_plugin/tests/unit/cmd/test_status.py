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

"""pcloud-status upgrade check: the ledger schema, Placement reachable,
the ledger's mirror of Placement current (Blazar's hosts and ours apart:
tests/unit/db/test_status_partition.py), with fakes for Placement.
"""

import datetime
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ks_exc
from oslo_upgradecheck import upgradecheck
from oslo_utils import timeutils

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import mirror as mirror_mod
from pcloud_plugin.cmd import status
from pcloud_plugin.db import migration
from pcloud_plugin.db import placement_sync
from pcloud_plugin.tests import base

ENDPOINT = 'http://placement.example.org/placement'


class FakePlacement(object):
    """A keystoneauth adapter's face: answers ``answers`` (a status code,

    or an exception to raise) to every GET, with an empty provider list.
    """

    auth = object()

    def __init__(self, answers=200):
        self.answers = answers
        self.gets = []

    def get_endpoint(self):
        return ENDPOINT

    def request(self, url, method, **kwargs):
        assert method == 'GET', method
        return self.get(url)

    def get(self, url, **kwargs):
        self.gets.append(url)
        if isinstance(self.answers, Exception):
            raise self.answers
        return mock.Mock(status_code=self.answers, text='no way',
                         json=lambda: {'resource_providers': []})


class _ConfiguredLedger(base.LedgerTestCase):
    """[pcloud_database] connection names the test's ledger, as the

    checks first ask.
    """

    def setUp(self):
        super().setUp()
        self.conf.set_override(
            'connection', self.engine.url.render_as_string(),
            group='pcloud_database')


class SchemaCheckTests(_ConfiguredLedger):

    def test_schema_at_head_is_success(self):
        result = status.Checks()._check_schema()
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code)

    def test_schema_behind_fails_naming_db_sync(self):
        self.useFixture(fixtures.MockPatchObject(
            migration, 'current_revision', return_value='0001_initial'))
        result = status.Checks()._check_schema()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('pcloud-manage db sync', result.details)


class UnconfiguredLedgerTests(base.TestCase):

    def test_no_connection_fails_the_schema_check_naming_it(self):
        result = status.Checks()._check_schema()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('[pcloud_database] connection is not set',
                      result.details)

    def test_no_connection_fails_the_freshness_check_naming_it(self):
        result = status.Checks()._check_freshness()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('[pcloud_database] connection is not set',
                      result.details)


class PlacementCheckTests(base.TestCase):

    def check(self, placement):
        self.useFixture(fixtures.MockPatchObject(
            placement_client, 'get_adapter', return_value=placement))
        return status.Checks()._check_placement()

    def test_answering_placement_is_success(self):
        placement = FakePlacement(200)
        result = self.check(placement)
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code)
        self.assertEqual([status._PROBE], placement.gets)

    def test_unreachable_placement_fails_naming_endpoint_and_section(self):
        result = self.check(FakePlacement(ks_exc.ConnectFailure('refused')))
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn(ENDPOINT, result.details)
        self.assertIn('[pcloud_placement]', result.details)
        self.assertIn('refused', result.details)

    def test_a_refused_user_fails_naming_section_and_status(self):
        result = self.check(FakePlacement(403))
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('answered 403 to [pcloud_placement]', result.details)

    def test_no_credentials_fails_naming_the_option(self):
        result = status.Checks()._check_placement()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('[pcloud_placement] auth_type is not set',
                      result.details)


class FreshnessCheckTests(_ConfiguredLedger):

    def setUp(self):
        super().setUp()
        self.conf.set_override('placement_mirror_interval', 60,
                               group='pcloud')

    def mirrored(self, seconds_ago):
        placement_sync.record_pass(
            self.context,
            timeutils.utcnow() - datetime.timedelta(seconds=seconds_ago))

    def check(self):
        return status.Checks()._check_freshness()

    def test_a_recent_pass_is_success(self):
        self.mirrored(2 * 60)
        self.assertEqual(upgradecheck.Code.SUCCESS, self.check().code)

    def test_a_pass_older_than_three_intervals_warns(self):
        self.mirrored(3 * 60 + 30)
        result = self.check()
        self.assertEqual(upgradecheck.Code.WARNING, result.code)
        self.assertIn('placement_mirror_interval (60 s)', result.details)

    def test_only_the_last_pass_counts(self):
        self.mirrored(3600)
        self.mirrored(10)
        self.assertEqual(upgradecheck.Code.SUCCESS, self.check().code)

    def test_no_pass_ever_warns(self):
        result = self.check()
        self.assertEqual(upgradecheck.Code.WARNING, result.code)
        self.assertIn('never mirrored', result.details)

    def test_a_mirror_turned_off_is_not_checked(self):
        self.conf.set_override('placement_mirror_interval', 0,
                               group='pcloud')
        result = self.check()
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code)
        self.assertIn('Not checked', result.details)

    def test_an_unreadable_ledger_fails(self):
        self.useFixture(fixtures.MockPatchObject(
            placement_sync, 'last_pass',
            side_effect=RuntimeError('no such table')))
        result = self.check()
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('no such table', result.details)

    def _mirror(self, placement):
        return mirror_mod.Mirror(placement, lambda: ((), ()))

    def test_a_mirror_pass_records_its_end(self):
        # MySQL's DATETIME keeps whole seconds.
        before = timeutils.utcnow().replace(microsecond=0)
        self._mirror(FakePlacement(200)).run(self.context)
        self.assertGreaterEqual(placement_sync.last_pass(self.context),
                                before)
        self.assertEqual(upgradecheck.Code.SUCCESS, self.check().code)

    def test_a_failed_mirror_pass_records_nothing(self):
        self.assertRaises(
            ks_exc.ConnectFailure,
            self._mirror(FakePlacement(ks_exc.ConnectFailure('down'))).run,
            self.context)
        self.assertIsNone(placement_sync.last_pass(self.context))
