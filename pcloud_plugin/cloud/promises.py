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
"""Placement holds what the ledger promised to virtual:instance slots.

Placement knows no time: a boot takes its capacity from now on, for as
long as it runs. So whatever the ledger has promised to instance
reservations, now or later, must be out of reach of other boots in
Placement from now on, or a boot today takes what a reservation starting
tomorrow was promised. Two kinds of Placement consumers carry it:

* a reservation's *hold* (consumer: the reservation id), while it is
  active and, after its end, while instances booted into it still run:
  its slots' VCPU, MEMORY_MB and DISK_GB, less the 1 MB ticket each of
  its boots takes (see cloud.resources), up to each class's max_unit
  (slots are instances, whose sum may exceed it; one allocation may
  not);
* a provider's *promise* (consumer: a uuid derived from the provider's):
  per class, the peak over every moment from now on of the instance
  reservations' claims on it, less what their holds carry now (so it
  carries what a hold could not). With it,
  what boots outside reservations may take never exceeds the capacity
  less that peak, which is exactly what keeps every promise.

A promise only shrinks as time passes, so one that is stale holds too
much, never too little; it is written again whenever a reservation is
admitted, changed, started or ended. Each write reads the consumers'
generations first and the ledger after, and writes every consumer
concerned in one request under those generations (Placement's
POST /allocations), so concurrent writers retry rather than undo each
other, and starting a reservation moves its capacity from the promise to
its hold without a moment where a boot could slip in between. A change
of a reservation not started yet is written before the ledger's (see
``proposed``): Placement holds the new claim before the old is let go.
"""

import collections
import random
import time
import uuid

from oslo_log import log as logging
from oslo_utils import timeutils
import tenacity

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)

_NAMESPACE = uuid.UUID('3f1f8b57-1c0e-4c8e-a8c4-2a7d4b9e51c1')
_RETRIES = 10
# The most allocations one provider's promise is written in (pieces).
_MAX_PIECES = 64
# Seconds, times the attempt: the most a writer waits after a conflict.
_BACKOFF = 0.05
_RANDOM = random.Random()
_sleep = time.sleep


_TAKEN = 'instances running outside reservations use that capacity'
# Placement's words when an allocation breaks min_unit, max_unit or
# step_size: its inventory changed since the ledger's plan.
_BROKEN_UNIT = ("an allocation would break the inventory's min_unit, "
                "max_unit or step_size")


class NoRoomInPlacement(exception.Conflict):
    """Placement refused: boots outside reservations hold the capacity

    (or, ``why`` says, an inventory's unit rules changed under the plan).
    """
    msg_fmt = ('Placement has no room for it on %(providers)s: %(why)s. '
               '(%(detail)s)')

    def __init__(self, message=None, why=_TAKEN, **kwargs):
        super().__init__(message, why=why, **kwargs)


def promise_consumer(provider_uuid, piece=0):
    """The Placement consumer of a provider's promise: of its first

    allocation, or of its ``piece``-th (see pieces).
    """
    name = '%s/%d' % (provider_uuid, piece) if piece else provider_uuid
    return str(uuid.uuid5(_NAMESPACE, name))


def pieces_there(provider_uuid, consumers):
    """The consumers of a provider's promise among ``consumers`` (those

    with allocations on it). Every write of a promise makes its first n
    pieces and drops the others, in one request: the pieces there are
    always the first few.
    """
    found = set()
    for k in range(_MAX_PIECES):
        piece = promise_consumer(provider_uuid, k)
        if piece not in consumers:
            return found
        found.add(piece)
    return found


