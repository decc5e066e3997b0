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
"""Time windows and the peak usage of claims that overlap one.

Every window is half-open, [start, end), in naive UTC at whole seconds;
end None means open-ended. The ledger stores open ends as FOREVER so that
an index on end time serves overlap queries.
"""

import bisect
import collections
import dataclasses
import datetime
import itertools

import numpy as np
from oslo_utils import timeutils

from pcloud_plugin import exception

FOREVER = datetime.datetime(9999, 12, 31)
_EPOCH = datetime.datetime(1970, 1, 1)
_SECOND = datetime.timedelta(seconds=1)


def epoch_seconds(moment):
    """Whole seconds from the Unix epoch to a naive UTC moment."""
    return (moment - _EPOCH) // _SECOND


def _moments(seconds):
    """Naive UTC datetimes of an int64 array of epoch seconds."""
    # numpy makes them in C, several times faster than one at a time.
    return seconds.astype('datetime64[s]').tolist()


def normalize(moment, field):
    """Naive UTC, truncated to whole seconds (what every backend stores)."""
    if not isinstance(moment, datetime.datetime):
        raise exception.InvalidWindow(
            field=field,
            reason='%s must be a datetime, got %r' % (field, moment))
    if moment.tzinfo is not None:
        moment = timeutils.normalize_time(moment)
    return moment.replace(microsecond=0)


@dataclasses.dataclass(frozen=True)
class Window:
    start: datetime.datetime
    end: datetime.datetime = None

    @classmethod
    def of(cls, start=None, end=None):
        """A validated window; start defaults to now.

        The ledger holds moments before FOREVER: a later start or end is
        refused (InvalidWindow.kwargs['field'] names it), never clamped;
        an end at FOREVER is an open end, which is stored the same.
        """
        start = normalize(start or timeutils.utcnow(), 'start')
        if start >= FOREVER:
            raise exception.InvalidWindow(
                field='start', reason='start %s is not before %s' % (
                    start, FOREVER))
        if end is not None:
            end = normalize(end, 'end')
            if end <= start:
                raise exception.InvalidWindow(
                    field='end',
                    reason='end %s is not after start %s' % (end, start))
            if end > FOREVER:
                raise exception.InvalidWindow(
                    field='end', reason='end %s is after %s' % (
                        end, FOREVER))
            if end == FOREVER:
                end = None
        return cls(start, end)

    @property
    def stored_end(self):
        return FOREVER if self.end is None else self.end

    def __str__(self):
        return '[%s, %s)' % (self.start.isoformat(),
                             'open' if self.end is None
                             else self.end.isoformat())


