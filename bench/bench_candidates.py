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
"""GET /allocation_candidates: real Placement in-process against our engine.

Each scenario's forest is loaded both in Placement (openstack-placement's
WSGI app on its own in-memory SQLite, called without a socket) and in our
ledger (a SQLite file, or a new database on the server of ``--db``); the
same query is timed on both and the median (p50) latencies printed side by
side. Ours is timed four ways:

* "ours": the engine alone on the forest read from the ledger once;
* "incl. load": the forest read again for each query
  (pcloud_plugin.db.snapshots.load_forest, as the reservation plugins do), with
  nothing written between queries, so the ledger hands back its snapshot;
* "a write between": the same, with a claim made or released (untimed)
  before each query, as in a busy service: the load reads every provider
  row and builds a new forest, reusing the providers that did not change;
* "cold": the engine on a copy of the forest that nothing has been derived
  from yet (no indexes, no provider summaries): the first query on a
  ledger that changed everywhere.

Run: python -m bench candidates [--quick], or
python bench/bench_candidates.py [--quick] [--only NAME]
"""

import argparse
import contextlib
import dataclasses
import gc
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid as uuidlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from bench import database  # noqa: E402
from pcloud_plugin.capacity import candidates  # noqa: E402
from pcloud_plugin.capacity import forest as forest_mod  # noqa: E402
from pcloud_plugin.tests.functional import placement_fixture  # noqa: E402
from pcloud_plugin.tests.functional import \
    test_candidates_vs_placement as differential  # noqa: E402,H306


def _uuids(rng):
    return lambda: str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def _provider(new, name, parent=None, inventories=None, traits=(),
              aggregates=()):
    return {'uuid': new(), 'name': name, 'parent': parent,
            'inventories': inventories or {}, 'traits': list(traits),
            'aggregates': list(aggregates)}


def flat(rng, hosts=1000):
    """Flat compute nodes, like placeload's.

    Half with AVX2, each in one of three aggregates.
    """
    new = _uuids(rng)
    aggs = [new() for _ in range(3)]
    providers = [_provider(
        new, 'cn%d' % i, inventories={
            'VCPU': {'total': 32, 'allocation_ratio': 16.0},
            'MEMORY_MB': {'total': 131072, 'allocation_ratio': 1.5},
            'DISK_GB': {'total': 2048}},
        traits=['HW_CPU_X86_AVX2'] if rng.random() < 0.5 else [],
        aggregates=[rng.choice(aggs)]) for i in range(hosts)]
    return {'providers': providers, 'allocations': [], 'aggregates': aggs}


def numa_sharing(rng, hosts=1000, shared=20):
    """Hosts with two NUMA children, and sharing storage.

    MEMORY_MB and DISK_GB on the root, VCPU on the NUMA children; each
    sharing provider serves its own aggregate of hosts.
    """
    new = _uuids(rng)
    aggs = [new() for _ in range(shared)]
    providers = [_provider(
        new, 'ss%d' % i, inventories={'DISK_GB': {'total': 100000}},
        traits=['MISC_SHARES_VIA_AGGREGATE'], aggregates=[agg])
        for i, agg in enumerate(aggs)]
    for i in range(hosts):
        root = _provider(new, 'cn%d' % i, inventories={
            'MEMORY_MB': {'total': 65536}, 'DISK_GB': {'total': 1000}},
            aggregates=[aggs[i % shared]])
        providers.append(root)
        for n in range(2):
            providers.append(_provider(
                new, 'cn%d-numa%d' % (i, n), root['uuid'],
                {'VCPU': {'total': 16}}, ['HW_NUMA_ROOT']))
    return {'providers': providers, 'allocations': [], 'aggregates': aggs}


def nested_perfload(rng, trees=1000):
    """Placement's nested perfload layout, 7 providers a tree.

    gate/gabbits/nested-perfload.yaml in the placement repository, rebuilt
    here from its description (not installed with the package): a compute
    node with DISK_GB and COMPUTE_VOLUME_MULTI_ATTACH, two NUMA
    nodes (HW_NUMA_ROOT; the second also CUSTOM_FOO) with VCPU and
    MEMORY_MB, two FPGAs under the second and an FPGA and a VGPU provider
    under the first.
    """
    new = _uuids(rng)
    providers = []
    for i in range(trees):
        cn = _provider(new, 'cn%d' % i, inventories={
            'DISK_GB': {'total': 20480}},
            traits=['COMPUTE_VOLUME_MULTI_ATTACH'])
        numa0 = _provider(new, 'cn%d-numa0' % i, cn['uuid'], {
            'VCPU': {'total': 4, 'reserved': 2},
            'MEMORY_MB': {'total': 2048, 'min_unit': 512, 'step_size': 256}},
            ['HW_NUMA_ROOT'])
        numa1 = _provider(new, 'cn%d-numa1' % i, cn['uuid'], {
            'VCPU': {'total': 4},
            'MEMORY_MB': {'total': 2048, 'min_unit': 256, 'max_unit': 1024}},
            ['HW_NUMA_ROOT', 'CUSTOM_FOO'])
        providers += [cn, numa0, numa1] + [
            _provider(new, 'cn%d-%s' % (i, name), parent['uuid'], {rc: n})
            for name, parent, rc, n in (
                ('fpga0', numa0, 'FPGA', {'total': 1}),
                ('pgpu0', numa0, 'VGPU', {'total': 8}),
                ('fpga1_0', numa1, 'FPGA', {'total': 1}),
                ('fpga1_1', numa1, 'FPGA', {'total': 1}))]
    return {'providers': providers, 'allocations': [], 'aggregates': [],
            'traits': ['CUSTOM_FOO']}


