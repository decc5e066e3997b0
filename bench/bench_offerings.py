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
"""Offerings (reservations.offerings) at 1,000 hosts x 10,000 reservations.

The data of bench_instance_plugin (bench/dataset.py, its seed), loaded
into the ledger by its helpers. "slots": the 5 earliest windows of 1-20
slots of the dataset's flavors, any affinity, for 1 hour to 3 days, from
a random moment of its 30 days. "whole hosts": the 5 earliest windows of
1-5 whole hosts for 1 hour to 1 day; the dataset has no whole-host
leases, so its hosts are put in one host flavor pool and its instance
reservations are what keeps hosts busy. p50 and p90 in ms.
"""

import contextlib
import datetime
import gc
import random
import shutil
import tempfile
import time
import types

from bench import bench_instance_plugin as instances
from bench import database
from bench import dataset
from bench import timing
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin.pcloud import aggregates as codec

HOSTS, RESERVATIONS = 1000, 10000
COUNT = 5
FULL, QUICK = 40, 10


def _pools(data):
    """One host flavor pool of every host of the dataset."""
    from pcloud_plugin.reservations import host_requests

    pool = types.SimpleNamespace(
        name=codec.pool_name('bench'), uuid='pool-bench',
        metadata=codec.pool_metadata(codec.HostFlavor('bench', '', 1)),
        hosts=[h.name for h in data.hosts], availability_zone=None)
    return host_requests.Pools([pool], 'nova')


def _time(queries):
    ms, found = [], 0
    for query in queries:
        began = time.perf_counter()
        windows, _until = query()
        ms.append((time.perf_counter() - began) * 1000)
        found += len(windows)
    return ms, found


def run(quick=False):
    instances._configure_blazar()
    # Blazar's modules only once its options are registered (as there).
    from pcloud_plugin.reservations import offerings
    from pcloud_plugin.reservations import slots as slots_mod

    n = QUICK if quick else FULL
    tmp = tempfile.mkdtemp(prefix='pcloud-bench-offerings-')
    ledger = contextlib.ExitStack()
    try:
        data = dataset.Dataset(HOSTS, RESERVATIONS, seed=instances.SEED)
        # (Blazar's tables in a database of their own, empty.)
        engine, _seconds = instances._load(
            data, False, ledger.enter_context(database.ledger_url(tmp)),
            ledger.enter_context(database.ledger_url(tmp, 'blazar')))
        ledger.callback(engine.dispose)
        ledger.callback(db_api.main_context_manager.dispose_pool)
        gc.collect()
        gc.freeze()
        ctx = context_mod.get_admin_context()
        pools = _pools(data)
        rng = random.Random(HOSTS)
        hour = datetime.timedelta(hours=1)

        def slot_query():
            flavor = dataset._weighted(rng, dataset.FLAVORS)
            request = slots_mod.SlotRequest(
                dict(zip(dataset.CLASSES, flavor)), rng.randint(1, 20),
                affinity=rng.choice(dataset.AFFINITIES))
            start = dataset.moment(rng.uniform(0, dataset.HOURS))
            duration = hour * rng.randint(1, 72)
            return lambda: offerings.slot_offerings(
                ctx, request, duration, start, COUNT)

        def host_query():
            params = {'amount': rng.randint(1, 5), 'host_flavor': 'bench',
                      'availability_zone': None, 'required_traits': None}
            start = dataset.moment(rng.uniform(0, dataset.HOURS))
            duration = hour * rng.randint(1, 24)
            return lambda: offerings.host_offerings(
                ctx, db_snapshots.load_forest(ctx), pools, params, duration,
                start, COUNT)

        print('\nOfferings: the %d earliest windows, {:,} hosts x {:,} '
              'reservations (bench.dataset; ledger on %s)'.format(
                  HOSTS, RESERVATIONS) % (COUNT, database.label()))
        print('%-14s %8s %8s %8s %10s' % ('', 'queries', 'p50 ms',
                                          'p90 ms', 'windows'))
        for label, make in (('slots', slot_query),
                            ('whole hosts', host_query)):
            make()()  # warm: the first forest read
            ms, found = _time([make() for _ in range(n)])
            print('%-14s %8d %8.1f %8.1f %10d' % (
                label, n, timing.percentile(ms, 50),
                timing.percentile(ms, 90), found))
    finally:
        ledger.close()
        gc.unfreeze()
        shutil.rmtree(tmp)
