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
"""What the pcloud service reads of Nova, and how it guards its writes:

one read of every aggregate indexed the ways the service asks (Cloud),
the lock per pcloud, and what a failed Nova call raises.
Imports aggregates of ours.
"""

import collections
import contextlib
import threading

from pcloud_plugin import clients
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.db import locks
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import partition

# What a Nova call raises when Nova refuses it or cannot be reached.
NOVA_FAILURES = (nova_client.ClientException, clients.NoConnection)


def unreachable(error):
    """Whether ``error`` says a service is down or restarting (no

    connection, or its 503), not that it refused or failed the call.
    """
    return (isinstance(error, (clients.NoConnection,
                               exception.NovaUnreachable,
                               exception.PlacementUnreachable))
            or getattr(error, 'code', None) == 503
            or getattr(error, 'http_status', None) == 503)


def nova_failure(action, error):
    """Our error for one of NOVA_FAILURES met trying to ``action``: Nova

    down or restarting is to try again later; anything else is Nova's
    refusal or failure.
    """
    if unreachable(error):
        return exception.NovaUnreachable(action=action, reason=error)
    return exception.NovaError(action=action, reason=error)


_locks_guard = threading.Lock()
_locks = collections.defaultdict(threading.Lock)


@contextlib.contextmanager
def pcloud_lock(pcloud_id):
    """Serialize changes to one pcloud's host names across processes.

    Nova's metadata has no compare-and-swap, so two allocations of one
    name in one pcloud could both write it; this closes that window for
    every API worker of every node: a lock of this process's threads,
    then the ledger's named lock (db.locks, which holds across Galera
    nodes too).
    """
    codec.validate_pcloud_id(pcloud_id)
    with _locks_guard:
        lock = _locks[pcloud_id]
    with lock:
        held = locks.acquire('pcloud:' + pcloud_id)
        try:
            yield
        finally:
            locks.release(held)


class Cloud(object):
    """One read of every aggregate, indexed the ways the service asks."""

    def __init__(self, aggregates, blazar_freepool=None):
        self.pools = {}           # flavor id -> pool aggregate
        self.pclouds = {}         # pcloud id -> pcloud aggregate
        self.node_of = {}         # compute host -> hypervisor_hostname
        self.flavor_of = {}       # compute host -> flavor id
        self.holders = collections.defaultdict(list)  # host -> pcloud ids
        self.az_of = {}           # compute host -> availability zone
        for agg in aggregates:
            md = agg.metadata
            if codec.is_pool(md):
                flavor_id = md.get(codec.FLAVOR_ID)
                self.pools[flavor_id] = agg
                self.node_of.update(codec.pool_nodes(md))
                for host in agg.hosts:
                    self.flavor_of[host] = flavor_id
            elif codec.is_pcloud(md):
                self.pclouds[md.get(codec.ID)] = agg
                for host in agg.hosts:
                    self.holders[host].append(md.get(codec.ID))
            if agg.availability_zone:
                for host in agg.hosts:
                    self.az_of[host] = agg.availability_zone
        self.host_of = {node: host for host, node in self.node_of.items()}
        # Hosts (and nodes) of Blazar's physical:host plugin: never ours.
        self.blazars = partition.blazar_hosts(aggregates, blazar_freepool)

    def blazar_holds(self, host):
        return bool({host, self.node_of.get(host)} & self.blazars)

    def units(self, host):
        pool = self.pools.get(self.flavor_of.get(host))
        return codec.host_flavor(pool.metadata).units if pool else 0

    def units_held(self, project_id, leased=()):
        """Units of the project's pclouds' hosts, but those ``leased``."""
        return sum(self.units(host)
                   for agg in self.pclouds.values()
                   if agg.metadata.get(codec.OWNER) == project_id
                   for host in agg.hosts if host not in leased)

    def flavor_units(self, flavor_id):
        pool = self.pools.get(flavor_id)
        return codec.host_flavor(pool.metadata).units if pool else 0

    def free_hosts(self, flavor_id, az, default_az, blazars=False):
        """The pool's hosts no pcloud holds (in ``az``); those Blazar's

        plugin holds are left out, or only they (``blazars``) are given.
        """
        return sorted(
            host for host in self.pools[flavor_id].hosts
            if not self.holders.get(host) and host in self.node_of
            and (az is None or self.az_of.get(host, default_az) == az)
            and self.blazar_holds(host) == blazars)

    def contended(self, flavor_id):
        """Whether some host of the pool is in several pclouds at once:

        allocations that collided and are about to give it back.
        """
        return any(len(self.holders.get(host, ())) > 1
                   for host in self.pools[flavor_id].hosts)

    def member_nodes(self, agg):
        return {self.node_of.get(host) for host in agg.hosts}


def flavor_dict(flavor):
    return {'id': flavor.id, 'description': flavor.description,
            'units': flavor.units}
