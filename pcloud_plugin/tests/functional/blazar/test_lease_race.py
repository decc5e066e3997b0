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
"""Blazar managers in 8 real processes creating virtual:instance leases

at once, sharing one Blazar database and one ledger on MariaDB (and on
PostgreSQL), as API
workers and managers of a real deployment do. The hosts hold exactly K
slots, every lease's window contains the same hour, and each process
creates leases of 1 or 2 slots (any affinity) until one of a single slot
is refused: so exactly K slots must be admitted, no host over capacity.
With a VCPU quota below K, the project's limit must hold instead; and
it must hold when every process, holding one small lease, grows it at
the same moment (each growth fits the limit alone, together they do not).
"""

import collections
import datetime
import multiprocessing
import random
import time
import traceback

from blazar.db.sqlalchemy import models as blazar_models
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.cloud import promises
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional import placement_service

PROCESSES = 8
HOSTS = 6
SLOTS_PER_HOST = 8
K = HOSTS * SLOTS_PER_HOST
# Below K: the limit, not capacity, refuses first.
QUOTA = K // 3
SLOT = {'vcpus': 1, 'memory_mb': 512, 'disk_gb': 5}
PER_SLOT = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}


# Each grows its one-slot lease to this many slots (grow race).
GROWN = 4


def _manager_process(blazar_url, ledger_url, placement_url, worker,
                     base_time, results, quota, barrier=None):
    """One blazar-manager: leases until a one-slot lease is refused; with

    a barrier, one lease of a slot, grown to GROWN slots once every
    process holds its own.
    """
    from unittest import mock

    from blazar import context as blazar_context
    from blazar.manager import exceptions as mgr_exc
    from blazar.manager import service as manager_service
    from blazar.notification import notifier as blazar_notifier
    from blazar.utils import trusts
    from oslo_messaging import opts as messaging_opts

    from pcloud_plugin.blazar import errors
    from pcloud_plugin.clients import nova as nova_client
    from pcloud_plugin import conf
    from pcloud_plugin.tests.functional.blazar import base as blazar_base
    from pcloud_plugin.tests.functional.blazar import fake_nova

    conf.CONF([], project='blazar', default_config_files=[])
    for group, opts in messaging_opts.list_opts():
        conf.CONF.register_opts(opts, group=group)
    placement_service.use_placement(conf.CONF, placement_url)
    for name, value, group in (
            ('connection', blazar_url, 'database'),
            ('connection', ledger_url, 'pcloud_database'),
            ('plugins', [blazar_base.ENTRY_POINT], 'manager'),
            ('transport_url', 'fake:/', None),
            ('driver', ['noop'], 'oslo_messaging_notifications'),
            ('claim_retries', 50, 'ledger'),
            ('admission_retries', 50, 'pcloud_instance'),
            ('cleanup_interval', 0, 'pcloud_instance'),
            ('reserved_vcpus_quota', quota, 'pcloud')):
        conf.CONF.set_override(name, value, group=group)
    blazar_notifier.init()
    mock.patch.object(nova_client, 'get_client',
                      return_value=fake_nova.FakeNova()).start()

    def context():
        return blazar_context.BlazarContext(
            user_id=blazar_base.USER, project_id=blazar_base.PROJECT,
            service_catalog=blazar_base.CATALOG)
    mock.patch.object(trusts, 'create_ctx_from_trust',
                      side_effect=lambda trust_id: context()).start()

    def lease(name, amount, affinity, start, end):
        with context():
            return manager.create_lease({
                'name': name,
                'start_date': start.strftime('%Y-%m-%d %H:%M'),
                'end_date': end.strftime('%Y-%m-%d %H:%M'),
                'reservations': [dict(
                    SLOT, resource_type='virtual:instance',
                    amount=amount, affinity=affinity,
                    resource_properties='')],
                'events': [], 'trust_id': 'trust', 'user_id': 'u'})

    try:
        manager = manager_service.ManagerService()
        if barrier is not None:
            made = lease('g%d' % worker, 1, None,
                         base_time + datetime.timedelta(minutes=50),
                         base_time + datetime.timedelta(minutes=130))
            rid = made['reservations'][0]['id']
            barrier.wait(timeout=120)
            try:
                with context():
                    manager.update_lease(lease_id=made['id'], values={
                        'reservations': [{'id': rid, 'amount': GROWN}]})
                results.put((worker, [(rid, GROWN)], 0))
            except mgr_exc.CantUpdateParameter:
                results.put((worker, [(rid, 1)], 1))
            return
        rng = random.Random(worker)
        admitted, refused, attempt = [], 0, 0
        while True:
            amount = rng.choice((1, 2))
            affinity = rng.choice((None, True, False)) if amount > 1 else None
            # Every window holds [base + 50 min, base + 130 min).
            start = base_time + datetime.timedelta(
                minutes=rng.randint(0, 50))
            end = base_time + datetime.timedelta(
                minutes=rng.randint(130, 190))
            attempt += 1
            try:
                made = lease('w%d-%d' % (worker, attempt), amount, affinity,
                             start, end)
            except (mgr_exc.NotEnoughHostsAvailable, errors.QuotaRefused):
                refused += 1
                if amount == 1:
                    break
                continue
            admitted.append((made['reservations'][0]['id'], amount))
        results.put((worker, admitted, refused))
    except Exception:
        # Reported, so that the test fails at once, saying why.
        results.put((worker, None, traceback.format_exc()))


