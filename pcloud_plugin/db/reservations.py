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
"""virtual:instance reservation records in the ledger database.

The capacity itself is the ledger claim whose consumer is the reservation
id (db.claims); these rows say what it is for: the slot size and count, the
hosts holding slots, and the Nova and Placement objects made at start.
"""

import collections

import sqlalchemy as sa

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import records
from pcloud_plugin import exception

_RES = models.InstanceReservation.__table__
_SLOT = models.InstanceReservationSlot.__table__
_ALLOC = models.Allocation.__table__
_RP = models.ResourceProvider.__table__
_RC = models.ResourceClass.__table__
_HOST_RES = models.HostReservation.__table__
# The consumer prefix of a pcloud's own hosts (pcloud.leases.PERMANENT).
WHOLE_HOST = 'pcloud-host:'

RESERVED = 'reserved'
ACTIVE = 'active'
ENDING = 'ending'

_FIELDS = ('lease_id', 'project_id', 'resource_id', 'vcpus', 'memory_mb',
           'disk_gb', 'amount', 'affinity', 'resource_properties',
           'availability_zone', 'start_time', 'end_time', 'state',
           'resource_class', 'flavor_id', 'aggregate_id', 'server_group_id')


class ReservationNotFound(exception.NotFound):
    msg_fmt = 'No instance reservation %(reservation)s.'


class _Records(records.Records):
    table = _RES
    child_table = _SLOT
    fields = _FIELDS
    child_order = 'host_name'
    children = 'slots'
    not_found = ReservationNotFound
    noun = 'instance reservation'

    def child_stored(self, slot):
        return {'host_uuid': slot['host_uuid'],
                'host_name': slot['host_name'], 'slots': slot['slots'],
                'placed': slot.get('placed', 0)}


_RECORDS = _Records()


@db_api.retry_on_deadlock
def create(context, reservation_id, values, slots):
    """Record a reservation whose ledger claim has just been made.

    :param values: the _FIELDS to store (state defaults to RESERVED)
    :param slots: [{'host_uuid', 'host_name', 'slots'}]
    """
    _RECORDS.create(context, reservation_id,
                    dict(values, state=values.get('state') or RESERVED),
                    slots)


@db_api.retry_on_deadlock
def get(context, reservation_id):
    """The reservation with its 'slots', or ReservationNotFound."""
    return _RECORDS.get(context, reservation_id)


@db_api.retry_on_deadlock
def get_by_resource_id(context, resource_id):
    return _RECORDS.get(context, resource_id, column='resource_id',
                        name='with resource id %s' % resource_id)


@db_api.retry_on_deadlock
def list_reservations(context, lease_id=None, reservation_id=None,
                      state=None, ending_after=None, project_id=None):
    """Reservations with their slots, filtered by any argument given."""
    return _RECORDS.list_reservations(
        context, ending_after=ending_after, project_id=project_id,
        lease_id=lease_id, reservation_id=reservation_id, state=state)


@db_api.retry_on_deadlock
def active_of_classes(context, classes):
    """{resource class: (reservation id, lease id)} of the active

    reservations whose slots are of one of ``classes``.
    """
    if not classes:
        return {}
    with db_api.reader(context) as session:
        return {row.resource_class: (row.reservation_id, row.lease_id)
                for row in session.execute(sa.select(
                    _RES.c.resource_class, _RES.c.reservation_id,
                    _RES.c.lease_id).where(
                        _RES.c.resource_class.in_(sorted(classes)),
                        _RES.c.state == ACTIVE))}


@db_api.retry_on_deadlock
def reservation_ids(context, among=None):
    """The ids of every instance reservation recorded (no slots read),

    or of those ``among`` these ids.
    """
    query = sa.select(_RES.c.reservation_id)
    if among is not None:
        if not among:
            return set()
        query = query.where(_RES.c.reservation_id.in_(sorted(among)))
    with db_api.reader(context) as session:
        return set(session.execute(query).scalars())


@db_api.retry_on_deadlock
def update(context, reservation_id, slots=None, **values):
    """Change stored fields and, if given, replace the slots."""
    _RECORDS.update(context, reservation_id, values, slots)


@db_api.retry_on_deadlock
def set_placed(context, reservation_id, host_uuid, placed):
    """Record how many slots Placement holds on one host."""
    with db_api.writer(context) as session:
        session.execute(_SLOT.update().where(
            _SLOT.c.reservation_id == reservation_id,
            _SLOT.c.host_uuid == host_uuid).values(placed=placed))


@db_api.retry_on_deadlock
def delete(context, reservation_id):
    _RECORDS.delete(context, reservation_id)


@db_api.retry_on_deadlock
def usage_steps(context, resource_class, start, end, provider_uuids=None,
                exclude_consumer=None):
    """[(moment, total used)] of one class in [start, end), summed over

    the given providers (all if None) and every consumer but
    exclude_consumer: the usage at each moment the claims overlapping the
    window start or end. Used to say which part of a window is short when
    a reservation is refused.
    """
    window = window_mod.Window.of(start, end)
    query = (sa.select(_RP.c.uuid, _ALLOC.c.start_time, _ALLOC.c.end_time,
                       _ALLOC.c.used)
             .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
             .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
             .where(_RC.c.name == resource_class,
                    _ALLOC.c.end_time > window.start,
                    _ALLOC.c.start_time < window.stored_end))
    if exclude_consumer is not None:
        query = query.where(_ALLOC.c.consumer_id != exclude_consumer)
    with db_api.reader(context) as session:
        claims = [(c_start, c_end, used)
                  for uuid, c_start, c_end, used in session.execute(query)
                  if provider_uuids is None or uuid in provider_uuids]
    return window_mod.UsageSteps(claims).between(
        window.start, window.stored_end)


