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
"""Blazar's resource_properties mean here what they mean in Blazar.

The same hosts are registered in Blazar's own database (its computehosts
and extra capabilities, as an operator moving from Blazar has them) and
given to our ledger as provider trees; for each expression, the hosts
Blazar's own query returns are the hosts our placing may use. Then
leases through our plugin have their slots only on the hosts named.
"""

import io
import json

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar.utils import plugins as blazar_plugins
import fixtures

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import slots
from pcloud_plugin.tests import base as tests_base
from pcloud_plugin.tests.functional.blazar import base

# (name, vcpus, memory_mb, local_gb, cpu_arch, traits): sizes, names
# and arches that tell numbers from strings ("cn10" < "cn9" < "cn90").
HOSTS = (
    ('cn9', 8, 8192, 200, 'x86_64', {'CUSTOM_FAST'}),
    ('cn10', 16, 32768, 100, 'x86_64', set()),
    ('cn90', 64, 262144, 1000, 'aarch64', {'CUSTOM_FAST',
                                           'HW_CPU_X86_AVX2'}),
    ('edge', 2, 2048, 20, 'aarch64', set()),
    ('numa', 12, 16384, 150, 'x86_64', {'HW_CPU_X86_AVX2'}),
)
# Traits an operator moving from Blazar registers as extra capabilities.
TRAITS = ('CUSTOM_FAST', 'HW_CPU_X86_AVX2')
EXPRESSIONS = (
    '', '[]',
    ['=', '$hypervisor_hostname', 'cn9'],
    ['==', '$hypervisor_hostname', 'cn10'],
    ['!=', '$hypervisor_hostname', 'cn9'],
    ['<', '$hypervisor_hostname', 'cn9'],
    ['>=', '$hypervisor_hostname', 'cn9'],
    ['=', '$vcpus', '8'],
    ['>', '$vcpus', '9'],
    ['>=', '$vcpus', '12'],
    ['<', '$vcpus', '16'],
    ['<=', '$vcpus', '8.5'],
    ['!=', '$vcpus', '64'],
    ['>', '$memory_mb', '9000'],
    ['<=', '$memory_mb', '16384'],
    ['>=', '$local_gb', '150'],
    ['<', '$local_gb', '100'],
    ['=', '$cpu_arch', 'aarch64'],
    ['!=', '$cpu_arch', 'aarch64'],
    ['=', '$CUSTOM_FAST', 'true'],
    ['!=', '$HW_CPU_X86_AVX2', 'true'],
    ['and', ['=', '$CUSTOM_FAST', 'true'],
     ['=', '$HW_CPU_X86_AVX2', 'false']],
    ['and', ['>=', '$vcpus', '8'], ['=', '$cpu_arch', 'x86_64']],
    ['and', ['=', '$CUSTOM_FAST', 'true'], ['<', '$memory_mb', '100000'],
     ['!=', '$hypervisor_hostname', 'cn10']],
    ['or', ['=', '$hypervisor_hostname', 'edge'], ['>=', '$vcpus', '64']],
    ['or', ['and', ['<', '$vcpus', '10'], ['=', '$cpu_arch', 'x86_64']],
     ['=', '$HW_CPU_X86_AVX2', 'true']],
    ['and', ['or', ['>', '$local_gb', '150'], ['=', '$cpu_arch', 'aarch64']],
     ['!=', '$hypervisor_hostname', 'cn90']],
    ['or', ['=', '$hypervisor_hostname', 'nowhere'], ['>', '$vcpus', '999']],
)


