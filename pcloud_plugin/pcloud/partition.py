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
"""Which hosts are Blazar's physical:host plugin's, and which are ours.

Pure: reads Nova's aggregates as given, no I/O. Blazar's plugin keeps the
hosts an operator registered with it (``openstack reservation host
create``) in its freepool aggregate, and moves each leased one into a
reservation aggregate whose metadata names its owner (``blazar:owner``).
Those hosts are Blazar's alone: our plugins never place a slot or lease
on one, the pcloud service takes none into a pool or a pcloud, and
Blazar's API refuses to register one of ours (a host flavor
pool's or a pcloud's, or one our reservations hold: blazar.api.
host_guard). pcloud-status upgrade check reports any host in both.
"""

from pcloud_plugin.pcloud import aggregates as codec

BLAZAR_OWNER = 'blazar:owner'
_OURS = (codec.TYPE_POOL, codec.TYPE_PCLOUD)


def _names(aggregate):
    """Service hosts and, for our pools, the hypervisor names too."""
    metadata = getattr(aggregate, 'metadata', None) or {}
    names = set(getattr(aggregate, 'hosts', None) or ())
    names.update(value for key, value in metadata.items()
                 if key.startswith(codec.NODE_PREFIX))
    return names


def is_blazars(aggregate, freepool_name):
    metadata = getattr(aggregate, 'metadata', None) or {}
    return ((freepool_name is not None and
             getattr(aggregate, 'name', None) == freepool_name)
            or BLAZAR_OWNER in metadata)


def is_ours(aggregate):
    metadata = getattr(aggregate, 'metadata', None) or {}
    return metadata.get(codec.TYPE) in _OURS


def blazar_hosts(aggregates, freepool_name):
    """Hosts Blazar's physical:host plugin holds."""
    found = set()
    for aggregate in aggregates:
        if is_blazars(aggregate, freepool_name):
            found |= _names(aggregate)
    return found


def our_hosts(aggregates):
    """Hosts in our host flavor pools and pclouds."""
    found = set()
    for aggregate in aggregates:
        if is_ours(aggregate):
            found |= _names(aggregate)
    return found


def overlap(aggregates, freepool_name):
    """Hosts both hold, sorted: a partition an operator must repair."""
    return sorted(blazar_hosts(aggregates, freepool_name)
                  & our_hosts(aggregates))
