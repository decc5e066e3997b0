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
(db.api, and db.claims' take_consumer and write_claims): read the
generations, check, write, compare-and-swap every provider touched,
retry the whole on a lost swap. Unit rules (min_unit, max_unit,
step_size) are for pieces of a host, not a whole one, and are not
applied. Release is db.claims.release.
"""

import collections
import copy
import json

from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import records
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

# seeds/001's host terms, each with the value that asks nothing: one JSON
# column (host_terms) holds those asked, so that a term more is no
# migration more; a reservation's dict has each as a key.
TERMS = {'vcpus': 0, 'memory_mb': 0, 'disk_gb': 0,
         'hypervisor_properties': '', 'resource_properties': '',
         'capabilities': {}, 'aggregate_metadata': {}}
_COLUMNS = ('lease_id', 'project_id', 'pcloud_id', 'host_flavor', 'amount',
            'availability_zone', 'required_traits', 'lease_type', 'timeout',
            'deadline', 'start_time', 'end_time', 'state', 'aggregate_id',
            'migrations', 'hand_over')
# Columns holding JSON, and what NULL stands for.
_JSON = {'migrations': [], 'hand_over': None}
_FIELDS = _COLUMNS + tuple(TERMS)
_HOST_FIELDS = ('host_uuid', 'host_name', 'service_host', 'name', 'joined')


class HostReservationNotFound(exception.NotFound):
    msg_fmt = 'No host reservation %(reservation)s.'


# --- records ---------------------------------------------------------------

class _Records(records.Records):
    table = _RES
    child_table = _HOST
    fields = _FIELDS
    shown = ('created_at',)
    child_order = 'name'
    children = 'hosts'
    not_found = HostReservationNotFound
    noun = 'host reservation'

    def row_as_dict(self, row):
        found = {c: row[c] for c in ('reservation_id',) + self.shown
                 + _COLUMNS}
        for column, none in _JSON.items():
            found[column] = (json.loads(row[column]) if row[column]
                             else copy.copy(none))
        asked = json.loads(row['host_terms'] or '{}')
        found.update(
            (term, asked[term] if term in asked else copy.copy(none))
            for term, none in TERMS.items())
        return found

    def child_as_dict(self, row):
        found = {f: row[f] for f in _HOST_FIELDS}
        found['joined'] = bool(found['joined'])
        return found

    def child_stored(self, host):
        return dict({f: host.get(f) for f in _HOST_FIELDS},
                    joined=bool(host.get('joined')))

    def stored(self, values):
        """values as columns: 'migrations' and 'hand_over' as JSON, and the

        TERMS, all or none of them (a term left out would be dropped
        unseen), as the JSON of those that ask something.
        """
        values = dict(values, **{
            column: json.dumps(values[column], sort_keys=True)
            for column in _JSON if values.get(column) is not None})
        given = [term for term in TERMS if term in values]
        if given:
            missing = sorted(set(TERMS) - set(given))
            if missing:
                raise exception.Invalid(
                    reason='the host terms are written together: %s '
                    'missing' % ', '.join(missing))
            asked = {term: values[term] for term in TERMS
                     if values[term] not in (None, TERMS[term])}
            values = {k: v for k, v in values.items() if k not in TERMS}
            values['host_terms'] = (json.dumps(asked, sort_keys=True)
                                    if asked else None)
        return values

    def check(self, values):
        if 'state' in values and values['state'] not in STATES:
            raise exception.Invalid(
                reason='unknown state %r' % values['state'])


_RECORDS = _Records()


@db_api.retry_on_deadlock
def create(context, reservation_id, values, hosts=()):
    """Record a reservation.

    :param values: the _FIELDS to store
    :param hosts: [{'host_uuid', 'host_name', 'service_host', 'name'}]
    """
    _RECORDS.create(context, reservation_id, values, hosts)


@db_api.retry_on_deadlock
def get(context, reservation_id):
    """The reservation with its 'hosts', or HostReservationNotFound."""
    return _RECORDS.get(context, reservation_id)


@db_api.retry_on_deadlock
def list_reservations(context, lease_id=None, reservation_id=None,
                      states=None, ending_after=None, pcloud_id=None,
                      project_id=None):
    """Reservations with their hosts, oldest first, filtered by any

    argument given.
    """
    where = [] if states is None else [_RES.c.state.in_(states)]
    return _RECORDS.list_reservations(
        context, where, ending_after=ending_after, lease_id=lease_id,
        reservation_id=reservation_id, pcloud_id=pcloud_id,
        project_id=project_id)


@db_api.retry_on_deadlock
def update(context, reservation_id, hosts=None, **values):
    """Change stored fields and, if given, replace the hosts."""
    _RECORDS.update(context, reservation_id, values, hosts)


@db_api.retry_on_deadlock
def record_hand_over(context, reservation_id, hand_over):
    """Record the hand-over the lessee is warned of, unless one is:

    whether it was recorded now (two managers warn once between them).
    """
    with db_api.writer(context) as session:
        return session.execute(_RES.update().where(
            _RES.c.reservation_id == reservation_id,
            _RES.c.hand_over.is_(None)).values(
                updated_at=timeutils.utcnow(),
                hand_over=json.dumps(hand_over, sort_keys=True))
        ).rowcount == 1


@db_api.retry_on_deadlock
def delete(context, reservation_id):
    _RECORDS.delete(context, reservation_id)


@db_api.retry_on_deadlock
def set_joined(context, reservation_id, host_uuid, joined):
    """Record whether one host is in the pcloud's aggregate."""
    with db_api.writer(context) as session:
        session.execute(_HOST.update().where(
            _HOST.c.reservation_id == reservation_id,
            _HOST.c.host_uuid == host_uuid).values(joined=bool(joined)))


@db_api.retry_on_deadlock
def holding(context, host_uuid):
    """(reservation id, lease id) of the active reservation whose pcloud

    the host has joined, or None.
    """
    with db_api.reader(context) as session:
        row = session.execute(sa.select(
            _RES.c.reservation_id, _RES.c.lease_id).join(
                _HOST, _HOST.c.reservation_id == _RES.c.reservation_id).where(
                    _HOST.c.host_uuid == host_uuid,
                    _HOST.c.joined == sa.true(),
                    _RES.c.state == ACTIVE)).first()
    return tuple(row) if row else None


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
    held = db_claims.take_consumer(session, consumer_id, window, replace)
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
    db_claims.write_claims(session, consumer_id, window, rows,
                           list(providers.values()), held)
    return window


@db_api.writer_with_cas_retry
def hold_free(session, consumer_id, roots, start, end):
    """Claim for [start, end) what no other consumer claims then on the

    trees of ``roots`` (each whole where nothing else is), replacing the
    consumer's hold if it has one: nothing new can be booked there. An
    other consumer's claim keeps what it has. Returns the window.
    """
    window = window_mod.Window.of(start, end)
    held = db_claims.take_consumer(session, consumer_id, window,
                                   replace=True)
    _roots, trees = _tree_rows(session, sorted(set(roots)))
    providers = {row['uuid']: row for tree in trees.values() for row in tree}
    db_claims.write_claims(
        session, consumer_id, window,
        db_claims.free_rows(session, consumer_id, window, providers),
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
    query = _claims_on_trees(roots, not_before, exclude_prefix)
    if before is not None:
        query = query.where(_ALLOC.c.start_time < before)
    if exclude_consumer is not None:
        query = query.where(_ALLOC.c.consumer_id != exclude_consumer)
    # Each interval once, whoever claims it.
    uuid_col, _consumer, start_col, end_col = query.selected_columns
    query = query.with_only_columns(uuid_col, start_col,
                                    end_col).distinct()
    with db_api.reader(context) as session:
        for uuid, c_start, c_end in session.execute(query):
            busy[uuid].append((c_start, c_end))
    for intervals in busy.values():
        intervals.sort()
    return busy


@db_api.retry_on_deadlock
def consumers_on(context, roots, start, end, exclude_prefix=None):
    """{consumer: set of roots} of the claims on the trees of ``roots``

    that overlap [start, end), but those of consumers whose id starts
    with ``exclude_prefix``.
    """
    found = collections.defaultdict(set)
    query = _claims_on_trees(roots, start, exclude_prefix).where(
        _ALLOC.c.start_time < end)
    with db_api.reader(context) as session:
        for root, consumer, _start, _end in session.execute(query):
            found[consumer].add(root)
    return dict(found)


def _claims_on_trees(roots, not_before, exclude_prefix=None):
    """(root uuid, consumer, start, end) of the claims on the trees of

    ``roots`` that end after not_before, but those of consumers whose id
    starts with ``exclude_prefix``.
    """
    root = _RP.alias('host_root')
    member = _RP.alias('host_member')
    query = (sa.select(root.c.uuid, _ALLOC.c.consumer_id,
                       _ALLOC.c.start_time, _ALLOC.c.end_time)
             .select_from(_ALLOC)
             .join(member, member.c.id == _ALLOC.c.resource_provider_id)
             .join(root, root.c.id == member.c.root_provider_id)
             .where(root.c.uuid.in_(roots),
                    _ALLOC.c.end_time > not_before,
                    _ALLOC.c.used > 0))
    if exclude_prefix is not None:
        query = query.where(sa.not_(
            _ALLOC.c.consumer_id.startswith(exclude_prefix)))
    return query


def holders(context, host_name, not_holders=None):
    """{consumer: until when (FOREVER: no end)} of the claims that hold

    the host named ``host_name`` (its provider's tree) from now; those of
    consumers whose id starts with ``not_holders`` do not count.
    """
    uuid = db_providers.provider_uuid_named(context, host_name)
    if uuid is None:
        return {}
    found = {}
    query = _claims_on_trees(
        [uuid], timeutils.utcnow().replace(microsecond=0), not_holders)
    with db_api.reader(context) as session:
        for _root, consumer, _start, end in session.execute(query):
            found[consumer] = max(end, found.get(consumer, end))
    return found


def held_until(context, host_name, not_holders=None):
    """Until when claims hold the host named ``host_name`` (its provider's

    tree), from now: an end (FOREVER: no end), or None if nothing does.
    Consumers whose id starts with ``not_holders`` do not count.
    """
    return max(holders(context, host_name, not_holders).values(),
               default=None)
