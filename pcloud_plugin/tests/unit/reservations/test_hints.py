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
"""The hints answer: every term of each type described, no other."""

from pcloud_plugin.reservations import hints
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import slots
from pcloud_plugin.reservations import terms
from pcloud_plugin.tests import base


class _Agg:
    def __init__(self, name, hosts, metadata=None, zone=None):
        self.name, self.hosts = name, hosts
        self.metadata = metadata or {}
        self.availability_zone = zone


class HintsTests(base.TestCase):

    def test_each_type_describes_exactly_its_terms(self):
        # The region is a term of both (api.lease_guard honours it).
        self.assertEqual(set(host_requests.PARAMS) | {terms.REGION},
                         set(hints.HOST_TERMS))
        self.assertEqual(set(slots.PARAMS) | {terms.REGION},
                         set(hints.INSTANCE_TERMS))

    def test_flavors_zones_pclouds_traits_and_limits(self):
        pool = _Agg('pool', ['cn2', 'cn1'])
        pools = host_requests.Pools([pool, _Agg('z', ['cn2'], zone='az2')],
                                    'nova')
        pools.pools['big'] = pool
        found = hints.hints(pools, [{'id': 'big', 'units': 4},
                                    {'id': 'empty', 'units': 1}],
                            [{'id': 'p2', 'name': 'theirs', 'own': False},
                             {'id': 'p1', 'name': 'mine'}],
                            {'CUSTOM_B', 'CUSTOM_A'}, {'x': -1})
        self.assertEqual([
            {'id': 'big', 'units': 4, 'hosts': 2,
             'availability_zones': ['az2', 'nova']},
            {'id': 'empty', 'units': 1, 'hosts': 0,
             'availability_zones': []}],
            found['pcloud:host']['host_flavors'])
        self.assertEqual(['az2', 'nova'], found['availability_zones'])
        self.assertEqual([('p1', True), ('p2', False)], [
            (p['id'], p['own']) for p in found['pcloud:host']['pclouds']])
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], found['traits'])
        self.assertEqual({'x': -1}, found['limits'])
        self.assertEqual({'takes': hints.INSTANCE_TERMS['affinity'],
                          'required': False, 'default': None},
                         found['virtual:instance']['terms']['affinity'])
        self.assertTrue(found['virtual:instance']['terms']['vcpus'][
            'required'])
