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

"""The capacity ledger: providers, inventories, traits, aggregates, claims.

Every write that can take capacity follows seeds/002: read the provider
generations, check, write, then ``UPDATE ... SET generation = g + 1 WHERE
generation = g`` for each provider touched. A zero row count means a
concurrent writer got there first: the transaction rolls back and the whole
read-check-write is retried, up to ``[ledger] claim_retries`` times. No
SELECT ... FOR UPDATE, so it is safe on Galera multi-writer. What is
kept of providers between reads is db.provider_cache's; the snapshots
built from it for the engines, db.snapshots'.
"""

import collections
import functools
import random
import re
import sqlite3
import time

import os_resource_classes
import os_traits
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import conf
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)
CONF = conf.CONF

CUSTOM_NAME = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())

_RP = models.ResourceProvider.__table__
_RC = models.ResourceClass.__table__
_INV = models.Inventory.__table__
_TRAIT = models.Trait.__table__
_RP_TRAIT = models.ResourceProviderTrait.__table__
_RP_AGG = models.ResourceProviderAggregate.__table__
_ALLOC = models.Allocation.__table__
_CONSUMER = models.Consumer.__table__


main_context_manager = enginefacade.transaction_context()
_configured = False


def configure(conf_=None):
    """Point the ledger at [pcloud_database]; once per process."""
    global _configured
    if not _configured:
        group = (conf_ or CONF).pcloud_database
        main_context_manager.configure(
            connection=group.connection,
            sqlite_synchronous=group.sqlite_synchronous,
            max_pool_size=group.max_pool_size,
            max_overflow=group.max_overflow,
            pool_timeout=group.pool_timeout,
            connection_recycle_time=group.connection_recycle_time,
            max_retries=group.max_retries)
        _configured = True


def get_engine():
    configure()
    return main_context_manager.writer.get_engine()


def _must_retry(exc):
    """A transaction the database aborted because a concurrent one wrote

    what it read: a deadlock (InnoDB, also Galera's certification failure,
    which MySQL drivers report as one) or PostgreSQL's serialization
    failure under REPEATABLE READ and SERIALIZABLE, which oslo.db leaves
    as SQLAlchemy's error; on SQLite (the sandbox, tests), "database is
    locked": a transaction that read cannot write once another has
    committed since (SQLite fails it at once, without waiting). Run whole
    again, it reads the new state.
    """
    while exc is not None:
        if isinstance(exc, db_exc.DBDeadlock):
            return True
        inner = getattr(exc, 'inner_exception', exc)
        orig = getattr(inner, 'orig', inner)
        if getattr(orig, 'pgcode', None) in ('40001', '40P01'):
            return True
        if (isinstance(orig, sqlite3.OperationalError)
                and 'database is locked' in str(orig)):
            return True
        # InnoDB rolls the whole transaction back on a deadlock: leaving
        # a savepoint then fails too, with the deadlock as its context.
        exc = exc.__context__
    return False


# For modules that add tables beside the ledger's: several managers
# writing reservation rows at once can deadlock on InnoDB's gap locks; such
# a transaction is whole, so it is run again.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=10, retry_interval=0.05, inc_retry_interval=True,
    exception_checker=_must_retry)


def replace_rows(session, table, key, rows):
    """Make ``rows`` the rows of ``table`` whose columns match ``key``.

    Delete only rows that exist: a DELETE that finds nothing still takes
    a gap lock on MySQL, which deadlocks against concurrent inserts.
    """
    where = [table.c[column] == value for column, value in key.items()]
    if session.execute(sa.select(sa.func.count()).select_from(
            table).where(*where)).scalar():
        session.execute(table.delete().where(*where))
    if rows:
        session.execute(table.insert(), [dict(row, **key) for row in rows])


def writer(context):
    """A write transaction of the ledger, for modules that add tables."""
    configure()
    return main_context_manager.writer.using(context)


def reader(context):
    """A read transaction of the ledger, for modules that add tables."""
    configure()
    return main_context_manager.reader.using(context)


