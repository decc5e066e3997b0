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
"""The request grammar of GET /allocation_candidates at 1.39."""

from oslo_utils.fixture import uuidsentinel as uuids
from oslotest import base

from pcloud_plugin.capacity import request
from pcloud_plugin import exception


class TestParse(base.BaseTestCase):

    def test_full_grammar(self):
        req = request.parse_qs(
            '?resources=VCPU:2,MEMORY_MB:1024&required=HW_CPU_X86_VMX,'
            '!CUSTOM_MAGIC&required=in:CUSTOM_A,CUSTOM_B'
            '&member_of=%s&member_of=in:%s,%s&member_of=!%s'
            '&in_tree=%s&resources_NET=SRIOV_NET_VF:1'
            '&required_NET=CUSTOM_PHYSNET_PUBLIC&required_NUMA=HW_NUMA_ROOT'
            '&group_policy=isolate&limit=10'
            '&root_required=COMPUTE_VOLUME_MULTI_ATTACH,!CUSTOM_WINDOWS'
            '&same_subtree=_NET,_NUMA'
            % (uuids.a1, uuids.a2, uuids.a3, uuids.a4, uuids.cn))
        self.assertEqual({'', '_NET', '_NUMA'}, set(req.groups))
        group = req.groups['']
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024}, group.resources)
        self.assertEqual([{'HW_CPU_X86_VMX'}, {'CUSTOM_A', 'CUSTOM_B'}],
                         group.required)
        self.assertEqual({'CUSTOM_MAGIC'}, group.forbidden)
        self.assertEqual([{uuids.a1}, {uuids.a2, uuids.a3}],
                         group.member_of)
        self.assertEqual({uuids.a4}, group.forbidden_aggregates)
        self.assertEqual(uuids.cn, group.in_tree)
        self.assertEqual({}, req.groups['_NUMA'].resources)
        self.assertEqual('isolate', req.group_policy)
        self.assertEqual(10, req.limit)
        self.assertEqual({'COMPUTE_VOLUME_MULTI_ATTACH'}, req.root_required)
        self.assertEqual({'CUSTOM_WINDOWS'}, req.root_forbidden)
        self.assertEqual([{'_NET', '_NUMA'}], req.same_subtree)

    def test_placement_quirks(self):
        # The last resources[$S] wins; '!!X' forbids X; numbers and
        # 1.33 names are both suffixes.
        req = request.parse_qs('resources=VCPU:1&resources=VCPU:3,VCPU:4'
                               '&required=!!CUSTOM_X&resources1=DISK_GB:1'
                               '&resourcesx-y=DISK_GB:2&group_policy=none')
        self.assertEqual({'VCPU': 4}, req.groups[''].resources)
        self.assertEqual({'CUSTOM_X'}, req.groups[''].forbidden)
        self.assertEqual({'', '1', 'x-y'}, set(req.groups))

    def test_custom_names_accepted_on_syntax(self):
        req = request.parse_qs('resources=CUSTOM_VF:1&required=CUSTOM_NEW')
        self.assertEqual({'CUSTOM_VF': 1}, req.groups[''].resources)

    def assertRefused(self, error, query, text=None):
        e = self.assertRaises(error, request.parse_qs, query)
        self.assertIsInstance(e, exception.Invalid)
        self.assertEqual(400, e.code)
        if text:
            self.assertIn(text, str(e))

    def test_bad_classes_and_amounts(self):
        self.assertRefused(exception.UnknownResourceClass, 'resources=FOO:1',
                           'FOO')
        self.assertRefused(exception.UnknownResourceClass,
                           'resources=custom_vf:1')
        self.assertRefused(exception.UnknownResourceClass,
                           'resources= VCPU:1')
        for amount in ('0', '-1', 'x', '1.5', ''):
            self.assertRefused(exception.InvalidAmount,
                               'resources=VCPU:%s' % amount)
        for bad in ('', 'VCPU', 'VCPU:1:2', 'VCPU:1,'):
            self.assertRefused(exception.InvalidCandidatesRequest,
                               'resources=%s' % bad)

    def test_bad_traits(self):
        self.assertRefused(exception.UnknownTrait,
                           'resources=VCPU:1&required=HW_NO_SUCH', 'HW_NO')
        self.assertRefused(exception.UnknownTrait,
                           'resources=VCPU:1&required=in:CUSTOM_A,lower')
        self.assertRefused(exception.UnknownTrait,
                           'resources=VCPU:1&root_required=NOPE')
        for bad in ('', 'CUSTOM_A,', '!', 'in:', 'in:CUSTOM_A,',
                    'in:CUSTOM_A,!CUSTOM_B'):
            self.assertRefused(exception.InvalidCandidatesRequest,
                               'resources=VCPU:1&required=%s' % bad)

    def test_conflicting_traits(self):
        self.assertRefused(
            exception.InvalidCandidatesRequest,
            'resources=VCPU:1&required=CUSTOM_A&required=!CUSTOM_A',
            'conflicting')
        self.assertRefused(
            exception.InvalidCandidatesRequest,
            'resources=VCPU:1&required=in:CUSTOM_A,CUSTOM_B'
            '&required=!CUSTOM_A,!CUSTOM_B')
        # One member of an any-of may be forbidden.
        request.parse_qs('resources=VCPU:1&required=in:CUSTOM_A,CUSTOM_B'
                         '&required=!CUSTOM_A')
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources=VCPU:1&root_required=CUSTOM_A,'
                           '!CUSTOM_A')

    def test_bad_aggregates_and_trees(self):
        for bad in ('nope', '', '%s,%s' % (uuids.a, uuids.b),
                    'in:%s,nope' % uuids.a, '!in:'):
            self.assertRefused(exception.InvalidCandidatesRequest,
                               'resources=VCPU:1&member_of=%s' % bad)
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources=VCPU:1&in_tree=nope', 'in_tree')

    def test_bad_request_wide_parameters(self):
        for bad in ('group_policy=all', 'group_policy=', 'limit=0',
                    'limit=-1', 'limit=x', 'root_required=in:CUSTOM_A',
                    'root_required=CUSTOM_A&root_required=CUSTOM_B',
                    'cowsay=moo', 'resources%s=VCPU:1'
                    % ('x' * 65)):
            self.assertRefused(exception.InvalidCandidatesRequest,
                               'resources=VCPU:1&' + bad)

    def test_group_policy_required_with_two_suffixed_groups(self):
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&resources2=VCPU:1',
                           'group_policy')
        # A resourceless suffixed group counts too.
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&required2=HW_NUMA_ROOT'
                           '&same_subtree=1,2')
        request.parse_qs('resources=VCPU:1&resources1=VCPU:1')

    def test_resources_needed(self):
        for bad in ('', 'required=HW_NUMA_ROOT', 'group_policy=none',
                    'required1=HW_NUMA_ROOT&same_subtree=1'):
            self.assertRefused(exception.InvalidCandidatesRequest, bad,
                               'resources')

    def test_resourceless_groups_belong_in_same_subtree(self):
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&required2=HW_NUMA_ROOT'
                           '&group_policy=none', 'same_subtree')
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&required=HW_NUMA_ROOT')
        request.parse_qs('resources1=VCPU:1&required2=HW_NUMA_ROOT'
                         '&group_policy=none&same_subtree=1,2')

    def test_same_subtree_names_real_suffixes(self):
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&same_subtree=1,3', '3')
        self.assertRefused(exception.InvalidCandidatesRequest,
                           'resources1=VCPU:1&same_subtree=,1',
                           'unsuffixed')


