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

"""What the ledger keeps of each provider between reads.

Each provider's inventories, traits, aggregates, claims and usage steps
(Details), keyed by its uuid and generation, and the last snapshot each
loader of db.snapshots built from them. Imports the models and capacity
of ours, nothing else of db.
"""

import collections
import dataclasses
import functools
import itertools
import types
import weakref

import numpy as np
import sqlalchemy as sa
from sqlalchemy.ext import compiler as sa_compiler

from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import models

_RP = models.ResourceProvider.__table__

# session.info key: this transaction has bumped provider generations and
# not committed yet (see ProviderCache).
UNCOMMITTED = 'pcloud_uncommitted_generations'


class _EpochSeconds(sa.sql.functions.FunctionElement):
    """A DATETIME column's whole seconds since the epoch, as an integer."""

    type = sa.BigInteger()
    inherit_cache = True
    name = 'epoch_seconds'


@sa_compiler.compiles(_EpochSeconds, 'sqlite')
def _epoch_seconds_sqlite(element, compiler, **kw):
    column = compiler.process(element.clauses, **kw)
    # unixepoch (SQLite 3.38) is the same integer, a third faster.
    if getattr(compiler.dialect.dbapi, 'sqlite_version_info',
               (0,)) >= (3, 38):
        return 'unixepoch(%s)' % column
    return "CAST(strftime('%%s', %s) AS INTEGER)" % column


@sa_compiler.compiles(_EpochSeconds, 'mysql')
def _epoch_seconds_mysql(element, compiler, **kw):
    # Not UNIX_TIMESTAMP: it follows the session's time zone and stops
    # at 2038 (or 2106); the ledger's moments are naive UTC up to 9999.
    return "TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', %s)" % (
        compiler.process(element.clauses, **kw))


@sa_compiler.compiles(_EpochSeconds, 'postgresql')
def _epoch_seconds_postgresql(element, compiler, **kw):
    return 'CAST(EXTRACT(EPOCH FROM %s) AS BIGINT)' % compiler.process(
        element.clauses, **kw)


# What a MySQL session may make of one GROUP_CONCAT (MariaDB's most;
# max_allowed_packet may cut it shorter).
GROUP_CONCAT_MAX_LEN = 2 ** 30


def _every_claim(session):
    """Every claim in the ledger as five int64 arrays: provider id, class

    id, start and end (whole seconds since the epoch) and used.
    """
    alloc = models.Allocation.__table__
    values = (_EpochSeconds(alloc.c.start_time),
              _EpochSeconds(alloc.c.end_time), alloc.c.used)
    if session.get_bind().dialect.name == 'mysql':
        found = _every_claim_grouped(session, alloc, values)
        if found is not None:
            return found
    query = sa.select(alloc.c.resource_provider_id,
                      alloc.c.resource_class_id, *values)
    # Fetched from the driver's own cursor: a SQLAlchemy Row made of each
    # of hundreds of thousands of claims doubled the read.
    result = session.execute(query)
    try:
        rows = result.cursor.fetchall()
    finally:
        result.close()
    return np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64,
                       count=5 * len(rows)).reshape(-1, 5).T


def _every_claim_grouped(session, alloc, values):
    """As _every_claim, read as one row per provider and class, its claims'

    values in one string: PyMySQL decodes each value it is sent in Python
    (about 1.5 us), which made the row-per-claim read several seconds at
    100,000 reservations. None if a string came back cut short.
    """
    text = sa.func.concat_ws(',', *values)
    session.execute(sa.text('SET SESSION group_concat_max_len = %d'
                            % GROUP_CONCAT_MAX_LEN))
    rows = session.execute(sa.select(
        alloc.c.resource_provider_id, alloc.c.resource_class_id,
        sa.func.count(), sa.func.sum(sa.func.length(text) + 1) - 1,
        sa.func.group_concat(text)).group_by(
            alloc.c.resource_provider_id,
            alloc.c.resource_class_id)).all()
    # Past group_concat_max_len (or max_allowed_packet) MySQL cuts it,
    # with only a warning.
    if any(row[4] is None or len(row[4]) != row[3] for row in rows):
        return None
    # (provider, class, how many claims) of each row.
    groups = np.array([row[:3] for row in rows],
                      dtype=np.int64).reshape(-1, 3)
    claims = np.fromstring(','.join(row[4] for row in rows),
                           dtype=np.int64, sep=',').reshape(-1, 3)
    return (np.repeat(groups[:, 0], groups[:, 2]),
            np.repeat(groups[:, 1], groups[:, 2]), *claims.T)


