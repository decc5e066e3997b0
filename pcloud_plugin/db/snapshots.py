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

"""Snapshots of the whole ledger for the engines that answer from it:

load_forest (capacity.forest, for a window) and load_slot_index
(capacity.slot_index, window-free), each kept between calls and patched
with only what was written since. Imports db.api and db.provider_cache.
"""

import collections
import dataclasses

from oslo_db import exception as db_exc
import sqlalchemy as sa

from pcloud_plugin.capacity import candidates
from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity import slot_index
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache

_RP = models.ResourceProvider.__table__


@dataclasses.dataclass(frozen=True)
class _Snapshot:
    """What load_forest last built, for the next one to reuse."""

    fingerprint: tuple
    providers: dict     # provider id -> Provider
    forest: forest_mod.ProviderForest
    # (claims_end, provider id, Details) of each provider with claims,
    # latest end first; and {provider id: Details} of those with usage in
    # the forest: the only ones whose usage another window can change.
    claimed: list
    used: dict


# Whether anything was written since a snapshot. Every write to a provider
# or to what hangs off it bumps the provider's generation (sum); a deleted
# provider lowers the count unless a new one takes its place, and a new
# one has a higher id or, where SQLite gives the highest id again, a later
# created_at.
_FINGERPRINT = sa.select(
    sa.func.count(), sa.func.sum(_RP.c.generation), sa.func.max(_RP.c.id),
    sa.func.max(_RP.c.created_at))


# A provider's row as load_forest reads it, by position.
_ROWS = sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation, _RP.c.name,
                  _RP.c.parent_provider_id, _RP.c.root_provider_id)


@db_api.reading
def load_forest(session, start=None, end=None):
    """Every provider tree, with each provider's peak usage in the window:

    the snapshot the allocation-candidates engine answers from. What has
    not changed since the last load is the same objects: the forest itself
    if nothing was written, else each provider whose row, details and
    usage are the same; so what the engine derives from them is kept (see
    capacity.forest).
    """
    window = window_mod.Window.of(start, end)
    # Read before the rows: a write committed in between (READ COMMITTED)
    # then makes the next fingerprint differ, never the other way round.
    fingerprint = tuple(session.execute(_FINGERPRINT).one())
    last = provider_cache.CACHE.last_snapshot(session, load_forest)
    kept, claimed, used = {}, [], {}
    if last is None or not _same_providers(last.fingerprint, fingerprint):
        order = rows = session.execute(_ROWS).all()
        details = provider_cache.CACHE.get(session, rows, complete=True)
    elif last.fingerprint == fingerprint:
        changed, _ = _usage_changes(last, window)
        if not changed:
            return last.forest
        return last.forest.replaced(changed.values())
    else:
        # Only generations moved: read again the providers they moved on.
        order, rows, kept = _written_since(session, last)
        details = provider_cache.CACHE.get(session, rows)
        changed, checked = _usage_changes(last, window, kept)
        kept.update(changed)
        claimed = [entry for entry in last.claimed if entry[1] in kept]
        used = {rp_id: about for rp_id, about in checked.items()
                if rp_id in kept and kept[rp_id].usage}
    before = {} if last is None else last.providers
    uuids = {row[0]: row[1] for row in rows}

    def uuid_of(rp_id):
        return uuids[rp_id] if rp_id in uuids else kept[rp_id].uuid

    built = {}
    for rp_id, uuid, generation, name, parent_id, root_id in rows:
        about = details[rp_id]
        usage = {}
        if about.usage:
            claimed.append((about.claims_end, rp_id, about))
            usage = about.peaks(window)
            if usage:
                used[rp_id] = about
        parent = None if parent_id is None else uuid_of(parent_id)
        root = uuid_of(root_id)
        p = before.get(rp_id)
        if (p is None or p.uuid != uuid or p.generation != generation
                or p.inventories is not about.inventories
                or p.traits is not about.traits
                or p.aggregates is not about.aggregates
                or p.name != name or p.parent_uuid != parent
                or p.root_uuid != root or p.usage != usage):
            p = forest_mod.Provider(
                uuid=uuid, name=name, generation=generation,
                parent_uuid=parent, root_uuid=root,
                inventories=about.inventories, usage=usage,
                traits=about.traits, aggregates=about.aggregates)
        built[rp_id] = p
    # In the database's order, so that a forest built bit by bit lists
    # providers as one read whole would.
    providers = {row[0]: kept.get(row[0]) or built[row[0]] for row in order}
    forest = forest_mod.ProviderForest(providers.values())
    claimed.sort(reverse=True)
    provider_cache.CACHE.keep_snapshot(session, load_forest, _Snapshot(
        fingerprint, providers, forest, claimed, used))
    return forest


