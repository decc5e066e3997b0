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
"""seeds/001's host terms of a pcloud:host reservation: parsed (a bad

one a 400 naming it, never ignored), merged on updates, and honoured by
eligible_hosts on a small forest (functional.blazar.test_host_terms holds
them through Blazar's API).
"""

import types

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.tests import base

PCLOUD = '4b8d3c2a-1f0e-4d5c-9b8a-7f6e5d4c3b2a'


def request(**terms):
    return dict({'amount': 1, 'host_flavor': 'big', 'pcloud_id': PCLOUD},
                **terms)


def _host(name, vcpus, memory_mb=32768, disk_gb=500, traits=()):
    return forest_mod.Provider(
        name, name, inventories={'VCPU': Inventory(vcpus),
                                 'MEMORY_MB': Inventory(memory_mb),
                                 'DISK_GB': Inventory(disk_gb)},
        traits=frozenset(traits))


def _forest():
    """h1: 16 VCPU x86_64; h2: 64 VCPU (two NUMA children) aarch64 with

    1 TB of disk; h3: 32 VCPU, no arch trait, 64 GB.
    """
    h2 = forest_mod.Provider('h2', 'h2',
                             inventories={'DISK_GB': Inventory(1000)},
                             traits=frozenset(['HW_ARCH_AARCH64']))
    numa = [forest_mod.Provider(
        'h2n%d' % n, 'h2n%d' % n, parent_uuid='h2',
        inventories={'VCPU': Inventory(32), 'MEMORY_MB': Inventory(16384)},
        traits=frozenset(['HW_NUMA_ROOT'])) for n in (0, 1)]
    # Children first: the host's tree must still be read root first.
    return forest_mod.ProviderForest(numa + [
        _host('h1', 16, traits=['HW_ARCH_X86_64', 'HW_CPU_X86_AVX2']), h2,
        _host('h3', 32, memory_mb=65536)])


def _aggregate(name, metadata, hosts):
    return types.SimpleNamespace(name=name, metadata=metadata,
                                 hosts=list(hosts), availability_zone=None)


def _pools(hosts=('h1', 'h2', 'h3'), others=()):
    metadata = codec.pool_metadata(codec.HostFlavor('big', 'whole', 4))
    metadata.update((codec.node_key(h), h) for h in hosts)
    pool = _aggregate(codec.pool_name('big'), metadata, hosts)
    return asked.Pools([pool] + list(others), 'nova')


def _metadata_pools():
    """h1 in two aggregates (disk ssd, speed 10; disk hdd), h2 in one

    (disk "nvme, ssd": two values, as Nova reads it), h3 in none but a
    pcloud's and a lease's, which say nothing of a host's own.
    """
    pcloud = codec.pcloud_metadata(PCLOUD, 'mine', 'p')
    pcloud['disk'] = 'ssd'
    return _pools(others=[
        _aggregate('fast', {'disk': 'ssd', 'speed': '10'}, ['h1']),
        _aggregate('slow', {'disk': 'hdd'}, ['h1']),
        _aggregate('both', {'disk': 'nvme, ssd'}, ['h2']),
        _aggregate(codec.pcloud_name(PCLOUD), pcloud, ['h3']),
        _aggregate('lease', {codec.LEASE_ID: 'l1', 'disk': 'ssd'}, ['h3'])])


