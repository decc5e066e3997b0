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

"""The PcloudFilter against its peers in nova-scheduler.

10,000 of Nova's own HostState objects, each in one of 4 availability zone
aggregates; 6,000 of them in 4 pool-like aggregates, 5,000 of those split
among 200 tenant aggregates of 25 hosts. Each filter sees its own kind of
aggregates over that same shape:

* PcloudFilter: host flavor pools and pclouds (seeds/000 metadata: names,
  states, 3 tenants each);
* blazar-nova's BlazarFilter: the freepool and 200 reservation aggregates
  (blazar:owner, an extra tenant);
* Nova's AggregateMultiTenancyIsolation: 200 aggregates with
  filter_tenant_id (3 tenants each).

Two requests: one with no hint from a tenant of no aggregate, and one for
aggregate 100 (pcloud hint, reservation hint, or a tenant of it) from its
owner. Timed is filter_all() over all hosts, as nova-scheduler calls it;
the best of several runs, in hosts per second; "pass" is how many hosts
passed, "Pcloud x" how many times faster the PcloudFilter is (no hint /
targeted). Target: the PcloudFilter at least as fast as the BlazarFilter.

Nova registers global options that clash with Blazar's, so this runs in a
process of its own, whatever other benchmarks loaded.
"""

import os
import subprocess
import sys
import time

HOSTS = 10000
PCLOUDS = 200
PER_PCLOUD = 25
POOL_HOSTS = 6000
FLAVORS = 4
ZONES = 4
TARGET = 100
OWNER = 'owner%03d' % TARGET


def _uuid(kind, n):
    return '%08x-0000-4000-8000-%012d' % (kind, n)


def _pool_of(i):
    return i * FLAVORS // POOL_HOSTS


def _tenant_aggregate_of(i):
    return i // PER_PCLOUD if i < PCLOUDS * PER_PCLOUD else None


def _worlds():
    """Aggregates of each kind, by host index."""
    from nova import objects

    from pcloud_plugin.pcloud import aggregates as codec

    ids = iter(range(1, 100000))

    def agg(name, metadata, az=None):
        md = dict(metadata)
        if az:
            md['availability_zone'] = az
        return objects.Aggregate(id=next(ids), name=name, metadata=md,
                                 hosts=[])
    zones = [agg('az%d' % z, {}, az='az%d' % z) for z in range(ZONES)]

    pools = [agg(codec.pool_name('f%d' % f), codec.pool_metadata(
        codec.HostFlavor('f%d' % f, 'flavor %d' % f, 1)))
        for f in range(FLAVORS)]
    pclouds = []
    for p in range(PCLOUDS):
        pid = _uuid(1, p)
        md = codec.pcloud_metadata(pid, 'pcloud %d' % p, 'owner%03d' % p)
        md.update({codec.tenant_key('friend%03d%d' % (p, t)): codec.TENANT
                   for t in range(2)})
        md[codec.CPU_RATIO] = '2.0'
        for n in range(PER_PCLOUD):
            hostname = 'cn%05d' % (p * PER_PCLOUD + n)
            md[codec.host_key('h%d' % n)] = hostname
            md[codec.host_state_key(hostname)] = (
                codec.DISABLED if n == 0 else codec.ENABLED)
        pclouds.append(agg(codec.pcloud_name(pid), md))

    freepool = agg('freepool', {})
    reservations = [agg(_uuid(2, p), {
        'blazar:owner': 'owner%03d' % p,
        'friend%03d0' % p: 'blazar:tenant'}, az='blazar_nova')
        for p in range(PCLOUDS)]

    isolated = [agg('tenant-%d' % p, {
        'filter_tenant_id': 'owner%03d,friend%03d0,friend%03d1' % (p, p, p)})
        for p in range(PCLOUDS)]

    def pcloud_world(i):
        aggs = [zones[i % ZONES]]
        if i < POOL_HOSTS:
            aggs.append(pools[_pool_of(i)])
        t = _tenant_aggregate_of(i)
        if t is not None:
            aggs.append(pclouds[t])
        return aggs

    def blazar_world(i):
        aggs = [zones[i % ZONES]]
        t = _tenant_aggregate_of(i)
        if t is not None:
            aggs.append(reservations[t])
        elif i < POOL_HOSTS:
            aggs.append(freepool)
        return aggs

    def isolation_world(i):
        aggs = [zones[i % ZONES]]
        t = _tenant_aggregate_of(i)
        if t is not None:
            aggs.append(isolated[t])
        return aggs

    return {'pcloud': pcloud_world, 'blazar': blazar_world,
            'isolation': isolation_world}


