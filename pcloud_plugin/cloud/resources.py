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
"""The Nova and Placement objects an active instance reservation owns.

Every call here is idempotent and takes "already there" or "already gone"
as success, so that a start or end interrupted midway is finished (or
undone) simply by running it again.

Placement: the reservation's custom resource class, with one unit of
inventory per slot on a child provider of each host it holds slots on
(nova-compute rewrites its own providers' inventories, never a child it
does not know). The reserved flavor asks for one unit, so it lands only
there, at most as many times as there are slots.

The capacity behind the slots (VCPU, MEMORY_MB, DISK_GB of every slot,
where the ledger claimed it: the hosts, a shared storage provider) is
fenced in Placement itself: an allocation whose consumer is the
reservation, the same amounts as its ledger claim, holds it from the
start to the end, so no other boot, whatever the scheduler's filters, can
take it (nova-compute leaves alone allocations of consumers that are not
its instances). The reserved flavor asks for none of those classes but
a *ticket* (``resources:VCPU=0``, ``resources:DISK_GB=0``,
``resources:MEMORY_MB=1``): its boots use the slots, inside what the
reservation holds. Nova places a boot only on a host it allocates from,
and the slots are on a child provider, so each takes 1 MB of its host's
memory, which the hold leaves free for it (one per slot; the fence leaks
that much).

Nova: that private flavor, with access for the lease's project; an
aggregate of the hosts (metadata ``reservation=<id>``, matched by the
flavor for AggregateInstanceExtraSpecsFilter); and a server group when
affinity is true or false.
"""

import re
import uuid

from novaclient import api_versions
from novaclient import exceptions as nova_exc
from oslo_log import log as logging
import tenacity

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin.pcloud import partition

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# 1.26: an inventory may reserve all of its total (how an ended
# reservation's class is closed while instances still hold units of it).
PLACEMENT_MICROVERSION = '1.26'
# 1.28: consumer generations, so writers of one consumer never undo each
# other (cloud.promises).
GENERATIONS_MICROVERSION = '1.28'
CONCURRENT_UPDATE = 'placement.concurrent_update'
# Placement's refusal of a consumer written as new that it has already,
# never written (see _adopt_empty_consumer).
_EMPTY_CONSUMER = re.compile(r'expected 0 but got None')
CHILD_PREFIX = 'pcloud_reservations_'
# Who holds and promises are for, to Placement (it asks).
HOLD_USER = 'pcloud-reservation'
# Placement's project of promises, and of holds whose lease has none.
HOLD_PROJECT = 'pcloud-reservations'
# The classes a slot is made of, which the reservation's hold carries.
SLOT_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
# MB of its host's memory each reserved boot takes, left out of the hold.
TICKET_MB = 1
_CHILD_NAMESPACE = uuid.UUID('6d0c3e0a-5e53-4c1b-9a0e-2f3c6b1d7a52')
RESERVATION_KEY = 'reservation'
FLAVOR_EXTRA_SPEC = 'aggregate_instance_extra_specs:' + RESERVATION_KEY
# A write to a child provider meeting another writer (a generation
# moved) reads again, at once, this many times in all.
_RETRIES = 10
_AGAIN = object()

_UUID_RE = re.compile(
    r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')


def providers_named(failure):
    """The provider uuids a Placement refusal names."""
    return set(_UUID_RE.findall(failure.kwargs.get('body', '')))


def resource_class(reservation_id):
    return 'CUSTOM_RESERVATION_' + reservation_id.upper().replace('-', '_')


def flavor_name(reservation_id):
    return 'reservation:' + reservation_id


def child_uuid(host_uuid):
    """The child provider holding reservation classes under one host.

    Made at a host's first reservation and kept, empty, after its last:
    nova-compute caches its provider tree, and a child deleted under it
    fails every build and resource update on the host (404 reading the
    child's allocations) until its next association refresh.
    """
    return str(uuid.uuid5(_CHILD_NAMESPACE, host_uuid))


def _again_while_moved(attempt, give_up):
    """attempt()'s answer once it is not _AGAIN; give_up(retry state)'s

    after _RETRIES of them.
    """
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(_RETRIES),
        retry=tenacity.retry_if_result(lambda answer: answer is _AGAIN),
        sleep=lambda _seconds: None,
        retry_error_callback=give_up)(attempt)


