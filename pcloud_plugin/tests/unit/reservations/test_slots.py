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
"""Where a reservation's slots go: affinity, packing, trees, sharing."""

from oslotest import base

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import exception
from pcloud_plugin.reservations import slots

SHARES = 'MISC_SHARES_VIA_AGGREGATE'
SLOT = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}


def host(name, vcpu=8, memory=4096, disk=100, usage=None, parent=None,
         traits=(), aggregates=(), **inventories):
    """A provider whose uuid and name are ``name``.

    vcpu=None (etc.) leaves that class out; an Inventory is used as is.
    """
    invs = {}
    for rc, value in (('VCPU', vcpu), ('MEMORY_MB', memory),
                      ('DISK_GB', disk)):
        if value is not None:
            invs[rc] = value if isinstance(value, Inventory) \
                else Inventory(value)
    invs.update(inventories)
    return forest_mod.Provider(
        uuid=name, name=name, parent_uuid=parent, usage=dict(usage or {}),
        inventories=invs, traits=frozenset(traits),
        aggregates=frozenset(aggregates))


def place(providers, amount, affinity=None, slot=SLOT, **kwargs):
    request_kwargs = {k: kwargs.pop(k) for k in list(kwargs)
                      if k in ('required', 'forbidden', 'excluded_hosts',
                               'forbidden_aggregates', 'member_of')}
    request = slots.SlotRequest(slot, amount, affinity=affinity,
                                **request_kwargs)
    return slots.place(forest_mod.ProviderForest(providers), request,
                       **kwargs)


class PackingTests(base.BaseTestCase):

    def test_none_fills_the_busy_host_before_empty_ones(self):
        plan = place([host('a'), host('b', usage={'VCPU': 2}), host('c')],
                     3)
        # b is in use already: its 3 free slots are taken, a and c stay
        # whole.
        self.assertEqual({'b': 3}, plan.hosts)

    def test_none_opens_the_tightest_empty_host_that_takes_the_rest(self):
        plan = place([host('big', vcpu=32, memory=16384),
                      host('small', vcpu=6, memory=4096),
                      host('busy', usage={'VCPU': 6})], 4)
        # busy takes 1; 3 are left: small (3 slots) takes them, big stays
        # whole.
        self.assertEqual({'busy': 1, 'small': 3}, plan.hosts)

    def test_none_takes_the_roomiest_empty_host_when_none_takes_all(self):
        plan = place([host('a', vcpu=4), host('b', vcpu=8),
                      host('c', vcpu=6)], 6)
        # b (4 slots) first; then a, the tightest that takes the last 2.
        self.assertEqual({'b': 4, 'a': 2}, plan.hosts)

    def test_none_refuses_what_does_not_fit_and_says_how_many_did(self):
        e = self.assertRaises(slots.SlotsUnavailable, place,
                              [host('a'), host('b')], 9)
        self.assertEqual(8, e.kwargs['placed'])

    def test_affinity_true_puts_every_slot_on_one_host(self):
        plan = place([host('a', vcpu=16, memory=16384),
                      host('b', vcpu=16, memory=16384,
                           usage={'VCPU': 4})], 5, affinity=True)
        self.assertEqual({'b': 5}, plan.hosts)
        self.assertEqual(5, len(plan.allocations))

    def test_affinity_true_refuses_when_no_host_takes_them_all(self):
        e = self.assertRaises(slots.SlotsUnavailable, place,
                              [host('a'), host('b'), host('c')], 5,
                              affinity=True)
        self.assertEqual(4, e.kwargs['placed'])
        self.assertIn('affinity true', e.message)

    def test_affinity_false_puts_each_slot_on_its_own_host(self):
        plan = place([host('a', usage={'VCPU': 2}), host('b'), host('c'),
                      host('d')], 3, affinity=False)
        self.assertEqual(3, len(plan.hosts))
        self.assertEqual({1}, set(plan.hosts.values()))
        self.assertIn('a', plan.hosts)  # the busy host first

    def test_affinity_false_refuses_with_too_few_hosts(self):
        e = self.assertRaises(slots.SlotsUnavailable, place,
                              [host('a', vcpu=64, memory=65536)], 2,
                              affinity=False)
        self.assertEqual(1, e.kwargs['placed'])

    def test_preferred_hosts_come_first(self):
        plan = place([host('a', usage={'VCPU': 2}), host('b')], 2,
                     preferred=['b'])
        self.assertEqual({'b': 2}, plan.hosts)

    def test_plan_amounts_sum_slots_per_provider(self):
        plan = place([host('a')], 3)
        self.assertEqual({'a': {'VCPU': 6, 'MEMORY_MB': 3072,
                                'DISK_GB': 30}}, plan.amounts)
        self.assertEqual([{'host_uuid': 'a', 'host_name': 'a', 'slots': 3}],
                         plan.slots())


