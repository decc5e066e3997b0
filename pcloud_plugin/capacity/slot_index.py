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
"""How many slots of one shape every host takes in a window, at once.

The allocation-candidates engine answers any request on any forest, but
builds a provider object per provider and window and walks each tree in
Python: tens of microseconds a host. Most instance-slot requests need far
less: when only the root of each tree holds the classes a slot takes and
no sharing provider offers them, a host takes a slot iff its root does,
and how many it takes is, class by class, its room over what a slot
needs. This index holds the ledger's providers as arrays (window-free:
inventories, traits, aggregates, every claim's usage steps) and answers
that count for every host of a window in a few array operations.

It answers only what the engine would answer the same way (see
SlotIndex.counts); for anything else it says so (None) and the engine
decides.
"""

import collections
import copy

import numpy as np

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity import window as window_mod

# Each series' times are keyed apart by adding its position times this:
# more seconds than from the epoch to FOREVER.
_SPAN = 2 ** 38
assert _SPAN > window_mod.epoch_seconds(window_mod.FOREVER)
_NO_STEPS = window_mod.UsageSteps(())
# How many changed series _Series keeps apart before it builds its arrays
# anew: an admission at 10,000 hosts changes 30 to 150.
_PATCH_MAX = 512


class Provider(collections.namedtuple('Provider', (
        'uuid', 'name', 'parent_uuid', 'root_uuid', 'inventories', 'traits',
        'aggregates', 'usage'))):
    """What the index needs of one provider; usage is {class: UsageSteps}

    over all time.
    """


class _Series:
    """Many usage step functions side by side, to take the peak of each in

    one window with two sorted searches and one segmented max.

    A claim changes a few series of tens of thousands, and copying the
    arrays took a quarter of an admission at 10,000 hosts: replaced()
    keeps them and lays the changed series side by side apart (the
    patch), whose peaks stand over theirs; the arrays are built anew once
    the patch holds _PATCH_MAX series. The patch itself is a _Series
    replaced the same way, so that a claim costs what it changes, not
    what the claims before it patched.
    """

    def __init__(self, steps):
        self._set(np.array([len(s.seconds()) for s in steps],
                           dtype=np.int64),
                  [s.seconds() + i * _SPAN for i, s in enumerate(steps)],
                  [s.levels_array() for s in steps])

    def _set(self, lengths, keys, levels):
        """lengths: an int64 array, each series' count of steps (numpy's

        cumsum of a list converts every element first: at 10,000 hosts
        that was a millisecond of each admission).
        """
        # Series in the arrays; count, all of them (the patch may hold
        # series past the arrays' last).
        self.stored = self.count = len(lengths)
        self.base = np.arange(self.count, dtype=np.int64) * _SPAN
        # Where each series begins; one past the last for the end.
        self.starts = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.starts[1:])
        # Every time keyed by its series' position: sorted throughout.
        self.keys = np.concatenate(keys + [np.zeros(0, np.int64)])
        # A 0 past the end, so that every segment bound indexes it.
        self.levels = np.concatenate(levels + [np.zeros(1, np.int64)])
        # {position: UsageSteps} newer than the arrays, and the patch:
        # _Patch of them, or None.
        self.patched, self.patch = {}, None

    def replaced(self, changes, added):
        """A copy with the series at each position of changes ({position:

        UsageSteps}) in place of the old ones, and those of added after
        the last.
        """
        changed = dict(changes)
        changed.update(enumerate(added, self.count))
        patched = dict(self.patched)
        patched.update(changed)
        if len(patched) > _PATCH_MAX:
            return self._merged(patched, self.count + len(added))
        new = copy.copy(self)
        new.count += len(added)
        new.patched = patched
        new.patch = (self.patch or _NO_PATCH).with_series(changed)
        return new

    def _merged(self, patched, count):
        """A new _Series of the arrays with patched ({position:

        UsageSteps}, every position from stored to count among them) laid
        in; unchanged runs are copied whole, not series by series.
        """
        lengths = np.diff(self.starts)
        keys, levels, begin = [], [], 0
        for pos in sorted(p for p in patched if p < self.stored) + [
                self.stored]:
            run = slice(self.starts[begin], self.starts[pos])
            keys.append(self.keys[run])
            levels.append(self.levels[run])
            if pos < self.stored:
                steps = patched[pos]
                keys.append(steps.seconds() + pos * _SPAN)
                levels.append(steps.levels_array())
                lengths[pos] = len(steps.seconds())
            begin = pos + 1
        added = [patched[pos] for pos in range(self.stored, count)]
        for pos, steps in enumerate(added, self.stored):
            keys.append(steps.seconds() + pos * _SPAN)
            levels.append(steps.levels_array())
        lengths = np.concatenate([lengths, np.array(
            [len(steps.seconds()) for steps in added], dtype=np.int64)])
        new = _Series.__new__(_Series)
        new._set(lengths, keys, levels)
        return new

    def peaks(self, start, end):
        """Each series' peak during [start, end), as an int64 array."""
        start, end = (window_mod.epoch_seconds(m) for m in (start, end))
        peak = self._stored_peaks(start, end)
        if self.count > self.stored:
            peak = np.concatenate([peak, np.zeros(self.count - self.stored,
                                                  dtype=np.int64)])
        if self.patch is not None:
            peak[self.patch.positions] = self.patch.series._stored_peaks(
                start, end)
        return peak

    def _stored_peaks(self, start, end):
        """The peaks of the arrays' series, start and end in seconds."""
        if not self.stored:
            return np.zeros(0, dtype=np.int64)
        # The step in force at start (or the series' first), up to the
        # first step at or after end: as UsageSteps.peak does.
        lo = np.searchsorted(self.keys, self.base + start, 'right') - 1
        np.maximum(lo, self.starts[:-1], out=lo)
        hi = np.searchsorted(self.keys, self.base + end, 'left')
        bounds = np.empty(2 * self.stored, dtype=np.int64)
        bounds[0::2], bounds[1::2] = lo, hi
        peak = np.maximum.reduceat(self.levels, bounds)[0::2]
        return np.where(hi > lo, peak, 0)