class PlacementSlots:
    """Reservation classes and their inventories, through a keystoneauth

    adapter for Placement.
    """

    def __init__(self, adapter):
        self.adapter = adapter

    def _call(self, method, url, json=None, ok=(200, 201, 204),
              microversion=PLACEMENT_MICROVERSION):
        return placement_client.call(self.adapter, method, url, json=json,
                                     ok=ok, microversion=microversion)

    def allocations_of(self, consumer):
        """(consumer generation or None, {provider: {class: n}})."""
        body = self._call('GET', '/allocations/%s' % consumer,
                          microversion=GENERATIONS_MICROVERSION).json()
        return body.get('consumer_generation'), {
            rp: dict(held['resources'])
            for rp, held in body['allocations'].items()}

    def consumers_on(self, provider):
        """{consumer: {class: n}}: what each consumer with allocations on

        ``provider`` holds there.
        """
        body = self._call('GET', '/resource_providers/%s/allocations'
                          % provider).json()
        return {consumer: dict(held['resources'])
                for consumer, held in body['allocations'].items()}

    def write_allocations(self, writes):
        """Replace the allocations of several consumers at once.

        :param writes: {consumer: (generation, {provider: {class: n}},
            project id)}; empty amounts remove the consumer's
        False when a generation moved (read again); PlacementFailure
        (clients.placement) when refused, 409 when a provider has no room.
        """
        while True:
            response = self._call('POST', '/allocations', json={
                consumer: self._consumer_body(generation, allocations,
                                              project_id)
                for consumer, (generation, allocations, project_id)
                in writes.items()}, ok=(204, 404, 409),
                microversion=GENERATIONS_MICROVERSION)
            if response.status_code == 204:
                return True
            if response.status_code == 404:
                if 'No such consumer' in response.text:
                    # A consumer read with a generation is gone since
                    # (another writer removed its last allocation): again.
                    return False
                raise placement_client.PlacementFailure(
                    status=404, method='POST', url='/allocations',
                    body=response.text[:500])
            try:
                errors = response.json().get('errors', [])
            except ValueError:
                # Cut short (Placement stopping as it answered): read
                # again; a Placement gone by then is unreachable.
                return False
            if {e.get('code') for e in errors} != {CONCURRENT_UPDATE}:
                raise placement_client.PlacementFailure(
                    status=409, method='POST', url='/allocations',
                    body=response.text[:500])
            adopted = self._adopt_empty_consumer(writes, errors)
            if adopted is None:
                return False
            writes = adopted

    @staticmethod
    def _consumer_body(generation, allocations, project_id):
        return {'allocations': {rp: {'resources': amounts}
                                for rp, amounts in allocations.items()},
                'consumer_generation': generation,
                'project_id': project_id, 'user_id': HOLD_USER}

    def _adopt_empty_consumer(self, writes, errors):
        """``writes`` with generation 0 for a consumer Placement keeps

        without allocations, or None when the conflict is another's.

        Placement makes a new consumer (generation 0) before its
        allocations, in a transaction of its own, and removes it if their
        write fails: a Placement killed in between keeps the consumer,
        allocation-less, and shows no generation for it (GET
        /allocations). Written as new (generation None), it is refused as
        a concurrent update every time: in the soak, every promise write
        on that host, until its starts went to ERROR. An empty write under
        generation 0 tells which consumer it is, and changes nothing: a
        consumer's first allocations move its generation to 1, so one at
        0 has none to remove.
        """
        if not any(_EMPTY_CONSUMER.search(error.get('detail', ''))
                   for error in errors):
            return None
        for consumer, (generation, allocations, project_id) in sorted(
                writes.items()):
            if generation is not None:
                continue
            probe = self._call(
                'POST', '/allocations',
                json={consumer: self._consumer_body(0, {}, project_id)},
                ok=(204, 409), microversion=GENERATIONS_MICROVERSION)
            if probe.status_code == 204:
                LOG.warning('Placement keeps consumer %s without '
                            'allocations; writing under its generation',
                            consumer)
                adopted = dict(writes)
                adopted[consumer] = (0, allocations, project_id)
                return adopted
        return None

    def ensure_class(self, rc):
        self._call('PUT', '/resource_classes/%s' % rc)

    def remove_class(self, rc):
        """True when the class is gone; False while units are in use."""
        response = self._call('DELETE', '/resource_classes/%s' % rc,
                              ok=(204, 404, 409))
        return response.status_code != 409

    def _ensure_child(self, host_uuid, host_name):
        child = child_uuid(host_uuid)
        response = self._call('POST', '/resource_providers', json={
            'uuid': child, 'name': CHILD_PREFIX + host_name,
            'parent_provider_uuid': host_uuid}, ok=(200, 201, 409))
        if response.status_code == 409:
            # Already made by an earlier start, or a name clash.
            self._call('GET', '/resource_providers/%s' % child)
        return child

    def set_slots(self, host_uuid, host_name, rc, slots):
        """Make rc's inventory on the host's child provider ``slots``."""
        self.set_inventory(host_uuid, host_name, rc, {
            'total': slots, 'reserved': 0, 'min_unit': 1, 'max_unit': 1,
            'step_size': 1, 'allocation_ratio': 1.0})

    def set_inventory(self, host_uuid, host_name, rc, inventory,
                      if_changed=False):
        """Make rc's inventory on the host's child provider that; with

        ``if_changed``, write nothing when it is that already (a
        reservation's start writes it always: the soak fails when it
        does not, cause not yet known).
        """
        child = child_uuid(host_uuid)
        url = '/resource_providers/%s/inventories' % child

        def write():
            response = self._call('GET', url, ok=(200, 404))
            if response.status_code == 404:
                self._ensure_child(host_uuid, host_name)
                return _AGAIN
            current = response.json()
            inventories = current['inventories']
            had = inventories.get(rc) or {}
            if if_changed and all(had.get(k) == v
                                  for k, v in inventory.items()):
                return None  # as it is: no generation moved for nothing
            inventories[rc] = dict(inventory)
            response = self._call(
                'PUT', url, json={'resource_provider_generation':
                                  current['resource_provider_generation'],
                                  'inventories': inventories},
                ok=(200, 404, 409))
            # 409: someone else changed the provider; 404: it went away.
            return None if response.status_code == 200 else _AGAIN

        def give_up(_state):
            raise placement_client.PlacementFailure(
                status=409, method='PUT', url=url,
                body='gave up after %d generation conflicts' % _RETRIES)
        _again_while_moved(write, give_up)

    def remove_slots(self, host_uuid, rc):
        """Drop rc's inventory on the host; True when gone.

        While instances booted into the reservation still hold units of
        it, Placement refuses: the inventory is then closed (all of it
        reserved) so nothing new lands, and False says to try later.
        """
        child = child_uuid(host_uuid)
        url = '/resource_providers/%s/inventories/%s' % (child, rc)

        def remove():
            response = self._call('DELETE', url, ok=(204, 404, 409))
            if response.status_code != 409:
                return True
            # Placement says 409 both for a generation race and for
            # units in use: only the usage tells them apart.
            usages = self._call(
                'GET', '/resource_providers/%s/usages' % child,
                ok=(200, 404))
            if usages.status_code == 200 and usages.json()[
                    'usages'].get(rc):
                self._close(child, rc)
                return False
            return _AGAIN
        return _again_while_moved(remove, lambda _state: False)

    def slots_in_use(self, host_uuid, rc):
        """How many of rc's units on the host boots hold."""
        response = self._call(
            'GET', '/resource_providers/%s/usages' % child_uuid(host_uuid),
            ok=(200, 404))
        if response.status_code == 404:
            return 0
        return response.json()['usages'].get(rc, 0)

    def _close(self, child, rc):
        url = '/resource_providers/%s/inventories/%s' % (child, rc)

        def close():
            response = self._call('GET', url, ok=(200, 404))
            if response.status_code == 404:
                return None
            inventory = response.json()
            inventory['reserved'] = inventory['total']
            response = self._call('PUT', url, json=inventory,
                                  ok=(200, 404, 409))
            return _AGAIN if response.status_code == 409 else None
        # Given up quietly: the next try of the removal closes it.
        _again_while_moved(close, lambda _state: None)


