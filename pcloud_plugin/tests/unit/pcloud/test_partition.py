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

"""Whose hosts are whose: Blazar's physical:host plugin's, or ours."""

import types

from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import partition
from pcloud_plugin.tests import base


def _agg(name, hosts, **metadata):
    return types.SimpleNamespace(name=name, hosts=list(hosts),
                                 metadata=metadata)


AGGREGATES = [
    _agg('freepool', ['b1', 'both']),
    # A host Blazar's plugin leased: moved to a reservation pool.
    _agg('7c1e', ['b2'], **{'blazar:owner': 'project'}),
    _agg(codec.pool_name('big'), ['p1', 'both'],
         **{codec.TYPE: codec.TYPE_POOL, codec.FLAVOR_ID: 'big',
            codec.NODE_PREFIX + 'p1': 'p1.example.com'}),
    _agg(codec.pcloud_name('x'), ['c1'], **{codec.TYPE: codec.TYPE_PCLOUD}),
    _agg('az1', ['free'], availability_zone='az1'),
]


class PartitionTests(base.TestCase):

    def test_blazars_are_its_freepool_and_reservation_pools(self):
        self.assertEqual({'b1', 'b2', 'both'},
                         partition.blazar_hosts(AGGREGATES, 'freepool'))
        # Another freepool name (blazar.conf [nova]) is another pool.
        self.assertEqual({'b2'}, partition.blazar_hosts(AGGREGATES, 'fp'))

    def test_ours_are_pools_and_pclouds_by_both_names(self):
        self.assertEqual({'p1', 'p1.example.com', 'both', 'c1'},
                         partition.our_hosts(AGGREGATES))

    def test_overlap(self):
        self.assertEqual(['both'],
                         partition.overlap(AGGREGATES, 'freepool'))
        self.assertEqual([], partition.overlap(AGGREGATES[1:], 'freepool'))