def _hosts(world):
    from nova.scheduler import host_manager

    hosts = []
    for i in range(HOSTS):
        name = 'cn%05d' % i
        state = host_manager.HostState(name, name, 'cell1')
        state.aggregates = world(i)
        hosts.append(state)
    return hosts


def _spec(project_id, hints):
    from nova import objects

    return objects.RequestSpec(
        project_id=project_id, flavor=objects.Flavor(extra_specs={}),
        scheduler_hints={k: [v] for k, v in hints.items()})


def _time(filter_, hosts, spec, repeat):
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        passed = list(filter_.filter_all(hosts, spec))
        took = time.perf_counter() - started
        best = took if best is None else min(best, took)
    return len(hosts) / best, len(passed)


def _peers():
    """(label, filter, world, no-hint request, targeted request)."""
    from nova.scheduler.filters import aggregate_multitenancy_isolation

    from pcloud_plugin.scheduler.filters import pcloud_filter

    stranger = 'stranger'
    peers = [('PcloudFilter', pcloud_filter.PcloudFilter(), 'pcloud',
              _spec(stranger, {}),
              _spec(OWNER, {'pcloud': _uuid(1, TARGET)}))]
    try:
        from blazarnova.scheduler.filters import blazar_filter
    except ImportError:
        blazar_filter = None
    if blazar_filter:
        peers.append(('BlazarFilter', blazar_filter.BlazarFilter(),
                      'blazar', _spec(stranger, {}),
                      _spec(OWNER, {'reservation': _uuid(2, TARGET)})))
    peers.append(('AggregateMultiTenancyIsolation',
                  aggregate_multitenancy_isolation.
                  AggregateMultiTenancyIsolation(),
                  'isolation', _spec(stranger, {}), _spec(OWNER, {})))
    return peers, blazar_filter is not None


def measure(quick=False):
    """Hosts per second of each filter: {label: (no_hint, targeted)}."""
    from nova import objects

    objects.register_all()
    repeat = 3 if quick else 15
    worlds = _worlds()
    peers, have_blazar = _peers()
    results = {}
    for label, filter_, world, plain, targeted in peers:
        hosts = _hosts(worlds[world])
        results[label] = (_time(filter_, hosts, plain, repeat),
                          _time(filter_, hosts, targeted, repeat))
    return results, have_blazar


def _report(quick):
    from oslo_config import cfg

    cfg.CONF([], project='nova', default_config_files=[])
    results, have_blazar = measure(quick)
    print('\nScheduler filters over %d hosts, %d tenant aggregates: hosts '
          'per second, best of %d' % (HOSTS, PCLOUDS, 3 if quick else 15))
    print('%-31s %14s %7s %14s %7s %13s'
          % ('filter', 'no hint', 'pass', 'targeted', 'pass',
             'Pcloud x'))
    ours = results['PcloudFilter']
    for label, ((plain, n_plain), (targeted, n_targeted)) in (
            results.items()):
        ratio = ('-' if label == 'PcloudFilter' else 'x%.1f / x%.1f' % (
            ours[0][0] / plain, ours[1][0] / targeted))
        print('%-31s %14.0f %7d %14.0f %7d %13s' % (
            label, plain, n_plain, targeted, n_targeted, ratio))
    if have_blazar:
        blazar = results['BlazarFilter']
        met = ours[0][0] >= blazar[0][0] and ours[1][0] >= blazar[1][0]
        print('target: PcloudFilter at least as fast as BlazarFilter: %s'
              % ('met' if met else 'MISSED'))
    else:
        print('BlazarFilter not measured: blazar-nova is not installed '
              '(pip install blazar-nova)')
    return results


def run(quick=False):
    """Measure in a child process (see the module docstring)."""
    # Nova's imports make eventlet warn that it is deprecated: not ours.
    argv = [sys.executable, '-W', 'ignore::Warning', '-m',
            'bench.bench_filter']
    if quick:
        argv.append('--quick')
    subprocess.run(argv, check=True,
                   cwd=os.path.dirname(os.path.dirname(__file__)) or '.')


if __name__ == '__main__':
    _report('--quick' in sys.argv[1:])
