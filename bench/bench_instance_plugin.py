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

"""virtual:instance lease admission: ours against Blazar's own plugin.

The same data in both: 1,000 hosts of 32 VCPU, 128 GiB and 2 TB (no
overcommit, as upstream counts raw host sizes) and 10,000 existing
instance reservations of 1 to 3 slots of (2 VCPU, 4 GiB, 40 GB), each on
one host, in windows of 1 to 72 hours over 30 days. Timed: admitting one
more reservation of 5 slots for one day, as Blazar's manager does it in
create_lease: the plugin's allocation_candidates() then reserve_resource().

Upstream (blazar.plugins.instances.instance_plugin.VirtualInstancePlugin)
runs in-process on its own SQLite database, where those reservations are
its leases, reservations, instance_reservations, computehost_allocations
and start/end events. Ours runs on the ledger (SQLite), where they are
claims; it also writes its display row in Blazar's database, as in
production. Stubbed in both: every Nova and Placement call (upstream makes
its flavor, server group, aggregate and resource class at admission; ours
looks up pcloud aggregates in Nova and writes the hosts' promises to
Placement), so only the plugins are measured.

Then ours alone, for 10 slots: on the same data, and once 5,000
instances running outside reservations are held in the ledger as the
Placement mirror holds them, with the admission's freshness check
against a Placement where nothing moved (target: within 2x).
"""

import collections
import datetime
import os
import random
import shutil
import statistics
import tempfile
import time
from unittest import mock

from oslo_config import cfg
from oslo_utils import uuidutils
import sqlalchemy as sa

from pcloud_plugin.blazar import mirror
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import migration
from pcloud_plugin.db import models

HOSTS = 1000
EXISTING = 10000
ON_DEMAND = 5000
HOST = {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000}
FLAVOR = {'vcpus': 2, 'memory_mb': 4096, 'disk_gb': 40}
AMOUNT = 5
DAYS = 30
T0 = datetime.datetime(2031, 1, 1)
PROJECT = 'bench-project'


def _existing(rng):
    """(host index, amount, start, end) of every existing reservation."""
    found = []
    for _n in range(EXISTING):
        start = T0 + datetime.timedelta(hours=rng.randrange(DAYS * 24))
        found.append((rng.randrange(HOSTS), rng.randint(1, 3), start,
                      start + datetime.timedelta(hours=rng.randint(1, 72))))
    return found


def _blazar_rows(existing):
    """Blazar's own tables holding the existing reservations."""
    from blazar.db.sqlalchemy import models as bm

    now = datetime.datetime.utcnow()
    hosts = [dict(id='host-%04d' % i, vcpus=HOST['vcpus'],
                  memory_mb=HOST['memory_mb'], local_gb=HOST['local_gb'],
                  cpu_info='{}', hypervisor_type='QEMU',
                  hypervisor_version=1000, hypervisor_hostname='cn%04d' % i,
                  service_name='cn%04d' % i, availability_zone='nova',
                  trust_id='trust', reservable=True, created_at=now)
             for i in range(HOSTS)]
    leases, reservations, instances, allocations, events = [], [], [], [], []
    for n, (host, amount, start, end) in enumerate(existing):
        lease, rid = 'lease-%05d' % n, 'res-%05d' % n
        leases.append(dict(id=lease, name=lease, project_id=PROJECT,
                           user_id='u', start_date=start, end_date=end,
                           trust_id='trust', status='PENDING',
                           degraded=False, created_at=now))
        reservations.append(dict(
            id=rid, lease_id=lease, resource_id='ir-%05d' % n,
            resource_type='virtual:instance', status='pending',
            missing_resources=False, resources_changed=False,
            created_at=now))
        instances.append(dict(
            id='ir-%05d' % n, reservation_id=rid, amount=amount,
            affinity=None, resource_properties='', created_at=now,
            **FLAVOR))
        allocations.extend(dict(id='alloc-%05d-%d' % (n, s),
                                compute_host_id='host-%04d' % host,
                                reservation_id=rid, created_at=now)
                           for s in range(amount))
        events.extend(dict(id='ev-%05d-%s' % (n, kind), lease_id=lease,
                           event_type=kind, time=moment, status='UNDONE',
                           created_at=now)
                      for kind, moment in (('start_lease', start),
                                           ('end_lease', end)))
    return ((bm.ComputeHost, hosts), (bm.Lease, leases),
            (bm.Reservation, reservations),
            (bm.InstanceReservations, instances),
            (bm.ComputeHostAllocation, allocations), (bm.Event, events))