# The columns of an inventories row a capacity Inventory takes: its
# fields, in their order (named again in inventory_of: keywords are
# faster than a dict made per row).
_INVENTORY_FIELDS = tuple(
    field.name for field in dataclasses.fields(inv_mod.Inventory))


def inventory_of(row):
    """A capacity Inventory of an inventories row."""
    return inv_mod.Inventory(
        total=row['total'], reserved=row['reserved'],
        min_unit=row['min_unit'], max_unit=row['max_unit'],
        step_size=row['step_size'],
        allocation_ratio=row['allocation_ratio'])


def class_names(session):
    """{id: name} of every resource class (a few dozen rows).

    Reads of allocations take names from here rather than joining
    resource_classes: with that join, MariaDB's planner may start from
    the few classes and read every allocation of each by its class, and
    does so while InnoDB's statistics lag (after a bulk load or a sync),
    where the providers asked for need a few dozen rows each.
    """
    rc = models.ResourceClass.__table__
    return dict(session.execute(sa.select(rc.c.id, rc.c.name)).all())


@dataclasses.dataclass(frozen=True)
class Details:
    """What a snapshot needs of a provider beside its row."""

    inventories: types.MappingProxyType   # class name -> Inventory
    traits: frozenset
    aggregates: frozenset
    usage: types.MappingProxyType   # class name -> UsageSteps, all time
    # Each claim, all time: (class name, start, end, used, consumer), as
    # a read of few providers has them (one read for both); None after a
    # full read, which leaves the consumers out (the costliest column to
    # decode). ProviderCache.claimed looks there for a claim read twice.
    claims: tuple = None
    # {class name: id} of the classes of the read that made it (shared by
    # its providers): while the entry is current its inventories hold
    # those ids, so a claim on it need not look them up.
    class_ids: types.MappingProxyType = None

    @functools.cached_property
    def claims_end(self):
        """When every claim on the provider has ended; None if none."""
        return max((steps.ends for steps in self.usage.values()),
                   default=None)

    def peaks(self, window):
        """{class name: peak usage during window}, classes used only."""
        # Claims all ended by the window's start use nothing in it.
        if self.claims_end is None or self.claims_end <= window.start:
            return {}
        peaks = {}
        for rc, steps in self.usage.items():
            peak = steps.peak(window.start, window.stored_end)[0]
            if peak:
                peaks[rc] = peak
        return peaks


