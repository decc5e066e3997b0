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
"""Offerings: when could a reservation be had, from the ledger.

"N hosts of host flavor X for D" (a pcloud:host reservation) or "N slots
of this flavor for D" (virtual:instance): the ``count`` earliest windows
of length D, from a moment on, in which the reservation would be
admitted now.

Which windows: a window that fits can slide earlier until it meets the
end of a claim or the moment asked from, and still fit (nothing ends in
between, so nothing it needs is freed there). So the starts looked at are
that moment and every later moment at which a ledger claim ends (one
that could matter: on an eligible host for whole hosts, of a resource
class the slot takes for slots), each rounded up to the minute as Blazar
takes lease dates; the answer is the first ``count`` of them at which the
reservation fits, in order. They are distinct starts, each where some
capacity is freed, not the same window shifted by a second; windows may
overlap one another.

Each start is checked by what admission uses: for whole hosts the
eligible hosts of reservations.host_requests and capacity.host_windows' free
test, for slots reservations.slots.place_indexed() on the ledger's slot index
(or place() over the window's forest where the index cannot tell), with
the exclusions admission makes (pclouds, host flavor pools,
Blazar's own hosts). A window answered is what a lease made at once
would be admitted for; the quota is not checked here, and another lease
may take it first. Nothing is claimed.

Availability (host_availability, slot_availability) is the timeline
beside them: for each hour from a moment on, how many eligible hosts of
a host flavor nothing at all is claimed on, by the same eligibility and
free test as whole hosts' offerings; or how many instance slots of a
shape the hosts take, by the slot layout's counts.

Pure reads of the ledger and of Nova's aggregates, so the Pcloud API
answers them in blazar-api.
"""

import datetime

import sqlalchemy as sa

from pcloud_plugin.capacity import host_windows
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import conf
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import models
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import slots as slots_mod

CONF = conf.CONF

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
# At most this many windows an answer.
MAX_COUNT = 20
DEFAULT_COUNT = 5
# Hours of an availability timeline: at most 90 days, two weeks unless
# asked.
MAX_HOURS = 90 * 24
DEFAULT_HOURS = 14 * 24
# Starts looked at beyond the first: a request that fits nowhere soon
# stops here and says up to when it looked (``searched_until``).
MAX_STARTS = 2000

_ALLOC = models.Allocation.__table__
_RC = models.ResourceClass.__table__


def ceil_minute(moment):
    """moment, rounded up to a whole minute."""
    over = moment - moment.replace(second=0, microsecond=0)
    return moment if not over else moment - over + MINUTE


def candidate_starts(not_before, ends):
    """Sorted distinct starts: not_before and each end after it, rounded

    up to the minute.
    """
    first = ceil_minute(not_before)
    starts = {first}
    starts.update(ceil_minute(end) for end in ends
                  if not_before < end < window_mod.FOREVER)
    return sorted(s for s in starts if s >= first)


def _window(start, end, amount):
    return {'start': start, 'end': end, 'amount': amount}


def _search(starts, duration, count, fits, amount, latest_start=None):
    """(windows, searched_until): the first ``count`` starts at which

    fits(start, end) holds, looking at MAX_STARTS + 1 starts at most,
    none after latest_start.
    """
    found, last = [], None
    for n, start in enumerate(starts):
        end = start + duration
        if end >= window_mod.FOREVER or n > MAX_STARTS or (
                latest_start is not None and start > latest_start):
            break
        last = start
        if fits(start, end):
            found.append(_window(start, end, amount))
            if len(found) == count:
                break
    return found, last


def host_offerings(context, forest, pools, params, duration, not_before,
                   count=DEFAULT_COUNT, latest_start=None):
    """The windows of a pcloud:host reservation's terms (``params``:

    amount, host_flavor, availability_zone, required_traits, as
    host_requests.parse_terms gives them), none starting after
    latest_start. (windows, searched_until).
    """
    leased = host_db.joined_service_hosts(context)
    hosts = host_requests.eligible_hosts(forest, pools, params, leased)
    amount = params['amount']
    if len(hosts) < amount:
        return [], None
    order = [h['host_uuid'] for h in hosts]
    busy = host_db.busy_intervals(context, order, not_before)
    ends = (end for intervals in busy.values() for _start, end in intervals)

    def fits(start, end):
        return len(host_windows.free_hosts(busy, start, end, order)) >= amount

    return _search(candidate_starts(not_before, ends), duration, count,
                   fits, amount, latest_start)


