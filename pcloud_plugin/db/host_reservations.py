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
"""pcloud:host reservations in the ledger database, and whole-host claims.

A whole-host claim takes, for its window, every resource class of every
provider in a host's tree in full (its capacity), after checking that no
other consumer holds anything there then. It follows the ledger's rules
(db.api): read the generations, check, write, compare-and-swap every
provider touched, retry the whole on a lost swap. Unit rules (min_unit,
max_unit, step_size) are for pieces of a host, not a whole one, and are
not applied. Release is db.api.release.
"""

import collections
import json

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin import exception

_RES = models.HostReservation.__table__
_HOST = models.HostReservationHost.__table__
_ALLOC = models.Allocation.__table__
_RP = models.ResourceProvider.__table__
_INV = models.Inventory.__table__

INACTIVE = 'INACTIVE'
IN_PROGRESS = 'IN-PROGRESS'
ACTIVE = 'ACTIVE'
TIMEDOUT = 'TIMEDOUT'
ENDED = 'ENDED'
STATES = (INACTIVE, IN_PROGRESS, ACTIVE, TIMEDOUT, ENDED)
# The states in which a reservation holds (or is about to use) its hosts:
# IN-PROGRESS ones hold theirs while other projects' instances move off.
HOLDING = (INACTIVE, IN_PROGRESS, ACTIVE)

_FIELDS = ('lease_id', 'project_id', 'pcloud_id', 'host_flavor', 'amount',
           'availability_zone', 'required_traits', 'lease_type', 'timeout',
           'deadline', 'start_time', 'end_time', 'state', 'aggregate_id',
           'migrations')
_HOST_FIELDS = ('host_uuid', 'host_name', 'service_host', 'name', 'joined')


class HostReservationNotFound(exception.NotFound):
    msg_fmt = 'No host reservation %(reservation)s.'


# --- records ---------------------------------------------------------------

def _hosts_of(session, reservation_ids):
    hosts = collections.defaultdict(list)
    if reservation_ids:
        for row in session.execute(
                sa.select(_HOST).where(
                    _HOST.c.reservation_id.in_(reservation_ids))
                .order_by(_HOST.c.name)).mappings():
            found = {f: row[f] for f in _HOST_FIELDS}
            found['joined'] = bool(found['joined'])
            hosts[row['reservation_id']].append(found)
    return hosts


def _as_dict(row, hosts):
    found = {'reservation_id': row['reservation_id'],
             'created_at': row['created_at']}
    found.update((f, row[f]) for f in _FIELDS)
    found['migrations'] = json.loads(row['migrations'] or '[]')
    found['hosts'] = hosts
    return found


def _stored(values):
    """values as columns: 'migrations' (a list) as JSON."""
    if values.get('migrations') is not None:
        values = dict(values, migrations=json.dumps(values['migrations'],
                                                    sort_keys=True))
    return values


def _write_hosts(session, reservation_id, hosts):
    db_api.replace_rows(session, _HOST, {'reservation_id': reservation_id}, [
        dict({f: h.get(f) for f in _HOST_FIELDS},
             joined=bool(h.get('joined'))) for h in hosts])


@db_api.retry_on_deadlock
def create(context, reservation_id, values, hosts=()):
    """Record a reservation.

    :param values: the _FIELDS to store
    :param hosts: [{'host_uuid', 'host_name', 'service_host', 'name'}]
    """
    row = _stored({f: values.get(f) for f in _FIELDS})
    if row['state'] not in STATES:
        raise exception.Invalid(reason='unknown state %r' % row['state'])
    with db_api.writer(context) as session:
        try:
            session.execute(_RES.insert().values(
                reservation_id=reservation_id,
                created_at=timeutils.utcnow(), **row))
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exception.Conflict(
                reason='host reservation %s already exists' % reservation_id)
        _write_hosts(session, reservation_id, hosts)


@db_api.retry_on_deadlock
def get(context, reservation_id):
    """The reservation with its 'hosts', or HostReservationNotFound."""
    with db_api.reader(context) as session:
        row = session.execute(sa.select(_RES).where(
            _RES.c.reservation_id == reservation_id)).mappings().first()
        if row is None:
            raise HostReservationNotFound(reservation=reservation_id)
        return _as_dict(row, _hosts_of(session, [reservation_id])
                        [reservation_id])