def wide(rng, children=8):
    """One compute node with `children` PFs of one CUSTOM_VF each.

    The shape of Placement bugs 2070257 and 2126751.
    """
    new = _uuids(rng)
    cn = _provider(new, 'cn', inventories={
        'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096},
        'DISK_GB': {'total': 500}})
    pfs = [_provider(new, 'cn-pf%d' % i, cn['uuid'],
                     {'CUSTOM_VF': {'total': 1}}) for i in range(children)]
    return {'providers': [cn] + pfs, 'allocations': [], 'aggregates': []}


def scenarios(rng):
    flat_spec = flat(rng)
    wide_query = ('resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2'
                  + ''.join('&resources%d=CUSTOM_VF:1' % g for g in range(8))
                  + '&group_policy=none')
    return [
        ('1000 flat hosts', flat_spec,
         'resources=VCPU:1,MEMORY_MB:256,DISK_GB:10', {}),
        ('1000 flat hosts, perfload query', flat_spec,
         'resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
         '&required=HW_CPU_X86_AVX2' % flat_spec['aggregates'][0], {}),
        ('1000 hosts x 2 NUMA + 20 sharing', numa_sharing(rng),
         'resources=VCPU:1,MEMORY_MB:512,DISK_GB:100', {}),
        ('nested perfload, 1000 x 7', nested_perfload(rng),
         'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH'
         '&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO'
         '&resources_FPGA=FPGA:1&group_policy=none'
         '&same_subtree=_COMPUTE,_FPGA', {}),
        # Placement's own remedy for this shape: its wide-tree workaround
        # and a cap of 1000, which we match with max_candidates.
        ('8 x 8 wide tree, cap 1000', wide(rng), wide_query,
         {'max_candidates': 1000,
          'placement': {('workarounds', 'optimize_for_wide_provider_trees'):
                        True,
                        ('placement', 'max_allocation_candidates'): 1000}}),
        # Uncapped, Placement needs minutes (10k took it 106 s in its own
        # test), so only ours runs: every one of the 8! candidates.
        ('8 x 8 wide tree, all 40320', None, wide_query,
         {'placement': None}),
    ]


def _count(answer):
    return len(answer['allocation_requests'])


def _count_response(response):
    return _count(response.json())


def p50s(timed, rounds):
    """Median time and last count of candidates of each (fn, repeat,

    count, before) in timed; before, if set, runs untimed ahead of each
    call. The functions take turns each round, so that Placement and ours
    meet the same background load. Each answer is counted (Placement's
    JSON parsed) outside the timing and dropped, and the collector run,
    before the next call: no call leaves garbage for the next one to
    collect. (Placement leaves reference cycles, its database sessions
    and requests; collecting them untimed only flatters Placement.)
    """
    times = [[] for _ in timed]
    counts = [None] * len(timed)
    for _ in range(rounds):
        for i, (fn, repeat, count, before) in enumerate(timed):
            for _ in range(repeat):
                if before is not None:
                    before()
                start = time.perf_counter()
                answer = fn()
                times[i].append(time.perf_counter() - start)
                counts[i] = count(answer)
                answer = None
                gc.collect()
    return [statistics.median(t) for t in times], counts


class Ledger:
    """Our side: the scenario's forest in a scratch ledger database."""

    def __init__(self):
        from pcloud_plugin import conf
        from pcloud_plugin import context
        from pcloud_plugin.db import api
        from pcloud_plugin.db import claims
        from pcloud_plugin.db import snapshots
        self.tmp = tempfile.mkdtemp(prefix='pcloud-bench-candidates-')
        conf.CONF([], project='pcloud', default_config_files=[])
        # A scratch database: no need to wait for the disk on each write.
        conf.CONF.set_override('sqlite_synchronous', False,
                               group='pcloud_database')
        self.database = contextlib.ExitStack()
        self.database.enter_context(database.ledger(self.tmp))
        self.api, self.context = api, context.get_admin_context()
        self.claims = claims
        self.snapshots = snapshots

    def close(self):
        self.database.close()
        shutil.rmtree(self.tmp)

    def load(self, spec):
        differential.load_ledger(self.context, spec)
        # What write() claims and releases in turn: one unit of the first
        # class any amount of fits.
        self.claim = next(
            {p['uuid']: {rc: 1}} for p in spec['providers']
            for rc, inv in p['inventories'].items()
            if inv.get('min_unit', 1) == 1 and inv.get('step_size', 1) == 1)
        self.claimed = False

    def forest(self):
        return self.snapshots.load_forest(self.context)

    def write(self):
        """Make the claim, or release it if made."""
        if self.claimed:
            self.claims.release(self.context, 'bench-write')
        else:
            self.claims.claim(self.context, 'bench-write', self.claim)
        self.claimed = not self.claimed