def free_counts(busy, start, steps, order, step=HOUR):
    """[n_0, ..., n_{steps-1}]: n_i the number of hosts of ``order`` free

    in [start + i * step, start + (i + 1) * step), exactly as
    host_windows.free_hosts(busy, ...) counts them (``busy``: {host:
    [(start, end)]}, a host it lacks is free).

    One pass over the intervals rather than one free test a step: an
    interval (s, e) meets step i when s < start + (i + 1) * step and
    e > start + i * step, i.e. for i from floor((s - start) / step) to
    ceil((e - start) / step), exclusive. A host's steps are the union of
    its intervals', counted once.
    """
    # +1 where a run of busy steps begins, -1 where it stops.
    delta = [0] * (steps + 1)
    for host in order:
        spans = []
        for i_start, i_end in busy.get(host, ()):
            first = max(0, (i_start - start) // step)
            stop = min(steps, -((start - i_end) // step))
            if first < stop:
                spans.append((first, stop))
        spans.sort()
        run = None
        for first, stop in spans:
            if run is not None and first <= run[1]:
                run[1] = max(run[1], stop)
                continue
            if run is not None:
                delta[run[0]] += 1
                delta[run[1]] -= 1
            run = [first, stop]
        if run is not None:
            delta[run[0]] += 1
            delta[run[1]] -= 1
    total, free, held = len(order), [], 0
    for change in delta[:steps]:
        held += change
        free.append(total - held)
    return free


def host_availability(context, forest, pools, params, start, hours):
    """(hosts, free): how many hosts a pcloud:host reservation of

    ``params`` (host_flavor, availability_zone, required_traits, as
    host_offerings takes them) may use, and for each of ``hours`` hours
    from ``start`` how many of them nothing is claimed on at any moment
    of that hour: the hosts host_windows.free_hosts gives for it.
    """
    leased = host_db.joined_service_hosts(context)
    hosts = host_requests.eligible_hosts(forest, pools, params, leased)
    order = [h['host_uuid'] for h in hosts]
    busy = host_db.busy_intervals(context, order, start,
                                  before=start + hours * HOUR)
    return len(order), free_counts(busy, start, hours, order)


def slot_availability(context, request, start, hours):
    """For each of ``hours`` hours from ``start``, how many slots of

    ``request``'s shape (a reservations.slots.SlotRequest with
    admission's exclusions; its amount left aside) a reservation could
    hold for the whole hour: what every host it may use takes, each
    alone (slots.total_slots: with affinity the most one host takes,
    against it one a host). Where hosts share a provider (a shared disk
    pool), each host's count is its own: their sum may be more than all
    of them take together.
    """
    index = db_snapshots.load_slot_index(context)
    free = []
    for i in range(hours):
        begin = start + i * HOUR
        counts = index.counts(request, begin, begin + HOUR)
        if counts is not None:
            per_host = counts.count
        else:
            per_host = slots_mod.host_counts(db_snapshots.load_forest(
                context, begin, begin + HOUR), request).values()
        free.append(slots_mod.total_slots(per_host, request.affinity))
    return free


@db_api.retry_on_deadlock
def claim_ends(context, not_before, classes):
    """Distinct ends after not_before of ledger claims of ``classes``."""
    query = (sa.select(_ALLOC.c.end_time).distinct()
             .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
             .where(_ALLOC.c.end_time > not_before,
                    _ALLOC.c.end_time < window_mod.FOREVER,
                    _ALLOC.c.used > 0,
                    _RC.c.name.in_(sorted(classes))))
    with db_api.reader(context) as session:
        return list(session.execute(query).scalars())


def slot_offerings(context, request, duration, not_before,
                   count=DEFAULT_COUNT, latest_start=None):
    """The windows of a virtual:instance reservation (``request``: a

    reservations.slots.SlotRequest with admission's exclusions), none
    starting after latest_start. (windows, searched_until).
    """
    ends = claim_ends(context, not_before, request.resources)
    limit = CONF.pcloud_instance.max_candidates

    def fits(start, end):
        # As admission lays them: from the slot index where it can tell.
        try:
            if slots_mod.place_indexed(
                    db_snapshots.load_slot_index(context), request, start, end,
                    max_candidates=limit) is None:
                slots_mod.place(db_snapshots.load_forest(context, start, end),
                                request, max_candidates=limit)
        except slots_mod.SlotsUnavailable:
            return False
        return True

    return _search(candidate_starts(not_before, ends), duration, count,
                   fits, request.amount, latest_start)
