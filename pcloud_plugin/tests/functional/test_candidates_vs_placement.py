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
"""Our allocation candidates against real Placement's, on random forests.

Each forest (flat hosts, NUMA hosts with device grandchildren, sharing
storage, traits, aggregates, existing allocations) comes from a seed and is
built both in Placement and as our ProviderForest; every random request is
asked of both and the answers must be equal as sets (allocation requests
with their mappings, and provider summaries), or both must refuse it.

Two Placement bugs are stepped around rather than mirrored, since what
Placement answers there depends on its row order:

- a candidate whose unsuffixed part is served by sharing providers alone is
  kept under one arbitrary tree only (see _sharing_only); we keep it under
  every tree those providers serve, so ours may be a superset there;
- unless group_policy=none, a class asked by the unsuffixed group and a
  suffixed one gets summed into objects other candidates share, corrupting
  their amounts; random_query does not ask that.

Our forests are built in our ledger (SQLite) and read back with
load_forest, so the answer compared is the one the reservation plugins
get: ledger, provider cache and engine together.

A mismatch names the forest seed and the query; replay one with::

    PCLOUD_DIFF_SEED=<forest seed> PCLOUD_DIFF_QUERY='<query>' \\
        [PCLOUD_DIFF_WIDE=1] python -m \\
        pcloud_plugin.tests.functional.test_candidates_vs_placement

PCLOUD_DIFF_SEED alone shifts the whole run to other forests.
"""

import collections
import datetime
import logging
import os
import random
import sys
import unittest
import urllib.parse
import uuid as uuidlib

import fixtures
from oslo_utils import timeutils

from pcloud_plugin.capacity import candidates
from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.tests import base as test_base
from pcloud_plugin.tests.functional import placement_fixture

BASE_SEED = int(os.environ.get('PCLOUD_DIFF_SEED', 4004))
REPLAY_QUERY = os.environ.get('PCLOUD_DIFF_QUERY')
FORESTS_PER_TEST = 4
REQUESTS_PER_FOREST = 60

TREE_TRAITS = ['HW_CPU_X86_AVX2', 'COMPUTE_VOLUME_MULTI_ATTACH',
               'CUSTOM_GOLD', 'STORAGE_DISK_SSD']
NUMA_TRAITS = ['HW_NUMA_ROOT', 'HW_CPU_X86_AVX2', 'CUSTOM_GOLD']
DEVICE_TRAITS = ['CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B', 'HW_NIC_ACCEL_SSL']
SHARING = 'MISC_SHARES_VIA_AGGREGATE'
# Traits a request may name: all of the above, sharing and one no
# provider has (CUSTOM_NOBODY is created in Placement all the same).
REQUEST_TRAITS = sorted(set(TREE_TRAITS + NUMA_TRAITS + DEVICE_TRAITS) | {
    SHARING, 'CUSTOM_NOBODY'})
AMOUNTS = {'VCPU': [1, 1, 2, 4], 'MEMORY_MB': [128, 256, 512, 1024, 2048],
           'DISK_GB': [10, 50, 100, 500, 1500], 'SRIOV_NET_VF': [1, 1, 2, 3],
           'FPGA': [1], 'CUSTOM_VF': [1, 2], 'IPV4_ADDRESS': [1, 2]}
# What one tree of the random forests may serve to the unsuffixed group.
TREE_CLASSES = [
    ('VCPU',), ('VCPU', 'MEMORY_MB'), ('VCPU', 'MEMORY_MB', 'DISK_GB'),
    ('VCPU', 'MEMORY_MB', 'DISK_GB'), ('MEMORY_MB', 'DISK_GB'),
    ('DISK_GB',), ('VCPU', 'DISK_GB'), ('VCPU', 'SRIOV_NET_VF'),
    ('DISK_GB', 'IPV4_ADDRESS')]
# What one provider of the random forests may serve on its own.
GRANULAR_CLASSES = [
    ('VCPU',), ('MEMORY_MB',), ('VCPU', 'MEMORY_MB'), ('VCPU', 'MEMORY_MB'),
    ('SRIOV_NET_VF',), ('SRIOV_NET_VF',), ('FPGA',), ('CUSTOM_VF',),
    ('DISK_GB',), ('IPV4_ADDRESS',), ('DISK_GB', 'IPV4_ADDRESS')]


