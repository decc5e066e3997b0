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

"""Resource providers: their tree, names, inventories, traits, aggregates.

Each write swaps the provider's generation (db.api.bump_generation), as
Placement does, so that a claim (db.claims) that read the provider before
runs again. An inventory is not lowered under what live or future claims
hold. Resource class and trait names, standard or CUSTOM_, are checked
and stored here; provider_row and class_ids read providers and classes
for db.claims.
"""

import collections
import re

import os_resource_classes
import os_traits
from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin import exception

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
_SNAPSHOT = models.UsageSnapshot.__table__


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


def class_ids(session, amounts):
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

def provider_row(session, uuid):
    row = session.execute(
        sa.select(_RP).where(_RP.c.uuid == uuid)).mappings().first()
    if row is None:
        raise exception.ResourceProviderNotFound(provider=uuid)
    return row


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


@db_api.retry_on_deadlock
def create_provider(context, uuid, name, parent_uuid=None, can_host=False):
    db_api.configure()
    if not uuid or not name:
        raise exception.Invalid(reason='a provider needs a uuid and a name')
    with db_api.main_context_manager.writer.using(context) as session:
        parent_id = root_id = None
        if parent_uuid is not None:
            parent = provider_row(session, parent_uuid)
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
        return _provider_dict(session, provider_row(session, uuid))


@db_api.reading
def provider_uuid_named(session, name):
    """The uuid of the provider named ``name``, or None."""
    return session.execute(sa.select(_RP.c.uuid).where(
        _RP.c.name == name)).scalar()


@db_api.reading
def provider_name(session, uuid):
    """The name of the provider ``uuid``, or None if there is none."""
    return session.execute(sa.select(_RP.c.name).where(
        _RP.c.uuid == uuid)).scalar()


@db_api.reading
def tree_uuids(session, uuid):
    """``uuid`` and the providers below it, if it is a root in the

    ledger; [uuid] if it is not a root; [] if it is not in the ledger.
    """
    row = session.execute(sa.select(_RP.c.id, _RP.c.root_provider_id).where(
        _RP.c.uuid == uuid)).first()
    if row is None:
        return []
    if row.root_provider_id not in (None, row.id):
        return [uuid]
    return list(session.execute(sa.select(_RP.c.uuid).where(
        _RP.c.root_provider_id == row.id)).scalars()) or [uuid]


def provider_exists(context, uuid):
    return provider_name(context, uuid) is not None


@db_api.reading
def get_provider(session, uuid):
    return _provider_dict(session, provider_row(session, uuid))


@db_api.reading
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


@db_api.writer_with_cas_retry
def delete_provider(session, uuid):
    """Remove a provider with no children and no live or future claims.

    Its generation, read before the checks, is swapped first: a claim
    committed meanwhile makes the delete run again and see it.
    """
    row = provider_row(session, uuid)
    if session.execute(sa.select(_RP.c.id).where(
            _RP.c.parent_provider_id == row['id']).limit(1)).first():
        raise exception.Conflict(
            reason='provider %s still has child providers' % uuid)
    if _live_claims_exist(session, [row['id']]):
        raise exception.ResourceProviderInUse(provider=uuid)
    db_api.bump_generation(session, _RP, row['id'], row['generation'], uuid)
    for table in (_ALLOC, _INV, _RP_TRAIT, _RP_AGG, _SNAPSHOT):
        session.execute(table.delete().where(
            table.c.resource_provider_id == row['id']))
    # MySQL refuses to delete a row its own foreign key points at.
    session.execute(_RP.update().where(_RP.c.id == row['id'])
                    .values(root_provider_id=None))
    session.execute(_RP.delete().where(_RP.c.id == row['id']))
    # A provider made again may get this id back (SQLite reuses the
    # highest) and reach the same generation.
    provider_cache.CACHE.forget(session, row['id'])


@db_api.retry_on_deadlock
def rename_provider(context, uuid, name):
    db_api.configure()
    with db_api.main_context_manager.writer.using(context) as session:
        row = provider_row(session, uuid)
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


@db_api.writer_with_cas_retry
def set_parent(session, uuid, parent_uuid):
    """Give a root provider a parent (Placement forbids re-parenting)."""
    row = provider_row(session, uuid)
    parent = provider_row(session, parent_uuid)
    if row['parent_provider_id'] == parent['id']:
        return
    if row['parent_provider_id'] is not None:
        raise exception.Conflict(
            reason='provider %s already has a parent' % uuid)
    if parent['root_provider_id'] == row['id']:
        raise exception.Conflict(
            reason='provider %s would become its own ancestor' % uuid)
    db_api.bump_generation(session, _RP, row['id'], row['generation'], uuid)
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

@db_api.reading
def get_inventories(session, uuid):
    row = provider_row(session, uuid)
    rows = session.execute(
        sa.select(_INV, _RC.c.name).join(
            _RC, _RC.c.id == _INV.c.resource_class_id).where(
            _INV.c.resource_provider_id == row['id'])).mappings()
    return {r['name']: provider_cache.inventory_of(r) for r in rows}


@db_api.writer_with_cas_retry
def set_inventories(session, uuid, inventories, generation=None):
    """Replace a provider's inventories.

    Refused, with nothing written, if a live or future claim would no
    longer fit: the peak usage from now on of each class must stay within
    its new capacity (zero for a removed class). ``generation``, if given,
    must match the provider's (the caller's own compare-and-swap).
    """
    row = provider_row(session, uuid)
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
    db_api.bump_generation(session, _RP, row['id'], row['generation'], uuid)


@db_api.reading
def get_traits(session, uuid):
    row = provider_row(session, uuid)
    return set(session.execute(
        sa.select(_TRAIT.c.name).join(
            _RP_TRAIT, _RP_TRAIT.c.trait_id == _TRAIT.c.id).where(
            _RP_TRAIT.c.resource_provider_id == row['id'])).scalars())


@db_api.reading
def traits_in_use(session):
    """The names of the traits some provider has, sorted."""
    return sorted(set(session.execute(
        sa.select(_TRAIT.c.name).join(
            _RP_TRAIT, _RP_TRAIT.c.trait_id == _TRAIT.c.id)).scalars()))


@db_api.writer_with_cas_retry
def set_traits(session, uuid, traits):
    row = provider_row(session, uuid)
    trait_ids = _ensure_names(session, _TRAIT, 'trait', traits,
                              _STANDARD_TRAITS)
    session.execute(_RP_TRAIT.delete().where(
        _RP_TRAIT.c.resource_provider_id == row['id']))
    if trait_ids:
        session.execute(_RP_TRAIT.insert(), [
            {'resource_provider_id': row['id'], 'trait_id': trait_id}
            for trait_id in trait_ids.values()])
    db_api.bump_generation(session, _RP, row['id'], row['generation'], uuid)


@db_api.reading
def get_aggregates(session, uuid):
    row = provider_row(session, uuid)
    return set(session.execute(
        sa.select(_RP_AGG.c.aggregate_uuid).where(
            _RP_AGG.c.resource_provider_id == row['id'])).scalars())


@db_api.writer_with_cas_retry
def set_aggregates(session, uuid, aggregates):
    row = provider_row(session, uuid)
    session.execute(_RP_AGG.delete().where(
        _RP_AGG.c.resource_provider_id == row['id']))
    if aggregates:
        session.execute(_RP_AGG.insert(), [
            {'resource_provider_id': row['id'], 'aggregate_uuid': agg}
            for agg in set(aggregates)])
    db_api.bump_generation(session, _RP, row['id'], row['generation'], uuid)
