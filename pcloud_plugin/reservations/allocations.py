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
"""Who holds each host in a window: the admins' view of our allocations.

Blazar's own allocation views (``GET /v1/os-hosts/allocations``) reach
only its physical:host plugin. Ours are in the ledger's records: the
hosts of whole-host leases (pcloud:host reservations while they hold,
as the host plugin's ``_allocations`` lists them), the slots of
virtual:instance reservations (as the instance plugin's), and the hosts
pclouds hold for good (their open-ended ``pcloud-host:`` claims, named
after the pcloud by Nova's aggregates). Unlike the plugins' views, which
show what holds a host from now on, this one takes any window.
"""

import collections

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import leases

HOST_LEASE = 'pcloud:host'
INSTANCE = 'virtual:instance'
PCLOUD = 'pcloud'


def _overlaps(held_start, held_end, start, end):
    """Whether [held_start, held_end) meets the window (a moment when

    start == end).
    """
    held_end = window_mod.FOREVER if held_end is None else held_end
    if held_end <= start:
        return False
    return held_start < end if end > start else held_start <= start


def _open(end):
    return None if end is None or end >= window_mod.FOREVER else end


def _pclouds_by_node(aggregates):
    """{hypervisor hostname: (pcloud id, owner, host name in the pcloud)}."""
    found = {}
    for agg in aggregates:
        md = getattr(agg, 'metadata', None) or {}
        if not codec.is_pcloud(md):
            continue
        view = codec.Pcloud(md)
        for name, node in view.all_hosts.items():
            if node:
                found[node] = (md.get(codec.ID), view.owner, name)
    return found


def host_allocations(context, aggregates, start, end, host=None):
    """[{'host', 'host_uuid', 'allocations': [...]}] in host name order:

    what holds each host at some moment of [start, end) (of the moment
    start when end == start); only the host named (its provider's name
    or uuid) if ``host``.
    """
    names = {p['uuid']: p['name'] for p in db_providers.list_providers(context)
             if p['root_provider_uuid'] == p['uuid']}
    found = collections.defaultdict(list)

    for row in host_db.list_reservations(context, states=host_db.HOLDING,
                                         ending_after=start):
        if not _overlaps(row['start_time'], row['end_time'], start, end):
            continue
        for held in row['hosts']:
            found[held['host_uuid']].append({
                'type': HOST_LEASE, 'id': row['reservation_id'],
                'lease_id': row['lease_id'],
                'project_id': row['project_id'],
                'pcloud_id': row['pcloud_id'], 'state': row['state'],
                'start': row['start_time'], 'end': row['end_time']})

    for row in res_db.list_reservations(context, ending_after=start):
        if row['state'] == res_db.ENDING or not _overlaps(
                row['start_time'], row['end_time'], start, end):
            continue
        for slot in row['slots']:
            found[slot['host_uuid']].append({
                'type': INSTANCE, 'id': row['reservation_id'],
                'lease_id': row['lease_id'],
                'project_id': row['project_id'], 'slots': slot['slots'],
                'state': row['state'],
                'start': row['start_time'], 'end': row['end_time']})

    pclouds = _pclouds_by_node(aggregates)
    for consumer in db_claims.list_consumers(context):
        if not consumer.startswith(leases.PERMANENT):
            continue
        claims = db_claims.get_claims(context, consumer)
        if claims is None or not _overlaps(claims['start'], claims['end'],
                                           start, end):
            continue
        root = consumer[len(leases.PERMANENT):]
        pcloud_id, owner, name = pclouds.get(names.get(root),
                                             (None, None, None))
        found[root].append({
            'type': PCLOUD, 'id': pcloud_id, 'project_id': owner,
            'name': name, 'start': claims['start'],
            'end': _open(claims['end'])})

    result = []
    for uuid, held in found.items():
        name = names.get(uuid, uuid)
        if host is not None and host not in (uuid, name):
            continue
        held.sort(key=lambda h: (h['start'], h['type'], h['id'] or ''))
        result.append({'host': name, 'host_uuid': uuid,
                       'allocations': held})
    return sorted(result, key=lambda h: (h['host'], h['host_uuid']))