def _load_blazar(url, existing):
    from blazar.db.sqlalchemy import models as bm

    engine = sa.create_engine(url)
    bm.Lease.metadata.create_all(engine)
    with engine.begin() as conn:
        for model, rows in _blazar_rows(existing):
            for i in range(0, len(rows), 5000):
                conn.execute(model.__table__.insert(), rows[i:i + 5000])
    engine.dispose()


def _load_ledger(engine, existing):
    """The hosts as providers, the reservations as claims."""
    md = models.BASE.metadata.tables
    now = datetime.datetime.utcnow()
    classes = (('VCPU', 'vcpus', 'vcpus'),
               ('MEMORY_MB', 'memory_mb', 'memory_mb'),
               ('DISK_GB', 'local_gb', 'disk_gb'))
    with engine.begin() as conn:
        conn.execute(md['resource_classes'].insert(), [
            {'id': i, 'name': rc} for i, (rc, _h, _f) in
            enumerate(classes, 1)])
        conn.execute(md['resource_providers'].insert(), [
            {'id': i + 1, 'uuid': 'rp-%04d' % i, 'name': 'cn%04d' % i,
             'generation': 0, 'can_host': 1, 'created_at': now}
            for i in range(HOSTS)])
        conn.execute(md['resource_providers'].update().values(
            root_provider_id=md['resource_providers'].c.id))
        conn.execute(md['inventories'].insert(), [
            dict(resource_provider_id=i + 1, resource_class_id=rc,
                 total=HOST[key], reserved=0, min_unit=1,
                 max_unit=HOST[key], step_size=1, allocation_ratio=1.0,
                 created_at=now)
            for i in range(HOSTS)
            for rc, (_n, key, _f) in enumerate(classes, 1)])
        consumers, rows = [], []
        for n, (host, amount, start, end) in enumerate(existing):
            consumers.append(dict(uuid='res-%05d' % n, generation=0,
                                  start_time=start, end_time=end,
                                  created_at=now))
            rows.extend(dict(resource_provider_id=host + 1,
                             resource_class_id=rc,
                             consumer_id='res-%05d' % n,
                             used=amount * FLAVOR[key], start_time=start,
                             end_time=end, created_at=now)
                        for rc, (_n, _h, key) in enumerate(classes, 1))
        conn.execute(md['consumers'].insert(), consumers)
        for i in range(0, len(rows), 10000):
            conn.execute(md['allocations'].insert(), rows[i:i + 10000])


def _load_on_demand(engine, rng):
    """ON_DEMAND instances running outside reservations, as the Placement

    mirror holds them: per host, open-ended usage of its instances.
    """
    md = models.BASE.metadata.tables
    now = datetime.datetime.utcnow()
    per_host = collections.Counter(rng.randrange(HOSTS)
                                   for _n in range(ON_DEMAND))
    with engine.begin() as conn:
        conn.execute(md['consumers'].insert(), [
            dict(uuid=mirror.usage_consumer('rp-%04d' % host), generation=0,
                 start_time=now, end_time=window_mod.FOREVER, created_at=now)
            for host in per_host])
        conn.execute(md['allocations'].insert(), [
            dict(resource_provider_id=host + 1, resource_class_id=rc,
                 consumer_id=mirror.usage_consumer('rp-%04d' % host),
                 used=count * FLAVOR[key], start_time=now,
                 end_time=window_mod.FOREVER, created_at=now)
            for host, count in per_host.items()
            for rc, key in ((1, 'vcpus'), (2, 'memory_mb'), (3, 'disk_gb'))])
        conn.execute(md['resource_providers'].update().values(
            generation=md['resource_providers'].c.generation + 1))