@db_api.retry_on_deadlock
def list_reservations(context, lease_id=None, reservation_id=None,
                      states=None, ending_after=None, pcloud_id=None):
    """Reservations with their hosts, oldest first, filtered by any

    argument given.
    """
    query = sa.select(_RES).order_by(_RES.c.id)
    if lease_id is not None:
        query = query.where(_RES.c.lease_id == lease_id)
    if reservation_id is not None:
        query = query.where(_RES.c.reservation_id == reservation_id)
    if states is not None:
        query = query.where(_RES.c.state.in_(states))
    if ending_after is not None:
        query = query.where(_RES.c.end_time > ending_after)
    if pcloud_id is not None:
        query = query.where(_RES.c.pcloud_id == pcloud_id)
    with db_api.reader(context) as session:
        rows = list(session.execute(query).mappings())
        hosts = _hosts_of(session, [r['reservation_id'] for r in rows])
        return [_as_dict(r, hosts[r['reservation_id']]) for r in rows]


@db_api.retry_on_deadlock
def update(context, reservation_id, hosts=None, **values):
    """Change stored fields and, if given, replace the hosts."""
    unknown = set(values) - set(_FIELDS)
    if unknown:
        raise exception.Invalid(reason='unknown fields %s'
                                % ', '.join(sorted(unknown)))
    if 'state' in values and values['state'] not in STATES:
        raise exception.Invalid(reason='unknown state %r' % values['state'])
    with db_api.writer(context) as session:
        result = session.execute(_RES.update().where(
            _RES.c.reservation_id == reservation_id).values(
                updated_at=timeutils.utcnow(), **_stored(values)))
        if result.rowcount != 1:
            raise HostReservationNotFound(reservation=reservation_id)
        if hosts is not None:
            _write_hosts(session, reservation_id, hosts)


@db_api.retry_on_deadlock
def delete(context, reservation_id):
    with db_api.writer(context) as session:
        session.execute(_HOST.delete().where(
            _HOST.c.reservation_id == reservation_id))
        session.execute(_RES.delete().where(
            _RES.c.reservation_id == reservation_id))


@db_api.retry_on_deadlock
def set_joined(context, reservation_id, host_uuid, joined):
    """Record whether one host is in the pcloud's aggregate."""
    with db_api.writer(context) as session:
        session.execute(_HOST.update().where(
            _HOST.c.reservation_id == reservation_id,
            _HOST.c.host_uuid == host_uuid).values(joined=bool(joined)))


@db_api.retry_on_deadlock
def joined_service_hosts(context):
    """Service hosts some reservation has put into a pcloud and not yet

    taken out.
    """
    with db_api.reader(context) as session:
        return set(session.execute(sa.select(_HOST.c.service_host).where(
            _HOST.c.joined == sa.true())).scalars())


# --- whole-host claims -----------------------------------------------------

def _tree_rows(session, roots):
    """({root uuid: root row}, {root id: [provider rows of its tree]})."""
    root_rows = {r['uuid']: r for r in session.execute(
        sa.select(_RP).where(_RP.c.uuid.in_(roots))).mappings()}
    for uuid in roots:
        if uuid not in root_rows:
            raise exception.ResourceProviderNotFound(provider=uuid)
        row = root_rows[uuid]
        if row['root_provider_id'] != row['id']:
            raise exception.Invalid(
                reason='provider %s is not the root of a host' % uuid)
    trees = collections.defaultdict(list)
    for row in session.execute(sa.select(_RP).where(
            _RP.c.root_provider_id.in_(
                [r['id'] for r in root_rows.values()]))).mappings():
        trees[row['root_provider_id']].append(row)
    return root_rows, trees