class CapacityTests(base.BaseTestCase):

    def test_ratio_and_reserved_make_the_capacity(self):
        # (8 - 2) x 2.0 = 12 VCPU: 6 slots, however big the host looks.
        plan = place([host('a', vcpu=Inventory(8, reserved=2,
                                               allocation_ratio=2.0),
                           memory=65536)], 6, affinity=True)
        self.assertEqual({'a': 6}, plan.hosts)
        self.assertRaises(slots.SlotsUnavailable, place,
                          [host('a', vcpu=Inventory(8, reserved=2,
                                                    allocation_ratio=2.0),
                                memory=65536)], 7, affinity=True)

    def test_peak_usage_in_the_window_counts(self):
        self.assertRaises(slots.SlotsUnavailable, place,
                          [host('a', usage={'MEMORY_MB': 3500})], 1)

    def test_slots_are_instances_each_within_max_unit(self):
        # Issue 30's host: 32 cores at ratio 4 (capacity 128, max_unit
        # 32). Ten 4-vCPU instances fit there, and so do ten slots: the
        # sum (40) is over max_unit, each slot is not.
        providers = [host('a', vcpu=Inventory(32, max_unit=32,
                                              allocation_ratio=4.0),
                          memory=Inventory(65536, max_unit=4096),
                          disk=1000)]
        slot = {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 10}
        plan = place(providers, 10, affinity=True, slot=slot)
        self.assertEqual({'a': 10}, plan.hosts)
        self.assertEqual({'VCPU': 40, 'MEMORY_MB': 40960, 'DISK_GB': 100},
                         plan.amounts['a'])
        # Only capacity caps the sum: 16 x 4096 MB is all the memory.
        self.assertEqual({'a': 16}, place(providers, 16, affinity=True,
                                          slot=slot).hosts)
        self.assertRaises(slots.SlotsUnavailable, place, providers, 17,
                          affinity=True, slot=slot)
        # A slot over max_unit fits nowhere, as such an instance.
        self.assertRaises(slots.SlotsUnavailable, place, providers, 1,
                          slot=dict(slot, VCPU=33))

    def test_slots_spread_over_numa_children_of_one_host(self):
        providers = [
            host('cn', vcpu=None, memory=None, disk=100),
            host('cn-numa0', vcpu=4, memory=2048, disk=None, parent='cn'),
            host('cn-numa1', vcpu=4, memory=2048, disk=None, parent='cn')]
        plan = place(providers, 4, affinity=True)
        self.assertEqual({'cn': 4}, plan.hosts)
        amounts = plan.amounts
        self.assertEqual(4, amounts['cn-numa0']['VCPU'])
        self.assertEqual(4, amounts['cn-numa1']['VCPU'])
        self.assertEqual(40, amounts['cn']['DISK_GB'])
        self.assertRaises(slots.SlotsUnavailable, place, providers, 5)

    def test_a_sharing_provider_is_not_a_host(self):
        agg = 'agg-disk'
        providers = [
            host('a', disk=None, aggregates=[agg]),
            host('b', disk=None, aggregates=[agg]),
            host('ss', vcpu=None, memory=None, disk=300, traits=[SHARES],
                 aggregates=[agg])]
        e = self.assertRaises(slots.SlotsUnavailable, place, providers, 3,
                              affinity=False)
        self.assertEqual(2, e.kwargs['placed'])

    def test_a_shared_disk_runs_out_across_hosts(self):
        agg = 'agg-disk'
        providers = [
            host('a', disk=None, aggregates=[agg]),
            host('b', disk=None, aggregates=[agg]),
            host('ss', vcpu=None, memory=None, disk=30, traits=[SHARES],
                 aggregates=[agg])]
        plan = place(providers, 3)
        self.assertEqual(3, sum(plan.hosts.values()))
        self.assertEqual({'DISK_GB': 30}, plan.amounts['ss'])
        self.assertNotIn('ss', plan.hosts)
        # Plenty of VCPU and memory left on a and b, but no disk.
        self.assertRaises(slots.SlotsUnavailable, place, providers, 4)


