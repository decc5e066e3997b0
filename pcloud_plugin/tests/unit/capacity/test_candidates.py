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
"""The allocation-candidates engine: every worked example of seeds/004,
then each rule on its own, the caps and wide trees.

Candidates are written the way seeds/004 writes them, one string each:
'CN1(MEMORY_MB,VCPU) + SS1(DISK_GB)' (classes per provider), or with
amounts 'NIC1_1(SRIOV_NET_VF:2)'.
"""

import collections

from oslo_utils.fixture import uuidsentinel as uuids
from oslotest import base

from pcloud_plugin.capacity import candidates
from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import request as request_mod
from pcloud_plugin import exception

SHARES = 'MISC_SHARES_VIA_AGGREGATE'


def rp(name, parent=None, traits=(), aggregates=(), usage=None,
       **inventories):
    """Provider `name`, with uuid uuids.<name>.

    Aggregates are named too; inventories are CLASS=total or
    CLASS=Inventory(...).
    """
    return forest_mod.Provider(
        uuid=getattr(uuids, name), name=name,
        parent_uuid=getattr(uuids, parent) if parent else None,
        inventories={rc: inv if isinstance(inv, Inventory)
                     else Inventory(total=inv)
                     for rc, inv in inventories.items()},
        usage=dict(usage or {}), traits=frozenset(traits),
        aggregates=frozenset(getattr(uuids, a) for a in aggregates))


class _Uuids(dict):
    """Formats '{CN1}' in a query as uuids.CN1."""

    def __missing__(self, name):
        return getattr(uuids, name)


class CandidatesTestCase(base.BaseTestCase):

    def ask(self, providers, query, **kwargs):
        """Answer query from a forest of providers.

        '{NAME}' in the query stands for that provider's or aggregate's
        uuid.
        """
        self.forest = forest_mod.ProviderForest(providers)
        self.names = {p.uuid: p.name for p in providers}
        self.names.update((getattr(uuids, p.name), p.name)
                          for p in providers)
        self.result = candidates.allocation_candidates(
            self.forest, query.format_map(_Uuids()), **kwargs)
        requests = self.result['allocation_requests']
        self.assertEqual(len(requests), len({
            (frozenset((u, rc, n) for u, a in r['allocations'].items()
                       for rc, n in a['resources'].items()),
             frozenset((s, frozenset(us)) for s, us in r['mappings'].items()))
            for r in requests}), 'duplicate candidates')
        return self.result

    def rendered(self, amounts=False):
        out = set()
        for areq in self.result['allocation_requests']:
            out.add(' + '.join(sorted(
                '%s(%s)' % (self.names[uuid], ','.join(sorted(
                    '%s:%d' % (rc, n) if amounts else rc
                    for rc, n in alloc['resources'].items())))
                for uuid, alloc in areq['allocations'].items())))
        return out

    def mappings(self):
        return [{suffix: sorted(self.names[u] for u in rps)
                 for suffix, rps in areq['mappings'].items()}
                for areq in self.result['allocation_requests']]

    def assertCandidates(self, expected, providers, query, amounts=False,
                         **kwargs):
        self.ask(providers, query, **kwargs)
        self.assertEqual(set(expected), self.rendered(amounts))

    def summary_names(self):
        return {self.names[u] for u in self.result['provider_summaries']}


# --- the environments of seeds/004, in its order --------------------------

def sharing_env():
    return [
        rp('SS1', DISK_GB=1000, aggregates=['aggA'], traits=[SHARES]),
        rp('SS2', DISK_GB=1000, traits=[SHARES]),
        rp('CN1', VCPU=8, MEMORY_MB=1024, DISK_GB=1000, aggregates=['aggA']),
        rp('CN2', VCPU=8, MEMORY_MB=1024, DISK_GB=1000),
    ]


def numa_sharing_env():
    return [
        rp('SS1', DISK_GB=1000, aggregates=['aggA'], traits=[SHARES]),
        rp('CN1', MEMORY_MB=1024, DISK_GB=1000, aggregates=['aggA', 'aggB']),
        rp('NUMA1_1', 'CN1', VCPU=8),
        rp('NUMA1_2', 'CN1', VCPU=8),
        rp('CN2', MEMORY_MB=1024, DISK_GB=1000, aggregates=['aggA']),
        rp('NUMA2_1', 'CN2', VCPU=8, aggregates=['aggB']),
        rp('NUMA2_2', 'CN2', VCPU=8),
    ]