def pieces(amounts, max_units):
    """``amounts`` ({class: n}) cut into allocations Placement takes:

    [{class: n}], each n within its class's max_unit (``max_units``),
    the first the largest. Placement refuses an allocation over max_unit,
    which for a host's VCPU is its core count: below what the host holds
    once overcommitted, and below what a busy host may be promised. Past
    _MAX_PIECES the last piece takes the rest (and Placement refuses it).
    """
    cut = []
    for rc, n in sorted(amounts.items()):
        unit = max(1, max_units.get(rc) or n)
        k = 0
        while n > 0:
            if k == len(cut):
                cut.append({})
            take = n if k == _MAX_PIECES - 1 else min(unit, n)
            cut[k][rc] = take
            n -= take
            k += 1
    return cut


def _peak(intervals):
    """The highest sum of the [start, end) intervals' amounts at once."""
    events = []
    for start, end, used in intervals:
        events.append((end, 0, -used))
        events.append((start, 1, used))
    # At one moment, what ends goes before what starts (half-open).
    events.sort(key=lambda e: (e[0], e[1]))
    peak = level = 0
    for _moment, _kind, delta in events:
        level += delta
        peak = max(peak, level)
    return peak


def _highest(intervals):
    """One claimer's [start, end) intervals as the highest of them at

    each moment: its claim before a change and after, which Placement
    holds both of while the change is made, but never both at once.
    """
    cuts = sorted({moment for start, end, _u in intervals
                   for moment in (start, end)})
    found = []
    for start, end in zip(cuts, cuts[1:]):
        used = max((u for s, e, u in intervals if s <= start and end <= e),
                   default=0)
        if used:
            found.append((start, end, used))
    return found


def _capped(max_units, rp, rc, n):
    """n, within what one allocation of ``rc`` on ``rp`` may take."""
    return min(n, max_units.get(rp, {}).get(rc) or n)


def carried(holds, claims, max_units):
    """{reservation id: {provider: {class: n}}}: what each hold being

    written carries itself. A reservation's slots are instances, so its
    claim on a provider may exceed max_unit, which its hold (one
    allocation a provider) may not: the hold carries the claim up to
    max_unit, less the tickets its amounts leave out, and the provider's
    promise the rest (see promised).
    """
    claimed = {(rid, rp, rc): used
               for rp, rc, _s, _e, used, rid in claims if rid in holds}
    found = {}
    for rid, (amounts, _end) in holds.items():
        found[rid] = {}
        for rp, resources_ in amounts.items():
            part = {}
            for rc, n in resources_.items():
                claim = claimed.get((rid, rp, rc), n)
                over = claim - _capped(max_units, rp, rc, claim)
                part[rc] = _capped(max_units, rp, rc, max(0, n - over))
            part = {rc: n for rc, n in part.items() if n}
            if part:
                found[rid][rp] = part
    return found


