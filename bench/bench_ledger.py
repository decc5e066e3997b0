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

"""Admission cost as the ledger grows.

1,000 providers hold N time-bounded allocations spread over a year; we time
checking and claiming one new 10-slot reservation (one slot on each of 10
providers, for one day), as a median over many claims. Target: under 20 ms
at N = 10,000 on SQLite, growing no faster than the allocations that
overlap the claimed window (printed beside each figure). Beside it, the
rows one claim reads and its floor: as many durable commits and key
reads, timed on the same database (``--db``: MariaDB or PostgreSQL).

The peer is Placement's own claim, PUT /allocations/{consumer}, on the same
providers holding the same N allocations (timeless there, so all of them
count), called in-process through its WSGI app on its own (in-memory)
SQLite database; the providers and allocations are loaded into it with
direct inserts.

Last, allocation candidates from the ledger for a window crossing 20,000
allocations against a window crossing none (seeds/004, issue 3: within
x2), and the same crossing window with nothing cached.
"""

import contextlib
import datetime
import random
import shutil
import statistics
import tempfile
import time

from oslo_utils import uuidutils
import sqlalchemy as sa

from bench import database
from pcloud_plugin.capacity import candidates
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import snapshots as db_snapshots

PROVIDERS = 1000
SLOTS = 10
SLOT = {'VCPU': 2, 'MEMORY_MB': 2048}
HORIZON_DAYS = 365
WINDOW_ALLOCATIONS = 20000
WINDOW_QUERY = 'resources=VCPU:2,MEMORY_MB:2048'
T0 = datetime.datetime(2031, 1, 1)


def _load(engine, allocations, rng):
    """Providers, inventories and allocations straight through Core:

    setting up is not what is measured.
    """
    md = models.BASE.metadata.tables
    now = datetime.datetime.utcnow()
    with engine.begin() as conn:
        conn.execute(md['resource_classes'].insert(), [
            {'id': 1, 'name': 'VCPU'}, {'id': 2, 'name': 'MEMORY_MB'}])
        conn.execute(md['resource_providers'].insert(), [
            {'id': i, 'uuid': 'rp-%04d' % i, 'name': 'cn%04d' % i,
             'generation': 0, 'can_host': 1, 'root_provider_id': None,
             'created_at': now} for i in range(1, PROVIDERS + 1)])
        conn.execute(md['resource_providers'].update().values(
            root_provider_id=md['resource_providers'].c.id))
        conn.execute(md['inventories'].insert(), [
            dict(resource_provider_id=i, resource_class_id=rc, total=total,
                 reserved=0, min_unit=1, max_unit=total, step_size=1,
                 allocation_ratio=ratio, created_at=now)
            for i in range(1, PROVIDERS + 1)
            for rc, total, ratio in ((1, 64, 16.0), (2, 262144, 1.5))])
        rows = []
        for n in range(allocations):
            start = T0 + datetime.timedelta(
                hours=rng.randrange(HORIZON_DAYS * 24))
            end = start + datetime.timedelta(hours=rng.randint(24, 7 * 24))
            rp = rng.randint(1, PROVIDERS)
            for rc, used in ((1, SLOT['VCPU']), (2, SLOT['MEMORY_MB'])):
                rows.append(dict(
                    resource_provider_id=rp, resource_class_id=rc,
                    consumer_id='old-%d' % n, used=used, start_time=start,
                    end_time=end, created_at=now))
            if len(rows) >= 20000:
                conn.execute(md['allocations'].insert(), rows)
                rows = []
        if rows:
            conn.execute(md['allocations'].insert(), rows)


def _overlapping(engine, providers, start, end):
    alloc = models.Allocation.__table__
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).where(
            alloc.c.resource_provider_id.in_(
                [int(p[3:]) for p in providers]),
            alloc.c.end_time > start, alloc.c.start_time < end)).scalar()


