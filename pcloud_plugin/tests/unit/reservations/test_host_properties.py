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
"""Blazar's resource_properties over a host's facts: parsed, evaluated,

and honoured by placing, on the engine's forest and on the slot index
alike (functional.blazar.test_blazar_properties holds it against
Blazar's own query).
"""

import datetime
import json
import random

from oslotest import base as oslo_base

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import slots
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.blazar import test_slot_index
from pcloud_plugin.tests.unit.reservations import test_slots

T0 = datetime.datetime(2030, 1, 1)
SLOT = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def facts(name='cn1', vcpus=8, memory_mb=4096, local_gb=100,
          cpu_arch='x86_64', traits=()):
    return {'hypervisor_hostname': name, 'vcpus': vcpus,
            'memory_mb': memory_mb, 'local_gb': local_gb,
            'cpu_arch': cpu_arch, 'traits': frozenset(traits)}


def matches(expr, host):
    """Whether expr (a trait-free expression) matches a host's facts."""
    return host_properties.parse(expr).hosts_matching.matches(host)


class ParseTests(oslo_base.BaseTestCase):

    def test_the_empty_forms_mean_any_host(self):
        for empty in (None, '', '[]', [], ' [ ] ', '["and"]'):
            self.assertEqual(host_properties.ANY_HOST,
                             host_properties.parse(empty), repr(empty))

    def test_every_operator_on_a_number(self):
        host = facts(vcpus=8)
        for op, value, expected in (
                ('=', '8', True), ('==', '8', True), ('=', '9', False),
                ('!=', '8', False), ('!=', '9', True),
                ('<', '9', True), ('<', '8', False),
                ('<=', '8', True), ('<=', '7', False),
                ('>', '7', True), ('>', '8', False),
                ('>=', '8', True), ('>=', '9', False)):
            self.assertEqual(expected, matches([op, '$vcpus', value], host),
                             '%s %s' % (op, value))

    def test_numbers_compare_as_numbers_names_as_strings(self):
        # As Blazar's integer columns: 10 > 9, though "10" < "9".
        self.assertTrue(matches(['>', '$memory_mb', '900'],
                                facts(memory_mb=1024)))
        self.assertTrue(matches(['<', '$local_gb', '99.5'],
                                facts(local_gb=99)))
        self.assertTrue(matches(['>=', '$vcpus', 8], facts(vcpus=8)))
        # Host names compare as its string column does.
        self.assertTrue(matches(['<', '$hypervisor_hostname', 'cn9'],
                                facts(name='cn10')))
        self.assertTrue(matches(['=', '$hypervisor_hostname', 'cn10'],
                                facts(name='cn10')))
        self.assertFalse(matches(['=', '$hypervisor_hostname', 'CN10'],
                                 facts(name='cn10')))

    def test_cpu_arch_and_a_host_without_it(self):
        self.assertTrue(matches('["=", "$cpu_arch", "aarch64"]',
                                facts(cpu_arch='aarch64')))
        # No arch known: no comparison of it matches, as a host without
        # an extra capability in Blazar.
        for op in ('=', '!=', '<', '>='):
            self.assertFalse(matches([op, '$cpu_arch', 'x86_64'],
                                     facts(cpu_arch=None)), op)

    def test_a_json_string_or_a_list(self):
        expr = ['or', ['=', '$hypervisor_hostname', 'cn1'],
                ['and', ['>=', '$vcpus', '16'], ['!=', '$cpu_arch', 'ppc']]]
        for host, expected in ((facts(name='cn1', vcpus=2), True),
                               (facts(name='cn2', vcpus=16), True),
                               (facts(name='cn2', vcpus=8), False),
                               (facts(name='cn2', vcpus=32,
                                      cpu_arch='ppc'), False)):
            self.assertEqual(expected, matches(expr, host))
            self.assertEqual(expected, matches(json.dumps(expr), host))
        self.assertEqual(json.dumps(expr), str(
            host_properties.parse(expr).hosts_matching))

    def test_nested_and_or(self):
        expr = ['and', ['or', ['=', '$vcpus', '4'], ['=', '$vcpus', '8']],
                ['or', ['and', ['>', '$memory_mb', '1000'],
                        ['<', '$memory_mb', '5000']],
                 ['=', '$HW_CPU_X86_AVX2', 'true']]]
        self.assertTrue(matches(expr, facts(vcpus=8, memory_mb=4096)))
        self.assertFalse(matches(expr, facts(vcpus=6, memory_mb=4096)))
        self.assertFalse(matches(expr, facts(vcpus=4, memory_mb=8192)))
        self.assertTrue(matches(expr, facts(vcpus=4, memory_mb=8192,
                                            traits=['HW_CPU_X86_AVX2'])))

    def test_an_and_of_traits_stays_placement_traits(self):
        found = host_properties.parse(
            '["and", ["=", "$HW_CPU_X86_AVX2", "true"], '
            '["and", ["==", "$CUSTOM_SLOW", false]], '
            '["!=", "$CUSTOM_OLD", "yes"]]')
        self.assertEqual(({'HW_CPU_X86_AVX2'}, {'CUSTOM_SLOW', 'CUSTOM_OLD'},
                          None), found)
        self.assertEqual(({'CUSTOM_X'}, frozenset(), None),
                         host_properties.parse(['=', '$CUSTOM_X', 'true']))

    def test_traits_beside_facts_are_tested_on_the_host(self):
        found = host_properties.parse(
            ['and', ['=', '$CUSTOM_FAST', 'true'], ['>=', '$vcpus', '8']])
        self.assertEqual((frozenset(), frozenset()), found[:2])
        self.assertTrue(found.hosts_matching.matches(
            facts(traits=['CUSTOM_FAST'])))
        self.assertFalse(found.hosts_matching.matches(facts()))
        either = ['or', ['=', '$CUSTOM_FAST', 'true'],
                  ['!=', '$CUSTOM_SLOW', 'false']]
        self.assertTrue(matches(either, facts(traits=['CUSTOM_SLOW'])))
        self.assertFalse(matches(either, facts()))

    def test_bad_forms_are_refused_naming_resource_properties(self):
        for bad, why in (
                ('nope', 'not JSON'),
                ('[' * 5000 + ']' * 5000, 'resource_properties'),
                ('{"a": 1}', 'a list like'),
                ('"=", "$vcpus", "8"', 'not JSON'),
                ('["~", "$vcpus", "8"]', '"~" is no operator'),
                ('[["=", "$vcpus", "8"]]', 'is no operator'),
                ('["=", "$vcpus"]', 'a comparison is'),
                ('["=", "$vcpus", "8", "9"]', 'a comparison is'),
                ('["=", "vcpus", "8"]', '"vcpus" is no "$name"'),
                ('["=", "$vcpus", "eight"]', '$vcpus is a number'),
                ('["=", "$vcpus", null]', '$vcpus is a number'),
                ('["=", "$vcpus", "NaN"]', '$vcpus is a number'),
                ('["=", "$vcpus", true]', '$vcpus is a number'),
                ('["=", "$hypervisor_hostname", ""]', 'non-empty string'),
                ('["=", "$hypervisor_hostname", 7]', 'non-empty string'),
                ('["<", "$CUSTOM_X", "true"]', 'compare it with = or !='),
                ('["=", "$CUSTOM_X", "maybe"]', 'true or false'),
                ('["or"]', '"or" of nothing'),
                ('["and", ["=", "$vcpus", "8"], "x"]', 'a list like'),
                ('["and", ["=", "$CUSTOM_X", "true"], '
                 '["=", "$CUSTOM_X", "false"]]',
                 'both requires and forbids CUSTOM_X'),
                ('["and"' + ', ["and"' * 20 + ']' * 21,
                 'nested deeper than')):
            e = self.assertRaises(exception.InvalidTerm,
                                  host_properties.parse, bad)
            self.assertIn('resource_properties (', e.message, bad[:40])
            self.assertIn(why, e.message, bad[:40])

    def test_an_unknown_name_is_refused_listing_the_facts(self):
        for name in ('$ram', '$service_name', '$NOT_A_TRAIT', '$'):
            e = self.assertRaises(exception.InvalidTerm,
                                  host_properties.parse,
                                  ['>=', name, '1'])
            self.assertIn('no host fact %s;' % name, e.message)
            self.assertIn('$hypervisor_hostname, $vcpus, $memory_mb, '
                          '$local_gb, $cpu_arch or a Placement trait',
                          e.message)


