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

import datetime
import io
import itertools
import json

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar.plugins.instances import instance_plugin as blazar_instances
# Blazar's instance plugin reaches its host monitor through this module
# without importing it (in Blazar's manager, its physical:host plugin has).
from blazar.plugins.oshosts import host_plugin  # noqa: F401
from blazar.utils import plugins as blazar_plugins
import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import placement_sync
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception as pcloud_exception
from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import instance_claims
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
# Requests compared with Blazar's plugin: slot sizes (vcpus, memory_mb,
# disk_gb) of which empty cn9/cn10/cn90/edge/numa take 4/5/32/1/6 and
# 0/1/4/0/0, and amounts about those (two: the grid is run twice).
SLOT_SIZES = ((2, 2048, 20), (16, 16384, 100))
AMOUNTS = (2, 5)
AFFINITIES = (True, False, None)


def _forest(allocation_ratio=4.0, reserved=512, numa_split=True):
    """HOSTS as provider trees, every host's disk its own (no sharing):

    VCPU at allocation_ratio, MEMORY_MB with reserved MB; with
    numa_split, "numa" has its VCPU and memory on two NUMA children.
    """
    providers = []
    for name, vcpus, memory_mb, local_gb, arch, traits in HOSTS:
        traits = set(traits) | {'HW_ARCH_' + arch.upper()}
        if name == 'numa' and numa_split:
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
                'VCPU': Inventory(vcpus, allocation_ratio=allocation_ratio),
                'MEMORY_MB': Inventory(memory_mb, reserved=reserved),
                'DISK_GB': Inventory(local_gb)}))
    return forest_mod.ProviderForest(providers)


class _BlazarHosts:
    """HOSTS in Blazar's database (``blazar_ids``: name -> its host id);

    the test's setUp gives them as a forest of ours, ``forest``.
    """

    def setUp(self):
        super().setUp()
        self.conf([], project='blazar', default_config_files=[])
        self.useFixture(base.BlazarDatabase(self.conf))
        self.blazar_ids = {}
        for name, vcpus, memory_mb, local_gb, arch, traits in HOSTS:
            host = blazar_db.host_create({
                'hypervisor_hostname': name, 'service_name': name,
                'vcpus': vcpus, 'memory_mb': memory_mb,
                'local_gb': local_gb, 'hypervisor_type': 'QEMU',
                'hypervisor_version': 8002000,
                'cpu_info': json.dumps({'arch': arch, 'vendor': 'Intel'}),
                'availability_zone': 'nova', 'trust_id': 'trust-id'})
            self.blazar_ids[name] = host['id']
            capabilities = {'cpu_arch': arch}
            capabilities.update((t, str(t in traits).lower())
                                for t in TRAITS)
            for capability, value in capabilities.items():
                blazar_db.host_extra_capability_create({
                    'computehost_id': host['id'],
                    'property_name': capability,
                    'capability_value': value})
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

        the same way: slots.slot_shortage).
        """
        found = host_properties.parse(expr)
        request = slots.SlotRequest(
            {'VCPU': 1}, 1, required=found.required,
            forbidden=found.forbidden, hosts_matching=found.hosts_matching)
        providers = slots.slot_shortage(self.forest, request).providers
        return {self.forest[self.forest[p].root_uuid].name
                for p in providers}


class BlazarSemanticsTests(_BlazarHosts, tests_base.TestCase):
    """The same hosts in Blazar's database and in a forest of ours."""

    def setUp(self):
        super().setUp()
        self.forest = _forest()

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