def load_ledger(context, spec):
    """Our side of the comparison: make spec the content of our ledger.

    Every table is emptied first. Each of the spec's allocations is a
    claim from now on, open-ended; and yesterday, for an hour, every
    provider was as full as one claim can make it, which a query about
    now must not see.
    """
    with db_api.writer(context) as session:
        for table in reversed(models.BASE.metadata.sorted_tables):
            if table.name != 'alembic_version':
                session.execute(table.delete())
    yesterday = timeutils.utcnow() - datetime.timedelta(days=1)
    for p in spec['providers']:
        db_providers.create_provider(context, p['uuid'], p['name'],
                                     p.get('parent'))
        inventories = {rc: inv_mod.Inventory(**inv)
                       for rc, inv in p.get('inventories', {}).items()}
        if inventories:
            db_providers.set_inventories(context, p['uuid'], inventories)
        if p.get('traits'):
            db_providers.set_traits(context, p['uuid'], p['traits'])
        if p.get('aggregates'):
            db_providers.set_aggregates(context, p['uuid'], p['aggregates'])
        full = {rc: _largest_claim(inv) for rc, inv in inventories.items()}
        full = {rc: n for rc, n in full.items() if n}
        if full:
            db_claims.claim(context, 'past-' + p['uuid'], {p['uuid']: full},
                            yesterday - datetime.timedelta(hours=1), yesterday)
    for consumer, amounts in spec.get('allocations', ()):
        db_claims.claim(context, consumer, amounts)


def _largest_claim(inventory):
    """The most one claim may take of an inventory (0 if none fits)."""
    most = min(inventory.max_unit, inventory.capacity)
    most -= most % inventory.step_size
    return most if most >= inventory.min_unit else 0


# --- random forests ---------------------------------------------------------

