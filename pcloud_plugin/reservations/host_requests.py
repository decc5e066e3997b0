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

"""What a pcloud:host reservation asks for, and which hosts may serve it.

Its parameters (validated, each error a 400 naming its field), the lease
types of seeds/001, the host flavor pools and pclouds as Nova's
aggregates say (Pools), the hosts eligible for a reservation, and the
earliest window in which one would be admitted, from the ledger.
"""

import collections
import datetime

from oslo_utils import strutils
from oslo_utils import timeutils

from pcloud_plugin.capacity import host_windows
from pcloud_plugin import conf
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import partition

CONF = conf.CONF

IMMEDIATE = 'IMMEDIATE'
SCHEDULE = 'SCHEDULE'
BEST_EFFORT = 'BEST-EFFORT'
LEASE_TYPES = (IMMEDIATE, SCHEDULE, BEST_EFFORT)

REQUIRED = ('amount', 'host_flavor', 'pcloud_id')
OPTIONAL = {'availability_zone': None, 'required_traits': None,
            'lease_type': SCHEDULE, 'timeout': None}
PARAMS = REQUIRED + tuple(OPTIONAL)

_NONE = ('', 'none', 'null')


def malformed(field, reason):
    return exception.InvalidTerm(param='%s (%s)' % (field, reason))


def _int(value, field, minimum):
    try:
        return strutils.validate_integer(value, field, minimum, 2 ** 31 - 1)
    except ValueError as e:
        raise malformed(field, e)


def _traits_text(value):
    """The stored form of required_traits: a string, or a list of strings

    joined by '&'; anything else is a 400.
    """
    if isinstance(value, (list, tuple)):
        if not all(isinstance(group, str) for group in value):
            raise malformed('required_traits',
                            'a string or a list of strings')
        return '&'.join(value)
    return value


def _traits(text):
    """Parsed required_traits as stored ('&' joins several groups)."""
    if not text:
        return [], set()
    return host_windows.parse_traits(text.split('&'))


def parse_terms(merged):
    """amount, host_flavor, availability_zone and required_traits."""
    params = {'amount': _int(merged['amount'], 'amount', 1)}
    try:
        params['host_flavor'] = codec.validate_flavor_id(
            merged['host_flavor'])
    except exception.InvalidField as e:
        raise malformed('host_flavor', e.kwargs['reason'])
    az = merged['availability_zone']
    if az is None or (isinstance(az, str) and az.strip().lower() in _NONE):
        params['availability_zone'] = None
    else:
        try:
            params['availability_zone'] = codec.validate_text(
                'availability_zone', az)
        except exception.InvalidField as e:
            raise malformed('availability_zone', e.kwargs['reason'])
    traits = _traits_text(merged['required_traits']) or None
    if traits is not None and not isinstance(traits, str):
        raise malformed('required_traits', 'a string or a list of strings')
    try:
        _traits(traits)
    except exception.Invalid as e:
        raise malformed('required_traits', e.message)
    params['required_traits'] = traits
    return params


def parse_params(values, current=None):
    """The reservation parameters of values, validated, each error naming

    its field; those missing come from ``current`` (an update), or their
    default, or are an error.
    """
    missing = [p for p in REQUIRED if p not in values
               and (current is None or p not in current)]
    if missing:
        raise exception.MissingTerm(param=','.join(missing))
    merged = dict(OPTIONAL)
    merged.update((p, current[p]) for p in PARAMS
                  if current is not None and p in current)
    merged.update((p, values[p]) for p in PARAMS if p in values)
    params = parse_terms(merged)
    try:
        params['pcloud_id'] = codec.validate_pcloud_id(merged['pcloud_id'])
    except exception.InvalidField as e:
        raise malformed('pcloud_id', e.kwargs['reason'])
    lease_type = merged['lease_type']
    lease_type = (lease_type.strip().upper().replace('_', '-')
                  if isinstance(lease_type, str) else lease_type)
    if lease_type not in LEASE_TYPES:
        raise malformed('lease_type', 'one of %s, got %r'
                        % (', '.join(LEASE_TYPES), merged['lease_type']))
    params['lease_type'] = lease_type
    timeout = merged['timeout']
    if lease_type != BEST_EFFORT and 'timeout' not in values:
        timeout = None  # left from a BEST-EFFORT lease being updated
    if timeout is not None and not (isinstance(timeout, str)
                                    and timeout.lower() in _NONE):
        if lease_type != BEST_EFFORT:
            raise malformed('timeout', 'only a BEST-EFFORT lease waits')
        params['timeout'] = _int(timeout, 'timeout', 1)
    elif lease_type == BEST_EFFORT:
        params['timeout'] = CONF.pcloud_host.best_effort_timeout
    else:
        params['timeout'] = None
    return params


def params_of(row):
    return {p: row[p] for p in PARAMS}