def _forest():
    """HOSTS as provider trees: "numa" has its VCPU and memory on two

    NUMA children, and every host's disk is its own (no sharing).
    """
    providers = []
    for name, vcpus, memory_mb, local_gb, arch, traits in HOSTS:
        traits = set(traits) | {'HW_ARCH_' + arch.upper()}
        if name == 'numa':
            providers.append(forest_mod.Provider(
                uuid=name, name=name, traits=frozenset(traits),
                inventories={'DISK_GB': Inventory(local_gb)}))
            for n in (0, 1):
                providers.append(forest_mod.Provider(
                    uuid='%s-%d' % (name, n), name='%s-%d' % (name, n),
                    parent_uuid=name, traits=frozenset({'HW_NUMA_ROOT'}),
                    inventories={'VCPU': Inventory(vcpus // 2),
                                 'MEMORY_MB': Inventory(memory_mb // 2)}))
            continue
        providers.append(forest_mod.Provider(
            uuid=name, name=name, traits=frozenset(traits), inventories={
                'VCPU': Inventory(vcpus, allocation_ratio=4.0),
                'MEMORY_MB': Inventory(memory_mb, reserved=512),
                'DISK_GB': Inventory(local_gb)}))
    return forest_mod.ProviderForest(providers)


class BlazarSemanticsTests(tests_base.TestCase):
    """The same hosts in Blazar's database and in a forest of ours."""

    def setUp(self):
        super().setUp()
        self.conf([], project='blazar', default_config_files=[])
        self.useFixture(base.BlazarDatabase(self.conf))
        for name, vcpus, memory_mb, local_gb, arch, traits in HOSTS:
            host = blazar_db.host_create({
                'hypervisor_hostname': name, 'service_name': name,
                'vcpus': vcpus, 'memory_mb': memory_mb,
                'local_gb': local_gb, 'hypervisor_type': 'QEMU',
                'hypervisor_version': 8002000,
                'cpu_info': json.dumps({'arch': arch, 'vendor': 'Intel'}),
                'availability_zone': 'nova', 'trust_id': 'trust-id'})
            capabilities = {'cpu_arch': arch}
            capabilities.update((t, str(t in traits).lower())
                                for t in TRAITS)
            for capability, value in capabilities.items():
                blazar_db.host_extra_capability_create({
                    'computehost_id': host['id'],
                    'property_name': capability,
                    'capability_value': value})
        self.forest = _forest()
        # Blazar's query prints every host it looks at.
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', io.StringIO()))

    def blazar_hosts(self, expr):
        """The hosts Blazar's own query returns for expr.

        Blazar has no "or" yet, and of an "and" nested in an "and" it
        keeps only the first test: those are made of its answers to
        their parts (union and intersection).
        """
        if isinstance(expr, list) and expr and expr[0] in ('and', 'or'):
            parts = expr[1:]
            if expr[0] == 'or' or any(p[0] in ('and', 'or') for p in parts):
                answers = [self.blazar_hosts(p) for p in parts]
                combine = set.union if expr[0] == 'or' else set.intersection
                return combine(*answers)
        queries = blazar_plugins.convert_requirements(
            expr if isinstance(expr, str) else json.dumps(expr))
        return {h['hypervisor_hostname']
                for h in blazar_db.host_get_all_by_queries(queries)}

    def our_hosts(self, expr):
        """The hosts our placing may use for expr (refusals count them

        the same way: slots.shortage).
        """
        found = host_properties.parse(expr)
        request = slots.SlotRequest(
            {'VCPU': 1}, 1, required=found.required,
            forbidden=found.forbidden, hosts_matching=found.hosts_matching)
        _rc, _free, _needed, providers = slots.shortage(self.forest, request)
        return {self.forest[self.forest[p].root_uuid].name
                for p in providers}

    def test_the_hosts_blazar_returns_are_ours(self):
        sizes = set()
        for expr in EXPRESSIONS:
            theirs = self.blazar_hosts(expr)
            self.assertEqual(theirs, self.our_hosts(expr), expr)
            # Also as a list already parsed.
            if isinstance(expr, list):
                self.assertEqual(theirs, self.our_hosts(list(expr)), expr)
            sizes.add(len(theirs))
        # Neither all nor none every time.
        self.assertEqual(set(range(len(HOSTS) + 1)), sizes)

    def test_what_blazar_cannot_read_we_refuse(self):
        # Blazar's MalformedRequirements, ours InvalidTerm; never a host
        # set made of half the expression.
        for bad in ('nope', '["=", "$vcpus"]', '["~", "$vcpus", "8"]',
                    '["=", "vcpus", "8"]', '["=", "$vcpus", ""]'):
            self.assertRaises(mgr_exc.MalformedRequirements,
                              blazar_plugins.convert_requirements, bad)
            self.assertRaises(host_properties.exception.InvalidTerm,
                              host_properties.parse, bad)


class InstancePluginTests(base.BlazarTestCase):
    """Leases through our plugin with real Placement (base.BlazarTestCase:

    cn1 8 VCPU and 200 GB of its own; cn2 8 VCPU on two NUMA nodes and
    its disk from the sharing provider, so no local_gb; cn3 64 VCPU, in
    a pcloud).
    """

    def _slot_hosts(self, lease):
        (reservation,) = lease['reservations']
        return {s['host_name']: s['slots'] for s in res_db.get(
            self.context, reservation['id'])['slots']}

    def test_slots_go_only_to_the_hosts_named(self):
        # Packed, 3 slots would go to cn2 (test_instance_plugin); named
        # by its host name, cn1 takes them; cn3 (64 VCPU) is a pcloud's.
        expr = json.dumps(['or', ['=', '$hypervisor_hostname', 'cn1'],
                           ['>=', '$vcpus', '16']])
        lease = self.create_lease(self.reservation(
            3, resource_properties=expr))
        self.assertEqual({'cn1': 3}, self._slot_hosts(lease))
        (reservation,) = lease['reservations']
        self.assertEqual(expr, res_db.get(
            self.context, reservation['id'])['resource_properties'])
        # cn2's local_gb is 0: its disk is the sharing provider's, which
        # still serves the slots.
        lease = self.create_lease(self.reservation(
            2, affinity=True, resource_properties=(
                '["<", "$local_gb", "1"]')))
        self.assertEqual({'cn2': 2}, self._slot_hosts(lease))
        (reservation,) = lease['reservations']
        self.assertEqual(20, self.claims(reservation['id'])['amounts'][
            self.hosts['ss']]['DISK_GB'])
        # Started: the slots are cn2's, and the flavor asks no trait.
        self.start(lease['id'])
        rid = reservation['id']
        self.assertEqual({'cn2': 2}, {
            name: inventory['total'] for name, inventory in
            self.reservation_inventories(
                resources.resource_class(rid)).items()})
        self.assertEqual([], [k for k in self.nova.flavor_objs[
            rid].extra_specs if k.startswith('trait:')])

    def test_too_few_matching_hosts_is_refused_saying_so(self):
        expr = ['or', ['=', '$hypervisor_hostname', 'cn1'],
                ['>=', '$vcpus', '16']]
        e = self.assertRaises(
            mgr_exc.NotEnoughHostsAvailable, self.create_lease,
            self.reservation(2, affinity=False,
                             resource_properties=json.dumps(expr)))
        self.assertEqual(409, e.code)
        self.assertIn('Only 1 of 2 slots fit', str(e))
        self.assertIn('on hosts of resource_properties %s'
                      % json.dumps(expr), str(e))
        for none in (['>', '$vcpus', '64'],
                     ['=', '$hypervisor_hostname', 'nowhere']):
            e = self.assertRaises(
                mgr_exc.NotEnoughHostsAvailable, self.create_lease,
                self.reservation(1, resource_properties=json.dumps(none)))
            self.assertEqual(409, e.code)
            self.assertIn('Only 0 of 1 slots fit', str(e))
            self.assertIn('resource_properties %s' % json.dumps(none),
                          str(e))
            self.assertIn('0 free on the hosts this reservation may use',
                          str(e))
        self.assertEqual([], blazar_db.lease_get_all())

    def test_a_name_that_is_no_fact_is_400(self):
        e = self.assertRaises(mgr_exc.MalformedRequirements,
                              self.create_lease, self.reservation(
                                  1, resource_properties=(
                                      '[">=", "$cpus", "4"]')))
        self.assertEqual(400, e.code)
        self.assertIn('resource_properties (no host fact $cpus; it may '
                      'name $hypervisor_hostname, $vcpus', str(e))