class UsageSteps:
    """The usage of one class on one provider over time: a step function.

    Built once from claims (start, end, used), end FOREVER or None for
    open; the peak in any window is then two bisections and a max over the
    steps inside it, so a cached UsageSteps answers a window crossing
    thousands of claims without looking at them again.

    Steps read in bulk (steps_by_key) are kept as int64 arrays of whole
    seconds and levels; their moments and lists are made on first use, so
    the slot index, which reads only the arrays, makes none.
    """

    __slots__ = ('_times', '_levels', '_top', '_arrays')

    def __init__(self, claims):
        # Net change at each instant: a claim ending where another starts
        # cancels out there, as half-open windows do not overlap.
        deltas = collections.defaultdict(int)
        for start, end, used in claims:
            deltas[start] += used
            deltas[FOREVER if end is None else end] -= used
        times = sorted(deltas)
        self._set(times, list(itertools.accumulate(
            deltas[moment] for moment in times)))

    @classmethod
    def of_seconds(cls, seconds, levels):
        """Steps as int64 arrays: levels[i] is the usage from seconds[i]

        (since the epoch, ascending) until the next.
        """
        new = cls.__new__(cls)
        new._times = new._levels = new._top = None
        new._arrays = (seconds, levels)
        return new

    def _set(self, times, levels, arrays=None):
        # levels[i] is the usage during [times[i], times[i + 1]); before
        # times[0] nothing is used. arrays: the same as int64 arrays, if
        # made.
        self._arrays = arrays
        self._levels = levels
        # The all-time peak and the first step at it: a window that holds
        # that step (a wide one, usually) needs no look at the others.
        top = max(levels, default=0)
        self._top = (top, levels.index(top) if top > 0 else None)
        # Last: another thread takes the others as made once it is set.
        self._times = times

    def _lists(self):
        """Make the moments and lists of steps kept as arrays only."""
        seconds, levels = self._arrays
        self._set(_moments(seconds), levels.tolist(), self._arrays)

    @property
    def times(self):
        """The moment each step starts (a list of naive UTC datetimes)."""
        if self._times is None:
            self._lists()
        return self._times

    @property
    def levels(self):
        """The usage from each step on (a list of ints)."""
        if self._times is None:
            self._lists()
        return self._levels

    @property
    def top(self):
        """The all-time peak usage."""
        if self._times is None:
            self._lists()
        return self._top[0]

    def _as_arrays(self):
        if self._arrays is None:
            # By hand: numpy's own datetime conversion is 5x slower.
            self._arrays = (
                np.array([epoch_seconds(t) for t in self.times],
                         dtype=np.int64),
                np.array(self.levels, dtype=np.int64))
        return self._arrays

    def seconds(self):
        """times as int64 seconds since the epoch (made once, kept)."""
        return self._as_arrays()[0]

    def levels_array(self):
        """levels as an int64 array (made once, kept)."""
        return self._as_arrays()[1]

    def plus(self, claims):
        """A new UsageSteps: these steps with claims (start, end, used)

        added, as if built from all of them (the same moments and levels),
        by inserting each claim's bounds rather than sorting again.
        """
        times, levels = list(self.times), list(self.levels)
        # The seconds, if made, kept along: only new moments converted.
        seconds = None if self._arrays is None else self._arrays[0].tolist()
        for start, end, used in claims:
            end = FOREVER if end is None else end
            for moment in (start, end):
                i = bisect.bisect_left(times, moment)
                if i == len(times) or times[i] != moment:
                    times.insert(i, moment)
                    levels.insert(i, levels[i - 1] if i else 0)
                    if seconds is not None:
                        seconds.insert(i, epoch_seconds(moment))
            for i in range(bisect.bisect_left(times, start),
                           bisect.bisect_left(times, end)):
                levels[i] += used
        new = UsageSteps.__new__(UsageSteps)
        new._set(times, levels, None if seconds is None else (
            np.array(seconds, dtype=np.int64),
            np.array(levels, dtype=np.int64)))
        return new

    @property
    def ends(self):
        """When every claim has ended (FOREVER if one is open); None if

        there are none.
        """
        if self._times is None:
            seconds = self._arrays[0]
            return _moments(seconds[-1:])[0] if len(seconds) else None
        return self._times[-1] if self._times else None

    def peak(self, start, end):
        """(peak usage, first moment of it) within [start, end).

        The moment is None when nothing is used in the window.
        """
        if self._times is None:
            self._lists()
        times = self._times
        # Every claim has ended by start (the last step is back to 0):
        # the common case of a window at now over past claims.
        if not times or start >= times[-1]:
            return 0, None
        top, at = self._top
        # The last level is 0, so a step at the top has one after it.
        if at is not None and times[at] < end and times[at + 1] > start:
            return top, max(times[at], start)
        first = max(bisect.bisect_right(times, start) - 1, 0)
        levels = self._levels[first:bisect.bisect_left(times, end)]
        peak = max(levels, default=0)
        if peak <= 0:
            return 0, None
        return peak, max(times[first + levels.index(peak)], start)

    def between(self, start, end):
        """[(moment, usage from then on)] within [start, end): the usage

        at start, then at every moment a claim starts or ends before end.
        """
        first = bisect.bisect_right(self.times, start)
        last = bisect.bisect_left(self.times, end)
        steps = [(start, self.levels[first - 1] if first else 0)]
        steps.extend(zip(self.times[first:last], self.levels[first:last]))
        return steps


def steps_by_key(keys, starts, ends, used):
    """{key: UsageSteps} of many claims at once, given as int64 arrays:

    claim i is ``used[i]`` during [starts[i], ends[i]) (whole seconds since
    the epoch, FOREVER's for an open end) on ``keys[i]``, an int naming
    what it is claimed on. The same steps as UsageSteps built from each
    key's claims.
    """
    if not len(used):
        return {}
    keys = np.concatenate([keys, keys])
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([used, -used])
    # Sorted by key, then time: as one int64 where both fit (seconds to
    # FOREVER take 38 bits), which sorts several times faster.
    if keys.max() < 2 ** 25 and keys.min() >= 0 and times.min() >= 0:
        order = np.argsort((keys << 38) | times)
    else:
        order = np.lexsort((times, keys))
    keys, times, deltas = keys[order], times[order], deltas[order]
    # One step per key and instant, of the claims' net change there.
    new_key = np.ones(len(times), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=new_key[1:])
    new_step = new_key.copy()
    new_step[1:] |= times[1:] != times[:-1]
    steps = np.flatnonzero(new_step)
    # Each key's changes sum to 0 (every claim ends, if at FOREVER), so
    # one running sum over all keys starts each key's levels at 0.
    levels = np.cumsum(np.add.reduceat(deltas, steps))
    times, new_key = times[steps], new_key[steps]
    bounds = np.flatnonzero(new_key).tolist()
    firsts = keys[steps][new_key].tolist()
    bounds.append(len(steps))
    return {key: UsageSteps.of_seconds(times[a:b], levels[a:b])
            for key, a, b in zip(firsts, bounds, bounds[1:])}


def max_in_sweep(claims, start, end):
    """(peak, moment of peak) of the claims within [start, end)."""
    return UsageSteps(claims).peak(start, end)