class ProviderCache:
    """Each provider's Details, kept between reads.

    An entry is keyed by the provider's uuid and generation. Every write
    to a provider's inventories, traits, aggregates or claims bumps its
    generation in the same transaction (by compare-and-swap, and for a
    release or move in drop_claims), so an entry whose key matches the
    row just read holds what the database holds, whichever process wrote
    it; only providers whose generation moved are read again. Beside
    them, what each loader of db.snapshots last built. Kept per engine,
    so tests and tools with several databases never mix them up.
    """

    # Above this many stale providers one scan beats a long IN list.
    SCAN_ALL = 500

    def __init__(self):
        self._by_engine = weakref.WeakKeyDictionary()
        # engine -> {load_forest: its last snapshot, load_slot_index:
        # its last SlotIndex}
        self._snapshots = weakref.WeakKeyDictionary()
        # engine -> {provider id: the generation this process's claims
        # moved it to}, until load_slot_index takes them
        self._claimed = weakref.WeakKeyDictionary()
        # engine -> {uuid: (provider id, generation)} of the providers
        # this process's last claim moved (see last_claimed)
        self._last_claim = weakref.WeakKeyDictionary()

    def get(self, session, providers, complete=False):
        """{provider id: Details} for providers given as rows that start

        with (id, uuid, generation); ``complete`` says they are all there
        are, so entries of any other are dropped.
        """
        entries = self._by_engine.setdefault(
            session.connection().engine, {})
        keys = {row[0]: (row[1], row[2]) for row in providers}
        details, stale = {}, []
        for rp_id, key in keys.items():
            entry = entries.get(rp_id)
            if entry is not None and entry[0] == key:
                details[rp_id] = entry[1]
            else:
                stale.append(rp_id)
        kept = True
        if stale:
            details.update(self._read(session, {
                rp_id: keys[rp_id][1] for rp_id in stale}))
            # Read inside a write that has bumped generations, it may be
            # rolled back: keep nothing keyed by a generation that may
            # never be committed.
            kept = not session.info.get(UNCOMMITTED)
            if kept:
                # The read took several statements: a claim committed
                # after the rows given moved its providers' generations,
                # and what was read of them may hold it. Kept under the
                # generation before, claimed() would add it again.
                now = _generations(session, stale)
                for rp_id in stale:
                    if now.get(rp_id) == keys[rp_id][1]:
                        entries[rp_id] = (keys[rp_id], details[rp_id])
                    else:
                        kept = False
        # Once every provider given has an entry, equal sizes mean there
        # is no other to drop.
        if complete and (not kept or len(entries) > len(keys)):
            for rp_id in set(entries) - set(keys):
                entries.pop(rp_id, None)
        return details

    def current(self, session, providers):
        """{uuid: Details} of provider rows (id, uuid, generation, ...)

        if every one has an entry of the generation given, else None.
        """
        entries = self._by_engine.get(session.connection().engine) or {}
        found = {}
        for row in providers:
            entry = entries.get(row['id'])
            if entry is None or entry[0] != (row['uuid'], row['generation']):
                return None
            found[row['uuid']] = entry[1]
        return found

    def last_claimed(self, session, uuids):
        """[(id, uuid, generation)] by id of these providers as this

        process's last claim left them, if it was on each, else None;
        once only. Another process may have written since: the caller
        reads the generations after what it reads on them.
        """
        moved = self._last_claim.pop(session.connection().engine, {})
        if not uuids or not moved.keys() >= set(uuids):
            return None
        return sorted((moved[uuid][0], uuid, moved[uuid][1])
                      for uuid in uuids)

    def claimed(self, engine, providers, amounts, window, consumer,
                session=None):
        """After a new consumer's claim of amounts ({uuid: {class: n}})

        in window committed: each provider (its row as read before the
        claim's compare-and-swap) whose entry is the generation the swap
        moved from now has the entry of the next one: the same, with the
        claim added. The swap proves nothing else was written between.
        (session: the one that committed, as the event passes it.)
        """
        moved = self._claimed.setdefault(engine, {})
        for row in providers:
            moved[row['id']] = max(moved.get(row['id'], 0),
                                   row['generation'] + 1)
        self._last_claim[engine] = {
            row['uuid']: (row['id'], row['generation'] + 1)
            for row in providers}
        entries = self._by_engine.get(engine)
        if entries is None:
            return
        for row in providers:
            entry = entries.get(row['id'])
            if entry is None or entry[0] != (row['uuid'], row['generation']):
                continue
            details = entry[1]
            claims = details.claims
            if claims is not None and any(claim[4] == consumer
                                          for claim in claims):
                # Read after the commit, under the generation before it.
                entries[row['id']] = ((row['uuid'], row['generation'] + 1),
                                      details)
                continue
            usage = dict(details.usage)
            for rc, used in sorted(amounts[row['uuid']].items()):
                claim = [(window.start, window.stored_end, used)]
                usage[rc] = (usage[rc].plus(claim) if rc in usage
                             else window_mod.UsageSteps(claim))
                if claims is not None:
                    claims += ((rc, window.start, window.stored_end, used,
                                consumer),)
            entries[row['id']] = ((row['uuid'], row['generation'] + 1),
                                  dataclasses.replace(
                                      details, claims=claims,
                                      usage=types.MappingProxyType(usage)))

    def take_claimed(self, session):
        """{provider id: generation} this process's claims moved

        providers to since the last call.
        """
        return self._claimed.pop(session.connection().engine, {})

    def forget(self, session, rp_id):
        """Drop a provider's entry (its row is being deleted)."""
        engine = session.connection().engine
        entries = self._by_engine.get(engine)
        if entries:
            entries.pop(rp_id, None)
        self._snapshots.pop(engine, None)

    def last_snapshot(self, session, kind):
        """What the loader ``kind`` last built and kept, or None."""
        kept = self._snapshots.get(session.connection().engine)
        return None if kept is None else kept.get(kind)

    def keep_snapshot(self, session, kind, snapshot):
        # Not from inside a write that may be rolled back (see get).
        if not session.info.get(UNCOMMITTED):
            self._snapshots.setdefault(session.connection().engine, {})[
                kind] = snapshot

    def _read(self, session, generations):
        """{provider id: Details} of providers given as {id: generation}."""
        rp_ids = list(generations)

        def of(query, column):
            if len(rp_ids) <= self.SCAN_ALL:
                query = query.where(column.in_(rp_ids))
            return session.execute(query)

        inv, rc = models.Inventory.__table__, models.ResourceClass.__table__
        trait = models.Trait.__table__
        rp_trait = models.ResourceProviderTrait.__table__
        rp_agg = models.ResourceProviderAggregate.__table__
        inventories, class_ids = collections.defaultdict(dict), {}
        # One Inventory of each set of fields: hosts alike share it (and
        # its capacity, worked out once), where a process's first read
        # has 30,000 rows at 10,000 hosts of a few kinds. Not the rows'
        # timestamps: PyMySQL decodes each in Python.
        made = {}
        for rp_id, name, rc_id, *fields in of(sa.select(
                inv.c.resource_provider_id, rc.c.name, rc.c.id,
                *(inv.c[field] for field in _INVENTORY_FIELDS)).join(
                rc, rc.c.id == inv.c.resource_class_id),
                inv.c.resource_provider_id):
            key = tuple(fields)
            inventory = made.get(key)
            if inventory is None:
                inventory = made[key] = inv_mod.Inventory(*fields)
            inventories[rp_id][name] = inventory
            class_ids[name] = rc_id
        class_ids = types.MappingProxyType(class_ids)
        traits = collections.defaultdict(set)
        for rp_id, name in of(
                sa.select(rp_trait.c.resource_provider_id, trait.c.name)
                .join(trait, trait.c.id == rp_trait.c.trait_id),
                rp_trait.c.resource_provider_id):
            traits[rp_id].add(name)
        aggregates = collections.defaultdict(set)
        for rp_id, agg in of(
                sa.select(rp_agg.c.resource_provider_id,
                          rp_agg.c.aggregate_uuid),
                rp_agg.c.resource_provider_id):
            aggregates[rp_id].add(agg)
        # Of many (a process's first read), those snapshotted at the
        # generation given need no claim read. Of the rest, when few
        # (those that moved), the claims with their consumers: one read
        # for both.
        usage = collections.defaultdict(dict)
        unread = rp_ids
        if len(rp_ids) > self.SCAN_ALL:
            usage.update(_snapshotted(session, generations))
            unread = [rp_id for rp_id in rp_ids if rp_id not in usage]
        few = len(unread) <= self.SCAN_ALL
        claims = self._read_claims(session, unread) if few and unread \
            else {}
        if few:
            by_class = collections.defaultdict(list)
            for rp_id, rp_claims in claims.items():
                for rc, start, end, used, _consumer in rp_claims:
                    by_class[rp_id, rc].append((start, end, used))
            for (rp_id, rc), rc_claims in by_class.items():
                usage[rp_id][rc] = window_mod.UsageSteps(rc_claims)
        else:
            # Every claim: as whole seconds, summed into steps at once, so
            # that no moment is made of each (see UsageSteps.of_seconds).
            names = class_names(session)
            providers, classes, starts, ends, used = _every_claim(session)
            # One key of each provider and class, for the steps' sake.
            span = max(names, default=0) + 1
            wanted = set(unread)
            for key, steps in window_mod.steps_by_key(
                    providers * span + classes, starts, ends, used).items():
                if key // span in wanted:
                    usage[key // span][names[key % span]] = steps
        # Every snapshot shares these: read-only, so none can change them.
        # Hosts alike share one set of traits and of aggregates, too.
        sets = {}
        return {rp_id: Details(
            inventories=types.MappingProxyType(inventories.get(rp_id, {})),
            traits=_one_of(sets, frozenset(traits.get(rp_id, ()))),
            aggregates=_one_of(sets, frozenset(aggregates.get(rp_id, ()))),
            usage=types.MappingProxyType(usage.get(rp_id, {})),
            claims=claims.get(rp_id), class_ids=class_ids)
            for rp_id in rp_ids}

    @staticmethod
    def _read_claims(session, rp_ids):
        """{provider id: its claims, as Details holds them}."""
        alloc = models.Allocation.__table__
        names = class_names(session)
        claims = {rp_id: [] for rp_id in rp_ids}
        for rp_id, rc_id, start, end, used, consumer in session.execute(
                sa.select(alloc.c.resource_provider_id,
                          alloc.c.resource_class_id, alloc.c.start_time,
                          alloc.c.end_time, alloc.c.used,
                          alloc.c.consumer_id)
                .where(alloc.c.resource_provider_id.in_(rp_ids))):
            claims[rp_id].append((names[rc_id], start, end, used, consumer))
        return {rp_id: tuple(found) for rp_id, found in claims.items()}


CACHE = ProviderCache()


def _one_of(made, value):
    """The first value equal to ``value`` put in ``made``: one object

    of each, where thousands of hosts alike have the same.
    """
    return made.setdefault(value, value)


def _generations(session, rp_ids):
    """{provider id: generation} of the providers given that exist (above

    SCAN_ALL, of every one: one scan beats a long IN list).
    """
    query = sa.select(_RP.c.id, _RP.c.generation)
    if len(rp_ids) <= ProviderCache.SCAN_ALL:
        query = query.where(_RP.c.id.in_(rp_ids))
    return dict(session.execute(query).all())


# --- usage snapshots: each provider's steps at a generation, kept in the
# database so that a process's first read need not read every claim.

_SNAPSHOTS = models.UsageSnapshot.__table__


def _snapshotted(session, generations):
    """{provider id: {class name: UsageSteps}} of the providers given as

    {id: generation} whose snapshot is of that generation.
    """
    names = class_names(session)
    found = {}
    for rp_id, generation, steps in session.execute(sa.select(
            _SNAPSHOTS.c.resource_provider_id, _SNAPSHOTS.c.generation,
            _SNAPSHOTS.c.steps)):
        if generations.get(rp_id, -1) == generation:
            found[rp_id] = _decoded(steps, names)
    return found


def _encoded(usage, class_ids):
    """A Details' usage as a snapshot's steps (see models.UsageSnapshot)."""
    parts = []
    for rc, steps in sorted(usage.items()):
        seconds = steps.seconds()
        parts += [np.array([class_ids[rc], len(seconds)], dtype=np.int64),
                  seconds, steps.levels_array()]
    if not parts:
        return b''
    return np.concatenate(parts).astype('<i8').tobytes()


def _decoded(steps, names):
    """{class name: UsageSteps} of a snapshot's steps (classes are never

    deleted: claims and inventories name them).
    """
    values = np.frombuffer(steps, dtype='<i8').astype(np.int64)
    usage, at = {}, 0
    while at < len(values):
        rc_id, count = int(values[at]), int(values[at + 1])
        at += 2
        usage[names[rc_id]] = window_mod.UsageSteps.of_seconds(
            values[at:at + count], values[at + count:at + 2 * count])
        at += 2 * count
    return usage


def save_usage(session, rows):
    """Snapshot the usage of every provider (rows of id, uuid and

    generation, all there are) whose snapshot is not of its generation;
    how many were written.

    The usage is what CACHE holds of the generation read in this
    transaction; one whose generation moved by the time this writes is
    left to the next pass. A reader takes a snapshot only while its
    provider is at the snapshot's generation, which every write to the
    provider's claims moves on.
    """
    written = dict(session.execute(sa.select(
        _SNAPSHOTS.c.resource_provider_id, _SNAPSHOTS.c.generation)).all())
    stale = [row for row in rows if written.get(row[0]) != row[2]]
    if not stale:
        return 0
    details = CACHE.get(session, stale)
    # Read again after the usage: a claim committed in between moved it.
    now = _generations(session, [row[0] for row in stale])
    class_ids = {name: rc_id for rc_id, name in class_names(session).items()}
    fresh = [row for row in stale if now.get(row[0]) == row[2]]
    # And those of providers no more, should a delete have left one.
    gone = written.keys() - {row[0] for row in rows}
    replaced = [row[0] for row in fresh if row[0] in written] + sorted(gone)
    for i in range(0, len(replaced), ProviderCache.SCAN_ALL):
        session.execute(_SNAPSHOTS.delete().where(
            _SNAPSHOTS.c.resource_provider_id.in_(
                replaced[i:i + ProviderCache.SCAN_ALL])))
    if fresh:
        session.execute(_SNAPSHOTS.insert(), [
            dict(resource_provider_id=row[0], generation=row[2],
                 steps=_encoded(details[row[0]].usage, class_ids))
            for row in fresh])
    return len(fresh)
