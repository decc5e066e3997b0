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

"""pcloud-status upgrade check: Blazar's hosts and ours kept apart."""

import types
from unittest import mock

import fixtures
from oslo_upgradecheck import upgradecheck

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.cmd import status
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.tests import base


def _agg(name, hosts, **metadata):
    return types.SimpleNamespace(name=name, hosts=list(hosts),
                                 metadata=metadata)


class PartitionCheckTests(base.LedgerTestCase):

    def check(self, aggregates):
        nova = mock.Mock()
        nova.aggregates.list.return_value = aggregates
        self.useFixture(fixtures.MockPatchObject(
            nova_client, 'get_client', return_value=nova))
        return status.Checks()._check_partition()

    def test_apart_is_success(self):
        result = self.check([
            _agg('freepool', ['b1']),
            _agg(codec.pool_name('big'), ['p1'],
                 **{codec.TYPE: codec.TYPE_POOL})])
        self.assertEqual(upgradecheck.Code.SUCCESS, result.code)

    def test_a_host_in_both_fails_naming_it(self):
        result = self.check([
            _agg('freepool', ['b1', 'p1']),
            _agg(codec.pool_name('big'), ['p1'],
                 **{codec.TYPE: codec.TYPE_POOL})])
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('p1', result.details)

    def test_a_blazar_host_our_reservations_hold_fails(self):
        db_providers.create_provider(self.context, 'rp-b1', 'b1')
        db_providers.set_inventories(self.context, 'rp-b1',
                                     {'VCPU': Inventory(4)})
        db_claims.claim(self.context, 'slots', {'rp-b1': {'VCPU': 1}})
        result = self.check([_agg('freepool', ['b1'])])
        self.assertEqual(upgradecheck.Code.FAILURE, result.code)
        self.assertIn('b1 (claimed in the ledger', result.details)

    def test_no_nova_is_a_warning(self):
        self.useFixture(fixtures.MockPatchObject(
            nova_client, 'get_client', side_effect=RuntimeError('no auth')))
        result = status.Checks()._check_partition()
        self.assertEqual(upgradecheck.Code.WARNING, result.code)