class ParseTests(base.TestCase):

    def assert_refused(self, named, **terms):
        e = self.assertRaises(exception.InvalidTerm, asked.parse_params,
                              request(**terms))
        self.assertIn('Malformed parameter %s (' % named, str(e))
        return str(e)

    def test_no_terms_ask_nothing(self):
        params = asked.parse_params(request())
        self.assertEqual((0, 0, 0, '', '', {}, {}), tuple(
            params[t] for t in asked.HOST_TERMS))
        self.assertIsNone(asked.host_test(params))
        self.assertEqual(set(asked.STORED), set(params))

    def test_minimums_are_integers_of_zero_or_more(self):
        params = asked.parse_params(request(vcpus='64', memory_mb=1024,
                                            disk_gb=0))
        self.assertEqual((64, 1024, 0), (params['vcpus'],
                                         params['memory_mb'],
                                         params['disk_gb']))
        self.assertEqual(0, asked.parse_params(request(vcpus=None))['vcpus'])
        for term in ('vcpus', 'memory_mb', 'disk_gb'):
            for bad in (-1, 'many', 1.5, [4], 2 ** 31):
                self.assert_refused(term, **{term: bad})

    def test_properties_are_blazars_syntax_each_named_when_bad(self):
        expr = ['>=', '$vcpus', '32']
        params = asked.parse_params(request(hypervisor_properties=expr,
                                            resource_properties=''))
        self.assertEqual('[">=", "$vcpus", "32"]',
                         params['hypervisor_properties'])
        for term in asked.PROPERTIES:
            why = self.assert_refused(term, **{term: '["=", "$ram", 1]'})
            self.assertIn('no host fact $ram', why)
            self.assertNotIn('resource_properties', why.replace(
                'Malformed parameter resource_properties', ''))
            self.assert_refused(term, **{term: 'not json'})
            self.assert_refused(term, **{term: 5})

    def test_capabilities_scoped_or_not_are_one_term(self):
        params = asked.parse_params(request(**{
            'capabilities:cpu_arch': 'x86_64',
            'hypervisor_hostname': '<or> h1 <or> h3',
            'capabilities:vcpus': '>= 16', 'local_gb': 500}))
        self.assertEqual({'cpu_arch': 'x86_64',
                          'hypervisor_hostname': '<or> h1 <or> h3',
                          'vcpus': '>= 16', 'local_gb': '500'},
                         params['capabilities'])
        # vcpus is a term of its own: not a capability unscoped.
        self.assertEqual(16, asked.parse_params(request(vcpus=16))['vcpus'])
        self.assert_refused('cpu_arch', **{'capabilities:cpu_arch': 'a',
                                           'cpu_arch': 'b'})

    def test_every_supported_operator_and_what_is_refused(self):
        for spec in ('x86_64', 's== x86_64', 's!= x86_64', '<or> a <or> b'):
            asked.parse_params(request(cpu_arch=spec))
        for spec in ('= 8', '== 8', '!= 8', '>= 8.5', '<= 8', 's== 8'):
            asked.parse_params(request(**{'capabilities:local_gb': spec}))
        for key, spec, why in (
                ('cpu_arch', '<in> x86', '<in> is no operator'),
                ('cpu_arch', '<all-in> x86', '<all-in> is no operator'),
                ('capabilities:vcpus', '> 8', '> is no operator'),
                ('capabilities:vcpus', 's< 8', 's< is no operator'),
                ('cpu_arch', '>= 8', 'cpu_arch is a name'),
                ('capabilities:vcpus', '>= many', 'compares numbers'),
                ('capabilities:vcpus', '>= 8 9', 'takes one value'),
                ('capabilities:vcpus', '>= inf', 'compares numbers'),
                ('cpu_arch', '<or> a b', 'one value after each <or>'),
                ('cpu_arch', '<or>', 'one value after each <or>'),
                ('capabilities:cpu_info:arch', 'x86_64',
                 'no host fact cpu_info:arch'),
                ('capabilities:cpus', '8', 'no host fact cpus'),
                ('cpu_arch', ['x86_64'], 'a string'),
                ('cpu_arch', True, 'a string')):
            text = self.assert_refused(key, **{key: spec})
            self.assertIn(why, text)
        # What is supported, said on refusal.
        text = self.assert_refused('cpu_arch', cpu_arch='<in> x')
        self.assertIn('= == != >= <= s== s!= <or>', text)
        self.assertIn('hypervisor_hostname, vcpus, memory_mb, local_gb, '
                      'cpu_arch', text)

    def test_aggregate_metadata_is_its_scoped_keys(self):
        params = asked.parse_params(request(**{
            'aggregate_instance_extra_specs:ssd': 'true',
            'aggregate_instance_extra_specs:speed': '>= 10',
            'aggregate_instance_extra_specs:a:b': 8}))
        self.assertEqual({'ssd': 'true', 'speed': '>= 10', 'a:b': '8'},
                         params['aggregate_metadata'])
        self.assertEqual({}, params['capabilities'])
        # Unscoped, a key is a capability or no term (the lease guard
        # refuses it): never aggregate metadata.
        self.assertEqual({}, asked.parse_params(request(
            ssd='true'))['aggregate_metadata'])
        self.assertNotIn('ssd', asked.PARAMS)
        self.assertEqual({}, asked.parse_params(request(
            cpu_arch='x86_64'))['aggregate_metadata'])

    def test_aggregate_metadata_takes_the_capabilities_operators(self):
        key = 'aggregate_instance_extra_specs:disk'
        for spec in ('ssd', 's== ssd', 's!= hdd', '<or> ssd <or> nvme',
                     '= 8', '== 8', '!= 8', '>= 8.5', '<= 8'):
            self.assertEqual({'disk': spec}, asked.parse_params(request(
                **{key: spec}))['aggregate_metadata'])
        for spec, why in (
                ('<in> ssd', '<in> is no operator'),
                ('<all-in> ssd', '<all-in> is no operator'),
                ('> 8', '> is no operator'),
                ('s< a', 's< is no operator'),
                ('>= many', 'compares numbers'),
                ('>= 8 9', 'takes one value'),
                ('<or> a b', 'one value after each <or>'),
                (['ssd'], 'a string'),
                (True, 'a string')):
            text = self.assert_refused(key, **{key: spec})
            self.assertIn(why, text)
        self.assertIn('= == != >= <= s== s!= <or>', self.assert_refused(
            key, **{key: '<in> x'}))
        # Our own bookkeeping (it names real hosts) is no metadata to ask.
        self.assertIn("no metadata key 'pcloud:hypervisor:h1'",
                      self.assert_refused(
                          'aggregate_instance_extra_specs:pcloud:hypervisor'
                          ':h1', **{'aggregate_instance_extra_specs:pcloud:'
                                    'hypervisor:h1': 'h1'}))
        self.assert_refused('aggregate_instance_extra_specs:',
                            **{'aggregate_instance_extra_specs:': 'x'})

    def test_updates_merge_with_the_stored_terms(self):
        current = asked.parse_params(request(vcpus=32, cpu_arch='x86_64'))
        self.assertEqual(current, asked.parse_params({}, current))
        changed = asked.parse_params({'memory_mb': 1024, 'local_gb': '>= 1',
                                      'capabilities:cpu_arch': ''},
                                     current)
        self.assertEqual((32, 1024, {'local_gb': '>= 1'}), (
            changed['vcpus'], changed['memory_mb'], changed['capabilities']))
        self.assertEqual(asked.params_of(dict(changed, state='x')), changed)

    def test_an_update_changes_or_drops_aggregate_metadata(self):
        key = 'aggregate_instance_extra_specs:'
        current = asked.parse_params(request(**{
            key + 'disk': 'ssd', key + 'speed': '>= 10'}))
        self.assertEqual(current, asked.parse_params({}, current))
        changed = asked.parse_params({key + 'disk': 's== hdd',
                                      key + 'speed': None,
                                      key + 'rack': 'r1'}, current)
        self.assertEqual({'disk': 's== hdd', 'rack': 'r1'},
                         changed['aggregate_metadata'])
        self.assertEqual({}, asked.parse_params(
            {key + 'disk': ' ', key + 'rack': ''},
            changed)['aggregate_metadata'])
        # A bad change is refused, naming it.
        e = self.assertRaises(exception.InvalidTerm, asked.parse_params,
                              {key + 'disk': '<in> s'}, current)
        self.assertIn('Malformed parameter %sdisk (' % key, str(e))

    def test_describe_names_the_terms(self):
        text = asked.describe(asked.parse_params(request(
            vcpus=64, hypervisor_properties='["=", "$cpu_arch", "arm"]',
            cpu_arch='s== x86_64')))
        self.assertIn('vcpus at least 64', text)
        self.assertIn('hypervisor_properties ["=", "$cpu_arch", "arm"]',
                      text)
        self.assertIn('capabilities:cpu_arch "s== x86_64"', text)
        text = asked.describe(asked.parse_params(request(**{
            'aggregate_instance_extra_specs:disk': '<or> a <or> b'})))
        self.assertIn('aggregate_instance_extra_specs:disk "<or> a <or> b"',
                      text)