def promised(claims, now, holds, placed, proposed=None, max_units=None,
             summed=None):
    """{provider: {class: n}} each provider's promise must carry.

    :param claims: res_db.claims_on rows
    :param holds: {reservation id: ({provider: {class: n}}, end)} of the
        holds being written (end None: open-ended), which stand for their
        claims in the ledger; empty amounts: the hold is dropped, and its
        claim, if any is left, is promised
    :param placed: {provider: consumers with allocations there}: a
        started claim whose hold Placement has is carried by it, whatever
        the reservation's state says (a start writes the hold before it
        records the state, and a start cut short by a crash leaves it)
    :param proposed: {reservation id: ({provider: {class: n}}, start,
        end)}: claims of reservations not started yet, about to replace
        theirs in the ledger; promised as the higher of the two at each
        moment
    :param max_units: {provider: {class: max_unit}}: what a hold carries
        of a claim over max_unit is promised (see carried)
    :param summed: {(provider, class): UsageSteps} of the claims of any
        other consumer, summed (res_db.claims_on names the consumers of
        holds, proposed and placed): where nothing else is on a class,
        its peak is the steps' own
    """
    proposed = proposed or {}
    max_units = max_units or {}
    spans = collections.defaultdict(list)
    changing = collections.defaultdict(list)  # (rp, rc, rid): intervals
    held = collections.Counter()
    for rp, rc, start, end, used, rid in claims:
        if rc not in resources.SLOT_CLASSES or (rid in holds
                                                and holds[rid][0]):
            continue
        if rid in proposed:
            changing[rp, rc, rid].append((max(start, now), end, used))
        else:
            spans[rp, rc].append((max(start, now), end, used))
        # Its hold is there: it carries the claim from now, whatever the
        # claim's start says (an update that starts an active claim again
        # "now" may have a now a second after ours). A hold being dropped
        # carries nothing: its claim is promised.
        if rid in placed.get(rp, ()) and rid not in holds:
            # Its hold and the tickets its boots take, within max_unit.
            held[rp, rc] += _capped(max_units, rp, rc, used)
    holds_carry = carried(holds, claims, max_units)
    for rid, (amounts, end) in holds.items():
        for rp, resources_ in amounts.items():
            for rc, used in resources_.items():
                spans[rp, rc].append((now, end or window_mod.FOREVER, used))
                held[rp, rc] += holds_carry[rid].get(rp, {}).get(rc, 0)
    for rid, (amounts, start, end) in proposed.items():
        for rp, resources_ in amounts.items():
            for rc, used in resources_.items():
                if rc in resources.SLOT_CLASSES and end > now:
                    changing[rp, rc, rid].append((max(start, now), end,
                                                  used))
    for (rp, rc, _rid), intervals in changing.items():
        spans[rp, rc].extend(_highest(intervals))
    peaks = {}
    for (rp, rc), steps in (summed or {}).items():
        if rc not in resources.SLOT_CLASSES:
            continue
        if (rp, rc) in spans:
            spans[rp, rc].extend(_intervals(steps, now))
        else:
            peaks[rp, rc] = steps.peak(now, window_mod.FOREVER)[0]
    peaks.update((key, _peak(intervals)) for key, intervals in spans.items())
    found = collections.defaultdict(dict)
    for (rp, rc), peak in peaks.items():
        extra = peak - held[rp, rc]
        if extra > 0:
            found[rp][rc] = extra
    return dict(found)


def _intervals(steps, now):
    """UsageSteps from now on as [start, end) intervals of their level."""
    moments = steps.between(now, window_mod.FOREVER)
    moments.append((window_mod.FOREVER, 0))
    return [(start, end, level)
            for (start, level), (end, _next) in zip(moments, moments[1:])
            if level > 0]


