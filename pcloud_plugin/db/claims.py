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

"""Claims: what each consumer holds of the providers, and when.

A consumer (a reservation, or usage recorded from the cloud) holds
amounts of resource classes on providers during one window [start, end).
A claim is checked against the peak of every other consumer's claims in
its window and written all or nothing under the providers' generation
compare-and-swap (db.api.writer_with_cas_retry): claim, change_claim,
release, record_usage; take_consumer and write_claims for the other
claim writers (db.host_reservations). Read back with get_claims,
list_consumers and get_usage. The providers and their inventories are
db.providers'.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception

_RP = models.ResourceProvider.__table__
_RC = models.ResourceClass.__table__
_INV = models.Inventory.__table__
_ALLOC = models.Allocation.__table__
_CONSUMER = models.Consumer.__table__


def _validate_amounts(amounts):
    if not amounts:
        raise exception.Invalid(reason='a claim needs at least one amount')
    for resources in amounts.values():
        if not resources:
            raise exception.Invalid(
                reason='a claim on a provider needs at least one amount')
        for rc, amount in resources.items():
            inv_mod.validate_amount(rc, amount)


def _consumer_row(session, consumer_id):
    return session.execute(sa.select(_CONSUMER).where(
        _CONSUMER.c.uuid == consumer_id)).mappings().first()


def _inserted_consumer(session, consumer_id, window):
    """Record a new consumer: False if its uuid is taken."""
    try:
        session.execute(_CONSUMER.insert().values(
            uuid=consumer_id, generation=0, start_time=window.start,
            end_time=window.stored_end, created_at=timeutils.utcnow()))
    except db_exc.DBDuplicateEntry:
        return False
    return True


def take_consumer(session, consumer_id, window, replace=False):
    """Start a claim's transaction: record ``consumer_id`` for ``window``.

    A new consumer is inserted. With ``replace``, an existing one gets the
    new window and its generation is swapped; its claims stay until
    write_claims replaces them. Returns the rows of the providers its
    claims are on now, read before anything is checked, so that
    write_claims can compare-and-swap them against what the check saw
    (under REPEATABLE READ a row re-read after this transaction wrote it
    shows that write, not what others committed meanwhile).
    """
    if not consumer_id or len(consumer_id) > 64:
        raise exception.Invalid(reason='consumer_id must be 1-64 chars')
    if not replace:
        # Inserted without a look first: a new consumer is what an
        # admission makes, and the unique uuid says if it is not.
        if not _inserted_consumer(session, consumer_id, window):
            raise exception.ConsumerExists(consumer=consumer_id)
        return []
    consumer = _consumer_row(session, consumer_id)
    if consumer is None:
        # Made meanwhile by another writer: run again and see it.
        if not _inserted_consumer(session, consumer_id, window):
            raise db_api.GenerationConflict(consumer_id)
        return []
    held = list(session.execute(sa.select(_RP).where(_RP.c.id.in_(
        sa.select(_ALLOC.c.resource_provider_id).where(
            _ALLOC.c.consumer_id == consumer_id)))).mappings())
    session.execute(_CONSUMER.update().where(
        _CONSUMER.c.id == consumer['id']).values(
            start_time=window.start, end_time=window.stored_end))
    db_api.bump_generation(session, _CONSUMER, consumer['id'],
                           consumer['generation'], consumer_id)
    return held


def write_claims(session, consumer_id, window, rows, providers, held=()):
    """Make ``rows`` the consumer's allocations and compare-and-swap the

    ``providers`` they are on and the ones ``held`` (take_consumer's),
    as read before the capacity check: anything committed on them since
    makes the swap fail and the transaction run again.
    """
    if held:
        session.execute(_ALLOC.delete().where(
            _ALLOC.c.consumer_id == consumer_id))
    now = timeutils.utcnow()
    if rows:
        session.execute(_ALLOC.insert(), [
            dict(row, consumer_id=consumer_id, created_at=now,
                 start_time=window.start, end_time=window.stored_end)
            for row in rows])
    swapped = {}
    for provider in list(held) + list(providers):
        # The first read of a provider is the one before every check.
        swapped.setdefault(provider['id'], provider)
    db_api.bump_provider_generations(session, list(swapped.values()))


def _provider_rows(session, uuids):
    """{uuid: row} of providers, in the order of uuids, read at once."""
    rows = {row['uuid']: row for row in session.execute(
        sa.select(_RP).where(_RP.c.uuid.in_(sorted(uuids)))).mappings()}
    for uuid in uuids:
        if uuid not in rows:
            raise exception.ResourceProviderNotFound(provider=uuid)
    return {uuid: rows[uuid] for uuid in uuids}


def _checked_rows(session, consumer_id, window, amounts, new=False,
                  unit=None):
    """(allocation rows, provider rows) for ``amounts`` in ``window``.

    Raises if they do not fit beside every other consumer's claims, or
    break the unit rules (see claim's ``unit``). The
    generations are read before the claims, so that anything committed
    after the read makes the swap fail. For a new consumer (``new``: it
    holds nothing to leave out), what this process keeps of providers at
    the generations just read is what the database holds, and is used
    instead of reading their inventories and claims again.
    """
    providers = _provider_rows(session, amounts)
    kept = new and provider_cache.CACHE.current(session, providers.values())
    class_ids = (kept and _kept_class_ids(kept, amounts)) or \
        db_providers.class_ids(session, amounts)
    if kept:
        inventories = {(uuid, rc): inv for uuid, about in kept.items()
                       for rc, inv in about.inventories.items()}

        def peak(uuid, rc):
            steps = kept[uuid].usage.get(rc)
            return ((0, None) if steps is None
                    else steps.peak(window.start, window.stored_end))
    else:
        inventories, peak = _read_for_check(session, consumer_id, window,
                                            providers, class_ids)
    for uuid, resources in amounts.items():
        for rc, amount in resources.items():
            if (uuid, rc) not in inventories:
                raise exception.InventoryNotFound(
                    provider=uuid, resource_class=rc)
            each = (unit or {}).get(rc) or amount
            if amount % each:
                raise exception.Invalid(
                    reason='%d %s on provider %s is not a whole number of '
                           'units of %d' % (amount, rc, uuid, each))
            inventories[uuid, rc].check_amount(uuid, rc, each)

    rows = []
    for uuid, resources in amounts.items():
        for rc, amount in resources.items():
            capacity = inventories[uuid, rc].capacity
            used, at = peak(uuid, rc)
            if used + amount > capacity:
                raise exception.CapacityExceeded(
                    provider=uuid, resource_class=rc,
                    at=(at or window.start).isoformat(), window=window,
                    requested=amount, used=used, capacity=capacity,
                    short=used + amount - capacity)
            rows.append(dict(resource_provider_id=providers[uuid]['id'],
                             resource_class_id=class_ids[rc], used=amount))
    return rows, list(providers.values())


def _kept_class_ids(kept, amounts):
    """{class: id} of amounts from kept ({uuid: provider_cache.Details}),

    or None unless every provider has inventory of its classes there.
    """
    class_ids = {}
    for uuid, resources in amounts.items():
        about = kept[uuid]
        for rc in resources:
            if rc not in about.inventories or about.class_ids is None:
                return None
            class_ids[rc] = about.class_ids[rc]
    return class_ids


def _read_for_check(session, consumer_id, window, providers, class_ids):
    """({(uuid, class): Inventory}, peak(uuid, class)) of providers for

    the classes asked, from the database: the peak of every other
    consumer's claims in window.
    """
    uuid_of = {p['id']: uuid for uuid, p in providers.items()}
    class_of = {rc_id: rc for rc, rc_id in class_ids.items()}
    inventories = {
        (uuid_of[r['resource_provider_id']],
         class_of[r['resource_class_id']]): provider_cache.inventory_of(r)
        for r in session.execute(sa.select(_INV).where(
            _INV.c.resource_provider_id.in_(uuid_of),
            _INV.c.resource_class_id.in_(class_of))).mappings()}
    existing = collections.defaultdict(list)
    for rp_id, rc_id, start, end, used in session.execute(
            sa.select(_ALLOC.c.resource_provider_id,
                      _ALLOC.c.resource_class_id, _ALLOC.c.start_time,
                      _ALLOC.c.end_time, _ALLOC.c.used)
            .where(_ALLOC.c.resource_provider_id.in_(uuid_of),
                   _ALLOC.c.resource_class_id.in_(class_of),
                   _ALLOC.c.end_time > window.start,
                   _ALLOC.c.start_time < window.stored_end,
                   _ALLOC.c.consumer_id != consumer_id)):
        existing[uuid_of[rp_id], class_of[rc_id]].append((start, end, used))

    def peak(uuid, rc):
        return window_mod.max_in_sweep(existing[uuid, rc], window.start,
                                       window.stored_end)
    return inventories, peak


def free_rows(session, consumer_id, window, providers):
    """Allocation rows of what of each provider's capacity no consumer

    but ``consumer_id`` claims at any moment of ``window``, where that is
    more than nothing; ``providers``: their rows ({uuid: row}).
    """
    ids = [p['id'] for p in providers.values()]
    class_ids = dict(session.execute(
        sa.select(_RC.c.name, _RC.c.id).where(_RC.c.id.in_(
            sa.select(_INV.c.resource_class_id).where(
                _INV.c.resource_provider_id.in_(ids))))).all())
    inventories, peak = _read_for_check(session, consumer_id, window,
                                        providers, class_ids)
    rows = []
    for (uuid, rc), inventory in sorted(inventories.items()):
        left = inventory.capacity - peak(uuid, rc)[0]
        if left > 0:
            rows.append(dict(resource_provider_id=providers[uuid]['id'],
                             resource_class_id=class_ids[rc], used=left))
    return rows


def _window(start, end):
    return window_mod.Window.of(start, end)


@db_api.writer_with_cas_retry
def claim(session, consumer_id, amounts, start=None, end=None, unit=None):
    """Claim ``amounts`` ({provider uuid: {class: n}}) for one consumer

    during [start, end), all or nothing. start defaults to now; end None is
    open-ended. Raises CapacityExceeded, UnitRuleViolation, ... with
    nothing written, or ConsumerExists if the consumer holds claims.

    ``unit`` ({class: n}): each amount is a whole number of such units
    (instance slots of one size), to which the inventory's min_unit,
    max_unit and step_size apply, as to N instances in Placement; only
    their sum counts against capacity. None: each amount is one unit, as
    one Placement consumer's allocation.
    """
    window = _window(start, end)
    _validate_amounts(amounts)
    take_consumer(session, consumer_id, window)
    rows, providers = _checked_rows(session, consumer_id, window, amounts,
                                    new=True, unit=unit)
    write_claims(session, consumer_id, window, rows, providers)
    # Once committed, this process knows what the providers hold at their
    # new generation without reading them again (see provider_cache).
    sa.event.listen(session, 'after_commit', functools.partial(
        provider_cache.CACHE.claimed, session.connection().engine, providers,
        amounts, window, consumer_id), once=True)
    return window


@db_api.writer_with_cas_retry
def change_claim(session, consumer_id, amounts=None, start=None, end=None,
                 open_end=False, unit=None):
    """Move, resize or re-amount a consumer's claims, all or nothing.

    Unset arguments keep their current value (``open_end=True`` makes the
    end open; ``unit`` as claim's). The new claims are checked against
    every other consumer's, so a change that fails leaves the old claims
    exactly as they were.
    """
    consumer = _consumer_row(session, consumer_id)
    if consumer is None:
        raise exception.NotFound(reason='consumer %s holds no claims'
                                 % consumer_id)
    if amounts is None:
        amounts = _amounts_of(session, consumer_id)
    _validate_amounts(amounts)
    if end is None and not open_end:
        end = consumer['end_time']
    window = _window(start or consumer['start_time'], end)
    held = take_consumer(session, consumer_id, window, replace=True)
    rows, providers = _checked_rows(session, consumer_id, window, amounts,
                                    unit=unit)
    write_claims(session, consumer_id, window, rows, providers, held)
    return window


def _amounts_of(session, consumer_id):
    amounts = collections.defaultdict(dict)
    for uuid, rc, used in session.execute(
            sa.select(_RP.c.uuid, _RC.c.name, _ALLOC.c.used)
            .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
            .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
            .where(_ALLOC.c.consumer_id == consumer_id)):
        amounts[uuid][rc] = used
    return dict(amounts)


def drop_claims(session, consumer_id):
    """Delete a consumer's claims and bump the generation of every

    provider they were on, so that what provider_cache keeps of them is read
    again. The bump is no compare-and-swap: freeing capacity cannot
    overcommit, whatever was written meanwhile (a claim that read the old
    generation just retries).
    """
    rp_ids = sorted(session.execute(
        sa.select(_ALLOC.c.resource_provider_id).distinct()
        .where(_ALLOC.c.consumer_id == consumer_id)).scalars())
    # Delete only rows that exist: see replace_rows.
    if rp_ids:
        session.info[provider_cache.UNCOMMITTED] = True
        session.execute(_ALLOC.delete().where(
            _ALLOC.c.consumer_id == consumer_id))
        session.execute(_RP.update().where(_RP.c.id.in_(rp_ids)).values(
            generation=_RP.c.generation + 1))


@db_api.writer_with_cas_retry
def release(session, consumer_id):
    """Drop every claim of a consumer; True if it held any.

    Retried as claims are ([ledger] claim_retries): under SERIALIZABLE on
    InnoDB its read of the consumer's providers deadlocks with racing
    claims often enough to outlast a fixed handful of retries.
    """
    drop_claims(session, consumer_id)
    result = session.execute(_CONSUMER.delete().where(
        _CONSUMER.c.uuid == consumer_id))
    return result.rowcount > 0


# The consumer prefix of usage recorded with record_usage (instances
# running outside reservations, as cloud.mirror finds them).
USAGE_PREFIX = 'placement:'


@db_api.writer_with_cas_retry
def record_usage(session, consumer_id, amounts):
    """Hold ``amounts`` ({provider uuid: {class: n}}) for the consumer from

    now on, open-ended, WITHOUT a capacity check: usage that is a fact in
    the cloud (instances running outside reservations), not a promise.
    Unchanged amounts keep their start; empty amounts drop the consumer.
    True when anything was written.
    """
    amounts = {rp: {rc: n for rc, n in res.items() if n}
               for rp, res in amounts.items()}
    amounts = {rp: res for rp, res in amounts.items() if res}
    consumer = _consumer_row(session, consumer_id)
    if not amounts:
        if consumer is None:
            return False
        drop_claims(session, consumer_id)
        session.execute(_CONSUMER.delete().where(
            _CONSUMER.c.id == consumer['id']))
        return True
    if consumer is not None and (
            _amounts_of(session, consumer_id) == amounts
            and consumer['end_time'] >= window_mod.FOREVER):
        return False
    window = _window(None, None)
    held = take_consumer(session, consumer_id, window, replace=True)
    providers = list(_provider_rows(session, amounts).values())
    class_ids = db_providers.class_ids(session, amounts)
    by_uuid = {p['uuid']: p['id'] for p in providers}
    rows = [dict(resource_provider_id=by_uuid[uuid],
                 resource_class_id=class_ids[rc], used=n)
            for uuid, res in amounts.items() for rc, n in res.items()]
    write_claims(session, consumer_id, window, rows, providers, held)
    return True


@db_api.reading
def list_consumers(session):
    """The ids of every consumer holding claims."""
    return list(session.execute(sa.select(_CONSUMER.c.uuid)).scalars())


@db_api.reading
def get_claims(session, consumer_id):
    """{'start', 'end', 'amounts'} of a consumer, or None."""
    consumer = _consumer_row(session, consumer_id)
    if consumer is None:
        return None
    end = consumer['end_time']
    return {'start': consumer['start_time'],
            'end': None if end >= window_mod.FOREVER else end,
            'generation': consumer['generation'],
            'amounts': _amounts_of(session, consumer_id)}


@db_api.reading
def get_usage(session, uuid, start=None, end=None):
    """{class: peak usage} of one provider during [start, end)."""
    window = _window(start, end)
    row = db_providers.provider_row(session, uuid)
    return provider_cache.CACHE.get(session, [
        (row['id'], row['uuid'], row['generation'])])[row['id']].peaks(window)