class ConstraintTests(base.BaseTestCase):

    def test_pcloud_hosts_are_never_used(self):
        pool = '5a3c8e36-6a0f-4d52-9f0e-8f1b2c3d4e5f'
        plan = place([host('a'), host('pc', usage={'VCPU': 2}),
                      host('pool', aggregates=[pool])], 4,
                     excluded_hosts={'pc'}, forbidden_aggregates={pool})
        self.assertEqual({'a': 4}, plan.hosts)

    def test_a_zone_takes_only_hosts_of_its_aggregates(self):
        zone = '6b4d9f47-7b1e-4e63-8a2f-9a2c3d4e5f60'
        plan = place([host('a'), host('z1', aggregates=[zone]),
                      host('z2', aggregates=[zone])], 2, affinity=False,
                     member_of={zone})
        self.assertEqual({'z1': 1, 'z2': 1}, plan.hosts)
        self.assertRaises(slots.SlotsUnavailable, place,
                          [host('a'), host('z1', aggregates=[zone])], 2,
                          affinity=False, member_of={zone})

    def test_zone_aggregates(self):
        zones = [('agg-1', 'az1'), ('agg-2', 'az1'), ('agg-3', 'az2'),
                 ('agg-4', None), ('agg-5', 'nova')]
        self.assertEqual((frozenset({'agg-1', 'agg-2'}), frozenset()),
                         slots.zone_aggregates(zones, 'az1', 'nova'))
        # The default zone: hosts in no other zone's aggregate.
        self.assertEqual((frozenset(), frozenset({'agg-1', 'agg-2',
                                                  'agg-3'})),
                         slots.zone_aggregates(zones, 'nova', 'nova'))
        refused = self.assertRaises(exception.InvalidTerm,
                                    slots.zone_aggregates, zones,
                                    'nowhere', 'nova')
        self.assertIn("no availability zone 'nowhere' in this cloud; its "
                      'zones: az1, az2, nova', refused.message)

    def test_required_and_forbidden_traits(self):
        providers = [host('plain'), host('avx', traits=['HW_CPU_X86_AVX2']),
                     host('slow', traits=['HW_CPU_X86_AVX2',
                                          'CUSTOM_SLOW'])]
        plan = place(providers, 2, required={'HW_CPU_X86_AVX2'},
                     forbidden={'CUSTOM_SLOW'})
        self.assertEqual({'avx': 2}, plan.hosts)

    def test_held_slots_count_against_the_new_ones(self):
        # Growing an active reservation that holds 2 slots on a: its own
        # usage is discounted from the peak and held instead.
        providers = [host('a', usage={'VCPU': 4, 'MEMORY_MB': 2048,
                                      'DISK_GB': 20})]
        given = forest_mod.ProviderForest(providers)
        held = {'a': {'VCPU': 4, 'MEMORY_MB': 2048, 'DISK_GB': 20}}
        forest = slots.discount(given, held)
        # The forest given is left as it was: the ledger shares it.
        self.assertEqual(4, given['a'].usage['VCPU'])
        self.assertEqual(0, forest['a'].usage['VCPU'])
        request = slots.SlotRequest(SLOT, 2, affinity=True)
        plan = slots.place(forest, request, held=held, only_hosts={'a'})
        self.assertEqual({'a': 2}, plan.hosts)
        request = slots.SlotRequest(SLOT, 3, affinity=True)
        self.assertRaises(slots.SlotsUnavailable, slots.place, forest,
                          request, held=held, only_hosts={'a'})