def reading(fn):
    @retry_on_deadlock  # a reader is a deadlock victim under SERIALIZABLE
    @functools.wraps(fn)
    def wrapper(context, *args, **kwargs):
        configure()
        with main_context_manager.reader.using(context) as session:
            return fn(session, *args, **kwargs)
    return wrapper


class _GenerationConflict(Exception):
    """A compare-and-swap lost to a concurrent writer; retry from the top."""

    def __init__(self, what):
        self.what = what


def writer_with_cas_retry(fn):
    """Run ``fn(session, ...)`` in its own write transaction, retrying it

    whole when a generation compare-and-swap (or a deadlock the database
    reports) shows that a concurrent writer changed what it read.
    """
    @functools.wraps(fn)
    def wrapper(context, *args, **kwargs):
        configure()
        attempts = CONF.ledger.claim_retries + 1
        lost = set()
        for attempt in range(attempts):
            try:
                with main_context_manager.writer.using(context) as session:
                    return fn(session, *args, **kwargs)
            except _GenerationConflict as conflict:
                lost.add(conflict.what)
            except (db_exc.DBError, sa.exc.DBAPIError) as e:
                if not _must_retry(e):
                    raise
                lost.add('deadlock')
            # Spread retries out so racing writers do not collide again.
            time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise exception.ConcurrentUpdateDetected(
            attempts=attempts, providers=', '.join(sorted(lost)))
    return wrapper


def _bump_generation(session, table, row_id, generation, what):
    session.info[provider_cache.UNCOMMITTED] = True
    result = session.execute(
        table.update()
        .where(table.c.id == row_id, table.c.generation == generation)
        .values(generation=generation + 1))
    if result.rowcount != 1:
        raise _GenerationConflict(what)


def _bump_provider_generations(session, providers):
    """Compare-and-swap the generations of providers (rows read before

    anything was checked) in one statement: all of them, or a conflict
    naming those a concurrent writer moved. In id order, as the database
    walks the primary key, so two writers never wait on each other in
    turn.
    """
    if not providers:
        return
    session.info[provider_cache.UNCOMMITTED] = True
    read = {p['id']: p for p in providers}
    result = session.execute(
        _RP.update()
        .where(_RP.c.id.in_(sorted(read)),
               _RP.c.generation == sa.case(
                   {rp_id: p['generation'] for rp_id, p in read.items()},
                   value=_RP.c.id))
        .values(generation=_RP.c.generation + 1))
    if result.rowcount != len(read):
        moved = [read[rp_id]['uuid'] for rp_id, generation in session.execute(
            sa.select(_RP.c.id, _RP.c.generation).where(
                _RP.c.id.in_(sorted(read))))
            if generation != read[rp_id]['generation']]
        raise _GenerationConflict(', '.join(sorted(moved)) or 'providers')


# --- names -----------------------------------------------------------------

def _check_name(kind, name, standard):
    if name in standard:
        return
    if not isinstance(name, str) or not CUSTOM_NAME.match(name):
        raise exception.InvalidName(
            kind=kind, name=name,
            reason='must be a standard name or match CUSTOM_[A-Z0-9_]+')


def _ensure_names(session, table, kind, names, standard):
    """Ids of ``names``, creating valid ones that are not stored yet."""
    names = set(names)
    for name in names:
        _check_name(kind, name, standard)
    ids = _ids_by_name(session, table, names)
    for name in names - set(ids):
        try:
            with session.begin_nested():
                session.execute(table.insert().values(
                    name=name, created_at=timeutils.utcnow()))
        except db_exc.DBDuplicateEntry:
            pass  # a concurrent writer created it; read it back below
    if len(ids) < len(names):
        ids = _ids_by_name(session, table, names)
    return ids


def _ids_by_name(session, table, names):
    if not names:
        return {}
    rows = session.execute(
        sa.select(table.c.name, table.c.id).where(table.c.name.in_(names)))
    return dict(rows.all())


