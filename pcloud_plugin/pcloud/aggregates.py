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

"""The names and metadata keys of seeds/000, and their validation.

Pure: no I/O. Host flavor pools and pclouds are Nova aggregates; everything
about them lives in the aggregate metadata under these exact keys. The
scheduler filter reads them from here, so this module must stay free of
our config and clients.
"""

import collections
import math
import re

from oslo_utils import timeutils

from pcloud_plugin import exception

POOL_NAME_PREFIX = 'Pcloud:host_flavor:'
PCLOUD_NAME_PREFIX = 'Pcloud:'

TYPE = 'pcloud:type'
TYPE_POOL = 'host_flavor_pool'
TYPE_PCLOUD = 'pcloud'

FLAVOR_ID = 'pcloud:flavor_id'
DESCRIPTION = 'pcloud:description'
UNITS = 'pcloud:units'

ID = 'pcloud:id'
NAME = 'pcloud:name'
OWNER = 'pcloud:owner'
HOST_PREFIX = 'pcloud:host:'
HOST_STATE_PREFIX = 'pcloud:host_state:'
TENANT_PREFIX = 'pcloud:'
TENANT = 'pcloud-tenant'
CPU_RATIO = 'pcloud:cpu_allocation_ratio'
RAM_RATIO = 'pcloud:ram_allocation_ratio'
# Not in seeds/000, both keyed by host so concurrent writers never clash:
# in a pool, the hypervisor_hostname of each member compute host (aggregates
# hold service hosts, the pcloud keys and Placement use hypervisor names);
# in a pcloud, a host's own ratios from before the pcloud changed
# them, "<cpu>,<ram>", put back in Placement when the host is released.
SAVED_RATIOS_PREFIX = 'pcloud:saved_ratios:'
NODE_PREFIX = 'pcloud:hypervisor:'

ENABLED = 'enabled'
DISABLED = 'disabled'

# A pcloud:host lease's own aggregate (seeds/001: filter_lease_id) and,
# not in the seeds, the pcloud it is for and its window, so the filter
# can tell on its own whether the lease still holds its hosts.
LEASE_ID = 'filter_lease_id'
LEASE_PCLOUD = 'pcloud:lease_pcloud'
LEASE_START = 'pcloud:lease_start'
LEASE_END = 'pcloud:lease_end'
# UTC, to the second (Blazar's dates go by minutes).
_MOMENT = '%Y-%m-%dT%H:%M:%SZ'

# Nova limits metadata keys and values, and aggregate names, to 255.
MAX_LENGTH = 255
_ID_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')
_TENANT_RE = re.compile(r'^[A-Za-z0-9_-]{1,64}$')
_UUID_RE = re.compile(r'^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$')
_HOSTNAME_RE = re.compile(r'^[A-Za-z0-9_.-]+$')
# A tenant key "pcloud:<tenant_id>" must never overwrite one of these.
_RESERVED_TENANTS = frozenset(k[len(TENANT_PREFIX):] for k in (
    TYPE, FLAVOR_ID, DESCRIPTION, UNITS, ID, NAME, OWNER, CPU_RATIO,
    RAM_RATIO))

HostFlavor = collections.namedtuple(
    'HostFlavor', ['id', 'description', 'units'])


def pool_name(flavor_id):
    return POOL_NAME_PREFIX + flavor_id


def pcloud_name(pcloud_id):
    return PCLOUD_NAME_PREFIX + pcloud_id


def host_key(name):
    return HOST_PREFIX + name


def host_state_key(hostname):
    return HOST_STATE_PREFIX + hostname


def tenant_key(tenant_id):
    return TENANT_PREFIX + tenant_id


def saved_ratios_key(hostname):
    return SAVED_RATIOS_PREFIX + hostname


def node_key(host):
    return NODE_PREFIX + host


def is_pool(metadata):
    return metadata.get(TYPE) == TYPE_POOL


def is_pcloud(metadata):
    return metadata.get(TYPE) == TYPE_PCLOUD


# Validation: each error names the field.

def _invalid(field, value, reason):
    return exception.InvalidField(field=field, value=value, reason=reason)


def validate_flavor_id(value):
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise _invalid('flavor_id', value,
                       'use 1 to 64 letters, digits, ".", "_" or "-", '
                       'starting with a letter or digit')
    return value


def validate_pcloud_id(value):
    if not isinstance(value, str) or not _UUID_RE.match(value):
        raise _invalid('pcloud_id', value, 'must be a pcloud uuid')
    return value


def validate_host_name(value):
    """A user's name for a host of their pcloud."""
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise _invalid('name', value,
                       'use 1 to 64 letters, digits, ".", "_" or "-", '
                       'starting with a letter or digit')
    return value


def validate_text(field, value, allow_empty=False):
    if not isinstance(value, str):
        raise _invalid(field, value, 'must be a string')
    value = value.strip()
    if not value and not allow_empty:
        raise _invalid(field, value, 'must not be empty')
    if len(value) > MAX_LENGTH:
        raise _invalid(field, value,
                       'must be at most %d characters' % MAX_LENGTH)
    return value