class NovaObjects:
    """The reservation's flavor, aggregate and server group, through a

    python-novaclient Client (microversion 2.53 or later).
    """

    def __init__(self, client):
        self.nova = client

    def pcloud_exclusions(self):
        """(aggregate uuids, host names) instance reservations never use:

        pclouds and host flavor pools (seeds/000), and the hosts of
        Blazar's physical:host plugin (pcloud.partition). Names are both
        service hosts and hypervisor names, as Placement names compute
        node providers after the latter.
        """
        aggregates = self.nova.aggregates.list()
        uuids = {aggregate.uuid for aggregate in aggregates
                 if getattr(aggregate, 'uuid', None) and (
                     partition.is_ours(aggregate) or partition.is_blazars(
                         aggregate, CONF.pcloud.blazar_freepool_name))}
        return uuids, (partition.our_hosts(aggregates) |
                       partition.blazar_hosts(
                           aggregates, CONF.pcloud.blazar_freepool_name))

    def aggregate_zones(self):
        """[(uuid, availability zone or None)] of Nova's aggregates."""
        return [(getattr(agg, 'uuid', None),
                 getattr(agg, 'availability_zone', None))
                for agg in self.nova.aggregates.list()]

    def instance_quota(self, project_id):
        """{'instances': n, 'cores': n} Nova lets the project run (below

        0: no limit), as os-quota-sets says.
        """
        found = self.nova.quotas.get(project_id)
        return {'instances': found.instances, 'cores': found.cores}

    def service_host(self, host_uuid, host_name):
        """Nova's service host of a compute node provider (aggregates

        take service hosts; Placement names providers after hypervisors).
        """
        try:
            return self.nova.hypervisors.get(host_uuid).service['host']
        except nova_exc.NotFound:
            LOG.debug('No hypervisor %s; using its name %s',
                      host_uuid, host_name)
            return host_name

    def create_server_group(self, name, affinity):
        policy = 'affinity' if affinity else 'anti-affinity'
        for group in self.nova.server_groups.list():
            if group.name == name:
                return group.id  # made by an earlier, interrupted start
        if self.nova.api_version >= api_versions.APIVersion('2.64'):
            group = self.nova.server_groups.create(name=name, policy=policy)
        else:
            group = self.nova.server_groups.create(name=name,
                                                   policies=[policy])
        return group.id

    def delete_server_group(self, group_id):
        try:
            self.nova.server_groups.delete(group_id)
        except nova_exc.NotFound:
            pass

    def create_flavor(self, flavor_id, name, vcpus, ram, disk, extra_specs,
                      project_id):
        try:
            flavor = self.nova.flavors.create(
                name, ram, vcpus, disk, flavorid=flavor_id, is_public=False)
        except nova_exc.Conflict:
            # Made by an earlier, interrupted start.
            flavor = self.nova.flavors.get(flavor_id)
        flavor.set_keys(extra_specs)
        if project_id:
            try:
                self.nova.flavor_access.add_tenant_access(flavor,
                                                          project_id)
            except nova_exc.Conflict:
                pass
        return flavor.id

    def delete_flavor(self, flavor_id, project_id):
        try:
            if project_id:
                self.nova.flavor_access.remove_tenant_access(flavor_id,
                                                             project_id)
        except nova_exc.NotFound:
            pass
        try:
            self.nova.flavors.delete(flavor_id)
        except nova_exc.NotFound:
            pass

    def set_aggregate_metadata(self, aggregate_id, metadata):
        self.nova.aggregates.set_metadata(aggregate_id, metadata)

    def create_aggregate(self, name, metadata):
        try:
            aggregate = self.nova.aggregates.create(name, None)
        except nova_exc.Conflict:
            aggregate = self._aggregate_named(name)
            if aggregate is None:
                raise
        self.nova.aggregates.set_metadata(aggregate.id, metadata)
        return aggregate.id

    def _aggregate_named(self, name):
        for aggregate in self.nova.aggregates.list():
            if aggregate.name == name:
                return aggregate
        return None

    def add_host(self, aggregate_id, host):
        try:
            self.nova.aggregates.add_host(aggregate_id, host)
        except nova_exc.Conflict:
            pass  # already a member

    def delete_aggregate(self, aggregate_id):
        try:
            aggregate = self.nova.aggregates.get(aggregate_id)
        except nova_exc.NotFound:
            return
        for host in list(getattr(aggregate, 'hosts', None) or ()):
            try:
                self.nova.aggregates.remove_host(aggregate_id, host)
            except nova_exc.NotFound:
                pass
        try:
            self.nova.aggregates.delete(aggregate_id)
        except nova_exc.NotFound:
            pass