def _class_ids(session, amounts):
    """Ids of the classes claimed in ``amounts``.

    A standard class that is not stored yet is known, but no provider has
    inventory of it; any other unstored name is unknown.
    """
    ids = _ids_by_name(session, _RC, {
        rc for resources in amounts.values() for rc in resources})
    for uuid, resources in amounts.items():
        for rc in resources:
            if rc not in ids:
                if rc in _STANDARD_CLASSES:
                    raise exception.InventoryNotFound(
                        provider=uuid, resource_class=rc)
                raise exception.UnknownResourceClass(name=rc)
    return ids


# --- providers -------------------------------------------------------------

def _provider_row(session, uuid):
    row = session.execute(
        sa.select(_RP).where(_RP.c.uuid == uuid)).mappings().first()
    if row is None:
        raise exception.ResourceProviderNotFound(provider=uuid)
    return row


def _provider_rows(session, uuids):
    """{uuid: row} of providers, in the order of uuids, read at once."""
    rows = {row['uuid']: row for row in session.execute(
        sa.select(_RP).where(_RP.c.uuid.in_(sorted(uuids)))).mappings()}
    for uuid in uuids:
        if uuid not in rows:
            raise exception.ResourceProviderNotFound(provider=uuid)
    return {uuid: rows[uuid] for uuid in uuids}


def _provider_dict(session, row):
    uuids = _uuids_by_id(session, {row['root_provider_id'],
                                   row['parent_provider_id']} - {None})
    return {'uuid': row['uuid'], 'name': row['name'],
            'generation': row['generation'],
            'can_host': bool(row['can_host']),
            'root_provider_uuid': uuids.get(row['root_provider_id']),
            'parent_provider_uuid': uuids.get(row['parent_provider_id'])}


def _uuids_by_id(session, ids):
    if not ids:
        return {}
    return dict(session.execute(
        sa.select(_RP.c.id, _RP.c.uuid).where(_RP.c.id.in_(ids))).all())


@retry_on_deadlock
def create_provider(context, uuid, name, parent_uuid=None, can_host=False):
    configure()
    if not uuid or not name:
        raise exception.Invalid(reason='a provider needs a uuid and a name')
    with main_context_manager.writer.using(context) as session:
        parent_id = root_id = None
        if parent_uuid is not None:
            parent = _provider_row(session, parent_uuid)
            parent_id, root_id = parent['id'], parent['root_provider_id']
        try:
            result = session.execute(_RP.insert().values(
                uuid=uuid, name=name, generation=0, can_host=int(can_host),
                parent_provider_id=parent_id, root_provider_id=root_id,
                created_at=timeutils.utcnow()))
            session.flush()
        except db_exc.DBDuplicateEntry as e:
            raise exception.Conflict(
                reason='a provider with this %s already exists: %s'
                % ('/'.join(e.columns) or 'uuid or name', uuid))
        new_id = result.inserted_primary_key[0]
        if root_id is None:
            session.execute(_RP.update().where(_RP.c.id == new_id)
                            .values(root_provider_id=new_id))
        return _provider_dict(session, _provider_row(session, uuid))


@reading
def provider_uuid_named(session, name):
    """The uuid of the provider named ``name``, or None."""
    return session.execute(sa.select(_RP.c.uuid).where(
        _RP.c.name == name)).scalar()


@reading
def provider_name(session, uuid):
    """The name of the provider ``uuid``, or None if there is none."""
    return session.execute(sa.select(_RP.c.name).where(
        _RP.c.uuid == uuid)).scalar()


def provider_exists(context, uuid):
    return provider_name(context, uuid) is not None


@reading
def get_provider(session, uuid):
    return _provider_dict(session, _provider_row(session, uuid))


@reading
def list_providers(session):
    rows = session.execute(sa.select(_RP).order_by(_RP.c.id)).mappings()
    rows = list(rows)
    uuids = {row['id']: row['uuid'] for row in rows}
    return [{'uuid': row['uuid'], 'name': row['name'],
             'generation': row['generation'],
             'can_host': bool(row['can_host']),
             'root_provider_uuid': uuids.get(row['root_provider_id']),
             'parent_provider_uuid': uuids.get(row['parent_provider_id'])}
            for row in rows]


def _live_claims_exist(session, provider_ids):
    return session.execute(
        sa.select(_ALLOC.c.id).where(
            _ALLOC.c.resource_provider_id.in_(provider_ids),
            _ALLOC.c.end_time > timeutils.utcnow()).limit(1)).first() \
        is not None