class _Placement(object):
    """Placement's answer to the freshness check: nothing moved."""

    class _Answer(object):
        status_code = 200

        def __init__(self, uuid):
            self.uuid = uuid

        def json(self):
            return {'uuid': self.uuid, 'generation': 0}

    def get(self, url, **kwargs):
        return self._Answer(url.rsplit('/', 1)[-1])


def _new_lease(rng, amount=AMOUNT):
    """A lease row (untimed) and the values the manager hands a plugin."""
    from blazar.db import api as blazar_db

    start = T0 + datetime.timedelta(hours=rng.randrange((DAYS - 1) * 24))
    end = start + datetime.timedelta(days=1)
    lease = blazar_db.lease_create({
        'name': uuidutils.generate_uuid(), 'project_id': PROJECT,
        'user_id': 'u', 'start_date': start, 'end_date': end,
        'trust_id': 'trust', 'status': 'CREATING',
        'events': [{'event_type': 'start_lease', 'time': start,
                    'status': 'UNDONE'},
                   {'event_type': 'end_lease', 'time': end,
                    'status': 'UNDONE'}]})
    reservation = blazar_db.reservation_create({
        'lease_id': lease['id'], 'resource_type': 'virtual:instance',
        'status': 'pending'})
    values = dict(FLAVOR, resource_type='virtual:instance', amount=amount,
                  affinity=None, resource_properties='',
                  lease_id=lease['id'], start_date=start, end_date=end)
    return reservation['id'], values


def _admit(plugin, reservation_id, values):
    """What create_lease asks of a plugin for one reservation."""
    plugin.allocation_candidates(dict(values))
    plugin.reserve_resource(reservation_id, dict(values))


def _time(plugin, count, rng, amount=AMOUNT):
    from blazar import context as blazar_context

    timings = []
    for _n in range(count):
        reservation_id, values = _new_lease(rng, amount)
        with blazar_context.BlazarContext(project_id=PROJECT, user_id='u'):
            began = time.perf_counter()
            _admit(plugin, reservation_id, values)
            timings.append((time.perf_counter() - began) * 1000)
    return timings


def _upstream_plugin():
    """Blazar's own plugin with every Nova and Placement call stubbed."""
    from blazar.plugins.instances import instance_plugin
    from blazar.plugins.oshosts import host_plugin  # noqa: F401 (monitor)
    from blazar.utils.openstack import nova

    group = mock.Mock(id='group-id')
    stub = mock.Mock()
    stub.server_groups.create.return_value = group
    stub.nova.flavors.create.return_value = mock.Mock(id='flavor-id')
    patches = [
        mock.patch.object(nova.NovaClientWrapper, 'nova',
                          new_callable=mock.PropertyMock,
                          return_value=stub),
        mock.patch.object(nova, 'ReservationPool')]
    for patch in patches:
        patch.start()
    pool = nova.ReservationPool.return_value
    pool.create.return_value = mock.Mock(id=7)
    plugin = instance_plugin.VirtualInstancePlugin()
    plugin.placement_client = mock.Mock()
    return plugin, patches


def _our_plugin():
    from pcloud_plugin.blazar import instance_plugin
    from pcloud_plugin.blazar import resources

    plugin = instance_plugin.VirtualInstancePlugin()
    nova = mock.Mock(spec=resources.NovaObjects)
    nova.pcloud_exclusions.return_value = (set(), set())
    plugin._nova = nova
    # Placement answers at once: what is timed is our side of the promise
    # (its ledger read and arithmetic), not Placement's HTTP.
    placement = mock.Mock(spec=resources.PlacementSlots)
    placement.allocations_of.return_value = (None, {})
    placement.write_allocations.return_value = True
    plugin._placement = placement
    # The freshness check, on a Placement where nothing moved.
    fresh = mirror.Mirror(_Placement(), nova.pcloud_exclusions)
    fresh._seen = {'rp-%04d' % i: 0 for i in range(HOSTS)}
    plugin.mirror = lambda: fresh
    return plugin


