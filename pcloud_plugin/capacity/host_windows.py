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
"""Whole hosts over time: which hosts qualify, which are free in a window,

and the earliest window in which N of them are free for a duration.

Pure: no I/O. A host is the tree of a root provider; it is free in a
window when nothing at all is claimed on any provider of its tree then,
since a whole-host lease claims all of it.
"""

import datetime

from pcloud_plugin.capacity import request as request_mod
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import exception

MINUTE = datetime.timedelta(minutes=1)


def parse_traits(values):
    """(required any-of sets, forbidden names) of Placement trait syntax.

    ``values``: one string or a list of them, each like one ``required``
    parameter of Placement's GET /allocation_candidates:
    ``HW_CPU_X86_AVX2,!CUSTOM_SLOW`` (all of, none of) or
    ``in:CUSTOM_A,CUSTOM_B`` (any of). Raises exception.Invalid.
    """
    if values is None:
        return [], set()
    if isinstance(values, str):
        values = [values] if values.strip() else []
    required, forbidden = [], set()
    for value in values:
        if not isinstance(value, str):
            raise exception.Invalid(
                reason='traits are strings, got %r' % (value,))
        try:
            any_of, none_of = request_mod._parse_traits(value.strip(),
                                                        'required_traits')
        except exception.InvalidCandidatesRequest as e:
            raise exception.Invalid(reason=e.message)
        required.extend(any_of)
        forbidden |= none_of
    request_mod._check_traits(
        {name for names in required for name in names} | forbidden)
    clash = {n for names in required if len(names) == 1
             for n in names} & forbidden
    if clash:
        raise exception.Invalid(reason='traits both required and '
                                'forbidden: %s' % ', '.join(sorted(clash)))
    return required, forbidden


def host_traits(forest, root):
    """Every trait of any provider in the host's tree."""
    traits = set()
    for uuid in forest.tree_of(root):
        traits |= forest[uuid].traits
    return traits


def matches(traits, required, forbidden):
    return (all(names & traits for names in required)
            and not traits & forbidden)


def capacity(forest, root):
    """{(provider uuid, class): capacity} of a host: what its whole-host

    claim takes.
    """
    return {(uuid, rc): inv.capacity
            for uuid in forest.tree_of(root)
            for rc, inv in forest[uuid].inventories.items()
            if inv.capacity > 0}


def qualifying(forest, roots, required=(), forbidden=frozenset()):
    """The roots of ``roots`` that are hosts in the forest with capacity

    and the traits asked for, in name order.
    """
    found = [root for root in roots
             if root in forest.providers
             and forest[root].parent_uuid is None
             and capacity(forest, root)
             and matches(host_traits(forest, root), required, forbidden)]
    return sorted(found, key=lambda root: (forest[root].name, root))


def is_free(intervals, start, end):
    """Whether no interval of (start, end) pairs overlaps [start, end)."""
    end = window_mod.FOREVER if end is None else end
    return all(i_end <= start or i_start >= end
               for i_start, i_end in intervals)


def free_hosts(busy, start, end, order=None):
    """Hosts of ``busy`` ({host: [(start, end)]}) free in [start, end),

    in ``order`` if given (an iterable of every host), else sorted.
    """
    hosts = list(order) if order is not None else sorted(busy)
    return [h for h in hosts if is_free(busy.get(h, ()), start, end)]


def _ceil(moment, step):
    if not step:
        return moment
    epoch = datetime.datetime(1970, 1, 1)
    over = (moment - epoch) % step
    return moment if not over else moment + (step - over)


def earliest_window(busy, amount, duration, not_before, latest_start=None,
                    step=MINUTE, order=None):
    """The earliest window of ``duration`` in which ``amount`` hosts of

    ``busy`` ({host: [(start, end), ...]}, every eligible host a key) are
    free, starting at or after not_before (and at or before latest_start
    if given), at a multiple of ``step`` (Blazar takes lease dates to the
    minute; None for any moment).

    Returns (start, end, hosts): the first ``amount`` free hosts in
    ``order`` (default: sorted); or None if there is no such window.

    The earliest start is not_before or the end of some claim (a window
    that is free can slide earlier until it meets one), rounded up to
    ``step``, so only those moments are tried: O(c * h * k) for c claim
    ends, h hosts and k claims a host.
    """
    if amount < 1:
        raise exception.Invalid(reason='amount must be at least 1')
    if duration <= datetime.timedelta(0):
        raise exception.Invalid(reason='duration must be positive')
    if len(busy) < amount:
        return None
    starts = {_ceil(not_before, step)}
    for intervals in busy.values():
        for _i_start, i_end in intervals:
            if not_before < i_end < window_mod.FOREVER:
                starts.add(_ceil(i_end, step))
    for start in sorted(starts):
        if latest_start is not None and start > latest_start:
            break
        end = start + duration
        if end >= window_mod.FOREVER:
            break
        hosts = free_hosts(busy, start, end, order)
        if len(hosts) >= amount:
            return start, end, hosts[:amount]
    return None