def nic_env():
    return [
        rp('CN1', VCPU=8, MEMORY_MB=1024, DISK_GB=1000),
        rp('NIC1_1', 'CN1', SRIOV_NET_VF=8, traits=['HW_NIC_ACCEL_SSL']),
        rp('NIC1_2', 'CN1', SRIOV_NET_VF=8),
    ]


def in_tree_env():
    return [
        rp('SS1', DISK_GB=1000, aggregates=['agg'], traits=[SHARES]),
        rp('SS2', DISK_GB=1000, aggregates=['agg'], traits=[SHARES]),
        rp('CN1', DISK_GB=1000, aggregates=['agg']),
        rp('NUMA1_1', 'CN1', VCPU=4),
        rp('NUMA1_2', 'CN1', VCPU=4),
        rp('CN2', DISK_GB=1000, aggregates=['agg']),
        rp('NUMA2_1', 'CN2', VCPU=4),
        rp('NUMA2_2', 'CN2', VCPU=4),
    ]


def root_traits_env():
    return [
        rp('NON_NUMA_CN', VCPU=8, MEMORY_MB=1024, DISK_GB=1000,
           traits=['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD',
                   'COMPUTE_VOLUME_MULTI_ATTACH',
                   'CUSTOM_WINDOWS_LICENSE_POOL']),
        rp('NUMA_CN', DISK_GB=1000,
           traits=['STORAGE_DISK_SSD', 'COMPUTE_VOLUME_MULTI_ATTACH']),
        rp('NUMA1', 'NUMA_CN', VCPU=4, MEMORY_MB=1024),
        rp('NUMA2', 'NUMA_CN', VCPU=4, MEMORY_MB=1024,
           traits=['HW_CPU_X86_AVX2']),
    ]


def same_subtree_env():
    # seeds/004 names the class ACCELERATOR_FPGA, which is no standard
    # class (Placement refuses it, see test_unknown_class): FPGA stands in.
    return [
        rp('CN'),
        rp('NUMA0', 'CN', VCPU=4, MEMORY_MB=2048, traits=['HW_NUMA_ROOT']),
        rp('NUMA1', 'CN', VCPU=4, MEMORY_MB=2048, traits=['HW_NUMA_ROOT']),
        rp('FPGA0_0', 'NUMA0', FPGA=1, traits=['CUSTOM_TYPE1']),
        rp('FPGA1_0', 'NUMA1', FPGA=1, traits=['CUSTOM_TYPE1']),
        rp('FPGA1_1', 'NUMA1', FPGA=1, traits=['CUSTOM_TYPE2']),
    ]