def _uuid(rng):
    return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def _inventory(rng, rc):
    total = {'VCPU': rng.randint(2, 16), 'MEMORY_MB': rng.choice(
        [1024, 2048, 4096, 8192]), 'DISK_GB': rng.choice([200, 500, 2000]),
        'SRIOV_NET_VF': rng.randint(1, 8), 'FPGA': rng.randint(1, 2),
        'CUSTOM_VF': rng.randint(1, 4), 'IPV4_ADDRESS': rng.randint(1, 4)}[rc]
    inv = {'total': total}
    if rng.random() < 0.2:
        inv['reserved'] = rng.randint(0, total // 4)
    if rc in ('VCPU', 'MEMORY_MB') and rng.random() < 0.4:
        inv['allocation_ratio'] = rng.choice([1.5, 2.0, 16.0])
    if rc == 'MEMORY_MB' and rng.random() < 0.3:
        inv['step_size'] = 256
        inv['min_unit'] = rng.choice([256, 512])
    if rng.random() < 0.15:
        inv['max_unit'] = max(1, total // 2)
    return inv


def _pick(rng, items, p, most=2):
    return sorted(rng.sample(items, rng.randint(1, min(most, len(items))))
                  if rng.random() < p else ())


def random_spec(rng):
    aggs = [_uuid(rng) for _ in range(4)]
    providers = []

    def add(parent, inventories, traits=(), aggregates=()):
        uuid = _uuid(rng)
        providers.append({
            'uuid': uuid, 'name': 'rp-%s' % uuid[:13], 'parent': parent,
            'inventories': {rc: _inventory(rng, rc) for rc in inventories},
            'traits': list(traits), 'aggregates': list(aggregates)})
        return uuid

    for _ in range(rng.randint(0, 4)):
        add(None, _pick(rng, ['VCPU', 'MEMORY_MB', 'DISK_GB'], 0.9, 3)
            or ['VCPU'], _pick(rng, TREE_TRAITS, 0.6), _pick(rng, aggs, 0.5))
    for _ in range(rng.randint(1, 4)):
        root = add(None, _pick(rng, ['DISK_GB', 'MEMORY_MB'], 0.7),
                   _pick(rng, TREE_TRAITS, 0.5), _pick(rng, aggs, 0.5))
        for _ in range(rng.randint(1, 3)):
            numa = add(root, ['VCPU', 'MEMORY_MB'] if rng.random() < 0.8
                       else ['VCPU'],
                       ['HW_NUMA_ROOT'] + _pick(rng, NUMA_TRAITS[1:], 0.5),
                       _pick(rng, aggs, 0.15, 1))
            for _ in range(rng.choice([0, 1, 2, 2, 3])):
                add(numa, [rng.choice(['SRIOV_NET_VF', 'FPGA', 'CUSTOM_VF'])],
                    _pick(rng, DEVICE_TRAITS, 0.7), _pick(rng, aggs, 0.1, 1))
    for _ in range(rng.randint(0, 3)):
        add(None, ['DISK_GB'] + (['IPV4_ADDRESS'] if rng.random() < 0.3
                                 else []),
            [SHARING] + _pick(rng, ['STORAGE_DISK_SSD'], 0.5),
            _pick(rng, aggs, 0.8))

    allocations = []
    used = collections.defaultdict(collections.Counter)
    for _ in range(rng.randint(0, 6)):
        p = rng.choice(providers)
        if not p['inventories']:
            continue
        rc, inv = rng.choice(sorted(p['inventories'].items()))
        cap = int((inv['total'] - inv.get('reserved', 0))
                  * inv.get('allocation_ratio', 1.0))
        step = inv.get('step_size', 1)
        lo = inv.get('min_unit', 1)
        hi = min(inv.get('max_unit', inv['total']),
                 cap - used[p['uuid']][rc])
        amounts = [n for n in range(lo, hi + 1, 1) if n % step == 0]
        if amounts:
            n = rng.choice(amounts)
            used[p['uuid']][rc] += n
            allocations.append((_uuid(rng), {p['uuid']: {rc: n}}))
    return {'providers': providers, 'allocations': allocations,
            'aggregates': aggs, 'traits': REQUEST_TRAITS,
            'resource_classes': ['CUSTOM_VF']}


def random_wide_spec(rng):
    """One or two hosts with 3-6 identical-ish PFs: many groups' ground."""
    aggs = [_uuid(rng)]
    providers = []
    for _ in range(rng.randint(1, 2)):
        root = _uuid(rng)
        providers.append({
            'uuid': root, 'name': 'cn-%s' % root[:8], 'parent': None,
            'inventories': {'VCPU': {'total': 8}, 'DISK_GB': {'total': 500}},
            'traits': [], 'aggregates': _pick(rng, aggs, 0.5)})
        for _ in range(rng.randint(3, 6)):
            uuid = _uuid(rng)
            providers.append({
                'uuid': uuid, 'name': 'pf-%s' % uuid[:8], 'parent': root,
                'inventories': {'CUSTOM_VF': {'total': rng.choice(
                    [1, 1, 2, 3])}},
                'traits': _pick(rng, DEVICE_TRAITS[:2], 0.5, 1),
                'aggregates': []})
    allocations = [
        (_uuid(rng), {p['uuid']: {'CUSTOM_VF': 1}}) for p in providers
        if p['parent'] and p['inventories']['CUSTOM_VF']['total'] > 1
        and rng.random() < 0.3]
    return {'providers': providers, 'allocations': allocations,
            'aggregates': aggs, 'traits': REQUEST_TRAITS,
            'resource_classes': ['CUSTOM_VF']}


def random_wide_query(rng, spec):
    """2-4 groups of CUSTOM_VF beside the host's own VCPU and DISK_GB."""
    params = [('resources', 'VCPU:1,DISK_GB:10')]
    suffixes = [str(g) for g in range(1, rng.randint(2, 4) + 1)]
    for suffix in suffixes:
        params.append(('resources' + suffix,
                       'CUSTOM_VF:%d' % rng.choice([1, 1, 1, 2])))
        if rng.random() < 0.25:
            params.append(('required' + suffix, rng.choice(
                ['CUSTOM_PHYSNET_A', '!CUSTOM_PHYSNET_A',
                 'in:CUSTOM_PHYSNET_A,CUSTOM_PHYSNET_B'])))
    params.append(('group_policy', rng.choice(['none', 'isolate'])))
    if rng.random() < 0.2:
        params.append(('same_subtree', ','.join(rng.sample(suffixes, 2))))
    if rng.random() < 0.2:
        params.append(('member_of', spec['aggregates'][0]))
    rng.shuffle(params)
    return urllib.parse.urlencode(params, safe=':,!')


# --- random requests ------------------------------------------------------

def _traits_value(rng):
    kind = rng.random()
    if kind < 0.2:
        return 'in:' + ','.join(rng.sample(REQUEST_TRAITS, 2))
    names = rng.sample(REQUEST_TRAITS, rng.randint(1, 2))
    return ','.join(('!' if rng.random() < 0.35 else '') + n for n in names)


def _member_of_value(rng, aggs):
    kind = rng.random()
    if kind < 0.5:
        return rng.choice(aggs)
    if kind < 0.75:
        return 'in:' + ','.join(rng.sample(aggs, 2))
    if kind < 0.9:
        return '!' + rng.choice(aggs)
    return '!in:' + ','.join(rng.sample(aggs, 2))


def _group_params(rng, spec, suffix, classes, level, resourceless=False):
    params = []
    if not resourceless:
        params.append(('resources' + suffix, ','.join(
            '%s:%d' % (rc, rng.choice(AMOUNTS[rc])) for rc in classes)))
    if resourceless or rng.random() < 0.15 * level:
        for _ in range(rng.choice([1, 1, 2])):
            params.append(('required' + suffix, _traits_value(rng)))
    aggs = spec['aggregates'] + [_uuid(rng)]
    if rng.random() < 0.1 * level:
        params.append(('member_of' + suffix, _member_of_value(rng, aggs)))
    if rng.random() < 0.05 * level:
        params.append(('in_tree' + suffix, rng.choice(
            [p['uuid'] for p in spec['providers']] + [_uuid(rng)])))
    return params


def random_query(rng, spec):
    """A query string; `level` (0-3) sets how many constraints it has."""
    classes = sorted(AMOUNTS)
    level = rng.choice([0, 1, 1, 2, 3])
    params = []
    unsuffixed = set()
    if rng.random() < 0.75:
        unsuffixed = set(rng.choice(TREE_CLASSES) if rng.random() < 0.8
                         else rng.sample(classes, rng.randint(1, 3)))
        params += _group_params(rng, spec, '', sorted(unsuffixed), level)
    suffixes = rng.sample(['1', '2', '_NUMA', '_ACCEL', 'x-y'],
                          rng.randint(0, level) or (0 if params else 1))
    resourceless, overlap = [], False
    for suffix in suffixes:
        if rng.random() < 0.15:
            resourceless.append(suffix)
            params += _group_params(rng, spec, suffix, (), level, True)
        else:
            wanted = set(rng.choice(GRANULAR_CLASSES) if rng.random() < 0.85
                         else rng.sample(classes, 2))
            overlap |= bool(wanted & unsuffixed)
            params += _group_params(rng, spec, suffix, sorted(wanted), level)
    policy = None
    if len(suffixes) > 1 or rng.random() < 0.2:
        policy = rng.choice(['none', 'isolate'])
    if suffixes and overlap:
        # Placement sums a class the unsuffixed group shares with a
        # suffixed one into the unsuffixed group's own request object
        # unless group_policy=none, corrupting amounts of other candidates
        # (RequestWideSearchContext.copy_arr_if_needed): ask only what it
        # answers right.
        policy = 'none'
    if policy:
        params.append(('group_policy', policy))
    if len(suffixes) > 1 and (resourceless or rng.random() < 0.35):
        chosen = set(rng.sample(suffixes, rng.randint(2, len(suffixes))))
        params.append(('same_subtree', ','.join(sorted(
            chosen | set(resourceless)))))
    elif resourceless:
        params.append(('same_subtree', ','.join(resourceless)))
    if rng.random() < 0.05 * level:
        params.append(('root_required', ','.join(
            ('!' if rng.random() < 0.4 else '') + t
            for t in rng.sample(TREE_TRAITS, rng.randint(1, 2)))))
    if rng.random() < 0.1:
        params.append(('limit', str(rng.randint(1, 4))))
    rng.shuffle(params)
    return urllib.parse.urlencode(params, safe=':,!')


BAD_QUERIES = [
    'resources=FOO:1',
    'resources=VCPU:0',
    'resources=VCPU:x',
    'resources=VCPU',
    'resources=',
    'resources=VCPU:1&required=foo',
    'resources=VCPU:1&required=CUSTOM_GOLD,!CUSTOM_GOLD',
    'resources=VCPU:1&required=in:CUSTOM_GOLD,!HW_NUMA_ROOT',
    'resources=VCPU:1&required=',
    'resources1=VCPU:1&resources2=VCPU:1',
    'resources1=VCPU:1&group_policy=all',
    'resources1=VCPU:1&resources2=VCPU:1&group_policy=none'
    '&same_subtree=1,3',
    'resources=VCPU:1&required_X=HW_NUMA_ROOT',
    'required=HW_NUMA_ROOT',
    'resources=VCPU:1&member_of=not-a-uuid',
    'resources=VCPU:1&in_tree=nope',
    'resources=VCPU:1&root_required=in:CUSTOM_GOLD',
    'resources=VCPU:1&root_required=CUSTOM_GOLD&root_required=HW_NUMA_ROOT',
    'resources=VCPU:1&limit=0',
    'resources=VCPU:1&cowsay=moo',
    'resources1=VCPU:1&same_subtree=,1',
    '',
]


# --- comparing --------------------------------------------------------------

def canonical_requests(body):
    return collections.Counter(
        (frozenset((rp, rc, n) for rp, alloc in areq['allocations'].items()
                   for rc, n in alloc['resources'].items()),
         frozenset((s, frozenset(rps)) for s, rps in areq['mappings'].items()))
        for areq in body['allocation_requests'])


def canonical_summaries(body, roots=None):
    return {rp: (sorted((rc, r['capacity'], r['used'])
                        for rc, r in s['resources'].items()),
                 sorted(s['traits']), s['parent_provider_uuid'],
                 s['root_provider_uuid'])
            for rp, s in body['provider_summaries'].items()
            if roots is None or s['root_provider_uuid'] in roots}


def _sharing_only(forest, candidate):
    """Whether Placement may drop this candidate of ours.

    Placement lists a candidate whose unsuffixed part comes from sharing
    providers alone under one arbitrary tree, where we (and seeds/004) list
    it under every tree those providers serve. Placement folds the
    per-tree requests of that part into a set whose members compare equal
    whatever their tree (objects/allocation_candidate.py,
    _alloc_candidates_multiple_providers), so only the first tree it meets
    keeps it.
    """
    mappings = dict(candidate[1])
    return '' in mappings and len(mappings) > 1 and all(
        rp in forest.sharing for rp in mappings.get('', ()))


def _roots(body):
    return {body['provider_summaries'][rp]['root_provider_uuid']
            for areq in body['allocation_requests']
            for rp in areq['allocations']}


class TestCandidatesVsPlacement(test_base.LedgerTestCase):

    def setUp(self):
        super().setUp()
        # Placement logs every query at DEBUG: keep it for failures only.
        self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.api = self.useFixture(placement_fixture.PlacementFixture()).api
        self.checked = collections.Counter()

    def load_ours(self, spec):
        """The spec in our ledger, read back as the forest at now."""
        load_ledger(self.context, spec)
        return db_snapshots.load_forest(self.context)

    def ask_placement(self, query):
        resp = self.api.get('/allocation_candidates?' + query)
        if resp.status_code == 400:
            return None, resp.text
        self.assertEqual(200, resp.status_code, '%s -> %s' % (query,
                                                              resp.text))
        return resp.json(), None

    def compare(self, seed, forest, query, wide=False):
        """A description of how the answers differ, or None."""
        where = '%sforest seed %d, query %r' % (
            'wide ' if wide else '', seed, query)
        theirs, refusal = self.ask_placement(query)
        try:
            ours = candidates.allocation_candidates(forest, query)
        except exception.Invalid as e:
            self.checked['refused'] += 1
            if refusal is None:
                return '%s: we refused (%s), Placement answered' % (where, e)
            return None
        if refusal is not None:
            return '%s: Placement refused (%s), we answered' % (
                where, refusal)
        self.checked['answered'] += 1
        self.checked['candidates'] += len(ours['allocation_requests'])
        self.checked['non-empty'] += bool(ours['allocation_requests'])
        if 'limit=' in query:
            # Any `limit` of the full answer will do: check ours is one
            # and compare the full answers.
            limit = int(query.split('limit=')[1].split('&')[0])
            unlimited = '&'.join(p for p in query.split('&')
                                 if not p.startswith('limit='))
            limited = ours
            ours = candidates.allocation_candidates(forest, unlimited)
            theirs_limited = theirs
            theirs, _ = self.ask_placement(unlimited)
            if (len(theirs_limited['allocation_requests']) != min(
                    limit, len(theirs['allocation_requests']))
                    or len(limited['allocation_requests']) != min(
                        limit, len(ours['allocation_requests']))):
                return '%s: wrong number of candidates' % where
            if not set(canonical_requests(limited)) <= set(
                    canonical_requests(ours)):
                return '%s: limited answer not in the full one' % where
            if canonical_summaries(limited) != canonical_summaries(
                    ours, _roots(limited)):
                return '%s: limited provider summaries differ' % where
        mine = canonical_requests(ours)
        if max(mine.values(), default=1) > 1:
            return '%s: we returned duplicates' % where
        want = set(canonical_requests(theirs))
        extra = set(mine) - want
        tolerated = {c for c in extra if _sharing_only(forest, c)}
        if extra - tolerated or want - set(mine):
            return ('%s:\n  only ours: %s\n  only Placement: %s' % (
                where, sorted(map(str, extra - tolerated)),
                sorted(map(str, want - set(mine)))))
        self.checked['sharing-anchor divergence'] += bool(tolerated)
        ours_s = canonical_summaries(ours)
        theirs_s = canonical_summaries(theirs)
        if any(ours_s[rp] != summary for rp, summary in theirs_s.items()
               if rp in ours_s) or not (
                set(theirs_s) <= set(ours_s) if tolerated
                else set(theirs_s) == set(ours_s)):
            return '%s: provider summaries differ:\n  ours %s\n  theirs %s' % (
                where, ours_s, theirs_s)
        return None

    def check_forests(self, first_seed, wide=False):
        mismatches = []
        for seed in range(first_seed, first_seed + FORESTS_PER_TEST):
            rng = random.Random(seed)
            spec = (random_wide_spec if wide else random_spec)(rng)
            placement_fixture.server().reset()
            placement_fixture.load_spec(self.api, spec)
            forest = self.load_ours(spec)
            queries = [(random_wide_query if wide else random_query)(
                rng, spec) for _ in range(REQUESTS_PER_FOREST)]
            queries += [rng.choice(BAD_QUERIES)]
            for query in queries:
                problem = self.compare(seed, forest, query, wide)
                if problem:
                    mismatches.append(problem)
        self.assertEqual([], mismatches, '%d mismatches in %s:\n%s' % (
            len(mismatches), dict(self.checked), '\n'.join(mismatches[:5])))
        self.assertGreater(self.checked['answered'],
                           REQUESTS_PER_FOREST * FORESTS_PER_TEST // 2)

    def test_forests_0(self):
        self.check_forests(BASE_SEED)

    def test_forests_1(self):
        self.check_forests(BASE_SEED + FORESTS_PER_TEST)

    def test_forests_2(self):
        self.check_forests(BASE_SEED + 2 * FORESTS_PER_TEST)

    def test_forests_3(self):
        self.check_forests(BASE_SEED + 3 * FORESTS_PER_TEST)

    def test_wide_forests(self):
        self.check_forests(BASE_SEED + 4 * FORESTS_PER_TEST, wide=True)

    def test_bad_requests_refused_by_both(self):
        spec = random_spec(random.Random(BASE_SEED))
        placement_fixture.load_spec(self.api, spec)
        forest = self.load_ours(spec)
        problems = [p for p in (self.compare(BASE_SEED, forest, q)
                                for q in BAD_QUERIES) if p]
        self.assertEqual([], problems)
        self.assertEqual(len(BAD_QUERIES), self.checked['refused'])

    def replay(self):
        """One query on one forest: see the module's docstring."""
        rng = random.Random(BASE_SEED)
        spec = (random_wide_spec if os.environ.get('PCLOUD_DIFF_WIDE')
                else random_spec)(rng)
        placement_fixture.load_spec(self.api, spec)
        self.assertIsNone(self.compare(BASE_SEED, self.load_ours(spec),
                                       REPLAY_QUERY))


if __name__ == '__main__':
    if not REPLAY_QUERY:
        sys.exit(__doc__)
    result = unittest.TextTestRunner(verbosity=2).run(
        TestCandidatesVsPlacement('replay'))
    sys.exit(not result.wasSuccessful())
