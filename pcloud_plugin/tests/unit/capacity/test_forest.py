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

from pcloud_plugin.capacity import forest
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.tests import base


class ProviderForestTests(base.TestCase):

    def setUp(self):
        super().setUp()
        # Children listed before their parents, roots given only through
        # parents: the forest must still find every tree.
        self.forest = forest.ProviderForest([
            forest.Provider('gpu', 'gpu', parent_uuid='numa'),
            forest.Provider('numa', 'numa', parent_uuid='cn1'),
            forest.Provider('cn2', 'cn2'),
            forest.Provider('cn1', 'cn1'),
        ])

    def test_tree_of_any_member_lists_the_tree_root_first(self):
        for uuid in ('cn1', 'numa', 'gpu'):
            tree = self.forest.tree_of(uuid)
            self.assertEqual('cn1', tree[0])
            self.assertEqual({'cn1', 'numa', 'gpu'}, set(tree))
        self.assertEqual(['cn2'], self.forest.tree_of('cn2'))

    def test_roots_filled_in_from_parents(self):
        self.assertEqual('cn1', self.forest['gpu'].root_uuid)
        self.assertEqual(['gpu', 'numa', 'cn1'], self.forest.ancestors('gpu'))
        self.assertEqual(['numa'], self.forest.children['cn1'])


class ProviderIndexTests(base.TestCase):

    def setUp(self):
        super().setUp()
        self.forest = forest.ProviderForest([
            forest.Provider('cn1', 'cn1', inventories={
                'VCPU': Inventory(8, allocation_ratio=2.0),
                'DISK_GB': Inventory(100, reserved=10)},
                usage={'VCPU': 3}, traits=frozenset(['B', 'A']),
                aggregates=frozenset(['agg'])),
            forest.Provider('numa', 'numa', parent_uuid='cn1',
                            inventories={'VCPU': Inventory(4)}),
            forest.Provider('ss', 'ss', inventories={
                'DISK_GB': Inventory(1000)},
                traits=frozenset([forest.SHARING_TRAIT]),
                aggregates=frozenset(['agg'])),
        ])

    def test_summary_in_placement_shape(self):
        self.assertEqual({
            'resources': {'VCPU': {'capacity': 16, 'used': 3},
                          'DISK_GB': {'capacity': 90, 'used': 0}},
            'traits': ['A', 'B'],
            'parent_provider_uuid': None,
            'root_provider_uuid': 'cn1'}, self.forest['cn1'].summary())
        self.assertEqual('cn1',
                         self.forest['numa'].summary()['parent_provider_uuid'])

    def test_indexes(self):
        self.assertEqual({'VCPU': ['cn1', 'numa'], 'DISK_GB': ['cn1', 'ss']},
                         {rc: [p.uuid for p in ps]
                          for rc, ps in self.forest.by_class.items()})
        self.assertEqual({'ss'}, self.forest.sharing)
        self.assertEqual({'agg': {'cn1', 'ss'}}, self.forest.members)