class TestBuild(base.BaseTestCase):

    def test_in_code(self):
        req = request.CandidatesRequest(
            {'': request.RequestGroup(resources={'VCPU': 1},
                                      required=['HW_CPU_X86_AVX2',
                                                {'CUSTOM_A', 'CUSTOM_B'}]),
             '_NUMA': request.RequestGroup(required=['HW_NUMA_ROOT']),
             '_NET': request.RequestGroup(resources={'SRIOV_NET_VF': 1},
                                          member_of=[uuids.agg])},
            group_policy='none', same_subtree=[('_NUMA', '_NET')])
        self.assertEqual([{'HW_CPU_X86_AVX2'}, {'CUSTOM_A', 'CUSTOM_B'}],
                         req.groups[''].required)
        self.assertEqual([{uuids.agg}], req.groups['_NET'].member_of)

    def test_in_code_validated(self):
        for kwargs, wide, error in (
                ({'resources': {'VCPU': True}}, {}, exception.InvalidAmount),
                ({'resources': {'VCPU': 1.0}}, {}, exception.InvalidAmount),
                ({'resources': {'VCPU': 0}}, {}, exception.InvalidAmount),
                ({'resources': {'vcpu': 1}}, {},
                 exception.UnknownResourceClass),
                ({'resources': {'VCPU': 1}, 'required': ['NOPE']}, {},
                 exception.UnknownTrait),
                ({'resources': {'VCPU': 1}, 'required': [()]}, {},
                 exception.InvalidCandidatesRequest),
                ({'resources': {'VCPU': 1}, 'in_tree': 'x'}, {},
                 exception.InvalidCandidatesRequest),
                ({'resources': {'VCPU': 1}}, {'group_policy': 'all'},
                 exception.InvalidCandidatesRequest),
                ({'resources': {'VCPU': 1}}, {'limit': 0},
                 exception.InvalidCandidatesRequest)):
            self.assertRaises(
                error, lambda: request.CandidatesRequest(
                    {'1': request.RequestGroup(**kwargs)}, **wide))
        self.assertRaises(
            exception.InvalidCandidatesRequest, request.CandidatesRequest,
            {'bad suffix': request.RequestGroup(resources={'VCPU': 1})})
        self.assertRaises(
            exception.InvalidCandidatesRequest, request.CandidatesRequest,
            {'1': request.RequestGroup(resources={'VCPU': 1})},
            same_subtree=['1'])

    def test_single_names_accepted(self):
        req = request.CandidatesRequest(
            {'': request.RequestGroup(resources={'VCPU': 1},
                                      required='HW_CPU_X86_AVX2',
                                      forbidden='CUSTOM_X')},
            root_required='COMPUTE_VOLUME_MULTI_ATTACH')
        self.assertEqual([{'HW_CPU_X86_AVX2'}], req.groups[''].required)
        self.assertEqual({'CUSTOM_X'}, req.groups[''].forbidden)
        self.assertEqual({'COMPUTE_VOLUME_MULTI_ATTACH'}, req.root_required)
