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
"""``openstack pcloud offering list`` and ``pcloud allocation list``,

through the shell of test_pcloud_osc, over a ledger that knows the pool's
hosts (cn1.example.com ...: 8 VCPU, 16 GB, 100 GB each).
"""

import datetime

from oslo_utils import timeutils

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.tests.functional.blazar import pcloud_api_base as api_base
from pcloud_plugin.tests.functional.blazar import test_pcloud_osc


class OfferingOSCTest(test_pcloud_osc.OSCTest):
    # The shell of OSCTest, not its tests (they run there).
    locals().update((name, None) for name in dir(test_pcloud_osc.OSCTest)
                    if name.startswith('test_'))

    def setUp(self):
        super().setUp()
        self.ctx = context_mod.get_admin_context()
        for host in api_base.POOL_HOSTS + (api_base.SPARE_HOST,):
            node = host + '.example.com'
            db_providers.create_provider(self.ctx, 'rp-' + host, node)
            db_providers.set_inventories(self.ctx, 'rp-' + host, {
                'VCPU': Inventory(8), 'MEMORY_MB': Inventory(16384),
                'DISK_GB': Inventory(100)})
        self.make_pool()
        self.t0 = (timeutils.utcnow() + datetime.timedelta(days=1)).replace(
            second=0, microsecond=0)

    def at(self, minutes, fmt='%Y-%m-%dT%H:%M:%S.000000'):
        return (self.t0 + datetime.timedelta(minutes=minutes)).strftime(fmt)

    def test_offering_list(self):
        # cn1 is taken for the first hour: three hosts from then on.
        db_claims.claim(self.ctx, 'someone', {'rp-cn1': {'VCPU': 1}},
                        self.t0, self.t0 + datetime.timedelta(hours=1))
        found = self.json('alice-member', 'pcloud', 'offering', 'list',
                          '--host-flavor', 'big', '--amount', '3',
                          '--duration', '2h', '--start',
                          self.at(0, '%Y-%m-%d %H:%M'))
        self.assertEqual([{'Start': self.at(60), 'End': self.at(180),
                           'Amount': 3}], found)
        # Slots go only to the host in no pool.
        found = self.json('alice-member', 'pcloud', 'offering', 'list',
                          '--vcpus', '4', '--memory-mb', '1024',
                          '--amount', '2', '--duration', '30', '--count',
                          '1', '--start', self.at(0, '%Y-%m-%d %H:%M'))
        self.assertEqual([{'Start': self.at(0), 'End': self.at(30),
                           'Amount': 2}], found)
        _, _, err = self.openstack('alice-member', 'pcloud', 'offering',
                                   'list', '--vcpus', '4', '--amount', '0',
                                   '--memory-mb', '1', '--duration', '1h',
                                   expect=1)
        self.assertIn('amount', err)
        _, _, err = self.openstack('alice-member', 'pcloud', 'offering',
                                   'list', '--host-flavor', 'tiny',
                                   '--duration', '1h', expect=1)
        self.assertIn('HTTP 404', err)
        _, _, err = self.openstack('alice-reader', 'pcloud', 'offering',
                                   'list', '--host-flavor', 'big',
                                   '--duration', '1h', expect=1)
        self.assertIn('HTTP 403', err)

    def test_allocation_list(self):
        pcloud = self.make_pcloud()
        self.allocate(pcloud)
        rows = self.json('admin', 'pcloud', 'allocation', 'list')
        self.assertEqual(1, len(rows))
        (row,) = rows
        self.assertEqual(('pcloud', pcloud, api_base.ALICE, None),
                         (row['Type'], row['ID'], row['Project ID'],
                          row['End']))
        self.assertTrue(row['Host'].endswith('.example.com'))
        self.assertEqual([], self.json(
            'admin', 'pcloud', 'allocation', 'list', '--host', 'cn9'))
        _, _, err = self.openstack('alice-member', 'pcloud', 'allocation',
                                   'list', expect=1)
        self.assertIn('HTTP 403', err)