def run(quick=False):
    conf = cfg.CONF
    # Blazar registers command-line options as it is imported: only into
    # a config that has not parsed its arguments yet.
    conf.clear()
    from blazar.db import api as blazar_db  # noqa: F401 ([database])
    from blazar.db.sqlalchemy import facade_wrapper
    from blazar.manager import service  # noqa: F401 ([manager])
    conf([], project='blazar', default_config_files=[])

    # Blazar's plugin takes tens of seconds an admission here.
    ours_count, theirs_count = (20, 2) if quick else (60, 5)
    rng = random.Random(2031)
    existing = _existing(rng)
    tmp = tempfile.mkdtemp(prefix='pcloud-bench-instances-')
    blazar_url = 'sqlite:///%s' % os.path.join(tmp, 'blazar.db')
    conf.set_override('connection', blazar_url, group='database')
    facade_wrapper._clear_engine()
    _load_blazar(blazar_url, existing)
    conf.set_override('connection', 'sqlite:///%s' % os.path.join(
        tmp, 'ledger.db'), group='pcloud_database')
    conf.set_override('cleanup_interval', 0, group='pcloud_instance')
    db_api._configured = False
    db_api.main_context_manager = db_api.enginefacade.transaction_context()
    engine = db_api.get_engine()
    migration.upgrade(engine=engine)
    _load_ledger(engine, existing)

    ours = _our_plugin()
    _time(ours, 2, rng)  # warm caches and imports, as a running manager
    our_ms = _time(ours, ours_count, rng)
    theirs, patches = _upstream_plugin()
    _time(theirs, 1, rng)
    their_ms = _time(theirs, theirs_count, rng)
    for patch in patches:
        patch.stop()
    # Issue 15's figure: 10 slots, then beside 5,000 on-demand instances
    # with the freshness check (the first runs without it, as before).
    plain = _our_plugin()
    plain.mirror = lambda: mock.Mock(refresh=mock.Mock(return_value=False))
    _time(plain, 2, rng, 10)
    ten_ms = _time(plain, ours_count, rng, 10)
    _load_on_demand(engine, rng)
    _time(ours, 2, rng, 10)
    busy_ms = _time(ours, ours_count, rng, 10)
    # Sanity: both really admitted; ours holds a claim per reservation.
    assert db_api.get_claims(context_mod.get_admin_context(),
                             'res-00000') is not None

    db_api.main_context_manager.dispose_pool()
    facade_wrapper._clear_engine()
    shutil.rmtree(tmp)

    ours_p50 = statistics.median(our_ms)
    theirs_p50 = statistics.median(their_ms)
    print('\nvirtual:instance lease admission: %d slots for one day among '
          '%d hosts holding %d instance reservations (SQLite)'
          % (AMOUNT, HOSTS, EXISTING))
    print('%-34s %8s %10s %10s' % ('plugin', 'runs', 'p50 ms', 'max ms'))
    print('%-34s %8d %10.1f %10.1f' % ('pcloud.virtual.instance (ours)',
                                       len(our_ms), ours_p50, max(our_ms)))
    print('%-34s %8d %10.1f %10.1f' % ('virtual.instance.plugin (Blazar)',
                                       len(their_ms), theirs_p50,
                                       max(their_ms)))
    print('ratio (Blazar p50 / ours p50): x%.0f; target x100: %s'
          % (theirs_p50 / ours_p50,
             'met' if theirs_p50 / ours_p50 >= 100 else 'NOT met'))
    ten_p50, busy_p50 = statistics.median(ten_ms), statistics.median(busy_ms)
    print('\nours, 10 slots, same hosts and reservations:')
    print('%-34s %8d %10.1f %10.1f' % ('ledger only', len(ten_ms), ten_p50,
                                       max(ten_ms)))
    print('%-34s %8d %10.1f %10.1f' % (
        '+%d on-demand, freshness check' % ON_DEMAND, len(busy_ms),
        busy_p50, max(busy_ms)))
    print('ratio: x%.2f; target within x2: %s' % (
        busy_p50 / ten_p50, 'met' if busy_p50 <= 2 * ten_p50 else 'NOT met'))
    return ours_p50, theirs_p50