@db_api.reading
def load_slot_index(session):
    """Every provider as a capacity.slot_index.SlotIndex, window-free: the

    same object while nothing was written; after a write that made or
    deleted no provider, the last one with those whose generation moved
    read again and patched in.
    """
    # Taken before the fingerprint: a claim recorded later counts next
    # time (at worst once too often, which only costs a full look).
    own = provider_cache.CACHE.take_claimed(session)
    fingerprint = tuple(session.execute(_FINGERPRINT).one())
    last = provider_cache.CACHE.last_snapshot(session, load_slot_index)
    if last is not None and last.index.key == fingerprint:
        return last.index
    moved = _moved_by(own, last, fingerprint)
    if moved:
        # Only this process's claims were written since: their providers
        # are kept at the generations they moved to (ProviderCache
        # .claimed); nothing else needs reading.
        details = provider_cache.CACHE.get(session, [
            (rp_id, last.uuids[rp_id], gen) for rp_id, gen in moved.items()])
        index = last.index.updated([
            last.index.providers[last.uuids[rp_id]]._replace(
                inventories=about.inventories, traits=about.traits,
                aggregates=about.aggregates, usage=about.usage)
            for rp_id, about in details.items()], key=fingerprint)
        provider_cache.CACHE.keep_snapshot(session, load_slot_index, _Index(
            index, last.generations.moved(moved), last.uuids))
        return index
    if last is not None and _same_providers(last.index.key, fingerprint):
        generations = _generations_now(session, last.generations)
        if generations is not None:
            stale = [rp_id for rp_id, gen in generations.items()
                     if last.generations[rp_id] != gen]
            index = last.index.updated(
                _indexed(session, _rows_of(session, stale), last.uuids),
                key=fingerprint)
            provider_cache.CACHE.keep_snapshot(
                session, load_slot_index,
                _Index(index, generations, last.uuids))
            return index
    rows = session.execute(_ROWS).all()
    uuids = {row[0]: row[1] for row in rows}
    # Every provider's objects made at once, none of them garbage.
    with candidates.gc_paused():
        index = slot_index.SlotIndex(_indexed(session, rows, uuids, True),
                                     key=fingerprint)
    provider_cache.CACHE.keep_snapshot(session, load_slot_index, _Index(
        index, _Generations({row[0]: row[2] for row in rows}), uuids))
    return index


def save_usage(context):
    """Snapshot in the database the usage of each provider whose claims

    moved since its last snapshot (provider_cache.save_usage), so that a
    process's first read need not read every claim; how many were
    written. 0 when another writer was at it (a duplicate row, or any
    race db_api.must_retry knows: a deadlock, Galera's failed
    certification, PostgreSQL's serialization failure): the next pass
    finishes.
    """
    try:
        with db_api.writer(context) as session:
            return provider_cache.save_usage(session, session.execute(
                sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation)).all())
    except db_exc.DBDuplicateEntry:
        return 0
    except Exception as error:
        if db_api.must_retry(error):
            return 0
        raise


# What load_slot_index keeps: the index, each provider's generation as
# the index holds them (_Generations), and its uuid, by id.
_Index = collections.namedtuple('_Index', 'index generations uuids')

# Providers by runs of ids this long: after another process's write, the
# database counts each run's providers and sums their generations, and
# only the runs that moved are read row by row (at 10,000 hosts, reading
# every provider's generation was a third of such an admission).
_RUN = 128
_RUN_OF = (_RP.c.id - _RP.c.id % sa.literal_column(str(_RUN))).label('run')
_RUNS = sa.select(_RUN_OF, sa.func.count(), sa.func.sum(
    _RP.c.generation)).group_by(_RUN_OF)
# Past this many runs moved, every provider's generation is read at once.
_RUNS_READ = 16


def _run_of(rp_id):
    """The first id of the run a provider's id is in (as _RUN_OF)."""
    return rp_id - rp_id % _RUN


class _Generations(dict):
    """{provider id: generation}, with ``runs``: {first id of a run:

    (providers in it, their generations summed)}.
    """

    def __init__(self, generations, runs=None):
        super().__init__(generations)
        if runs is None:
            runs = collections.defaultdict(lambda: (0, 0))
            for rp_id, generation in self.items():
                count, total = runs[_run_of(rp_id)]
                runs[_run_of(rp_id)] = (count + 1, total + generation)
        self.runs = dict(runs)

    def moved(self, moved):
        """A copy with the generations of moved ({id: generation})."""
        runs = dict(self.runs)
        for rp_id, generation in moved.items():
            count, total = runs[_run_of(rp_id)]
            runs[_run_of(rp_id)] = (count, total + generation - self[rp_id])
        # One copy of the 10,000 entries, on every admission's path.
        generations = _Generations(self, runs)
        generations.update(moved)
        return generations


