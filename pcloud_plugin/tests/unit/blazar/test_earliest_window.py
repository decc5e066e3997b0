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
"""The pure parts of whole-host leases: the earliest window, host

qualification and trait syntax (no Blazar here: the unit tests share a
process with Nova's).
"""

import datetime

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity import host_windows
from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import exception
from pcloud_plugin.tests import base

T0 = datetime.datetime(2026, 12, 1, 8, 0)
HOUR = datetime.timedelta(hours=1)


def at(hours, minutes=0, seconds=0):
    return T0 + datetime.timedelta(hours=hours, minutes=minutes,
                                   seconds=seconds)


class EarliestWindowTests(base.TestCase):

    def test_free_hosts_give_not_before(self):
        busy = {'a': [], 'b': [], 'c': []}
        self.assertEqual((T0, at(2), ['a', 'b']),
                         host_windows.earliest_window(busy, 2, 2 * HOUR, T0))

    def test_waits_for_the_first_end_that_frees_enough_hosts(self):
        busy = {'a': [(at(0), at(3))],
                'b': [(at(1), at(5))],
                'c': [(at(0), at(2)), (at(6), at(8))]}
        # One host: c frees at 2 and stays free until 6.
        self.assertEqual((at(2), at(4), ['c']),
                         host_windows.earliest_window(busy, 1, 2 * HOUR, T0))
        # Two for two hours: a and c from 3 (c is busy again at 6).
        self.assertEqual((at(3), at(5), ['a', 'c']),
                         host_windows.earliest_window(busy, 2, 2 * HOUR, T0))
        # Two for four hours: c's gap is too short; a and b from 5... but
        # c is busy 6-8, a and b are free from 5 on.
        self.assertEqual((at(5), at(9), ['a', 'b']),
                         host_windows.earliest_window(busy, 2, 4 * HOUR, T0))
        # All three for four hours: only after c's second claim.
        self.assertEqual((at(8), at(12), ['a', 'b', 'c']),
                         host_windows.earliest_window(busy, 3, 4 * HOUR, T0))

    def test_touching_windows_do_not_overlap(self):
        busy = {'a': [(at(0), at(1)), (at(2), at(3))]}
        self.assertEqual((at(1), at(2), ['a']),
                         host_windows.earliest_window(busy, 1, HOUR, T0))

    def test_open_ended_claims_and_too_few_hosts(self):
        busy = {'a': [(at(1), window_mod.FOREVER)], 'b': []}
        self.assertEqual((T0, at(1), ['a', 'b']),
                         host_windows.earliest_window(busy, 2, HOUR, T0))
        self.assertIsNone(host_windows.earliest_window(busy, 2, 2 * HOUR,
                                                       T0))
        self.assertIsNone(host_windows.earliest_window(busy, 3, HOUR, T0))

    def test_starts_on_whole_minutes_and_respects_latest_start(self):
        busy = {'a': [(T0, at(1, 0, 30))]}
        self.assertEqual((at(1, 1), at(2, 1), ['a']),
                         host_windows.earliest_window(busy, 1, HOUR,
                                                      at(0, 0, 10)))
        self.assertEqual(at(1, 0, 30), host_windows.earliest_window(
            busy, 1, HOUR, at(0, 0, 10), step=None)[0])
        self.assertIsNone(host_windows.earliest_window(
            busy, 1, HOUR, T0, latest_start=at(1)))

    def test_order_chooses_among_free_hosts(self):
        busy = {'a': [], 'b': [], 'c': []}
        self.assertEqual(['c', 'a'], host_windows.earliest_window(
            busy, 2, HOUR, T0, order=['c', 'a', 'b'])[2])

    def test_claims_before_not_before_are_ignored(self):
        busy = {'a': [(at(-5), at(-1))]}
        self.assertEqual(T0, host_windows.earliest_window(
            busy, 1, HOUR, T0)[0])

    def test_bad_arguments(self):
        self.assertRaises(exception.Invalid, host_windows.earliest_window,
                          {'a': []}, 0, HOUR, T0)
        self.assertRaises(exception.Invalid, host_windows.earliest_window,
                          {'a': []}, 1, datetime.timedelta(0), T0)


def _forest():
    inv = inv_mod.Inventory
    return forest_mod.ProviderForest([
        forest_mod.Provider('h1', 'h1', inventories={'VCPU': inv(16)},
                            traits=frozenset(['HW_CPU_X86_AVX2'])),
        forest_mod.Provider('h2', 'h2', inventories={'DISK_GB': inv(100)}),
        forest_mod.Provider('h2n0', 'h2n0', parent_uuid='h2',
                            inventories={'VCPU': inv(8)},
                            traits=frozenset(['HW_NUMA_ROOT'])),
        forest_mod.Provider('h3', 'h3'),  # no inventory at all
    ])


class QualifyingTests(base.TestCase):

    def test_traits_of_the_whole_tree_count(self):
        forest = _forest()
        roots = ['h3', 'h2', 'h1', 'h2n0', 'nowhere']
        self.assertEqual(['h1', 'h2'],
                         host_windows.qualifying(forest, roots))
        required, forbidden = host_windows.parse_traits('HW_NUMA_ROOT')
        self.assertEqual(['h2'], host_windows.qualifying(
            forest, roots, required, forbidden))
        required, forbidden = host_windows.parse_traits('!HW_NUMA_ROOT')
        self.assertEqual(['h1'], host_windows.qualifying(
            forest, roots, required, forbidden))
        required, forbidden = host_windows.parse_traits(
            'in:HW_NUMA_ROOT,HW_CPU_X86_AVX2')
        self.assertEqual(['h1', 'h2'], host_windows.qualifying(
            forest, roots, required, forbidden))

    def test_capacity_is_every_class_of_the_tree(self):
        self.assertEqual({('h2', 'DISK_GB'): 100, ('h2n0', 'VCPU'): 8},
                         host_windows.capacity(_forest(), 'h2'))

    def test_trait_syntax(self):
        self.assertEqual(([frozenset(['HW_CPU_X86_AVX2'])],
                          {'CUSTOM_SLOW'}),
                         host_windows.parse_traits(
                             'HW_CPU_X86_AVX2,!CUSTOM_SLOW'))
        self.assertEqual(([frozenset(['CUSTOM_A', 'CUSTOM_B']),
                           frozenset(['HW_NUMA_ROOT'])], set()),
                         host_windows.parse_traits(
                             ['in:CUSTOM_A,CUSTOM_B', 'HW_NUMA_ROOT']))
        for bad in ('NO_SUCH_TRAIT', 'CUSTOM_A,,CUSTOM_B',
                    'in:CUSTOM_A,!CUSTOM_B', 'CUSTOM_A,!CUSTOM_A', [3]):
            self.assertRaises(exception.Invalid, host_windows.parse_traits,
                              bad)