class FactsTests(oslo_base.BaseTestCase):

    def test_a_tree_adds_up_its_own_providers(self):
        forest = forest_mod.ProviderForest([
            test_slots.host('cn1', vcpu=None, memory=1024, disk=50,
                            traits=['HW_ARCH_AARCH64', 'CUSTOM_A']),
            test_slots.host('cn1-numa0', vcpu=4, memory=2048, disk=None,
                            parent='cn1', traits=['HW_NUMA_ROOT']),
            test_slots.host('cn1-numa1', vcpu=Inventory(4, reserved=2,
                                                        allocation_ratio=4),
                            memory=2048, disk=None, parent='cn1'),
            test_slots.host('ss', vcpu=None, memory=None, disk=1000,
                            traits=[test_slots.SHARES])])
        self.assertEqual(
            {'hypervisor_hostname': 'cn1', 'vcpus': 8, 'memory_mb': 5120,
             'local_gb': 50, 'cpu_arch': 'aarch64',
             'traits': {'HW_ARCH_AARCH64', 'CUSTOM_A', 'HW_NUMA_ROOT'}},
            host_properties.facts(forest.trees['cn1']))
        # What a sharing provider offers is no host's own.
        self.assertEqual((0, 0, None), tuple(
            host_properties.facts(forest.trees['ss'])[k]
            for k in ('vcpus', 'local_gb', 'cpu_arch')))