def _generations_now(session, last):
    """The _Generations of every provider now, given the last ones, when

    the same providers are there; else None. Runs whose count and sum
    did not move are taken from last: generations only ever grow.
    """
    runs = {run: (count, int(total or 0))
            for run, count, total in session.execute(_RUNS)}
    moved = [run for run, about in runs.items()
             if about != last.runs.get(run)]
    # (Under READ COMMITTED, one made since the fingerprint may show.)
    if runs.keys() != last.runs.keys() or any(
            runs[run][0] != last.runs[run][0] for run in moved):
        return None
    if len(moved) > _RUNS_READ:
        generations = dict(session.execute(
            sa.select(_RP.c.id, _RP.c.generation)).all())
        return _Generations(generations) \
            if generations.keys() == last.keys() else None
    generations = _Generations(last, runs)
    if moved:
        rows = session.execute(sa.select(_RP.c.id, _RP.c.generation).where(
            sa.or_(*(_RP.c.id.between(run, run + _RUN - 1)
                     for run in moved)))).all()
        if (len(rows) != sum(runs[run][0] for run in moved)
                or any(rp_id not in last for rp_id, _gen in rows)):
            return None
        generations.update(rows)
    return generations


def _moved_by(own, last, fingerprint):
    """{provider id: generation} of the providers this process's claims

    (own) moved since the last index, if the fingerprint says nothing
    else was written: no provider made or deleted, and generations summed
    grew by exactly those moves (they only ever grow). Else None.
    """
    if not own or last is None or not _same_providers(last.index.key,
                                                      fingerprint):
        return None
    moved = {rp_id: gen for rp_id, gen in own.items()
             if gen > last.generations.get(rp_id, gen)}
    grown = sum(gen - last.generations[rp_id] for rp_id, gen in moved.items())
    if fingerprint[1] != last.index.key[1] + grown:
        return None
    return moved


def _indexed(session, rows, uuids, complete=False):
    """slot_index.Provider tuples of provider rows (_ROWS)."""
    details = provider_cache.CACHE.get(session, rows, complete=complete)
    return [slot_index.Provider(
        uuid, name, uuids.get(parent_id), uuids[root_id],
        details[rp_id].inventories, details[rp_id].traits,
        details[rp_id].aggregates, details[rp_id].usage)
        for rp_id, uuid, _gen, name, parent_id, root_id in rows]


def _rows_of(session, rp_ids):
    """The _ROWS of these providers."""
    if not rp_ids:
        return []
    if len(rp_ids) <= provider_cache.ProviderCache.SCAN_ALL:
        return session.execute(_ROWS.where(_RP.c.id.in_(rp_ids))).all()
    wanted = set(rp_ids)
    return [row for row in session.execute(_ROWS) if row[0] in wanted]


def _same_providers(fingerprint, other):
    """Whether no provider was made or deleted between two fingerprints

    (only generations may have moved).
    """
    count, _, highest_id, latest = fingerprint
    return (count, highest_id, latest) == (other[0], other[2], other[3])


def _written_since(session, last):
    """(every provider's (id, generation) row, the full rows of those

    written since the last snapshot, {id: Provider} of the others), when
    none was made or deleted since. Every write to a provider's row (name,
    parent, root) or to what hangs off it bumps its generation, so an
    equal one means an equal provider but for the window's usage.
    """
    before = last.providers
    order = session.execute(sa.select(_RP.c.id, _RP.c.generation)).all()
    kept, stale = {}, []
    for rp_id, generation in order:
        # (Under READ COMMITTED, one made since the fingerprint may show.)
        p = before.get(rp_id)
        if p is not None and p.generation == generation:
            kept[rp_id] = p
        else:
            stale.append(rp_id)
    return order, _rows_of(session, stale), kept


def _usage_changes(snapshot, window, only=None):
    """({id: Provider with its usage for window} of the snapshot's

    providers (of ``only`` if given) whose usage differs in window, and
    {id: Details} of those looked at).
    """
    # A provider whose claims have all ended by the window's start uses
    # nothing in it: if it used nothing in the snapshot's window either,
    # it is as it was.
    check = dict(snapshot.used)
    for claims_end, rp_id, about in snapshot.claimed:
        if claims_end <= window.start:
            break
        check[rp_id] = about
    changed = {}
    for rp_id, about in check.items():
        if only is not None and rp_id not in only:
            continue
        p = snapshot.providers[rp_id]
        usage = about.peaks(window)
        if usage != p.usage:
            changed[rp_id] = dataclasses.replace(p, usage=usage)
    return changed, check