class _BlazarDatabase:
    """A private Blazar database on the server, Blazar's own schema."""

    def __init__(self, test, driver):
        backend = provision.Backend.backend_for_database_type(driver)
        ident = 'blazar_' + provision._random_ident()
        backend.create_named_database(ident)
        test.addCleanup(backend.drop_named_database, ident)
        self.url = str(backend.provisioned_database_url(ident)
                       .render_as_string(hide_password=False))
        engine = sa.create_engine(self.url)
        blazar_models.Lease.metadata.create_all(engine)
        engine.dispose()


class LeaseRace(base.TestCase):

    DRIVER = 'mysql'

    def race(self, quota=-1, grow=False):
        """Run the managers under a VCPU quota (-1: none), creating leases

        or (grow) growing them; (admitted {reservation: slots}, ledger,
        Placement, host uuids, base time).
        """
        ledger = base.scratch_database(self, self.DRIVER)
        blazar = _BlazarDatabase(self, self.DRIVER)
        self.conf.set_override('connection', ledger.url,
                               group='pcloud_database')
        self.useFixture(base.LedgerFromConfig())
        # Placement too: each admission writes what it promises there
        # (cloud.promises), under Placement's consumer generations.
        placement = self.useFixture(placement_service.PlacementService())
        hosts = []
        for i in range(HOSTS):
            name = 'race-host-%02d' % i
            uuid = placement.create_provider(name)
            placement.set_inventories(uuid, {
                rc: {'total': n * SLOTS_PER_HOST}
                for rc, n in PER_SLOT.items()})
            db_providers.create_provider(self.context, uuid, name)
            db_providers.set_inventories(self.context, uuid, {
                rc: Inventory(n * SLOTS_PER_HOST)
                for rc, n in PER_SLOT.items()})
            hosts.append(uuid)

        base_time = (datetime.datetime.utcnow() + datetime.timedelta(
            minutes=60)).replace(second=0, microsecond=0)
        spawn = multiprocessing.get_context('spawn')
        results = spawn.Queue()
        barrier = spawn.Barrier(PROCESSES) if grow else None
        workers = [spawn.Process(target=_manager_process, args=(
            blazar.url, ledger.url, placement.url, n, base_time, results,
            quota, barrier)) for n in range(PROCESSES)]
        began = time.monotonic()
        base.start_processes(self, workers)
        reports = base.reports_of(self, workers, results, timeout=300)
        elapsed = time.monotonic() - began
        self.assertEqual([], [error for _w, _a, error in reports
                              if isinstance(error, str)])
        for worker in workers:
            worker.join(timeout=60)
            self.assertEqual(0, worker.exitcode)

        admitted = dict(r for _w, rs, _n in reports for r in rs)
        with ledger.engine.connect() as conn:
            consumers = set(conn.execute(sa.text(
                'SELECT uuid FROM consumers')).scalars())
            slots = dict(conn.execute(sa.text(
                'SELECT reservation_id, SUM(slots) FROM '
                'pcloud_instance_reservation_slots GROUP BY '
                'reservation_id')).all())
        # Exactly the leases told they were admitted hold claims, and
        # each records as many slots as it asked for; the others are gone.
        self.assertEqual(set(admitted), consumers)
        self.assertEqual(admitted, {r: int(n) for r, n in slots.items()})
        blazar_engine = sa.create_engine(blazar.url)
        self.addCleanup(blazar_engine.dispose)
        with blazar_engine.connect() as conn:
            statuses = collections.Counter(conn.execute(sa.text(
                'SELECT status FROM leases')).scalars())
        self.assertEqual({'PENDING': len(admitted)}, dict(statuses))
        print('lease race on %s (quota %d): %d managers admitted %d '
              'slots in %d leases (%d refused) in %.1fs'
              % (self.DRIVER, quota, PROCESSES, sum(admitted.values()),
                 len(admitted), sum(n for _w, _r, n in reports), elapsed))
        return admitted, ledger, placement, hosts, base_time

    def test_racing_managers_admit_exactly_k_slots(self):
        admitted, ledger, placement, hosts, base_time = self.race()
        self.assertEqual(K, sum(admitted.values()))
        with ledger.engine.connect() as conn:
            rows = list(conn.execute(sa.text(
                'SELECT p.uuid, c.name, a.used, a.start_time, a.end_time '
                'FROM allocations a JOIN resource_providers p ON '
                'p.id = a.resource_provider_id JOIN resource_classes c ON '
                'c.id = a.resource_class_id')))
        claims = collections.defaultdict(list)
        for r in rows:
            claims[r.uuid, r.name].append((r.start_time, r.end_time, r.used))
        for (uuid, rc), rc_claims in claims.items():
            peak, _at = window_mod.max_in_sweep(
                rc_claims, base_time, window_mod.FOREVER)
            self.assertEqual(PER_SLOT[rc] * SLOTS_PER_HOST, peak,
                             '%s %s' % (uuid, rc))
        # The last promise written on each host counts every claim: the
        # host is promised whole (every window holds the same hour).
        for uuid in hosts:
            promised = placement.client.get('/allocations/%s' % (
                promises.promise_consumer(uuid))).json()['allocations']
            self.assertEqual(
                {rc: n * SLOTS_PER_HOST for rc, n in PER_SLOT.items()},
                promised[uuid]['resources'])

    def test_racing_updates_keep_the_project_within_its_quota(self):
        # Eight leases of a slot each; each growth to GROWN fits alone
        # (8 - 1 + GROWN <= QUOTA), all of them would not.
        self.assertLessEqual(PROCESSES - 1 + GROWN, QUOTA)
        self.assertGreater(PROCESSES * GROWN, QUOTA)
        admitted, _ledger, _placement, _hosts, _base = self.race(
            QUOTA, grow=True)
        self.assertLessEqual(sum(admitted.values()), QUOTA)
        self.assertGreater(sum(admitted.values()), PROCESSES)

    def test_racing_managers_keep_the_project_within_its_quota(self):
        # One VCPU a slot, every window holding the same hour: the
        # project's VCPUs at its peak are the slots admitted.
        admitted, _ledger, _placement, _hosts, _base = self.race(QUOTA)
        self.assertLessEqual(sum(admitted.values()), QUOTA)
        self.assertGreater(sum(admitted.values()), 0)


class LeaseRacePostgreSQL(LeaseRace):

    DRIVER = 'postgresql'