@db_api.writer_with_cas_retry
def claim_hosts(session, consumer_id, roots, start=None, end=None,
                replace=False):
    """Claim the hosts whose root providers are ``roots``, whole, for

    [start, end), all or nothing. Raises HostBusy, naming the host and
    the claim in the way, with nothing written. ``replace``: the
    consumer's current claims (if any) are replaced by these, or kept as
    they were if these do not fit.
    """
    window = window_mod.Window.of(start, end)
    roots = sorted(set(roots))
    if not roots:
        raise exception.Invalid(reason='a whole-host claim needs a host')
    held = db_api.take_consumer(session, consumer_id, window, replace)
    root_rows, trees = _tree_rows(session, roots)
    providers = {row['id']: row for tree in trees.values() for row in tree}
    root_name = {row['id']: root_rows[uuid]['name']
                 for uuid in roots
                 for row in trees[root_rows[uuid]['id']]}
    in_the_way = session.execute(
        sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.consumer_id,
                  _ALLOC.c.start_time, _ALLOC.c.end_time)
        .where(_ALLOC.c.resource_provider_id.in_(providers),
               _ALLOC.c.end_time > window.start,
               _ALLOC.c.start_time < window.stored_end,
               _ALLOC.c.consumer_id != consumer_id,
               _ALLOC.c.used > 0)
        .order_by(_ALLOC.c.start_time).limit(1)).first()
    if in_the_way is not None:
        rp_id, other, c_start, c_end = in_the_way
        raise exception.HostBusy(
            host=root_name[rp_id], window=window, consumer=other,
            start=c_start.isoformat(),
            end='open' if c_end >= window_mod.FOREVER else c_end.isoformat())

    rows = []
    claimed_roots = set()
    for inv in session.execute(sa.select(_INV).where(
            _INV.c.resource_provider_id.in_(providers))).mappings():
        capacity = provider_cache.inventory_of(inv).capacity
        if capacity > 0:
            rows.append(dict(
                resource_provider_id=inv['resource_provider_id'],
                resource_class_id=inv['resource_class_id'], used=capacity))
            claimed_roots.add(
                providers[inv['resource_provider_id']]['root_provider_id'])
    for uuid in roots:
        if root_rows[uuid]['id'] not in claimed_roots:
            raise exception.Invalid(
                reason='host %s has no capacity to claim'
                % root_rows[uuid]['name'])
    db_api.write_claims(session, consumer_id, window, rows,
                        list(providers.values()), held)
    return window


@db_api.retry_on_deadlock
def busy_intervals(context, roots, not_before, before=None,
                   exclude_consumer=None, exclude_prefix=None):
    """{root uuid: [(start, end)]}: when anything is claimed on the hosts'

    trees, for claims ending after not_before (and starting before
    ``before`` if given), every consumer's but exclude_consumer's and
    those whose id starts with exclude_prefix. Each
    of ``roots`` is a key, with [] when the host has no such claim. Open
    ends are capacity.window.FOREVER.
    """
    roots = set(roots)
    busy = {uuid: [] for uuid in roots}
    if not roots:
        return busy
    root = _RP.alias('host_root')
    member = _RP.alias('host_member')
    query = (sa.select(root.c.uuid, _ALLOC.c.start_time, _ALLOC.c.end_time)
             .select_from(_ALLOC)
             .join(member, member.c.id == _ALLOC.c.resource_provider_id)
             .join(root, root.c.id == member.c.root_provider_id)
             .where(root.c.uuid.in_(roots),
                    _ALLOC.c.end_time > not_before,
                    _ALLOC.c.used > 0)
             .distinct())
    if before is not None:
        query = query.where(_ALLOC.c.start_time < before)
    if exclude_consumer is not None:
        query = query.where(_ALLOC.c.consumer_id != exclude_consumer)
    if exclude_prefix is not None:
        query = query.where(sa.not_(
            _ALLOC.c.consumer_id.startswith(exclude_prefix)))
    with db_api.reader(context) as session:
        for uuid, c_start, c_end in session.execute(query):
            busy[uuid].append((c_start, c_end))
    for intervals in busy.values():
        intervals.sort()
    return busy


def held_until(context, host_name, not_holders=None):
    """Until when claims hold the host named ``host_name`` (its provider's

    tree), from now: an end (FOREVER: no end), or None if nothing does.
    Consumers whose id starts with ``not_holders`` do not count.
    """
    uuid = db_api.provider_uuid_named(context, host_name)
    if uuid is None:
        return None
    busy = busy_intervals(context, [uuid],
                          timeutils.utcnow().replace(microsecond=0),
                          exclude_prefix=not_holders)[uuid]
    return max((end for _start, end in busy), default=None)