def cold_copy(forest):
    """The forest's providers in a new forest, with nothing derived yet."""
    return forest_mod.ProviderForest(
        dataclasses.replace(p) for p in forest)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='fewer runs per query')
    parser.add_argument('--only', help='run scenarios whose name has this')
    args = parser.parse_args(argv)
    rounds, repeat = (3, 2) if args.quick else (11, 3)

    fixture = placement_fixture.PlacementFixture()
    fixture.setUp()
    try:
        _run(args, fixture.server, fixture.api, rounds, repeat)
    finally:
        fixture.cleanUp()


def run(quick=False):
    """What python -m bench calls."""
    main(['--quick'] if quick else [])


def _run(args, placement, api, rounds, repeat):
    ledger = Ledger()
    try:
        _run_scenarios(args, placement, api, rounds, repeat, ledger)
    finally:
        ledger.close()


def _run_scenarios(args, placement, api, rounds, repeat, ledger):
    rows = []
    loaded = spec = None
    for name, new_spec, query, options in scenarios(random.Random(2026)):
        if args.only and args.only not in name:
            continue
        spec = new_spec or spec
        if spec is not loaded:
            placement.reset()
            placement_fixture.bulk_load(spec, api)
            ledger.load(spec)
            forest = ledger.forest()
            loaded = spec
            _freeze_setup()
        cap = options.get('max_candidates')
        overrides = options.get('placement', {})

        def ours(forest):
            return candidates.allocation_candidates(
                forest, query, max_candidates=cap)

        cold = {}
        timed = [
            (lambda: ours(forest), repeat, _count, None),
            # Asked once untimed, so that nothing (not the last round's
            # write) was written since the last query: the steady state.
            (lambda: ours(ledger.forest()), 1, _count,
             lambda: ours(ledger.forest())),
            (lambda: ours(ledger.forest()), 1, _count, ledger.write),
            (lambda: ours(cold['forest']), 1, _count,
             lambda: cold.update(forest=cold_copy(forest)))]
        if overrides is not None:
            timed.append((lambda: api.get('/allocation_candidates?' + query),
                          1, _count_response, None))
            for (group, opt), value in overrides.items():
                placement.conf.set_override(opt, value, group=group)
        try:
            medians, counts = p50s(timed, rounds)
        finally:
            for group, opt in overrides or ():
                placement.conf.clear_override(opt, group=group)
            if ledger.claimed:
                ledger.write()
        theirs = overrides is not None
        rows.append((name, counts[0], counts[-1] if theirs else None,
                     medians[-1] if theirs else None, medians[:4]))
        print('.', end='', flush=True)
    print()
    _print(rows)


def _freeze_setup():
    """Keep what the harness set up out of the garbage collector's way.

    The scenario specs, the engine-only forest and Placement's loaded
    fixture are some 170,000 objects no service would hold; left in, each
    full collection walks them all, and whichever call trips it (often
    the one that loads 3,000 providers) pays 150 ms for the harness.
    Both sides run in this process, so both are measured the same way.
    (The engine-only forest stays frozen: a forest a caller holds is not
    garbage either.)
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _ms(seconds):
    return 'not run' if seconds is None else '%.1f ms' % (seconds * 1000)


def _ratio(theirs, ours):
    return '-' if theirs is None else '%.0fx' % (theirs / ours)


def _print(rows):
    head = ['scenario', 'candidates', 'placement p50', 'ours p50', 'ratio',
            'incl. load', 'ratio', 'a write between', 'ratio', 'cold',
            'ratio']
    table = [head]
    for name, n_ours, n_theirs, theirs_t, ours_ts in rows:
        count = str(n_ours) if n_ours == n_theirs or n_theirs is None else (
            '%d (placement %d)' % (n_ours, n_theirs))
        row = [name, count, _ms(theirs_t)]
        for ours_t in ours_ts:
            row += [_ms(ours_t), _ratio(theirs_t, ours_t)]
        table.append(row)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        print('  '.join(cell.ljust(w) if j == 0 else cell.rjust(w)
                        for j, (cell, w) in enumerate(zip(row, widths))))
        if i == 0:
            print('  '.join('-' * w for w in widths))


if __name__ == '__main__':
    main()