@writer_with_cas_retry
def delete_provider(session, uuid):
    """Remove a provider with no children and no live or future claims.

    Its generation, read before the checks, is swapped first: a claim
    committed meanwhile makes the delete run again and see it.
    """
    row = _provider_row(session, uuid)
    if session.execute(sa.select(_RP.c.id).where(
            _RP.c.parent_provider_id == row['id']).limit(1)).first():
        raise exception.Conflict(
            reason='provider %s still has child providers' % uuid)
    if _live_claims_exist(session, [row['id']]):
        raise exception.ResourceProviderInUse(provider=uuid)
    _bump_generation(session, _RP, row['id'], row['generation'], uuid)
    for table in (_ALLOC, _INV, _RP_TRAIT, _RP_AGG):
        session.execute(table.delete().where(
            table.c.resource_provider_id == row['id']))
    # MySQL refuses to delete a row its own foreign key points at.
    session.execute(_RP.update().where(_RP.c.id == row['id'])
                    .values(root_provider_id=None))
    session.execute(_RP.delete().where(_RP.c.id == row['id']))
    # A provider made again may get this id back (SQLite reuses the
    # highest) and reach the same generation.
    provider_cache.CACHE.forget(session, row['id'])


@retry_on_deadlock
def rename_provider(context, uuid, name):
    configure()
    with main_context_manager.writer.using(context) as session:
        row = _provider_row(session, uuid)
        # A new generation, as in Placement: and load_forest's
        # fingerprint must see the change.
        session.info[provider_cache.UNCOMMITTED] = True
        try:
            session.execute(_RP.update().where(_RP.c.id == row['id'])
                            .values(name=name,
                                    generation=_RP.c.generation + 1))
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exception.Conflict(
                reason='another provider is named %r' % name)


@writer_with_cas_retry
def set_parent(session, uuid, parent_uuid):
    """Give a root provider a parent (Placement forbids re-parenting)."""
    row = _provider_row(session, uuid)
    parent = _provider_row(session, parent_uuid)
    if row['parent_provider_id'] == parent['id']:
        return
    if row['parent_provider_id'] is not None:
        raise exception.Conflict(
            reason='provider %s already has a parent' % uuid)
    if parent['root_provider_id'] == row['id']:
        raise exception.Conflict(
            reason='provider %s would become its own ancestor' % uuid)
    _bump_generation(session, _RP, row['id'], row['generation'], uuid)
    # Its descendants get a new root: a new generation too, so that
    # load_forest reads them again.
    session.execute(_RP.update().where(
        _RP.c.root_provider_id == row['id'], _RP.c.id != row['id']).values(
            generation=_RP.c.generation + 1))
    session.execute(_RP.update().where(
        _RP.c.root_provider_id == row['id']).values(
            root_provider_id=parent['root_provider_id']))
    session.execute(_RP.update().where(_RP.c.id == row['id']).values(
        parent_provider_id=parent['id']))


# --- inventories, traits, aggregates ---------------------------------------

@reading
def get_inventories(session, uuid):
    row = _provider_row(session, uuid)
    rows = session.execute(
        sa.select(_INV, _RC.c.name).join(
            _RC, _RC.c.id == _INV.c.resource_class_id).where(
            _INV.c.resource_provider_id == row['id'])).mappings()
    return {r['name']: provider_cache.inventory_of(r) for r in rows}


@reading
def max_units(session, uuids):
    """{provider uuid: {class: max_unit}} of the providers known."""
    if not uuids:
        return {}
    found = collections.defaultdict(dict)
    for uuid, rc, max_unit in session.execute(
            sa.select(_RP.c.uuid, _RC.c.name, _INV.c.max_unit)
            .join(_INV, _INV.c.resource_provider_id == _RP.c.id)
            .join(_RC, _RC.c.id == _INV.c.resource_class_id)
            .where(_RP.c.uuid.in_(sorted(uuids)))):
        found[uuid][rc] = max_unit
    return dict(found)