class EligibilityTests(base.TestCase):

    def eligible(self, **terms):
        params = asked.parse_params(request(**terms))
        return [h['host_name'] for h in asked.eligible_hosts(
            _forest(), _pools(), params, set())]

    def test_the_host_terms_pick_hosts(self):
        self.assertEqual(['h1', 'h2', 'h3'], self.eligible())
        # Minimums of the tree's totals (h2's VCPUs are its children's).
        self.assertEqual(['h2', 'h3'], self.eligible(vcpus=32))
        self.assertEqual(['h2'], self.eligible(vcpus=64))
        self.assertEqual([], self.eligible(vcpus=65))
        self.assertEqual(['h3'], self.eligible(memory_mb=65536))
        self.assertEqual(['h2'], self.eligible(disk_gb=501))
        # Blazar's syntax, traits and facts alike; both must hold.
        self.assertEqual(['h3'], self.eligible(
            hypervisor_properties='["=", "$hypervisor_hostname", "h3"]'))
        self.assertEqual(['h1'], self.eligible(
            resource_properties='["=", "$HW_CPU_X86_AVX2", "true"]'))
        self.assertEqual(['h2', 'h3'], self.eligible(
            resource_properties='["!=", "$HW_CPU_X86_AVX2", "true"]'))
        self.assertEqual(['h3'], self.eligible(
            hypervisor_properties='[">=", "$vcpus", "32"]',
            resource_properties='["<", "$local_gb", "1000"]'))

    def test_capabilities_as_nova_reads_them(self):
        self.assertEqual(['h1'], self.eligible(cpu_arch='x86_64'))
        self.assertEqual(['h2'], self.eligible(
            **{'capabilities:cpu_arch': 's== aarch64'}))
        # A host without the fact (h3: no HW_ARCH_*) matches nothing.
        self.assertEqual(['h2'], self.eligible(cpu_arch='s!= x86_64'))
        self.assertEqual(['h1', 'h3'], self.eligible(
            hypervisor_hostname='<or> h3 <or> h1'))
        # '=' is "at least" for numbers, as in Nova.
        self.assertEqual(['h2', 'h3'], self.eligible(
            **{'capabilities:vcpus': '= 32'}))
        self.assertEqual(['h3'], self.eligible(
            **{'capabilities:vcpus': '== 32'}))
        self.assertEqual(['h1', 'h2'], self.eligible(
            **{'capabilities:vcpus': '!= 32'}))
        self.assertEqual(['h1', 'h3'], self.eligible(local_gb='<= 500'))
        self.assertEqual(['h2'], self.eligible(local_gb='1000'))
        # Every term holds at once.
        self.assertEqual([], self.eligible(vcpus=32, cpu_arch='x86_64'))

    def test_aggregate_metadata_as_nova_reads_it(self):
        pools = _metadata_pools()
        # h3 is a pcloud's: leased to the one asking, it may serve.
        h3 = {'h3'}

        def eligible(terms=None, **specs):
            params = asked.parse_params(request(**dict(terms or {}, **{
                'aggregate_instance_extra_specs:' + key: spec
                for key, spec in specs.items()})))
            return [h['host_name'] for h in asked.eligible_hosts(
                _forest(), pools, params, h3)]
        self.assertEqual(['h1', 'h2', 'h3'], eligible())
        # Some aggregate of the host has a value meeting the spec: h1's
        # two aggregates differ, h2's one value is a list of two; h3's
        # pcloud and lease say nothing of it.
        self.assertEqual(['h1', 'h2'], eligible(disk='ssd'))
        self.assertEqual(['h1'], eligible(disk='hdd'))
        self.assertEqual(['h1'], eligible(disk='s== hdd'))
        self.assertEqual(['h1', 'h2'], eligible(disk='s!= ssd'))
        self.assertEqual(['h2'], eligible(disk='<or> nvme <or> sas'))
        self.assertEqual([], eligible(disk='nvme, ssd'))
        # Numbers compare as numbers; a value that is none meets none.
        self.assertEqual(['h1'], eligible(speed='= 8'))
        self.assertEqual(['h1'], eligible(speed='<= 10'))
        self.assertEqual([], eligible(speed='!= 10'))
        self.assertEqual([], eligible(disk='>= 0'))
        # A host without the key meets nothing, not even s!=.
        self.assertEqual([], eligible(rack='r1'))
        self.assertEqual([], eligible(rack='s!= r1'))
        # Every term holds at once.
        self.assertEqual(['h2'], eligible({'cpu_arch': 'aarch64'},
                                          disk='ssd'))
        self.assertEqual([], eligible(disk='ssd', speed='10', rack='r1'))

    def test_aggregate_metadata_says_why_no_host_could_serve_it(self):
        forest, pools = _forest(), _metadata_pools()
        params = asked.parse_params(request(**{
            'aggregate_instance_extra_specs:rack': 'r1'}))
        hosts = asked.eligible_hosts(forest, pools, params, set())
        self.assertIn('No host of host flavor big meets its host terms '
                      '(aggregate_instance_extra_specs:rack "r1"), whatever '
                      'the window: 2 host(s) would be eligible without '
                      'them.', asked.left_out(forest, pools, params, set(),
                                              hosts))

    def test_a_tree_is_read_root_first(self):
        forest = _forest()
        self.assertEqual(['h2', 'h2n0', 'h2n1'],
                         [p.uuid for p in asked.host_tree(forest, 'h2')])

    def test_terms_are_why_no_host_could_serve_it(self):
        params = asked.parse_params(request(vcpus=128))
        forest, pools = _forest(), _pools()
        hosts = asked.eligible_hosts(forest, pools, params, set())
        text = asked.left_out(forest, pools, params, set(), hosts)
        self.assertIn('No host of host flavor big meets its host terms '
                      '(vcpus at least 128), whatever the window: 3 host(s) '
                      'would be eligible without them.', text)
        params = asked.parse_params(request(amount=3, vcpus=32))
        hosts = asked.eligible_hosts(forest, pools, params, set())
        self.assertIn('leave 2 of the 3', asked.left_out(
            forest, pools, params, set(), hosts))
        params = asked.parse_params(request(amount=4))
        self.assertEqual('', asked.left_out(forest, pools, params, set(),
                                            hosts))

    def test_terms_missing_from_params_ask_nothing(self):
        # Offerings and the earliest window give parse_terms' own keys.
        params = asked.parse_terms({'amount': 1, 'host_flavor': 'big',
                                    'availability_zone': None,
                                    'required_traits': None})
        self.assertEqual(['h1', 'h2', 'h3'], [
            h['host_name'] for h in asked.eligible_hosts(
                _forest(), _pools(), {'amount': 1, 'host_flavor': 'big',
                                      'availability_zone': None,
                                      'required_traits': None}, set())])
        self.assertEqual(0, params['vcpus'])