class _Patch(collections.namedtuple('_Patch', 'positions series at')):
    """The series patched apart: positions (an int64 array) of the

    series of a _Series (series, in that order), and {position: its place
    there}: in the order first patched, so that a series patched again
    keeps its place and a new one goes last.
    """

    def with_series(self, changed):
        """A new _Patch with changed ({position: UsageSteps}) laid in."""
        at, local, positions = dict(self.at), {}, []
        for pos, steps in changed.items():
            if pos not in at:
                at[pos] = len(at)
                positions.append(pos)
            local[at[pos]] = steps
        return _Patch(np.concatenate([self.positions, np.array(
            positions, dtype=np.int64)]), self.series._merged(
            local, len(at)), at)


_NO_PATCH = _Patch(np.zeros(0, dtype=np.int64), _Series(()), {})


class _Class:
    """One resource class of every root: inventory fields as arrays."""

    # The fields, in the order _row gives them.
    _FIELDS = ('has', 'capacity', 'min_unit', 'max_unit', 'step')

    def __init__(self, index, rc):
        self.rc = rc
        # Row by row into lists, then one array: setting numpy elements
        # one at a time cost 60 ms a class at 10,000 hosts.
        rows = np.array([self._row(inv.get(rc)) for inv in index.inventories],
                        dtype=np.int64).reshape(-1, len(self._FIELDS))
        for column, field in enumerate(self._FIELDS):
            setattr(self, field, rows[:, column].copy())
        self.has = self.has.astype(bool)
        # The position of the root's own series of the class, or -1 (the
        # 0 appended to every window's peaks).
        self.series = np.array([index.series_at.get((uuid, rc), -1)
                                for uuid in index.uuids], dtype=np.int64)

    @staticmethod
    def _row(inv):
        if inv is None:
            return (0, 0, 1, 0, 1)
        return (1, inv.capacity, inv.min_unit, inv.max_unit, inv.step_size)

    def _fill(self, index, i):
        rc = self.rc
        for field, value in zip(self._FIELDS,
                                self._row(index.inventories[i].get(rc))):
            getattr(self, field)[i] = value
        self.series[i] = index.series_at.get((index.uuids[i], rc), -1)

    def updated(self, index, roots):
        """A copy for index with the rows of roots (positions) filled anew."""
        new = _Class.__new__(_Class)
        new.rc = self.rc
        for field in self._FIELDS + ('series',):
            setattr(new, field, getattr(self, field).copy())
        for i in roots:
            new._fill(index, i)
        return new


