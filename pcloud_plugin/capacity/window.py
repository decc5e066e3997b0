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

import dataclasses
import datetime

from oslo_utils import timeutils

from pcloud_plugin import exception

FOREVER = datetime.datetime(9999, 12, 31)


def normalize(moment, field):
    """Naive UTC, truncated to whole seconds (what every backend stores)."""
    if not isinstance(moment, datetime.datetime):
        raise exception.InvalidWindow(
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
        """A validated window; start defaults to now."""
        start = normalize(start or timeutils.utcnow(), 'start')
        if end is not None:
            end = normalize(end, 'end')
            if end <= start:
                raise exception.InvalidWindow(
                    reason='end %s is not after start %s' % (end, start))
            if end >= FOREVER:
                end = None
        return cls(start, end)

    @property
    def stored_end(self):
        return FOREVER if self.end is None else self.end

    def __str__(self):
        return '[%s, %s)' % (self.start.isoformat(),
                             'open' if self.end is None
                             else self.end.isoformat())


def peak_usage(claims, window):
    """The largest sum of overlapping claims at any instant in window.

    claims are (start, end, used) with end FOREVER or None for open.
    Cost is O(k log k) in the claims passed, so a caller that passes only
    those overlapping the window pays only for those.
    """
    return max_in_sweep(claims, window.start, window.stored_end)[0]


def max_in_sweep(claims, start, end):
    """(peak, moment of peak) of overlapping claims clipped to [start, end)."""
    events = []
    for c_start, c_end, used in claims:
        c_end = FOREVER if c_end is None else c_end
        lo, hi = max(c_start, start), min(c_end, end)
        if lo < hi:
            # At equal instants an end (0) sorts before a start (1): the
            # windows are half-open, so touching claims do not overlap.
            events.append((lo, 1, used))
            events.append((hi, 0, -used))
    events.sort(key=lambda e: (e[0], e[1]))
    peak, at, running = 0, None, 0
    for moment, _kind, delta in events:
        running += delta
        if running > peak:
            peak, at = running, moment
    return peak, at