@contextlib.contextmanager
def _fresh_ledger(allocations, rng):
    """The engine of a new ledger holding the providers and allocations."""
    tmp = tempfile.mkdtemp(prefix='pcloud-bench-')
    try:
        with database.ledger(tmp) as engine:
            _load(engine, allocations, rng)
            yield engine
    finally:
        shutil.rmtree(tmp)


def measure(allocations, claims):
    """(median ms, p90 ms, mean overlapping rows, floor median ms, rows

    read by one claim) for one ledger size.
    """
    rng = random.Random(allocations)
    with _fresh_ledger(allocations, rng) as engine:
        context = context_mod.get_admin_context()

        def draw():
            """A new claim's (providers, start, end), its overlap noted."""
            start = T0 + datetime.timedelta(hours=rng.randrange(
                (HORIZON_DAYS - 1) * 24))
            end = start + datetime.timedelta(days=1)
            providers = ['rp-%04d' % i for i in rng.sample(
                range(1, PROVIDERS + 1), SLOTS)]
            overlaps.append(_overlapping(engine, providers, start, end))
            return providers, start, end

        def claim(providers, start, end):
            began = time.perf_counter()
            db_claims.claim(context, uuidutils.generate_uuid(),
                            {p: dict(SLOT) for p in providers}, start, end)
            return (time.perf_counter() - began) * 1000

        overlaps = []
        timings = sorted(claim(*draw()) for _n in range(claims))
        drawn = draw()
        of = database.shape(engine, lambda: claim(*drawn))
        floor = database.floor(engine, of, claims)
    return (statistics.median(timings), timings[int(len(timings) * 0.9)],
            statistics.mean(overlaps), statistics.median(floor), of)


def measure_placement(allocations, claims):
    """Median ms of Placement's PUT /allocations for the same claim.

    The providers and the N allocations go in with direct inserts (the
    rows Placement's API writes; its REST API takes an hour for 100,000);
    the claims timed go through its WSGI app, in-process.
    """
    from pcloud_plugin.tests.functional import placement_fixture

    rng = random.Random(allocations)
    fixture = placement_fixture.PlacementFixture()
    fixture.setUp()
    try:
        uuids = [uuidutils.generate_uuid() for _ in range(PROVIDERS)]
        inventories = {
            'VCPU': {'total': 64, 'max_unit': 64, 'allocation_ratio': 16.0},
            'MEMORY_MB': {'total': 262144, 'max_unit': 262144,
                          'allocation_ratio': 1.5}}
        placement_fixture.bulk_load({
            'providers': [{'uuid': uuid, 'name': 'cn%04d' % i,
                           'parent': None, 'inventories': inventories}
                          for i, uuid in enumerate(uuids, 1)],
            'allocations': [
                (uuidutils.generate_uuid(), {rng.choice(uuids): dict(SLOT)})
                for _ in range(allocations)]}, fixture.api)
        timings = []
        for n in range(claims):
            body = {'allocations': {rp: {'resources': dict(SLOT)}
                                    for rp in rng.sample(uuids, SLOTS)},
                    'project_id': 'p', 'user_id': 'u',
                    'consumer_generation': None, 'consumer_type': 'INSTANCE'}
            url = '/allocations/%s' % uuidutils.generate_uuid()
            began = time.perf_counter()
            resp = fixture.api.put(url, json=body)
            timings.append((time.perf_counter() - began) * 1000)
            if resp.status_code != 204:
                raise RuntimeError('Placement refused a claim: %s %s'
                                   % (resp.status_code, resp.text))
        return statistics.median(timings)
    finally:
        fixture.cleanUp()