class Promises:
    """Writes holds and promises to Placement (cloud.resources client)."""

    def __init__(self, placement, context):
        self.placement = placement
        self.context = context

    def sync(self, providers, holds=None, project_id=None, proposed=None):
        """Write the promises of ``providers`` and the given holds.

        :param holds: {reservation id: ({provider: {class: n}}, end)};
            empty amounts drop a hold
        :param project_id: Placement's project of the holds
        :param proposed: claims about to change (see promised), written
            before the ledger's change so that Placement holds the new
            claim before the old one is let go
        Raises NoRoomInPlacement when Placement has no room for them,
        ConcurrentUpdateDetected when other writers kept moving the
        generations.
        """
        holds = holds or {}
        providers = set(providers)
        for amounts, _end in holds.values():
            providers.update(amounts)
        for amounts, _start, _end in (proposed or {}).values():
            providers.update(amounts)

        def give_up(_state):
            # A lost race, as the ledger's own: an admission plans again,
            # an update or a refused request says so with 409 (not a 500).
            raise exception.ConcurrentUpdateDetected(
                attempts=_RETRIES, providers=', '.join(sorted(providers)))

        tenacity.Retrying(
            stop=tenacity.stop_after_attempt(_RETRIES),
            retry=tenacity.retry_if_result(lambda written: not written),
            # Apart from the other writers, which read again as well.
            wait=lambda state: _RANDOM.uniform(
                0, _BACKOFF * state.attempt_number),
            sleep=lambda seconds: _sleep(seconds),  # a test patches _sleep
            retry_error_callback=give_up)(
                self._write, providers, holds, project_id, proposed)

    def _write(self, providers, holds, project_id, proposed):
        """One attempt of sync: True once written (or nothing to write),

        False when a concurrent writer moved a generation read.
        """
        # Generations first: of each provider's first piece, which a
        # write of its promise that moves a hold rewrites, and of the
        # holds being written. Then who is on the providers (the
        # pieces there, which holds Placement has); the ledger last.
        # A write made after the first read moves a generation ours
        # is made under: ours fails, and we read again. Read after
        # who is there, a write between went unseen and unrefused,
        # and ours asked Placement for its hold a second time.
        first = {promise_consumer(rp) for rp in providers}
        current = {c: self.placement.allocations_of(c)
                   for c in list(first) + list(holds)}
        placed = {rp: self.placement.consumers_on(rp)
                  for rp in providers}
        # The pieces there now, and the first, which may be new.
        consumers = first.union(*(
            pieces_there(rp, placed[rp]) for rp in providers))
        current.update((c, self.placement.allocations_of(c))
                       for c in consumers - current.keys())
        now = timeutils.utcnow().replace(microsecond=0)
        # Claims promised needs one by one: the rest come summed.
        named = set(holds).union(proposed or (), *placed.values())
        claims, max_units, summed = res_db.claims_on(
            self.context, providers, now, named)
        wanted = promised(claims, now, holds, placed, proposed,
                          max_units, summed)
        desired = {}
        for rp in providers:
            for k, piece in enumerate(pieces(wanted.get(rp, {}),
                                             max_units.get(rp, {}))):
                desired[promise_consumer(rp, k)] = {rp: piece}
        writes = {}
        for consumer in consumers | set(desired):
            amounts = desired.get(consumer, {})
            generation, had = current.get(consumer, (None, {}))
            if amounts != had:
                writes[consumer] = (generation, amounts,
                                    resources.HOLD_PROJECT)
        for rid, amounts in carried(holds, claims, max_units).items():
            if amounts != current[rid][1]:
                writes[rid] = (current[rid][0], amounts,
                               project_id or resources.HOLD_PROJECT)
        if not writes:
            return True
        try:
            if self.placement.write_allocations(writes):
                return True
        except placement_client.PlacementFailure as e:
            if e.kwargs.get('status') == 409:
                named = resources.providers_named(e) & providers
                self._log_refusal(named or providers, writes, placed,
                                  wanted, claims)
                body = e.kwargs.get('body', '')
                raise NoRoomInPlacement(
                    providers=', '.join(sorted(named or providers)),
                    uuids=named, detail=body, why=(
                        _BROKEN_UNIT if 'inventory constraints' in body
                        else _TAKEN))
            raise
        LOG.debug('Concurrent writer on %s; again', sorted(writes))
        return False

    def _log_refusal(self, providers, writes, placed, wanted, claims):
        # What was asked, what was seen before, and what is there now:
        # an operator (or a test) can tell a boot that took the room from
        # a hold nobody accounted for.
        for rp in sorted(providers):
            try:
                there = self.placement.consumers_on(rp)
            except Exception as e:  # noqa: the refusal is what matters
                there = 'unreadable (%s)' % e
            # Info: at admission a refusal is an answer (placed again
            # elsewhere); a start that fails on it logs its error too.
            LOG.info(
                'Placement refused our writes on provider %(rp)s. Wrote: '
                '%(wrote)s; promised: %(wanted)s; claims: %(claims)s; '
                'there before: %(before)s; there now: %(now)s',
                {'rp': rp, 'wanted': wanted.get(rp, {}),
                 'claims': [c[1:] for c in claims if c[0] == rp],
                 'wrote': {c: a.get(rp, {})
                           for c, (_g, a, _p) in writes.items()
                           if rp in a or not a},
                 'before': placed.get(rp), 'now': there})
