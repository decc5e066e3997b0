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

"""Mirroring a real Placement into the ledger, over real HTTP."""

import datetime
import os
import subprocess
import sys
from unittest import mock

from keystoneauth1 import loading as ks_loading

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import placement_sync
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional import placement_service

SHARES = 'MISC_SHARES_VIA_AGGREGATE'


class PlacementSyncTests(base.LedgerTestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(placement_service.PlacementService())
        # Reach it exactly as an operator's config would.
        self.conf.register_opts(
            ks_loading.get_auth_plugin_conf_options('admin_token'),
            group='pcloud_placement')
        for name, value in (('auth_type', 'admin_token'),
                            ('endpoint', self.placement.url),
                            ('token', 'admin')):
            self.conf.set_override(name, value, group='pcloud_placement')
        p = self.placement
        self.cn1 = p.create_provider('cn1')
        self.numa0 = p.create_provider('cn1-numa0', parent=self.cn1)
        self.gpu = p.create_provider('cn1-numa0-gpu', parent=self.numa0)
        self.ss = p.create_provider('shared-disk')
        p.set_inventories(self.cn1, {
            'MEMORY_MB': {'total': 4096, 'reserved': 512,
                          'allocation_ratio': 1.5},
            'DISK_GB': {'total': 100, 'min_unit': 10, 'max_unit': 50,
                        'step_size': 10}})
        p.set_inventories(self.numa0, {'VCPU': {'total': 8,
                                                'allocation_ratio': 1.1}})
        p.set_inventories(self.gpu, {'CUSTOM_GPU': {'total': 2}})
        p.set_inventories(self.ss, {'DISK_GB': {'total': 1000}})
        p.set_traits(self.numa0, ['HW_NUMA_ROOT', 'CUSTOM_FAST'])
        p.set_traits(self.ss, [SHARES])
        p.set_aggregates(self.cn1, ['11111111-2222-3333-4444-555555555555'])
        p.set_aggregates(self.ss, ['11111111-2222-3333-4444-555555555555'])

    def _sync(self):
        forest = placement_client.read_forest(
            placement_client.get_adapter())
        return placement_sync.sync(self.context, forest)

    def _assert_mirrored(self):
        theirs = placement_client.read_forest(placement_client.get_adapter())
        ours = db_snapshots.load_forest(self.context)
        self.assertEqual(set(theirs.providers), set(ours.providers))
        for uuid, their in theirs.providers.items():
            our = ours[uuid]
            self.assertEqual(
                (their.name, their.parent_uuid, their.root_uuid,
                 their.inventories, their.traits, their.aggregates),
                (our.name, our.parent_uuid, our.root_uuid,
                 our.inventories, our.traits, our.aggregates))

    def test_first_sync_mirrors_trees_inventories_traits_aggregates(self):
        report = self._sync()
        self.assertEqual({self.cn1, self.numa0, self.gpu, self.ss},
                         set(report.created))
        self.assertEqual([], report.problems)
        self._assert_mirrored()
        self.assertEqual(
            Inventory(8, allocation_ratio=1.1),
            db_providers.get_inventories(self.context, self.numa0)['VCPU'])
        self.assertEqual(self.cn1, db_providers.get_provider(
            self.context, self.gpu)['root_provider_uuid'])

    def test_second_sync_changes_nothing(self):
        self._sync()
        generations = {p['uuid']: p['generation']
                       for p in db_providers.list_providers(self.context)}
        report = self._sync()
        self.assertFalse(report.changed)
        self.assertEqual([], report.problems)
        self.assertEqual(generations, {
            p['uuid']: p['generation']
            for p in db_providers.list_providers(self.context)})

    def test_changes_in_placement_are_followed(self):
        self._sync()
        self.placement.set_inventories(self.numa0, {'VCPU': {'total': 16}})
        self.placement.set_traits(self.numa0, ['HW_NUMA_ROOT'])
        self.placement.set_aggregates(self.cn1, [])
        cn2 = self.placement.create_provider('cn2')
        report = self._sync()
        self.assertEqual([cn2], report.created)
        self.assertEqual({self.numa0, self.cn1}, set(report.updated))
        self._assert_mirrored()

    def test_provider_gone_from_placement_is_dropped(self):
        self._sync()
        self.placement.delete_provider(self.gpu)
        report = self._sync()
        self.assertEqual([self.gpu], report.deleted)
        self._assert_mirrored()

    def test_provider_gone_with_live_claims_is_kept_and_reported(self):
        self._sync()
        tomorrow = datetime.datetime.utcnow() + datetime.timedelta(days=1)
        db_claims.claim(self.context, 'lease-1', {self.gpu: {'CUSTOM_GPU': 1}},
                        tomorrow, tomorrow + datetime.timedelta(hours=1))
        self.placement.delete_provider(self.gpu)
        report = self._sync()
        self.assertEqual([], report.deleted)
        self.assertEqual([self.gpu], [uuid for uuid, _ in report.problems])
        self.assertIn('live claims', report.problems[0][1])
        self.assertEqual({'CUSTOM_GPU': 1}, db_claims.get_usage(
            self.context, self.gpu))

    def test_inventory_shrinking_under_claims_is_reported_not_applied(self):
        self._sync()
        db_claims.claim(self.context, 'lease-1', {self.numa0: {'VCPU': 8}})
        self.placement.set_inventories(self.numa0, {'VCPU': {'total': 4}})
        report = self._sync()
        self.assertEqual([self.numa0], [uuid for uuid, _ in report.problems])
        self.assertEqual(8, db_providers.get_inventories(
            self.context, self.numa0)['VCPU'].total)

    def test_what_another_mirror_just_added_is_taken_as_it_is(self):
        # A second mirror (another blazar-manager, pcloud-manage) added
        # every provider between this one's read and its writes.
        self._sync()
        with mock.patch.object(db_providers, 'list_providers',
                               return_value=[]):
            report = self._sync()
        self.assertEqual([], report.created)
        self.assertEqual([], report.problems)
        self._assert_mirrored()

    def test_a_compute_made_again_takes_its_name_back(self):
        # nova-compute reinstalled: the same name under a new uuid.
        self._sync()
        self.placement.delete_provider(self.gpu)
        self.placement.delete_provider(self.numa0)
        self.placement.delete_provider(self.cn1)
        again = self.placement.create_provider('cn1')
        report = self._sync()
        self.assertEqual([again], report.created)
        self.assertEqual([], report.problems)
        self._assert_mirrored()

    def test_a_name_a_kept_provider_holds_is_reported_not_mirrored(self):
        self._sync()
        tomorrow = datetime.datetime.utcnow() + datetime.timedelta(days=1)
        db_claims.claim(self.context, 'lease-1', {self.ss: {'DISK_GB': 10}},
                        tomorrow, tomorrow + datetime.timedelta(hours=1))
        self.placement.delete_provider(self.ss)
        again = self.placement.create_provider('shared-disk')
        report = self._sync()
        self.assertEqual([self.ss, again],
                         [uuid for uuid, _ in report.problems])
        self.assertIn('already exists', report.problems[1][1])
        self.assertEqual([self.ss], [
            p['uuid'] for p in db_providers.list_providers(self.context)
            if p['name'] == 'shared-disk'])


class PlacementSyncCommand(base.TestCase):
    """pcloud-manage placement sync, as an operator runs it."""

    def test_command_syncs_and_is_idempotent(self):
        placement = self.useFixture(placement_service.PlacementService())
        cn = placement.create_provider('cn1')
        placement.set_inventories(cn, {'VCPU': {'total': 4}})
        tmp = self.useFixture(base.fixtures.TempDir()).path
        config = os.path.join(tmp, 'pcloud.conf')
        with open(config, 'w') as f:
            f.write('[pcloud_database]\nconnection = sqlite:///%s/l.db\n'
                    '[pcloud_placement]\nauth_type = admin_token\n'
                    'endpoint = %s\ntoken = admin\n' % (tmp, placement.url))

        def manage(*args):
            return subprocess.run(
                [sys.executable, '-m', 'pcloud_plugin.cmd.manage',
                 '--config-file', config, *args],
                capture_output=True, text=True, timeout=120)
        self.assertEqual(0, manage('db', 'upgrade').returncode)
        first = manage('placement', 'sync')
        self.assertEqual(0, first.returncode, first.stderr)
        self.assertIn('created: 1 %s' % cn, first.stdout)
        second = manage('placement', 'sync')
        self.assertEqual(0, second.returncode, second.stderr)
        self.assertIn('created: 0', second.stdout)
        self.assertIn('updated: 0', second.stdout)