def measure_window(rounds):
    """p50 ms of candidates from the ledger (forest loaded, then the

    engine), on a ledger of WINDOW_ALLOCATIONS allocations:

    - "now": a window crossing none, as a query about now on a ledger
      whose claims all lie ahead does;
    - "crossing": a window crossing every one of them;
    both as a long-running manager answers them: a new 10-slot claim
    (ahead of "now") lands between two queries, so the usage of the
    providers it touched is read again;
    - "unchanged": the crossing window with nothing written between
      queries, so the ledger's last snapshot is reused;
    - "cold": the crossing window with nothing cached (a manager's first
      query after it starts).
    """
    rng = random.Random(20000)
    with _fresh_ledger(WINDOW_ALLOCATIONS, rng) as engine:
        return _window(engine, rng, rounds)


def _window(engine, rng, rounds):
    context = context_mod.get_admin_context()
    first, last = T0, T0 + datetime.timedelta(days=HORIZON_DAYS + 8)

    def p50(start, end, between=lambda: None):
        timings = []
        for _ in range(rounds):
            between()
            began = time.perf_counter()
            found = candidates.allocation_candidates(
                db_snapshots.load_forest(context, start, end), WINDOW_QUERY)
            timings.append((time.perf_counter() - began) * 1000)
        assert found['allocation_requests'], 'no candidates'
        return statistics.median(timings)

    def new_claim():
        start = first + datetime.timedelta(hours=rng.randrange(
            (HORIZON_DAYS - 1) * 24))
        db_claims.claim(context, uuidutils.generate_uuid(), {
            'rp-%04d' % i: dict(SLOT)
            for i in rng.sample(range(1, PROVIDERS + 1), SLOTS)},
            start, start + datetime.timedelta(days=1))

    def forget_usage():
        provider_cache.CACHE = provider_cache.ProviderCache()

    now = p50(first - datetime.timedelta(days=2),
              first - datetime.timedelta(days=1), new_claim)
    cold = p50(first, last, forget_usage)
    crossing = p50(first, last, new_claim)
    unchanged = p50(first, last)
    crossed = _overlapping(engine, ['rp-%04d' % i for i in range(
        1, PROVIDERS + 1)], first, last) // len(SLOT)
    return now, crossing, unchanged, cold, crossed


def run(quick=False):
    claims = 50 if quick else 300
    print('\nLedger admission: check and claim one 10-slot reservation '
          '(1,000 providers, %s); the floor: as many durable commits and '
          'key reads' % database.label())
    print('%-12s %10s %10s %10s %10s %13s %16s %8s'
          % ('allocations', 'p50 ms', 'p90 ms', 'floor ms', 'rows read',
             'overlap/claim', 'Placement p50', 'ratio'))
    results = {}
    for allocations in (10000, 100000):
        p50, p90, overlap, floor, of = measure(allocations, claims)
        results[allocations] = (p50, overlap)
        peer = measure_placement(allocations, claims)
        print('%-12d %10.2f %10.2f %10.2f %10d %13.1f %16s %8s' % (
            allocations, p50, p90, floor, of.rows, overlap,
            '%.2f' % peer if peer else '-',
            'x%.1f' % (peer / p50) if peer else '-'))
    p50_small, ov_small = results[10000]
    p50_big, ov_big = results[100000]
    print('growth x%.2f in time for x%.2f in overlapping rows; target '
          '< 20 ms at 10,000: %s' % (
              p50_big / p50_small, ov_big / max(ov_small, 1e-9),
              'met' if p50_small < 20 else 'MISSED'))

    now, crossing, unchanged, cold, crossed = measure_window(
        5 if quick else 15)
    print('\nAllocation candidates from the ledger (1,000 hosts, %s, load '
          'and engine), p50:\n'
          '  window crossing none ("now"), a claim between queries: '
          '%7.1f ms\n'
          '  window crossing %d allocations, the same:          '
          '%7.1f ms  x%.2f of "now"; target within x2: %s\n'
          '  the same window, nothing written between:            '
          '%7.1f ms\n'
          '  the same window, nothing cached (first query):       '
          '%7.1f ms  x%.2f'
          % (WINDOW_QUERY, now, crossed, crossing, crossing / now,
             'met' if crossing <= 2 * now else 'MISSED', unchanged, cold,
             cold / now))
    return results
