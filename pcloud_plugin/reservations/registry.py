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

"""Which reservation an instance runs in (seeds/001: "when an instance

is created, it's registered as being part of the lease ... it's taken
from the lease when it's destroyed").

An instance runs in a virtual:instance reservation when Placement
allocates it a slot of that reservation's resource class (a reserved
flavor, or a reservation hint); in a pcloud:host reservation when it
runs on a host the reservation has put into its pcloud. Nova's events
(cloud.nova_events) register it at once; a periodic pass (``repair``)
brings the registry to what the cloud runs, for events lost: slots of
its class on our child providers in Placement, and servers on the hosts
a whole-host lease put into its pcloud, booted since its start (what the
last holder left running is not the lessee's).
"""

import collections

from oslo_log import log as logging

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import lease_instances as db
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db

LOG = logging.getLogger(__name__)


def reservation_of(context, allocations, roots):
    """((reservation id, lease id), host root uuid) of the reservation

    an instance allocated ``allocations`` ({provider: {class: n}}) runs
    in, or None; ``roots``: {provider: its root provider}.
    """
    classes = {rc for amounts in allocations.values() for rc in amounts}
    slots = res_db.active_of_classes(context, classes)
    for provider, amounts in sorted(allocations.items()):
        for rc in sorted(amounts):
            if rc in slots:
                return slots[rc], roots[provider]
    for root in sorted({roots[p] for p in allocations}):
        held = host_db.holding(context, root)
        if held:
            return held, root
    return None


def follow(context, instance_uuid, allocations, roots):
    """Register the instance where its ``allocations`` say (or take it

    from its reservation: it runs in none, or is gone). True if the
    registry changed.
    """
    found = reservation_of(context, allocations, roots)
    if found is None:
        return db.leave(context, instance_uuid)
    (reservation_id, lease_id), host = found
    return db.register(context, instance_uuid, reservation_id, lease_id,
                       host)


def repair(context, running):
    """Bring the registry to ``running``: {(reservation id, lease id):

    {instance uuid: host root uuid}} of every active reservation. Stays
    of instances no longer running there close. (joined, left) counts.
    """
    joined = left = 0
    where = {instance: (rid, lease, host)
             for (rid, lease), instances in running.items()
             for instance, host in instances.items()}
    registered = collections.defaultdict(list)
    for stay in db.stays(context, running=True):
        registered[stay['instance_uuid']].append(
            (stay['reservation_id'], stay['host_uuid']))
    for instance in registered:
        if instance not in where:
            left += db.leave(context, instance)
    # Written only where the registry differs: a pass over a cloud the
    # events kept current writes nothing.
    for instance, (rid, lease, host) in sorted(where.items()):
        if registered.get(instance) != [(rid, host)]:
            joined += db.register(context, instance, rid, lease, host)
    return joined, left


def instances(context, reservation_ids):
    """{reservation id: [{'id', 'joined_at', 'left_at'}]}: the instances

    that ran or run in each (no host: tenants never see one).
    """
    found = {rid: [] for rid in reservation_ids}
    for stay in db.stays(context, reservation_ids):
        found[stay['reservation_id']].append({
            'id': stay['instance_uuid'], 'joined_at': stay['joined_at'],
            'left_at': stay['left_at']})
    return found


def hosts_running(context, reservation_id):
    """The host uuids where instances of the reservation run now."""
    return {stay['host_uuid'] for stay in db.stays(
        context, [reservation_id], running=True)}


def follow_instance(context, instance_uuid, allocations):
    """Register an instance where Placement's ``allocations`` of it

    ({provider: {class: n}}; empty: it is gone) put it.
    """
    roots = {uuid: (db_providers.get_provider(context, uuid)[
        'root_provider_uuid'] if db_providers.provider_exists(
            context, uuid) else uuid) for uuid in allocations}
    return follow(context, instance_uuid, allocations, roots)


def running(context, adapter, nova):
    """{(reservation id, lease id): {instance: host root uuid}} of every

    active reservation, as the cloud runs them now.
    """
    found = {}
    on_child = {}  # host: its child provider's allocations, read once

    def allocations_on(host):
        if host not in on_child:
            response = placement_client.call(
                adapter, 'GET', '/resource_providers/%s/allocations'
                % resources.child_uuid(host), ok=(200, 404))
            on_child[host] = (response.json()['allocations']
                              if response.status_code == 200 else {})
        return on_child[host]

    for row in res_db.list_reservations(context, state=res_db.ACTIVE):
        mine = found.setdefault((row['reservation_id'], row['lease_id']), {})
        for host in sorted({s['host_uuid'] for s in row['slots']}):
            for consumer, held in allocations_on(host).items():
                if (consumer != row['reservation_id'] and
                        row['resource_class'] in held['resources']):
                    mine[consumer] = host
    for row in host_db.list_reservations(context, states=[host_db.ACTIVE]):
        mine = found.setdefault((row['reservation_id'], row['lease_id']), {})
        since = row['start_time'].isoformat()
        for host in row['hosts']:
            if not host['joined']:
                continue
            for server in nova.servers.list(search_opts={
                    'all_tenants': True, 'host': host['service_host']}):
                launched = getattr(server, 'OS-SRV-USG:launched_at', None)
                if launched and launched >= since:
                    mine[server.id] = host['host_uuid']
    return found


def repair_from_cloud(context, adapter, nova):
    """One pass: the registry brought to what runs (logged if it was

    not already).
    """
    joined, left = repair(context, running(context, adapter, nova))
    if joined or left:
        LOG.info('Instance registry: %d stay(s) registered and %d closed '
                 'that Nova\'s events had not told', joined, left)
    return joined, left