class TestSeedExamples(CandidatesTestCase):
    """Every worked example of seeds/004, candidate for candidate."""

    def test_sharing_providers(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB,VCPU)', 'CN2(DISK_GB,MEMORY_MB,VCPU)',
             'CN1(MEMORY_MB,VCPU) + SS1(DISK_GB)'],
            sharing_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500')

    def test_sharing_provider_serves_whole_tree(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB) + NUMA1_1(VCPU)',
             'CN1(DISK_GB,MEMORY_MB) + NUMA1_2(VCPU)',
             'CN2(DISK_GB,MEMORY_MB) + NUMA2_1(VCPU)',
             'CN2(DISK_GB,MEMORY_MB) + NUMA2_2(VCPU)',
             'CN1(MEMORY_MB) + NUMA1_1(VCPU) + SS1(DISK_GB)',
             'CN1(MEMORY_MB) + NUMA1_2(VCPU) + SS1(DISK_GB)',
             'CN2(MEMORY_MB) + NUMA2_1(VCPU) + SS1(DISK_GB)',
             'CN2(MEMORY_MB) + NUMA2_2(VCPU) + SS1(DISK_GB)'],
            numa_sharing_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500')

    def test_member_of_root_aggregate_spans_tree(self):
        self.ask(numa_sharing_env(), 'resources=VCPU:1,MEMORY_MB:512,'
                 'DISK_GB:500&member_of={aggA}')
        self.assertEqual(8, len(self.rendered()))
        self.assertIn('CN2(MEMORY_MB) + NUMA2_2(VCPU) + SS1(DISK_GB)',
                      self.rendered())

    def test_member_of_child_aggregate_does_not_span_tree(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB) + NUMA1_1(VCPU)',
             'CN1(DISK_GB,MEMORY_MB) + NUMA1_2(VCPU)'],
            numa_sharing_env(),
            'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of={aggB}')

    def test_required_trait(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB,VCPU) + NIC1_1(SRIOV_NET_VF)'],
            nic_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500,'
            'SRIOV_NET_VF:2&required=HW_NIC_ACCEL_SSL')

    def test_forbidden_trait(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB,VCPU) + NIC1_2(SRIOV_NET_VF)'],
            nic_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500,'
            'SRIOV_NET_VF:2&required=!HW_NIC_ACCEL_SSL')

    def test_unrequested_trait_ignored(self):
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB,VCPU) + NIC1_1(SRIOV_NET_VF)',
             'CN1(DISK_GB,MEMORY_MB,VCPU) + NIC1_2(SRIOV_NET_VF)'],
            nic_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500,'
            'SRIOV_NET_VF:2')

    def test_granular_isolate(self):
        self.assertCandidates(
            ['CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:1)'
             ' + NIC1_2(SRIOV_NET_VF:1)'],
            nic_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'
            '&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL'
            '&resources2=SRIOV_NET_VF:1&group_policy=isolate', amounts=True)

    def test_granular_none_merges_groups_on_one_provider(self):
        self.assertCandidates(
            ['CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:1)'
             ' + NIC1_2(SRIOV_NET_VF:1)',
             'CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:2)'],
            nic_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'
            '&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL'
            '&resources2=SRIOV_NET_VF:1&group_policy=none', amounts=True)

    def test_in_tree_root(self):
        self.assertCandidates(
            ['CN1(DISK_GB) + NUMA1_1(VCPU)', 'CN1(DISK_GB) + NUMA1_2(VCPU)'],
            in_tree_env(), 'resources=VCPU:1,DISK_GB:50&in_tree={CN1}')

    def test_in_tree_non_root(self):
        self.assertCandidates(
            ['CN1(DISK_GB) + NUMA1_1(VCPU)', 'CN1(DISK_GB) + NUMA1_2(VCPU)'],
            in_tree_env(), 'resources=VCPU:1,DISK_GB:50&in_tree={NUMA1_1}')

    def test_unsuffixed_in_tree_leaves_suffixed_group_free(self):
        self.assertCandidates(
            ['CN1(DISK_GB) + NUMA1_1(VCPU)', 'CN1(DISK_GB) + NUMA1_2(VCPU)',
             'NUMA1_1(VCPU) + SS1(DISK_GB)', 'NUMA1_2(VCPU) + SS1(DISK_GB)',
             'NUMA1_1(VCPU) + SS2(DISK_GB)', 'NUMA1_2(VCPU) + SS2(DISK_GB)'],
            in_tree_env(),
            'resources=VCPU:1&in_tree={CN1}&resources1=DISK_GB:10')

    def test_suffixed_in_tree_on_sharing_provider(self):
        self.assertCandidates(
            ['NUMA1_1(VCPU) + SS1(DISK_GB)', 'NUMA1_2(VCPU) + SS1(DISK_GB)',
             'NUMA2_1(VCPU) + SS1(DISK_GB)', 'NUMA2_2(VCPU) + SS1(DISK_GB)'],
            in_tree_env(),
            'resources=VCPU:1&resources1=DISK_GB:10&in_tree1={SS1}')

    def test_in_tree_per_group(self):
        self.assertCandidates(
            ['NUMA1_1(VCPU) + SS1(DISK_GB)', 'NUMA1_2(VCPU) + SS1(DISK_GB)'],
            in_tree_env(), 'resources1=VCPU:1&in_tree1={CN1}'
            '&resources2=DISK_GB:10&in_tree2={SS1}&group_policy=isolate')

    def test_root_required(self):
        self.assertCandidates(
            ['NON_NUMA_CN(DISK_GB,MEMORY_MB,VCPU)',
             'NUMA2(MEMORY_MB,VCPU) + NUMA_CN(DISK_GB)'],
            root_traits_env(), 'resources1=VCPU:1,MEMORY_MB:512'
            '&required1=HW_CPU_X86_AVX2&resources2=DISK_GB:100'
            '&group_policy=none&root_required=COMPUTE_VOLUME_MULTI_ATTACH')

    def test_root_forbidden(self):
        self.assertCandidates(
            ['NUMA1(MEMORY_MB,VCPU) + NUMA_CN(DISK_GB)',
             'NUMA2(MEMORY_MB,VCPU) + NUMA_CN(DISK_GB)'],
            root_traits_env(), 'resources1=VCPU:1,MEMORY_MB:512'
            '&resources2=DISK_GB:100&group_policy=none'
            '&root_required=!CUSTOM_WINDOWS_LICENSE_POOL')

    def test_same_subtree(self):
        self.assertCandidates(
            ['FPGA0_0(FPGA) + NUMA0(MEMORY_MB,VCPU)',
             'FPGA1_0(FPGA) + NUMA1(MEMORY_MB,VCPU)',
             'FPGA1_1(FPGA) + NUMA1(MEMORY_MB,VCPU)'],
            same_subtree_env(), 'resources_COMPUTE=VCPU:1,MEMORY_MB:256'
            '&resources_ACCEL=FPGA:1&group_policy=none'
            '&same_subtree=_COMPUTE,_ACCEL')

    def test_same_subtree_resourceless_group_in_mappings_only(self):
        self.assertCandidates(
            ['FPGA1_0(FPGA) + FPGA1_1(FPGA)'], same_subtree_env(),
            'required_NUMA=HW_NUMA_ROOT&resources_ACCEL1=FPGA:1'
            '&required_ACCEL1=CUSTOM_TYPE1&resources_ACCEL2=FPGA:1'
            '&required_ACCEL2=CUSTOM_TYPE2&group_policy=none'
            '&same_subtree=_NUMA,_ACCEL1,_ACCEL2')
        self.assertEqual([{'_NUMA': ['NUMA1'], '_ACCEL1': ['FPGA1_0'],
                           '_ACCEL2': ['FPGA1_1']}], self.mappings())
        # The whole tree is summarized, inventory-less root included.
        self.assertEqual({'CN', 'NUMA0', 'NUMA1', 'FPGA0_0', 'FPGA1_0',
                          'FPGA1_1'}, self.summary_names())