@writer_with_cas_retry
def set_inventories(session, uuid, inventories, generation=None):
    """Replace a provider's inventories.

    Refused, with nothing written, if a live or future claim would no
    longer fit: the peak usage from now on of each class must stay within
    its new capacity (zero for a removed class). ``generation``, if given,
    must match the provider's (the caller's own compare-and-swap).
    """
    row = _provider_row(session, uuid)
    if generation is not None and generation != row['generation']:
        raise exception.Conflict(
            reason='provider %s generation is %d, not %d'
            % (uuid, row['generation'], generation))
    for rc, inventory in inventories.items():
        inventory.validate(uuid, rc)
    class_ids = _ensure_names(session, _RC, 'resource class',
                              inventories, _STANDARD_CLASSES)
    now = timeutils.utcnow().replace(microsecond=0)
    claims = collections.defaultdict(list)
    for rc_name, start, end, used in session.execute(
            sa.select(_RC.c.name, _ALLOC.c.start_time, _ALLOC.c.end_time,
                      _ALLOC.c.used)
            .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
            .where(_ALLOC.c.resource_provider_id == row['id'],
                   _ALLOC.c.end_time > now)):
        claims[rc_name].append((start, end, used))
    for rc_name, rc_claims in claims.items():
        inventory = inventories.get(rc_name)
        capacity = inventory.capacity if inventory else 0
        peak, at = window_mod.max_in_sweep(
            rc_claims, now, window_mod.FOREVER)
        if peak > capacity:
            raise exception.InventoryInUse(
                provider=uuid, resource_class=rc_name, capacity=capacity,
                used=peak, at=at)
    session.execute(_INV.delete().where(
        _INV.c.resource_provider_id == row['id']))
    if inventories:
        session.execute(_INV.insert(), [
            dict(resource_provider_id=row['id'],
                 resource_class_id=class_ids[rc],
                 created_at=now, **vars(inventory))
            for rc, inventory in inventories.items()])
    _bump_generation(session, _RP, row['id'], row['generation'], uuid)


@reading
def get_traits(session, uuid):
    row = _provider_row(session, uuid)
    return set(session.execute(
        sa.select(_TRAIT.c.name).join(
            _RP_TRAIT, _RP_TRAIT.c.trait_id == _TRAIT.c.id).where(
            _RP_TRAIT.c.resource_provider_id == row['id'])).scalars())


@writer_with_cas_retry
def set_traits(session, uuid, traits):
    row = _provider_row(session, uuid)
    trait_ids = _ensure_names(session, _TRAIT, 'trait', traits,
                              _STANDARD_TRAITS)
    session.execute(_RP_TRAIT.delete().where(
        _RP_TRAIT.c.resource_provider_id == row['id']))
    if trait_ids:
        session.execute(_RP_TRAIT.insert(), [
            {'resource_provider_id': row['id'], 'trait_id': trait_id}
            for trait_id in trait_ids.values()])
    _bump_generation(session, _RP, row['id'], row['generation'], uuid)


@reading
def get_aggregates(session, uuid):
    row = _provider_row(session, uuid)
    return set(session.execute(
        sa.select(_RP_AGG.c.aggregate_uuid).where(
            _RP_AGG.c.resource_provider_id == row['id'])).scalars())


@writer_with_cas_retry
def set_aggregates(session, uuid, aggregates):
    row = _provider_row(session, uuid)
    session.execute(_RP_AGG.delete().where(
        _RP_AGG.c.resource_provider_id == row['id']))
    if aggregates:
        session.execute(_RP_AGG.insert(), [
            {'resource_provider_id': row['id'], 'aggregate_uuid': agg}
            for agg in set(aggregates)])
    _bump_generation(session, _RP, row['id'], row['generation'], uuid)