class Counts:
    """How many slots each host takes in one window: ``count[i]`` for the

    root ``uuids[i]``, 0 where it takes none or may not be used; ``busy``
    says which roots' trees use anything in the window.
    """

    def __init__(self, index, count, busy):
        self.index = index
        self.count = count
        self.busy = busy

    def order(self):
        """The hosts that take a slot, busy ones first, then by how many

        slots they take, then by name: as reservations.slots orders them.
        """
        hosts = np.flatnonzero(self.count)
        keys = (self.index.name_rank[hosts], self.count[hosts],
                ~self.busy[hosts])
        return hosts[np.lexsort(keys)].tolist()


class SlotIndex:
    """The ledger's providers as arrays; see the module's docstring.

    :param providers: Provider tuples, every provider of the ledger
    :param key: what the ledger identifies this state by
    """

    def __init__(self, providers, key=None):
        self.key = key
        self.providers = {p.uuid: p for p in providers}
        roots = [p for p in providers if p.parent_uuid is None]
        self.uuids = [p.uuid for p in roots]
        self.names = [p.name for p in roots]
        self.inventories = [p.inventories for p in roots]
        self.traits = [p.traits for p in roots]
        self.position = {uuid: i for i, uuid in enumerate(self.uuids)}
        self.by_name = {name: i for i, name in enumerate(self.names)}
        self.name_rank = np.empty(len(roots), dtype=np.int64)
        self.name_rank[np.argsort(np.array(self.names, dtype=object),
                                  kind='stable')] = np.arange(len(roots))
        self.in_aggregate = collections.defaultdict(list)
        for i, p in enumerate(roots):
            for agg in p.aggregates:
                self.in_aggregate[agg].append(i)
        # Classes the index cannot answer for: those a child or a sharing
        # provider offers (the engine may then pick it).
        self.unanswerable = set()
        steps, owner = [], []
        # (provider uuid, class) -> position of its series
        self.series_at = {}
        for p in providers:
            shares = forest_mod.SHARING_TRAIT in p.traits
            if shares or p.parent_uuid is not None:
                self.unanswerable.update(p.inventories)
            if shares:
                continue    # what a sharing provider uses keeps no host busy
            for rc, usage in p.usage.items():
                self.series_at[p.uuid, rc] = len(steps)
                steps.append(usage)
                owner.append(self.position[p.root_uuid])
        self.series = _Series(steps)
        self.owner = np.array(owner, dtype=np.int64)
        self._classes = {}
        self._last_window = None
        # The facts of every root's host (see matching), on first use.
        self._host_columns = None

    def updated(self, changed, key=None):
        """A new index with changed (Provider tuples of providers it holds)

        in place of the old ones. A write to claims or a root's
        inventories or traits is patched into copies of the arrays; one
        that moves, renames or re-aggregates a provider, or touches a
        child's or a sharing provider's capacity, builds the index anew.
        """
        providers = dict(self.providers)
        providers.update((p.uuid, p) for p in changed)
        for p in changed:
            old = self.providers[p.uuid]
            if ((p.name, p.parent_uuid, p.root_uuid, p.aggregates)
                    != (old.name, old.parent_uuid, old.root_uuid,
                        old.aggregates)
                    or forest_mod.SHARING_TRAIT in p.traits | old.traits
                    or (p.parent_uuid is not None
                        and p.inventories != old.inventories)):
                return SlotIndex(list(providers.values()), key)
        new = copy.copy(self)
        new.key, new.providers = key, providers
        new.inventories, new.traits = list(self.inventories), list(
            self.traits)
        # Shared until a series is added (30,000 entries at 10,000 hosts).
        new.series_at = self.series_at
        new._last_window = None
        if self._host_columns is not None and any(
                (p.inventories, p.traits) != (
                    self.providers[p.uuid].inventories,
                    self.providers[p.uuid].traits) for p in changed):
            new._host_columns = None    # a host's facts may have moved
        changes, added, owner, roots = {}, [], [], set()
        for p in changed:
            old = self.providers[p.uuid]
            root = self.position[p.root_uuid]
            roots.add(root)
            if p.parent_uuid is None:
                new.inventories[root] = p.inventories
                new.traits[root] = p.traits
            for rc in set(old.usage).union(p.usage):
                steps = p.usage.get(rc, _NO_STEPS)
                pos = self.series_at.get((p.uuid, rc))
                if pos is not None:
                    changes[pos] = steps
                elif steps is not _NO_STEPS:
                    if new.series_at is self.series_at:
                        new.series_at = dict(self.series_at)
                    new.series_at[p.uuid, rc] = self.series.count + len(
                        added)
                    added.append(steps)
                    owner.append(root)
        new.series = self.series.replaced(changes, added)
        new.owner = np.concatenate([self.owner,
                                    np.array(owner, dtype=np.int64)])
        # (A copy first: another thread may add a class meanwhile.)
        new._classes = {rc: cls.updated(new, roots)
                        for rc, cls in dict(self._classes).items()}
        return new

    def _class(self, rc):
        found = self._classes.get(rc)
        if found is None:
            found = self._classes[rc] = _Class(self, rc)
        return found

    def matching(self, hosts_matching):
        """Whether each root's host matches hosts_matching (a

        reservations.host_properties.HostsMatching), as a bool array.
        The facts of every host, as its columns() of each root's tree
        (providers, root first) give them for any expression, are kept
        until a write changes inventories or traits.
        """
        columns = self._host_columns
        if columns is None:
            children = collections.defaultdict(list)
            for p in self.providers.values():
                if p.parent_uuid is not None:
                    children[p.root_uuid].append(p)
            columns = self._host_columns = hosts_matching.columns(
                [[self.providers[uuid]] + children[uuid]
                 for uuid in self.uuids])
        return hosts_matching.mask(columns)

    def _peaks(self, start, end):
        """Each series' peak in the window, with a 0 appended (kept for the

        window asked last: candidates, then the claim, ask the same).
        """
        # Read once: another thread may ask for another window meanwhile.
        last = self._last_window
        if last is None or last[0] != (start, end):
            last = ((start, end), np.append(self.series.peaks(start, end), 0))
            self._last_window = last
        return last[1]

    def counts(self, request, start, end, max_candidates=None,
               avoid_hosts=()):
        """Counts of request's slots (a reservations.slots.SlotRequest) in

        [start, end), or None where the engine must decide: a class of the
        slot is offered by a child or a sharing provider, or more hosts
        qualify than max_candidates lets the engine list.
        """
        resources = request.resources
        if not resources or self.unanswerable.intersection(resources):
            return None
        n = len(self.uuids)
        peaks = self._peaks(start, end)
        usable = np.ones(n, dtype=bool)
        count = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        for rc, amount in resources.items():
            cls = self._class(rc)
            # Each slot is an instance: the unit rules apply to one slot,
            # the capacity to their sum.
            room = cls.capacity - peaks[cls.series]
            usable &= (cls.has & (cls.min_unit <= amount)
                       & (cls.max_unit >= amount) & (amount % cls.step == 0))
            np.minimum(count, np.maximum(room, 0) // amount, out=count)
        if request.required or request.forbidden:
            usable &= np.fromiter(
                (request.required <= t and request.forbidden.isdisjoint(t)
                 for t in self.traits), bool, n)
        if request.hosts_matching is not None:
            usable &= self.matching(request.hosts_matching)
        for agg in request.forbidden_aggregates:
            usable[self.in_aggregate.get(agg, [])] = False
        if request.member_of:
            member = np.zeros(n, dtype=bool)
            for agg in request.member_of:
                member[self.in_aggregate.get(agg, [])] = True
            usable &= member
        count[~usable] = 0
        if max_candidates is not None and np.count_nonzero(
                count) > max_candidates:
            return None
        for host in list(request.excluded_hosts) + list(avoid_hosts):
            i = self.position.get(host, self.by_name.get(host))
            if i is not None:
                count[i] = 0
        used = peaks[:-1] > 0
        busy = np.zeros(n, dtype=bool)
        busy[self.owner[used]] = True
        return Counts(self, count, busy)