class TestShape(CandidatesTestCase):
    """The answer has Placement's 1.39 JSON shape."""

    def test_shape(self):
        providers = [
            rp('CN1', VCPU=Inventory(8, reserved=2, allocation_ratio=2.0),
               DISK_GB=100, traits=['HW_CPU_X86_AVX2'],
               usage={'VCPU': 3}),
            rp('NUMA', 'CN1', MEMORY_MB=1024),
        ]
        body = self.ask(providers, 'resources=VCPU:1&resources_M=MEMORY_MB:'
                        '512&group_policy=none')
        self.assertEqual({'allocation_requests': [{
            'allocations': {uuids.CN1: {'resources': {'VCPU': 1}},
                            uuids.NUMA: {'resources': {'MEMORY_MB': 512}}},
            'mappings': {'': [uuids.CN1], '_M': [uuids.NUMA]}}],
            'provider_summaries': {
                uuids.CN1: {
                    'resources': {'VCPU': {'capacity': 12, 'used': 3},
                                  'DISK_GB': {'capacity': 100, 'used': 0}},
                    'traits': ['HW_CPU_X86_AVX2'],
                    'parent_provider_uuid': None,
                    'root_provider_uuid': uuids.CN1},
                uuids.NUMA: {
                    'resources': {'MEMORY_MB': {'capacity': 1024,
                                                'used': 0}},
                    'traits': [],
                    'parent_provider_uuid': uuids.CN1,
                    'root_provider_uuid': uuids.CN1}}}, body)

    def test_request_object_or_query_string(self):
        providers = sharing_env()
        request = request_mod.CandidatesRequest({'': request_mod.RequestGroup(
            resources={'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 500})})
        forest = forest_mod.ProviderForest(providers)
        self.assertEqual(
            candidates.allocation_candidates(
                forest, 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'),
            candidates.allocation_candidates(forest, request))

    def test_nothing_fits(self):
        self.assertEqual(
            {'allocation_requests': [], 'provider_summaries': {}},
            self.ask(sharing_env(), 'resources=VCPU:9'))

    def test_summaries_only_of_trees_giving_resources(self):
        # SS1 alone serves DISK_GB; CN1's tree anchors it but gives
        # nothing, so only SS1 is summarized (as in Placement).
        env = [rp('SS1', DISK_GB=1000, aggregates=['aggA'], traits=[SHARES]),
               rp('CN1', VCPU=8, aggregates=['aggA']), rp('N', 'CN1')]
        self.assertCandidates(['SS1(DISK_GB)'], env, 'resources=DISK_GB:5')
        self.assertEqual({'SS1'}, self.summary_names())


class TestUnsuffixedGroup(CandidatesTestCase):

    def tree(self, root_traits=(), numa_traits=()):
        return [rp('CN', DISK_GB=100, traits=root_traits),
                rp('NUMA', 'CN', VCPU=4, traits=numa_traits),
                rp('OTHER', 'CN', traits=['CUSTOM_B'])]

    def test_traits_of_serving_providers_together(self):
        # Placement 1.39 checks the unsuffixed group's traits against the
        # providers serving its classes taken together.
        self.assertCandidates(
            ['CN(DISK_GB) + NUMA(VCPU)'],
            self.tree(['CUSTOM_A'], ['CUSTOM_B']),
            'resources=VCPU:1,DISK_GB:10&required=CUSTOM_A,CUSTOM_B')

    def test_traits_of_non_serving_providers_do_not_count(self):
        self.assertCandidates(
            [], self.tree(['CUSTOM_A']),
            'resources=VCPU:1&required=CUSTOM_A')
        self.assertCandidates(
            [], self.tree(), 'resources=VCPU:1&required=CUSTOM_B')

    def test_forbidden_trait_on_any_serving_provider(self):
        self.assertCandidates(
            [], self.tree(['CUSTOM_A']),
            'resources=VCPU:1,DISK_GB:10&required=!CUSTOM_A')
        self.assertCandidates(
            ['CN(DISK_GB) + NUMA(VCPU)'], self.tree(['CUSTOM_A']),
            'resources=VCPU:1,DISK_GB:10&required=!CUSTOM_B')

    def test_any_of_traits(self):
        query = 'resources=VCPU:1&required=in:CUSTOM_A,CUSTOM_B'
        self.assertCandidates(['NUMA(VCPU)'],
                              self.tree(numa_traits=['CUSTOM_B']), query)
        self.assertCandidates([], self.tree(['CUSTOM_A']), query)

    def test_sharing_provider_traits_count(self):
        providers = sharing_env()
        self.assertCandidates(
            ['CN1(MEMORY_MB,VCPU) + SS1(DISK_GB)'], providers,
            'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'
            '&required=MISC_SHARES_VIA_AGGREGATE')
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB,VCPU)', 'CN2(DISK_GB,MEMORY_MB,VCPU)'],
            providers, 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'
            '&required=!MISC_SHARES_VIA_AGGREGATE')

    def test_forbidden_aggregate_on_root_spans_tree(self):
        self.assertCandidates(
            ['CN2(DISK_GB,MEMORY_MB) + NUMA2_2(VCPU)',
             'CN2(MEMORY_MB) + NUMA2_2(VCPU) + SS1(DISK_GB)'],
            numa_sharing_env(),
            'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=!{aggB}')

    def test_member_of_all_lists(self):
        # Each member_of is ANDed, in: is an any-of, and a sharing
        # provider must itself be in them (SS1 is not in aggB).
        self.assertCandidates(
            ['CN1(DISK_GB,MEMORY_MB) + NUMA1_1(VCPU)',
             'CN1(DISK_GB,MEMORY_MB) + NUMA1_2(VCPU)'],
            numa_sharing_env(), 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500'
            '&member_of={aggA}&member_of=in:{aggB},{aggC}')

    def test_member_of_root_reaches_grandchildren(self):
        env = [rp('CN', aggregates=['aggA']),
               rp('NUMA', 'CN', aggregates=['aggA']),
               rp('DEV', 'NUMA', FPGA=1), rp('CN2', aggregates=['aggB']),
               rp('NUMA2', 'CN2', aggregates=['aggA']),
               rp('DEV2', 'NUMA2', FPGA=1)]
        self.assertCandidates(['DEV(FPGA)'], env,
                              'resources=FPGA:1&member_of={aggA}')

    def test_unknown_aggregate_or_provider_finds_nothing(self):
        for query in ('resources=VCPU:1&member_of={aggZ}',
                      'resources=VCPU:1&in_tree={nobody}',
                      'resources=VCPU:1&resources1=DISK_GB:1'
                      '&in_tree1={nobody}'):
            self.assertCandidates([], sharing_env(), query)

    def test_forbidden_unknown_aggregate_ignored(self):
        self.ask(sharing_env(), 'resources=VCPU:1&member_of=!{aggZ}')
        self.assertEqual({'CN1(VCPU)', 'CN2(VCPU)'}, self.rendered())

    def test_one_class_is_not_split_across_providers(self):
        self.assertCandidates(
            [], [rp('CN'), rp('A', 'CN', VCPU=2), rp('B', 'CN', VCPU=2)],
            'resources=VCPU:3')


class TestSuffixedGroups(CandidatesTestCase):

    def test_one_provider_serves_a_group(self):
        self.assertCandidates(
            [], [rp('CN', VCPU=4), rp('NUMA', 'CN', MEMORY_MB=512)],
            'resources1=VCPU:1,MEMORY_MB:256')

    def test_member_of_does_not_span_tree(self):
        providers = numa_sharing_env()
        self.assertCandidates(
            ['CN2(DISK_GB,MEMORY_MB) + NUMA2_1(VCPU)',
             'CN2(MEMORY_MB) + NUMA2_1(VCPU) + SS1(DISK_GB)'], providers,
            'resources=MEMORY_MB:512,DISK_GB:500&resources1=VCPU:1'
            '&member_of1={aggB}')

    def test_sharing_provider_anchors_any_connected_tree(self):
        self.assertCandidates(
            ['CN1(MEMORY_MB,VCPU) + SS1(DISK_GB)'], sharing_env(),
            'resources=VCPU:1,MEMORY_MB:512&resources1=DISK_GB:500'
            '&required1=MISC_SHARES_VIA_AGGREGATE')

    def test_resourceless_group_needs_traits_or_aggregates(self):
        # Placement finds nothing for a resourceless group with neither
        # required traits nor member_of (only forbidden ones).
        env = same_subtree_env()
        self.assertCandidates(
            [], env, 'required_N=!CUSTOM_TYPE2&resources_A=FPGA:1'
            '&same_subtree=_N,_A&group_policy=none')
        env = [p for p in env if p.name != 'NUMA1'] + [
            rp('NUMA1', 'CN', VCPU=4, aggregates=['aggX'])]
        self.assertCandidates(
            ['FPGA1_0(FPGA)', 'FPGA1_1(FPGA)'], env,
            'member_of_N={aggX}&resources_A=FPGA:1&same_subtree=_N,_A'
            '&group_policy=none')

    def test_resourceless_group_ignores_in_tree(self):
        # in_tree narrows only the providers of resources (Placement).
        env = same_subtree_env() + [
            rp('CN9'), rp('NUMA9', 'CN9', traits=['HW_NUMA_ROOT']),
            rp('FPGA9', 'NUMA9', FPGA=1)]
        self.ask(env, 'required_N=HW_NUMA_ROOT&in_tree_N={CN}'
                 '&resources_A=FPGA:1&in_tree_A={CN9}'
                 '&same_subtree=_N,_A&group_policy=none')
        self.assertEqual([{'_N': ['NUMA9'], '_A': ['FPGA9']}],
                         self.mappings())

    def test_isolate_counts_resourceless_groups(self):
        env = same_subtree_env()
        query = ('required_N=HW_NUMA_ROOT&resources_C=VCPU:1'
                 '&same_subtree=_N,_C&group_policy=%s')
        self.ask(env, query % 'none')
        self.assertEqual(2, len(self.mappings()))
        self.ask(env, query % 'isolate')
        self.assertEqual([], self.mappings())

    def test_unsuffixed_may_share_a_provider_under_isolate(self):
        self.assertCandidates(
            ['CN(VCPU:3) + NUMA(VCPU:1)'],
            [rp('CN', VCPU=4), rp('NUMA', 'CN', VCPU=1)],
            'resources=VCPU:1&resources1=VCPU:2&resources2=VCPU:1'
            '&group_policy=isolate', amounts=True)
        # Same request under group_policy=none: every fitting spread.
        self.ask([rp('CN', VCPU=4), rp('NUMA', 'CN', VCPU=1)],
                 'resources=VCPU:1&resources1=VCPU:2&resources2=VCPU:1'
                 '&group_policy=none')
        self.assertEqual({'CN(VCPU:4)', 'CN(VCPU:3) + NUMA(VCPU:1)'},
                         self.rendered(True))
        self.assertEqual(3, len(self.mappings()))

    def test_same_subtree_ancestor_rule(self):
        env = [rp('CN', VCPU=4), rp('NUMA0', 'CN', VCPU=4),
               rp('NUMA1', 'CN', VCPU=4), rp('DEV', 'NUMA0', FPGA=1)]
        self.ask(env, 'resources_A=VCPU:1&resources_B=FPGA:1'
                 '&group_policy=none&same_subtree=_A,_B')
        # The root and DEV's parent are its ancestors; its aunt is not.
        self.assertEqual([['CN', 'DEV'], ['DEV', 'NUMA0']], sorted(
            sorted(m['_A'] + m['_B']) for m in self.mappings()))

    def test_same_subtree_siblings_need_a_common_member(self):
        env = [rp('CN'), rp('A', 'CN', FPGA=1), rp('B', 'CN', FPGA=1)]
        query = ('resources_A=FPGA:1&resources_B=FPGA:1&group_policy=%s'
                 '&same_subtree=_A,_B')
        self.assertCandidates([], env, query % 'isolate')
        # Both on one provider is its own subtree.
        env = [rp('CN'), rp('A', 'CN', FPGA=2)]
        self.assertCandidates(['A(FPGA:2)'], env, query % 'none',
                              amounts=True)

    def test_same_subtree_repeats_are_independent(self):
        env = same_subtree_env()
        self.ask(env, 'resources_C=VCPU:1&resources_A1=FPGA:1'
                 '&required_A1=CUSTOM_TYPE1&resources_A2=FPGA:1'
                 '&group_policy=none&same_subtree=_C,_A1'
                 '&same_subtree=_C,_A2')
        self.assertEqual(['FPGA1_0(FPGA) + FPGA1_1(FPGA) + NUMA1(VCPU)'],
                         sorted(self.rendered()))

    def test_sharing_only_candidate_listed_once(self):
        # SS1 anchors under CN1 and under itself: one candidate (and SS2
        # under itself).
        self.assertCandidates(
            ['SS1(DISK_GB:2)', 'SS2(DISK_GB:2)'], sharing_env(),
            'resources1=DISK_GB:1&resources2=DISK_GB:1&group_policy=none'
            '&required1=MISC_SHARES_VIA_AGGREGATE'
            '&required2=MISC_SHARES_VIA_AGGREGATE', amounts=True)


class TestAmounts(CandidatesTestCase):

    def test_unit_rules_bind_each_amount(self):
        inv = Inventory(total=8, min_unit=2, max_unit=4, step_size=2)
        env = [rp('CN', SRIOV_NET_VF=inv)]
        for amount, fits in ((1, False), (2, True), (3, False), (4, True),
                             (6, False)):
            self.ask(env, 'resources=SRIOV_NET_VF:%d' % amount)
            self.assertEqual(fits, bool(self.rendered()), amount)

    def test_summed_amounts_respect_capacity_and_max_unit(self):
        # Placement checks only capacity and max_unit on merged amounts.
        vf = Inventory(total=8, max_unit=4, step_size=2)
        env = [rp('CN', SRIOV_NET_VF=vf, usage={'SRIOV_NET_VF': 2})]
        query = ('resources1=SRIOV_NET_VF:%d&resources2=SRIOV_NET_VF:%d'
                 '&group_policy=none')
        self.assertCandidates(['CN(SRIOV_NET_VF:4)'], env, query % (2, 2),
                              amounts=True)
        self.assertCandidates([], env, query % (4, 2))
        env = [rp('CN', VCPU=Inventory(total=4), usage={'VCPU': 1})]
        self.assertCandidates(['CN(VCPU:3)'], env, query.replace(
            'SRIOV_NET_VF', 'VCPU') % (1, 2), amounts=True)
        self.assertCandidates([], env, query.replace(
            'SRIOV_NET_VF', 'VCPU') % (2, 2))

    def test_usage_and_capacity(self):
        env = [rp('CN', VCPU=Inventory(total=4, reserved=1,
                                       allocation_ratio=1.5),
                  usage={'VCPU': 2})]
        self.assertCandidates(['CN(VCPU)'], env, 'resources=VCPU:2')
        self.assertCandidates([], env, 'resources=VCPU:3')

    def test_merged_request_amounts_are_right(self):
        # Placement (without group_policy=none) adds the suffixed amount
        # into the unsuffixed group's own request object and reports 3 on
        # A in later candidates; we report what each candidate asks.
        env = [rp('CN'), rp('A', 'CN', SRIOV_NET_VF=7),
               rp('B', 'CN', SRIOV_NET_VF=4)]
        self.assertCandidates(
            ['A(SRIOV_NET_VF:1) + B(SRIOV_NET_VF:2)',
             'A(SRIOV_NET_VF:2) + B(SRIOV_NET_VF:1)',
             'A(SRIOV_NET_VF:3)', 'B(SRIOV_NET_VF:3)'], env,
            'resources=SRIOV_NET_VF:1&resources1=SRIOV_NET_VF:2',
            amounts=True)


def wide_tree(children=8, per_child=1):
    return [rp('CN', VCPU=8, MEMORY_MB=4096, DISK_GB=500)] + [
        rp('PF%d' % i, 'CN', CUSTOM_VF=per_child) for i in range(children)]


def wide_query(groups):
    return ('resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2'
            + ''.join('&resources%d=CUSTOM_VF:1' % (g + 1)
                      for g in range(groups))
            + '&group_policy=none')


class TestWideTrees(CandidatesTestCase):
    """Placement bugs 2070257 / 2126751: many identical children.

    As many groups as children: work follows the valid candidates, not the
    8^8 products.
    """

    def test_8_by_8_every_permutation(self):
        self.ask(wide_tree(8), wide_query(8))
        requests = self.result['allocation_requests']
        # 8! ways to give each group its own PF; Placement lists each (the
        # mappings differ) though the allocations are the same.
        self.assertEqual(40320, len(requests))
        self.assertEqual(1, len(self.rendered(True)))
        self.assertEqual(40320, len({
            tuple(sorted((s, tuple(u)) for s, u in r['mappings'].items()))
            for r in requests}))

    def test_cap_applies_during_generation(self):
        self.ask(wide_tree(8), wide_query(8), max_candidates=1000)
        self.assertEqual(1000, len(self.result['allocation_requests']))
        self.ask(wide_tree(64), wide_query(64), max_candidates=10)
        self.assertEqual(10, len(self.result['allocation_requests']))

    def test_one_device_short(self):
        self.assertCandidates([], wide_tree(63), wide_query(64))

    def test_group_policy_none_fills_children(self):
        # 2 groups on 8 PFs of 8 VFs: 64 ways, as in Placement's test.
        self.ask(wide_tree(8, 8), wide_query(2))
        self.assertEqual(64, len(self.result['allocation_requests']))

    def test_limit_caps_like_max_candidates(self):
        self.ask(wide_tree(8), wide_query(8) + '&limit=5')
        self.assertEqual(5, len(self.result['allocation_requests']))
        self.ask(wide_tree(8), wide_query(8) + '&limit=5', max_candidates=3)
        self.assertEqual(3, len(self.result['allocation_requests']))

    def test_capped_answer_spreads_over_trees(self):
        env = [rp('CN%d' % i, VCPU=8) for i in range(5)] + [
            rp('CN%d_PF%d' % (i, j), 'CN%d' % i, CUSTOM_VF=2)
            for i in range(5) for j in range(4)]
        self.ask(env, 'resources=VCPU:1&resources1=CUSTOM_VF:1'
                 '&resources2=CUSTOM_VF:1&group_policy=none',
                 max_candidates=10)
        roots = collections.Counter(
            self.names[u][:3] for r in self.result['allocation_requests']
            for u in r['mappings']['1'])
        self.assertEqual({'CN0': 2, 'CN1': 2, 'CN2': 2, 'CN3': 2, 'CN4': 2},
                         roots)


class TestBadInput(CandidatesTestCase):

    def assertRefused(self, error, query, **kwargs):
        forest = forest_mod.ProviderForest(sharing_env())
        self.assertRaises(error, candidates.allocation_candidates, forest,
                          query.format_map(_Uuids()), **kwargs)

    def test_unknown_class(self):
        self.assertRefused(exception.UnknownResourceClass,
                           'resources=ACCELERATOR_FPGA:1')

    def test_unknown_trait(self):
        self.assertRefused(exception.UnknownTrait,
                           'resources=VCPU:1&required=HW_NO_SUCH_THING')

    def test_bad_amount(self):
        self.assertRefused(exception.InvalidAmount, 'resources=VCPU:0')

    def test_missing_group_policy(self):
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&resources2=VCPU:1')

    def test_same_subtree_unknown_suffix(self):
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&same_subtree=1,2')

    def test_bad_max_candidates(self):
        for cap in (0, -1, 'ten'):
            self.assertRefused(exception.Invalid, 'resources=VCPU:1',
                               max_candidates=cap)