def _hosts():
    """Hosts of several sizes, names and arches."""
    host = test_slots.host
    return [host('cn1', vcpu=4), host('cn2', vcpu=8),
            host('cn10', vcpu=16, traits=['HW_ARCH_X86_64']),
            host('big', vcpu=64, traits=['HW_ARCH_AARCH64'])]


class PlacingTests(oslo_base.BaseTestCase):

    def _request(self, expr, amount, **kwargs):
        found = host_properties.parse(expr)
        return slots.SlotRequest(
            SLOT, amount, required=found.required,
            forbidden=found.forbidden,
            hosts_matching=found.hosts_matching, **kwargs)

    def test_slots_go_only_to_matching_hosts(self):
        forest = forest_mod.ProviderForest(_hosts())
        expr = ['or', ['=', '$hypervisor_hostname', 'cn1'],
                ['>=', '$vcpus', '16']]
        plan = slots.place(forest, self._request(expr, 3, affinity=False))
        self.assertEqual({'cn1': 1, 'cn10': 1, 'big': 1}, plan.hosts)
        self.assertRaises(slots.SlotsUnavailable, slots.place, forest,
                          self._request(expr, 4, affinity=False))
        plan = slots.place(forest, self._request(
            ['=', '$cpu_arch', 'aarch64'], 5))
        self.assertEqual({'big': 5}, plan.hosts)

    def test_none_matching_is_unavailable_and_says_so(self):
        forest = forest_mod.ProviderForest(_hosts())
        request = self._request(['>', '$vcpus', '64'], 1)
        e = self.assertRaises(slots.SlotsUnavailable, slots.place, forest,
                              request)
        self.assertEqual(0, e.kwargs['placed'])
        self.assertIn('on hosts of resource_properties [">", "$vcpus", '
                      '"64"]', request.describe())
        # Nothing is free on the hosts it may use.
        short = slots.slot_shortage(forest, request)
        self.assertEqual((0, 0, frozenset()),
                         (short.largest, short.fits, short.providers))

    def test_shortage_counts_only_matching_hosts(self):
        forest = forest_mod.ProviderForest(_hosts())
        request = self._request(['<=', '$vcpus', '8'], 100)
        short = slots.slot_shortage(forest, request)
        # 12 VCPU free on cn1 and cn2 together: room for 12 of 100 slots.
        self.assertEqual(('VCPU', 12, 100, {'cn1', 'cn2'}),
                         (short.rc, short.fits, short.amount,
                          short.providers))

    def test_a_tree_matches_by_its_totals(self):
        # cn2's VCPU are its NUMA nodes': 8 in all.
        host = test_slots.host
        forest = forest_mod.ProviderForest([
            host('cn1', vcpu=4),
            host('cn2', vcpu=None),
            host('cn2-n0', vcpu=4, memory=None, disk=None, parent='cn2'),
            host('cn2-n1', vcpu=4, memory=None, disk=None, parent='cn2')])
        plan = slots.place(forest, self._request(
            ['=', '$vcpus', '8'], 2, affinity=True))
        self.assertEqual({'cn2': 2}, plan.hosts)


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class IndexedPlacingTests(base.LedgerTestCase):
    """The slot index drops the hosts an expression does not match, as

    the engine does: the same plans, on random ledgers.
    """

    EXPRESSIONS = (
        ['>=', '$vcpus', '8'],
        ['or', ['=', '$hypervisor_hostname', 'cn01'], ['<', '$vcpus', '4']],
        ['and', ['=', '$cpu_arch', 'x86_64'], ['>', '$memory_mb', '4096']],
        ['!=', '$hypervisor_hostname', 'cn02'],
        ['or', ['=', '$CUSTOM_FAST', 'true'], ['=', '$local_gb', '40']],
        # memory_mb counts a child's too.
        ['>=', '$memory_mb', '8192'],
        ['>', '$vcpus', '1000'],
    )

    def _ledger(self, rng, hosts):
        for n in range(hosts):
            uuid = 'host-%d' % n
            db_providers.create_provider(self.context, uuid, 'cn%02d' % n)
            db_providers.set_inventories(self.context, uuid, {
                'VCPU': Inventory(rng.choice((2, 4, 8, 16))),
                'MEMORY_MB': Inventory(rng.choice((4096, 8192))),
                'DISK_GB': Inventory(rng.choice((40, 100)))})
            db_providers.set_traits(self.context, uuid, rng.sample(
                ['CUSTOM_FAST', 'HW_ARCH_X86_64'], rng.randint(0, 2)))
            if rng.random() < 0.3:
                # A child of a class slots do not take here.
                child = uuid + '-child'
                db_providers.create_provider(self.context, child,
                                             'cn%02d-r' % n,
                                             parent_uuid=uuid)
                db_providers.set_inventories(self.context, child, {
                    'MEMORY_MB': Inventory(4096)})

    def test_the_index_places_as_the_engine_does(self):
        rng = random.Random(5)
        self._ledger(rng, 8)
        index = db_snapshots.load_slot_index(self.context)
        forest = db_snapshots.load_forest(self.context, hours(0), hours(1))
        compared = 0
        for expr in self.EXPRESSIONS:
            for affinity in (True, False, None):
                for amount in (1, 3, 9):
                    found = host_properties.parse(expr)
                    request = slots.SlotRequest(
                        {'VCPU': 1, 'DISK_GB': 1}, amount,
                        affinity=affinity,
                        hosts_matching=found.hosts_matching)
                    fast = self._result_of(lambda: slots.place_indexed(
                        index, request, hours(0), hours(1)))
                    engine = self._result_of(
                        lambda: slots.place(forest, request))
                    self.assertEqual(engine, fast, request.describe())
                    compared += fast[0] != 'refused'
        # Some fit, some do not.
        self.assertTrue(0 < compared < 7 * 3 * 3, compared)

    def test_the_index_counts_only_matching_hosts(self):
        self._ledger(random.Random(6), 4)
        index = db_snapshots.load_slot_index(self.context)
        found = host_properties.parse(
            ['or', ['=', '$hypervisor_hostname', 'cn01'],
             ['=', '$hypervisor_hostname', 'cn03']])
        counts = index.counts(slots.SlotRequest(
            {'VCPU': 1}, 1, hosts_matching=found.hosts_matching),
            hours(0), hours(1))
        self.assertEqual(['cn01', 'cn03'], sorted(
            index.names[i] for i in counts.order()))

    def test_the_index_sees_traits_change_but_not_claims(self):
        self._ledger(random.Random(7), 3)
        found = host_properties.parse(
            ['or', ['=', '$CUSTOM_NEW', 'true'], ['>', '$vcpus', '1000']])
        request = slots.SlotRequest({'VCPU': 1}, 1,
                                    hosts_matching=found.hosts_matching)

        def hosts():
            index = db_snapshots.load_slot_index(self.context)
            counts = index.counts(request, hours(0), hours(1))
            return index, [index.names[i] for i in counts.order()]

        before, matching = hosts()
        self.assertEqual([], matching)
        db_providers.set_traits(self.context, 'host-1', ['CUSTOM_NEW'])
        index, matching = hosts()
        self.assertEqual(['cn01'], matching)
        # A claim moves no host's facts: the index keeps them.
        db_claims.claim(self.context, 'c-1', {'host-1': {'VCPU': 1}},
                        hours(0), hours(1))
        claimed, matching = hosts()
        self.assertEqual(['cn01'], matching)
        self.assertIsNot(index, claimed)
        self.assertIs(index._host_columns, claimed._host_columns)
        self.assertIsNot(before._host_columns, index._host_columns)

    _result_of = staticmethod(
        test_slot_index.IndexedPlacementTests._result_of)
