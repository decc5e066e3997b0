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