# What cloud.promises fences on some providers: claims [(provider uuid,
# class, start, end, used, consumer)] of the consumers named, {provider
# uuid: {class: max_unit}}, and {(provider uuid, class): UsageSteps} of
# the claims of all others, summed.
Fenced = collections.namedtuple('Fenced', 'claims max_units summed')

# How often claims_on reads again while writers keep moving generations.
_STEADY_READS = 5


@db_api.retry_on_deadlock
def claims_on(context, provider_uuids, after, consumers=()):
    """Fenced: the ledger claims on these providers that end after

    ``after``, but for whole hosts (host leases and pclouds' own hosts)
    and Placement's own usage mirrored (already allocated there); and the
    providers' max units: what cloud.promises fences in Placement.

    The claims of ``consumers`` come one by one; of all others, only
    what a promise needs, their sum over time. The sum is provider_cache's
    usage steps (read again only once a provider's generation moved, and
    not after this process's own claims) less the claims read here, so
    an admission reads rows for the consumers it names and the claims
    left out, not for every claim already on its providers.
    """
    if not provider_uuids:
        return Fenced([], {}, {})
    consumers = set(consumers)
    with db_api.reader(context) as session:
        # First the generations this process's claim on them has just
        # left (an admission's): if a write came since, the read after
        # the rows shows it, and they are read from then on.
        known = provider_cache.CACHE.last_claimed(session, provider_uuids)
        for _read in range(_STEADY_READS + (known is not None)):
            providers = known or _generations(session, provider_uuids)
            known = None
            if not providers:
                return Fenced([], {}, {})
            details = provider_cache.CACHE.get(session, providers)
            rows = _named_or_left_out(session, providers, after, consumers)
            # The steps and the rows agree unless a write came between
            # (READ COMMITTED): every write of claims moves a generation.
            if _generations(session, provider_uuids) == providers:
                break
        else:
            raise exception.ConcurrentUpdateDetected(
                attempts=_STEADY_READS,
                providers=', '.join(sorted(provider_uuids)))
    return fenced(providers, details, rows, consumers)


def fenced(providers, details, rows, consumers):
    """claims_on's answer from what it read: providers as (id, uuid,

    generation), their provider_cache Details by id, _named_or_left_out's
    rows and the consumers named.
    """
    uuids = {rp_id: uuid for rp_id, uuid, _gen in providers}
    claims, less = [], collections.defaultdict(list)
    for rp_id, rc, start, end, used, consumer, left_out in rows:
        less[rp_id, rc].append((start, end, -used))
        if consumer in consumers and not left_out:
            claims.append((uuids[rp_id], rc, start, end, used, consumer))
    summed = {}
    for rp_id, uuid in uuids.items():
        for rc, steps in details[rp_id].usage.items():
            summed[uuid, rc] = (steps.plus(less[rp_id, rc])
                                if (rp_id, rc) in less else steps)
    return Fenced(claims, {
        uuid: {rc: inventory.max_unit
               for rc, inventory in details[rp_id].inventories.items()}
        for rp_id, uuid in uuids.items()}, summed)


def _generations(session, provider_uuids):
    """[(id, uuid, generation)] of the providers that exist, by id."""
    return session.execute(
        sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation).where(
            _RP.c.uuid.in_(sorted(provider_uuids))).order_by(_RP.c.id)).all()


def _left_out():
    """Whether a claim is one claims_on leaves out: a whole host's,

    Placement's usage or a host reservation's.
    """
    return sa.or_(_ALLOC.c.consumer_id.startswith(WHOLE_HOST),
                  _ALLOC.c.consumer_id.startswith(db_claims.USAGE_PREFIX),
                  _ALLOC.c.consumer_id.in_(
                      sa.select(_HOST_RES.c.reservation_id)))


@db_api.retry_on_deadlock
def next_start(context, provider_uuids, after):
    """When the first claim on these providers that claims_on fences

    starts after ``after``; None if none does.
    """
    with db_api.reader(context) as session:
        return session.execute(
            sa.select(sa.func.min(_ALLOC.c.start_time))
            .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
            .where(_RP.c.uuid.in_(sorted(provider_uuids)),
                   _ALLOC.c.start_time > after,
                   sa.not_(_left_out()))).scalar()


def _named_or_left_out(session, providers, after, consumers):
    """[(provider id, class, start, end, used, consumer, left out)] of

    the claims on providers ending after ``after`` that claims_on names
    (of ``consumers``) or leaves out (whole hosts, Placement's usage and
    host reservations': a host reservation's claim is recorded after it
    is made, which moves no generation, so it is asked each time).
    """
    left_out = _left_out()
    wanted = sa.or_(left_out, _ALLOC.c.consumer_id.in_(sorted(consumers))) \
        if consumers else left_out
    rows = session.execute(sa.select(
        _ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
        _ALLOC.c.start_time, _ALLOC.c.end_time, _ALLOC.c.used,
        _ALLOC.c.consumer_id, left_out).where(
        _ALLOC.c.resource_provider_id.in_(
            [rp_id for rp_id, _u, _g in providers]),
        _ALLOC.c.end_time > after, wanted)).all()
    names = provider_cache.class_names(session) if rows else {}
    return [(rp_id, names[rc_id], start, end, used, consumer, bool(out))
            for rp_id, rc_id, start, end, used, consumer, out in rows]