def check_type(params, start, now=None):
    """An IMMEDIATE lease starts now ([pcloud_host] immediate_tolerance)."""
    if params['lease_type'] == IMMEDIATE:
        now = now or timeutils.utcnow()
        latest = now + datetime.timedelta(
            seconds=CONF.pcloud_host.immediate_tolerance)
        if start > latest:
            raise malformed(
                'lease_type', 'an IMMEDIATE lease starts now, not at '
                '%s: use SCHEDULE' % start)


def check_pcloud(pools, pcloud_id, project_id):
    """The aggregate of the project's pcloud ``pcloud_id``."""
    agg = pools.pclouds.get(pcloud_id)
    # Others' pclouds do not exist, as far as a user can tell.
    if agg is None or codec.Pcloud(agg.metadata).owner != project_id:
        raise malformed('pcloud_id', 'no pcloud %s of project %s'
                        % (pcloud_id, project_id))
    return agg


def deadline(params, start):
    if params['lease_type'] != BEST_EFFORT:
        return None
    return start + datetime.timedelta(minutes=params['timeout'])


# --- what Nova's aggregates say about hosts --------------------------------

class Pools:
    """Host flavor pools and pclouds, from one list of Nova's aggregates

    (seeds/000's names and metadata).
    """

    def __init__(self, aggregates, default_az):
        self.pools = {}
        self.pclouds = {}
        self.node_of = {}
        self.holders = collections.defaultdict(list)
        self._az = {}
        self.default_az = default_az
        # Blazar's physical:host plugin's: never ours (pcloud.partition).
        self.blazars = partition.blazar_hosts(
            aggregates, CONF.pcloud.blazar_freepool_name)
        for agg in aggregates:
            md = getattr(agg, 'metadata', None) or {}
            hosts = getattr(agg, 'hosts', None) or ()
            if codec.is_pool(md):
                self.pools[md.get(codec.FLAVOR_ID)] = agg
                self.node_of.update(codec.pool_nodes(md))
            elif codec.is_pcloud(md):
                pcloud_id = md.get(codec.ID)
                if pcloud_id:
                    self.pclouds[pcloud_id] = agg
                for host in hosts:
                    self.holders[host].append(pcloud_id or agg.name)
            zone = getattr(agg, 'availability_zone', None)
            if zone:
                for host in hosts:
                    self._az[host] = zone

    def az_of(self, host):
        return self._az.get(host, self.default_az)


def eligible_hosts(forest, pools, params, leased):
    """Hosts a reservation may use, in name order:

    [{'host_uuid', 'host_name', 'service_host'}]. ``leased``: service
    hosts in a pcloud through a lease (others in a pcloud are its own).
    """
    pool = pools.pools.get(params['host_flavor'])
    if pool is None:
        raise malformed('host_flavor',
                        'no host flavor %s' % params['host_flavor'])
    roots = {p.name: p.uuid for p in forest if p.parent_uuid is None}
    found = {}
    for host in getattr(pool, 'hosts', None) or ():
        if (pools.holders.get(host) and host not in leased
                or host in pools.blazars):
            continue
        zone = params['availability_zone']
        if zone is not None and pools.az_of(host) != zone:
            continue
        node = pools.node_of.get(host, host)
        if node in roots:
            found[roots[node]] = (node, host)
    required, forbidden = _traits(params['required_traits'])
    return [{'host_uuid': root, 'host_name': found[root][0],
             'service_host': found[root][1]}
            for root in host_windows.qualifying(forest, found, required,
                                                forbidden)]


def describe(params):
    where = []
    if params['availability_zone']:
        where.append('in availability zone %s' % params['availability_zone'])
    if params['required_traits']:
        where.append('with traits %s' % params['required_traits'])
    return '%d host(s) of host flavor %s%s' % (
        params['amount'], params['host_flavor'],
        ''.join(' ' + w for w in where))


def find_earliest_window(context, forest, pools, params, duration,
                         not_before=None, latest_start=None):
    """The earliest window of ``duration`` in which the reservation of

    ``params`` (amount, host_flavor, availability_zone, required_traits)
    would be admitted, from the ledger: {'start', 'end', 'amount'}, or
    None if no such window starts by latest_start (or at all).
    """
    leased = host_db.joined_service_hosts(context)
    hosts = eligible_hosts(forest, pools, params, leased)
    not_before = (not_before or timeutils.utcnow()).replace(microsecond=0)
    order = [h['host_uuid'] for h in hosts]
    busy = host_db.busy_intervals(context, order, not_before)
    found = host_windows.earliest_window(
        busy, params['amount'], duration, not_before,
        latest_start=latest_start, order=order)
    if found is None:
        return None
    start, end, _roots = found
    return {'start': start, 'end': end, 'amount': params['amount']}