class BlazarInstancePluginTests(_BlazarHosts, tests_base.LedgerTestCase):
    """Requests admitted and placed as Blazar's own virtual:instance

    plugin (VirtualInstancePlugin.pickup_hosts, in-process) does on the
    same hosts; ours as a reservation's admission places them
    (instance_claims.SlotClaims.place on the ledger).

    Blazar counts a host's vcpus, memory_mb and local_gb as registered,
    without allocation ratio or reserved memory, and knows no NUMA
    node: our forest here has allocation ratio 1, nothing reserved and
    no NUMA children, so that a host takes as many slots in both.
    Where the two differ, a test says how and why (test_or_..., and
    the last two).
    """

    def setUp(self):
        super().setUp()
        self.forest = _forest(allocation_ratio=1.0, reserved=0,
                              numa_split=False)
        placement_sync.sync(self.context, self.forest)
        self.blazar_names = {i: n for n, i in self.blazar_ids.items()}
        self.start = timeutils.utcnow().replace(
            second=0, microsecond=0) + datetime.timedelta(days=1)
        self.end = self.start + datetime.timedelta(hours=2)
        # Picking hosts reads only Blazar's database, and making the
        # plugin makes no client (they connect on first use): nothing
        # is stubbed. It registers with the process-wide host monitor:
        # taken off again.
        self.blazar_plugin = blazar_instances.VirtualInstancePlugin()
        self.addCleanup(self.blazar_plugin.monitor.healing_handlers.remove,
                        self.blazar_plugin.heal_reservations)
        # Placing reads only the ledger; Placement's holds (promises) and
        # its mirror come after, when a plan is claimed.
        self.slot_claims = instance_claims.SlotClaims(
            self.context, promises=None, mirror=None,
            exclusions=lambda: ((), ()))

    def book(self, host, count, size, start, end):
        """count slots of size (vcpus, memory_mb, disk_gb) reserved on host

        from start to end: in Blazar's database as its plugin writes a
        reservation (one allocation per slot, the lease's start and end
        events), in our ledger as its claim.
        """
        vcpus, memory_mb, disk_gb = size
        lease = blazar_db.lease_create({
            'name': uuidutils.generate_uuid(), 'start_date': start,
            'end_date': end, 'status': 'PENDING',
            'reservations': [{'resource_type': 'virtual:instance',
                              'status': 'pending'}],
            'events': [{'event_type': 'start_lease', 'time': start,
                        'status': 'UNDONE'},
                       {'event_type': 'end_lease', 'time': end,
                        'status': 'UNDONE'}]})
        (reservation,) = lease['reservations']
        blazar_db.instance_reservation_create({
            'reservation_id': reservation['id'], 'vcpus': vcpus,
            'memory_mb': memory_mb, 'disk_gb': disk_gb, 'amount': count,
            'affinity': None})
        for _n in range(count):
            blazar_db.host_allocation_create({
                'compute_host_id': self.blazar_ids[host],
                'reservation_id': reservation['id']})
        unit = slots.per_slot({'vcpus': vcpus, 'memory_mb': memory_mb,
                               'disk_gb': disk_gb})
        db_claims.claim(self.context, reservation['id'], {
            host: {rc: n * count for rc, n in unit.items()}},
            start, end, unit=unit)

    @staticmethod
    def request(size, amount, affinity, expr):
        """A virtual:instance reservation's terms, as both plugins get

        them (resource_properties a string, as Blazar's API passes it).
        """
        vcpus, memory_mb, disk_gb = size
        return {'vcpus': vcpus, 'memory_mb': memory_mb, 'disk_gb': disk_gb,
                'amount': amount, 'affinity': affinity,
                'resource_properties': (expr if isinstance(expr, str)
                                        else json.dumps(expr))}

    def blazar_placed(self, params):
        """The host of each slot by Blazar's plugin, sorted; None: refused."""
        try:
            picked = self.blazar_plugin.pickup_hosts(None, dict(
                params, start_date=self.start, end_date=self.end))['added']
        except mgr_exc.NotEnoughHostsAvailable:
            return None
        if len(picked) < params['amount']:
            return None
        return sorted(self.blazar_names[h] for h in picked)

    def our_placed(self, params):
        """The host of each slot by our placing, sorted; None: refused."""
        try:
            plan = self.slot_claims.place(self.slot_claims.request(params),
                                          self.start, self.end)
        except pcloud_exception.CapacityRefused:
            return None
        return sorted(plan.names[h] for h, n in plan.hosts.items()
                      for _n in range(n))

    @staticmethod
    def kept_to(params, allowed, hosts):
        """Whether a placing (the host of each slot) is the request's:

        every slot, on hosts resource_properties allows, by affinity.
        """
        if hosts is None:
            return True
        distinct = len(set(hosts))
        by_affinity = {True: distinct == 1, False: distinct == len(hosts)}
        return (len(hosts) == params['amount'] and set(hosts) <= allowed
                and by_affinity.get(params['affinity'], True))

    def assert_both_place_alike(self):
        """Every request of SLOT_SIZES x AMOUNTS x AFFINITIES x EXPRESSIONS

        (those Blazar's plugin reads) is admitted by both or by neither,
        each keeping to it; and some are admitted, some not.
        """
        differ, outcomes = [], set()
        for expr in EXPRESSIONS:
            if '"or"' in json.dumps(expr):
                continue    # Blazar's plugin cannot read it: test_or_...
            allowed = self.blazar_hosts(expr)
            self.assertEqual(allowed, self.our_hosts(expr), expr)
            for size, amount, affinity in itertools.product(
                    SLOT_SIZES, AMOUNTS, AFFINITIES):
                params = self.request(size, amount, affinity, expr)
                theirs, ours = self.blazar_placed(params), self.our_placed(
                    params)
                outcomes.add((theirs is not None, ours is not None))
                if ((theirs is None) != (ours is None)
                        or not self.kept_to(params, allowed, theirs)
                        or not self.kept_to(params, allowed, ours)):
                    differ.append((params, theirs, ours))
        self.assertEqual([], differ)
        self.assertEqual({(True, True), (False, False)}, outcomes)

    def test_on_empty_hosts_blazar_admits_what_we_admit(self):
        self.assert_both_place_alike()

    def test_reservations_in_the_window_count_in_both(self):
        # Requests the bookings below decide (all are admitted on empty
        # hosts): whether each is admitted once they are made.
        decided = (
            # cn10's half leaves no room for a second large slot.
            (self.request((16, 16384, 100), 2, False, ''), False),
            # cn9's first hour leaves room for 2 small slots, not 3.
            (self.request((2, 2048, 20), 3, True,
                          ['=', '$hypervisor_hostname', 'cn9']), False),
            # numa's 6 are gone; cn10 and cn9 have 2 each left.
            (self.request((2, 2048, 20), 3, True, [
                'and', ['>=', '$vcpus', '8'], ['=', '$cpu_arch', 'x86_64']]),
             False),
            # cn90 is booked only after the window.
            (self.request((16, 16384, 100), 4, True, ''), True))
        for params, _booked in decided:
            self.assertIsNotNone(self.blazar_placed(params), params)
            self.assertIsNotNone(self.our_placed(params), params)
        # numa full and cn10 half full all the window, cn9 half full in
        # its first hour, cn90 full only after it.
        hour = datetime.timedelta(hours=1)
        self.book('numa', 1, (12, 16384, 150), self.start, self.end)
        self.book('cn10', 1, (8, 16384, 50), self.start - hour,
                  self.end + hour)
        self.book('cn9', 1, (4, 4096, 100), self.start - hour,
                  self.start + hour)
        self.book('cn90', 1, (64, 262144, 1000), self.end + hour,
                  self.end + 2 * hour)
        for params, booked in decided:
            self.assertEqual(
                (booked, booked), (self.blazar_placed(params) is not None,
                                   self.our_placed(params) is not None),
                params)
        self.assert_both_place_alike()

    def test_or_is_read_only_by_us(self):
        # Blazar's plugin has no "or" yet: a malformed request there.
        # Ours places it on the hosts it names (which those are is
        # test_the_hosts_blazar_returns_are_ours's).
        for expr in EXPRESSIONS:
            if '"or"' not in json.dumps(expr):
                continue
            params = self.request((2, 2048, 20), 1, None, expr)
            self.assertRaises(
                mgr_exc.MalformedRequirements,
                self.blazar_plugin.pickup_hosts, None, dict(
                    params, start_date=self.start, end_date=self.end))
            allowed = self.our_hosts(expr)
            ours = self.our_placed(params)
            self.assertEqual(bool(allowed), ours is not None, expr)
            self.assertTrue(self.kept_to(params, allowed, ours), expr)

    def test_blazar_counts_a_reservation_once_per_host(self):
        # Blazar's bug: its plugin adds up the reservations on a host
        # (max_usages), one slot of each, however many of its slots the
        # host holds. Two slots fill cn9; Blazar sees room for one more.
        self.book('cn9', 2, (4, 4096, 100), self.start, self.end)
        params = self.request((4, 4096, 100), 1, None,
                              ['=', '$hypervisor_hostname', 'cn9'])
        self.assertEqual(['cn9'], self.blazar_placed(params))
        self.assertIsNone(self.our_placed(params))
        # Not for two: it counts one of the two.
        self.assertIsNone(self.blazar_placed(dict(params, amount=2)))

    def test_a_reservation_ending_at_the_start(self):
        # Blazar's leases hold [start, end] (widened by its
        # cleaning_time, 0 by default), ours [start, end): a lease ending
        # when the next starts meets it in Blazar, not here.
        self.book('cn9', 1, (8, 8192, 200), self.start - datetime.timedelta(
            hours=1), self.start)
        params = self.request((8, 8192, 200), 1, None,
                              ['=', '$hypervisor_hostname', 'cn9'])
        self.assertIsNone(self.blazar_placed(params))
        self.assertEqual(['cn9'], self.our_placed(params))


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
            self.assertIn('the most free on any one host (or NUMA node) '
                          'is 0: room for 0 of the 1 slots', str(e))
        self.assertEqual([], blazar_db.lease_get_all())

    def test_a_name_that_is_no_fact_is_400(self):
        e = self.assertRaises(mgr_exc.MalformedRequirements,
                              self.create_lease, self.reservation(
                                  1, resource_properties=(
                                      '[">=", "$cpus", "4"]')))
        self.assertEqual(400, e.code)
        self.assertIn('resource_properties (no host fact $cpus; it may '
                      'name $hypervisor_hostname, $vcpus', str(e))
