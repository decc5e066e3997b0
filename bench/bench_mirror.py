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
"""One periodic pass of the Placement mirror (cloud.mirror), against a

real Placement served in-process over HTTP, at 1,000 and 10,000 compute
providers: the first pass (everything read), a pass when nothing changed,
and one after 1% of the providers changed (new allocation ratios, as a
pcloud sets them). A tenth of the hosts run instances outside
reservations, whose usage the ledger holds; each pass also re-reads, in
turn, ``[pcloud] placement_mirror_usage_rechecks`` of those. Then the cost
of following one of Nova's events (cloud.nova_events, the registry of
instances with it): a server booted and a server deleted, the median of
EVENTS each. Reported: milliseconds and Placement requests made. No peer:
Blazar has no mirror (its host plugin reads Nova when an operator creates
a host).
"""

import contextlib
import shutil
import statistics
import tempfile
import time

from oslo_config import cfg
from oslo_utils import uuidutils

from bench import database
from pcloud_plugin import context as context_mod

SIZES = (1000, 10000)
EVENTS = 20
HOST = {'VCPU': {'total': 32, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 131072}, 'DISK_GB': {'total': 2000}}


def _placement(count):
    from pcloud_plugin.tests.functional import placement_service

    service = placement_service.PlacementService()
    service.setUp()
    uuids = []
    for n in range(count):
        uuid = service.create_provider('cn%05d' % n)
        service.set_inventories(uuid, HOST)
        uuids.append(uuid)
        if n % 10 == 0:
            service.allocate(uuidutils.generate_uuid(), {
                uuid: {'VCPU': 2, 'MEMORY_MB': 4096}})
    return service, uuids


def _pass(mirror, ctx):
    report = mirror.run(ctx)
    return report.seconds * 1000, report.requests, len(report.read)


def _timed(endpoint, event_type, payload):
    """(seconds, Placement requests) of following one event, all of it:

    the ledger's lookups and the registry's with the mirror's reads.
    """
    began = time.perf_counter()
    report = endpoint.handle(event_type, payload)
    return time.perf_counter() - began, report.requests


def _events(service, uuids, mirror):
    """Rows of what following Nova's create and delete events costs."""
    from pcloud_plugin.cloud import nova_events
    from pcloud_plugin.reservations import registry

    endpoint = nova_events.NovaEvents(lambda: mirror, None)
    endpoint.on_instance.append(registry.follow_instance)
    costs = {'event: booted': [], 'event: deleted': []}
    for n in range(EVENTS):
        host = uuids[(n * 37) % len(uuids)]
        server = uuidutils.generate_uuid()
        payload = {'nova_object.data': {'uuid': server,
                                        'node': 'cn%05d' % uuids.index(host)}}
        service.allocate(server, {host: {'VCPU': 1, 'MEMORY_MB': 512}})
        costs['event: booted'].append(_timed(
            endpoint, 'instance.create.end', payload))
        service.client.delete('/allocations/%s' % server)
        costs['event: deleted'].append(_timed(
            endpoint, 'instance.delete.end', payload))
    return [(what, statistics.median(s for s, _r in found) * 1000,
             statistics.median(r for _s, r in found), 1)
            for what, found in costs.items()]


def run(quick=False):
    from pcloud_plugin.clients import placement as placement_client
    from pcloud_plugin.cloud import mirror as mirror_mod
    from pcloud_plugin.tests.functional import placement_service

    conf = cfg.CONF
    sizes = SIZES[:1] if quick else SIZES
    rows = []
    for count in sizes:
        tmp = tempfile.mkdtemp(prefix='pcloud-bench-mirror-')
        ledger = contextlib.ExitStack()
        ledger.enter_context(database.ledger(tmp))
        service, uuids = _placement(count)
        placement_service.use_placement(conf, service.url)
        ctx = context_mod.get_admin_context()
        mirror = mirror_mod.Mirror(placement_client.get_adapter(),
                                   lambda: (set(), set()))
        rows.append((count, 'first pass') + _pass(mirror, ctx))
        rows.append((count, 'nothing changed') + _pass(mirror, ctx))
        for uuid in uuids[::100]:
            service.set_inventories(uuid, dict(
                HOST, VCPU={'total': 32, 'allocation_ratio': 8.0}))
        rows.append((count, '1% changed') + _pass(mirror, ctx))
        rows.extend((count,) + row
                    for row in _events(service, uuids, mirror))
        service.cleanUp()
        ledger.close()
        shutil.rmtree(tmp)
    print('\nPlacement mirror pass (a tenth of the hosts run instances '
          'outside reservations; up to %d of those re-read per pass; '
          'ledger on %s)' % (conf.pcloud.placement_mirror_usage_rechecks,
                             database.label()))
    print('%-10s %-18s %10s %10s %8s' % ('providers', 'pass', 'ms',
                                         'requests', 'read'))
    for count, what, ms, requests, read in rows:
        print('%-10d %-18s %10.0f %10d %8d' % (count, what, ms, requests,
                                               read))
    return rows