def validate_units(value):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _invalid('units', value, 'must be a whole number >= 0')
    return value


def validate_tenant_id(value):
    if (not isinstance(value, str) or not _TENANT_RE.match(value)
            or value in _RESERVED_TENANTS):
        raise _invalid('tenant_id', value,
                       'must be a project id (letters, digits, "_", "-")')
    return value


def validate_ratio(field, value):
    try:
        ratio = float(value)
    except (TypeError, ValueError):
        raise _invalid(field, value, 'must be a number')
    if isinstance(value, bool) or not math.isfinite(ratio) or ratio <= 0:
        raise _invalid(field, value, 'must be a number > 0')
    return ratio


def validate_hostname(value):
    """A compute host named by an admin (or a hypervisor's name)."""
    too_long = (isinstance(value, str)
                and len(saved_ratios_key(value)) > MAX_LENGTH)
    if not isinstance(value, str) or too_long or not _HOSTNAME_RE.match(
            value):
        raise _invalid('host', value, 'must be a compute host name')
    return value


# Building and reading metadata.

def pool_metadata(flavor):
    return {TYPE: TYPE_POOL, FLAVOR_ID: flavor.id,
            DESCRIPTION: flavor.description, UNITS: str(flavor.units)}


def host_flavor(metadata):
    """The HostFlavor a pool aggregate's metadata describes."""
    return HostFlavor(metadata.get(FLAVOR_ID), metadata.get(DESCRIPTION, ''),
                      int(metadata.get(UNITS, 0)))


def pool_nodes(metadata):
    """Service host to hypervisor_hostname, for a pool's members."""
    return {k[len(NODE_PREFIX):]: v for k, v in metadata.items()
            if k.startswith(NODE_PREFIX)}


def pcloud_metadata(pcloud_id, name, owner):
    """A new pcloud's metadata; its owner is its first authorized tenant."""
    return {TYPE: TYPE_PCLOUD, ID: pcloud_id, NAME: name, OWNER: owner,
            tenant_key(owner): TENANT}


def format_ratios(cpu, ram):
    return '%r,%r' % (cpu, ram)


def parse_ratios(value):
    cpu, ram = value.split(',')
    return float(cpu), float(ram)


class Pcloud(object):
    """A pcloud as its aggregate's metadata and members describe it.

    ``all_hosts`` maps the user's names to hypervisor hostnames;
    ``hosts()`` keeps those of members only: a name left behind by an
    interrupted release points at a host that is gone, and is ignored.
    """

    def __init__(self, metadata):
        md = metadata
        self.id = md.get(ID)
        self.name = md.get(NAME)
        self.owner = md.get(OWNER)
        self.tenants = frozenset(
            k[len(TENANT_PREFIX):] for k, v in md.items()
            if v == TENANT and k.startswith(TENANT_PREFIX))
        self.all_hosts = {k[len(HOST_PREFIX):]: v for k, v in md.items()
                          if k.startswith(HOST_PREFIX)}
        self.states = {k[len(HOST_STATE_PREFIX):]: v for k, v in md.items()
                       if k.startswith(HOST_STATE_PREFIX)}
        self.saved_ratios = {
            k[len(SAVED_RATIOS_PREFIX):]: parse_ratios(v)
            for k, v in md.items() if k.startswith(SAVED_RATIOS_PREFIX)}
        self.cpu_allocation_ratio = _float_or_none(md.get(CPU_RATIO))
        self.ram_allocation_ratio = _float_or_none(md.get(RAM_RATIO))

    def hosts(self, member_hostnames):
        """Names whose hostname is among ``member_hostnames``."""
        return {name: hostname for name, hostname in self.all_hosts.items()
                if hostname in member_hostnames}

    def state(self, hostname):
        return self.states.get(hostname, DISABLED)


def _float_or_none(value):
    return None if value is None else float(value)


# pcloud:host leases' aggregates.

def format_moment(moment):
    """A naive UTC datetime as lease metadata stores it."""
    return moment.strftime(_MOMENT)


def lease_window_metadata(pcloud_id, start, end):
    """The keys that say for whom and when a lease holds its hosts."""
    return {LEASE_PCLOUD: pcloud_id, LEASE_START: format_moment(start),
            LEASE_END: format_moment(end)}


def is_lease(metadata):
    return LEASE_ID in metadata


def lease_holds(metadata, pcloud_id, now):
    """Whether the lease of this aggregate holds its hosts for

    ``pcloud_id`` at ``now`` (a naive UTC datetime). A missing or garbled
    window holds nothing: a host must not take boots for a lease nobody
    can tell is still on (fail closed).
    """
    try:
        start = timeutils.parse_strtime(metadata[LEASE_START], _MOMENT)
        end = timeutils.parse_strtime(metadata[LEASE_END], _MOMENT)
    except (KeyError, TypeError, ValueError):
        return False
    return (metadata.get(LEASE_PCLOUD) == pcloud_id
            and start <= now < end)