# --- claims ----------------------------------------------------------------

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
    consumer = _consumer_row(session, consumer_id)
    if consumer is None:
        try:
            session.execute(_CONSUMER.insert().values(
                uuid=consumer_id, generation=0, start_time=window.start,
                end_time=window.stored_end, created_at=timeutils.utcnow()))
        except db_exc.DBDuplicateEntry:
            # Made meanwhile by another writer: run again and see it.
            raise _GenerationConflict(consumer_id)
        return []
    if not replace:
        raise exception.ConsumerExists(consumer=consumer_id)
    held = list(session.execute(sa.select(_RP).where(_RP.c.id.in_(
        sa.select(_ALLOC.c.resource_provider_id).where(
            _ALLOC.c.consumer_id == consumer_id)))).mappings())
    session.execute(_CONSUMER.update().where(
        _CONSUMER.c.id == consumer['id']).values(
            start_time=window.start, end_time=window.stored_end))
    _bump_generation(session, _CONSUMER, consumer['id'],
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
    session.execute(_ALLOC.insert(), [
        dict(row, consumer_id=consumer_id, created_at=now,
             start_time=window.start, end_time=window.stored_end)
        for row in rows])
    swapped = {}
    for provider in list(held) + list(providers):
        # The first read of a provider is the one before every check.
        swapped.setdefault(provider['id'], provider)
    _bump_provider_generations(session, list(swapped.values()))


def _checked_rows(session, consumer_id, window, amounts, new=False):
    """(allocation rows, provider rows) for ``amounts`` in ``window``.

    Raises if they do not fit beside every other consumer's claims. The
    generations are read before the claims, so that anything committed
    after the read makes the swap fail. For a new consumer (``new``: it
    holds nothing to leave out), what this process keeps of providers at
    the generations just read is what the database holds, and is used
    instead of reading their inventories and claims again.
    """
    providers = _provider_rows(session, amounts)
    class_ids = _class_ids(session, amounts)
    kept = new and provider_cache.CACHE.current(session, providers.values())
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
            inventories[uuid, rc].check_amount(uuid, rc, amount)

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


def _window(start, end):
    return window_mod.Window.of(start, end)


@writer_with_cas_retry
def claim(session, consumer_id, amounts, start=None, end=None):
    """Claim ``amounts`` ({provider uuid: {class: n}}) for one consumer

    during [start, end), all or nothing. start defaults to now; end None is
    open-ended. Raises CapacityExceeded, UnitRuleViolation, ... with
    nothing written, or ConsumerExists if the consumer holds claims.
    """
    window = _window(start, end)
    _validate_amounts(amounts)
    take_consumer(session, consumer_id, window)
    rows, providers = _checked_rows(session, consumer_id, window, amounts,
                                    new=True)
    write_claims(session, consumer_id, window, rows, providers)
    # Once committed, this process knows what the providers hold at their
    # new generation without reading them again (see provider_cache).
    sa.event.listen(session, 'after_commit', functools.partial(
        provider_cache.CACHE.claimed, session.connection().engine, providers,
        amounts, window), once=True)
    return window


@writer_with_cas_retry
def change_claim(session, consumer_id, amounts=None, start=None, end=None,
                 open_end=False):
    """Move, resize or re-amount a consumer's claims, all or nothing.

    Unset arguments keep their current value (``open_end=True`` makes the
    end open). The new claims are checked against every other consumer's,
    so a change that fails leaves the old claims exactly as they were.
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
    rows, providers = _checked_rows(session, consumer_id, window, amounts)
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


@writer_with_cas_retry
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


@writer_with_cas_retry
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
    class_ids = _class_ids(session, amounts)
    by_uuid = {p['uuid']: p['id'] for p in providers}
    rows = [dict(resource_provider_id=by_uuid[uuid],
                 resource_class_id=class_ids[rc], used=n)
            for uuid, res in amounts.items() for rc, n in res.items()]
    write_claims(session, consumer_id, window, rows, providers, held)
    return True


@reading
def list_consumers(session):
    """The ids of every consumer holding claims."""
    return list(session.execute(sa.select(_CONSUMER.c.uuid)).scalars())


@reading
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


@reading
def get_usage(session, uuid, start=None, end=None):
    """{class: peak usage} of one provider during [start, end)."""
    window = _window(start, end)
    row = _provider_row(session, uuid)
    return provider_cache.CACHE.get(session, [
        (row['id'], row['uuid'], row['generation'])])[row['id']].peaks(window)
