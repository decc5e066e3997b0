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
    """

    __slots__ = ('times', 'levels', 'top', 'top_at', '_arrays')

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

    def _set(self, times, levels):
        # levels[i] is the usage during [times[i], times[i + 1]); before
        # times[0] nothing is used.
        self.times = times
        self.levels = levels
        # The all-time peak and the first step at it: a window that holds
        # that step (a wide one, usually) needs no look at the others.
        self.top = max(self.levels, default=0)
        self.top_at = self.levels.index(self.top) if self.top > 0 else None
        self._arrays = None

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
        new._set(times, levels)
        if seconds is not None:
            new._arrays = (np.array(seconds, dtype=np.int64),
                           np.array(levels, dtype=np.int64))
        return new

    @property
    def ends(self):
        """When every claim has ended (FOREVER if one is open); None if

        there are none.
        """
        return self.times[-1] if self.times else None

    def peak(self, start, end):
        """(peak usage, first moment of it) within [start, end).

        The moment is None when nothing is used in the window.
        """
        # Every claim has ended by start (the last step is back to 0):
        # the common case of a window at now over past claims.
        if not self.times or start >= self.times[-1]:
            return 0, None
        at = self.top_at
        # The last level is 0, so a step at the top has one after it.
        if (at is not None and self.times[at] < end
                and self.times[at + 1] > start):
            return self.top, max(self.times[at], start)
        first = max(bisect.bisect_right(self.times, start) - 1, 0)
        levels = self.levels[first:bisect.bisect_left(self.times, end)]
        peak = max(levels, default=0)
        if peak <= 0:
            return 0, None
        return peak, max(self.times[first + levels.index(peak)], start)

    def between(self, start, end):
        """[(moment, usage from then on)] within [start, end): the usage

        at start, then at every moment a claim starts or ends before end.
        """
        first = bisect.bisect_right(self.times, start)
        last = bisect.bisect_left(self.times, end)
        steps = [(start, self.levels[first - 1] if first else 0)]
        steps.extend(zip(self.times[first:last], self.levels[first:last]))
        return steps


def max_in_sweep(claims, start, end):
    """(peak, moment of peak) of the claims within [start, end)."""
    return UsageSteps(claims).peak(start, end)