class PropertiesTests(base.BaseTestCase):

    def test_empty_means_no_constraint(self):
        for empty in (None, '', '[]'):
            self.assertEqual((frozenset(), frozenset()),
                             slots.parse_properties(empty))

    def test_traits_required_and_forbidden(self):
        required, forbidden = slots.parse_properties(
            '["and", ["=", "$HW_CPU_X86_AVX2", "true"], '
            '["=", "$CUSTOM_SLOW", false], ["!=", "$CUSTOM_OLD", "true"]]')
        self.assertEqual({'HW_CPU_X86_AVX2'}, required)
        self.assertEqual({'CUSTOM_SLOW', 'CUSTOM_OLD'}, forbidden)

    def test_host_facts_are_no_traits(self):
        # Blazar's other expressions are the request's hosts_matching
        # (test_host_properties).
        self.assertEqual((frozenset(), frozenset()), slots.parse_properties(
            '[">=", "$memory_mb", "4096"]'))

    def test_anything_else_is_refused(self):
        for bad in ('nope', '{"a": 1}', '[">=", "$no_such_fact", "4096"]',
                    '["=", "$NOT_A_TRAIT", "true"]',
                    '["=", "$CUSTOM_X", "maybe"]',
                    '["and", ["=", "$CUSTOM_X", "true"], '
                    '["=", "$CUSTOM_X", "false"]]'):
            self.assertRaises(exception.Invalid, slots.parse_properties,
                              bad)


class ShortageTests(base.BaseTestCase):

    def test_names_the_class_most_short_on_usable_hosts(self):
        forest = forest_mod.ProviderForest([
            host('a', memory=2048, usage={'MEMORY_MB': 1024}),
            host('b', memory=2048),
            host('pc', memory=65536)])
        request = slots.SlotRequest(SLOT, 4, excluded_hosts={'pc'})
        short = slots.slot_shortage(forest, request)
        # Memory leaves room for 1 slot on a and 2 on b; VCPU for 4 + 4.
        self.assertEqual(('MEMORY_MB', 1024, 2048, 3, 4),
                         (short.rc, short.per_slot, short.largest,
                          short.fits, short.amount))
        self.assertEqual({'a', 'b'}, short.providers)

    def test_free_capacity_is_not_added_up_across_hosts(self):
        # 1180 MB free on the two hosts together, but a 781 MB slot
        # fits on neither.
        forest = forest_mod.ProviderForest([
            host('a', memory=2048, usage={'MEMORY_MB': 1448}),
            host('b', memory=2048, usage={'MEMORY_MB': 1468})])
        request = slots.SlotRequest(dict(SLOT, MEMORY_MB=781), 1)
        short = slots.slot_shortage(forest, request)
        self.assertEqual(('MEMORY_MB', 781, 600, 0, 1),
                         (short.rc, short.per_slot, short.largest,
                          short.fits, short.amount))
        self.assertEqual({'a', 'b'}, short.providers)
        self.assertEqual(
            'MEMORY_MB: a slot takes 781, and the most free on any one '
            'host (or NUMA node) is 600: room for 0 of the 1 slots by '
            'MEMORY_MB alone.', short.describe())
        self.assertNotIn('1180', short.describe())

    def test_counts_whole_slots_per_host_on_usable_hosts(self):
        forest = forest_mod.ProviderForest([
            host('a', memory=2048, usage={'MEMORY_MB': 1024}),
            host('b', memory=3000),
            host('pc', memory=65536)])
        request = slots.SlotRequest(SLOT, 4, excluded_hosts={'pc'})
        short = slots.slot_shortage(forest, request)
        # a takes 1 slot of memory, b 2 (not 3000 / 1024 added up).
        self.assertEqual(('MEMORY_MB', 3000, 3), (
            short.rc, short.largest, short.fits))
        # With affinity every slot goes to one host: b's 2 at most.
        request = slots.SlotRequest(SLOT, 4, affinity=True,
                                    excluded_hosts={'pc'})
        self.assertEqual(2, slots.slot_shortage(forest, request).fits)
