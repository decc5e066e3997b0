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
"""Where a virtual:instance reservation's slots go, and its claim there.

Every placing of instance slots is here: a new reservation's admission
(``claim``), a change before its start (``claim_again``), and slots added
beside those it holds (``claim_beside``: an active reservation that
grows, healing moving slots off a failed host). Each lays the slots out
with reservations.slots over the ledger's window and claims them in one
generation compare-and-swap; a plan that lost its race is made again
(reservations.admission). A reservation not started yet is held in
Placement too (cloud.promises); the hosts Placement refuses are left out
of the next plan.
"""

from oslo_log import log as logging

from pcloud_plugin.cloud import promises as promises_mod
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import admission
from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import slots as slots_mod

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# What a claim raises when its plan is to be made again: a lost race in
# the ledger, or no room in Placement for the hold beside it.
_PLAN_AGAIN = admission.LOST_RACE + (promises_mod.NoRoomInPlacement,)


def _short_hosts(plan, error):
    """The hosts of ``plan`` that ``error`` found short: the ledger's

    provider that lost the race, or the providers Placement refused.
    """
    if isinstance(error, promises_mod.NoRoomInPlacement):
        short = error.kwargs['uuids']
    else:
        short = [error.kwargs.get('provider')]
    return {plan.roots[rp] for rp in short if rp in plan.roots}


def slot_request(params, exclusions, aggregate_zones, amount=None):
    """The slots.SlotRequest of a virtual:instance reservation's

    parameters, with admission's exclusions (see SlotClaims).
    """
    properties = host_properties.parse(params['resource_properties'])
    aggregates, hosts = exclusions()
    member_of = ()
    zone = params.get('availability_zone')
    if zone:
        member_of, outside = slots_mod.zone_aggregates(
            aggregate_zones(), zone, CONF.pcloud.default_availability_zone)
        aggregates = frozenset(aggregates) | outside
    return slots_mod.SlotRequest(
        slots_mod.per_slot(params), amount or params['amount'],
        affinity=params['affinity'], required=properties.required,
        forbidden=properties.forbidden, forbidden_aggregates=aggregates,
        excluded_hosts=hosts, member_of=member_of,
        hosts_matching=properties.hosts_matching)


class SlotClaims:
    """The placing and claiming of instance slots, in one context.

    :param ctx: the ledger's context
    :param promises: what writes Placement's holds (cloud.promises)
    :param mirror: the Placement mirror (cloud.mirror), asked whether
        Placement moved under a plan
    :param exclusions: () -> (aggregate uuids, host names) no instance
        slot may use (pclouds, host flavor pools)
    :param aggregate_zones: () -> [(aggregate uuid, its availability
        zone or None)], for a reservation that names a zone
    :param explain_usage: whether a refusal may say when other
        reservations hold the capacity (the caller is an admin)
    """

    def __init__(self, ctx, promises, mirror, exclusions,
                 explain_usage=False, aggregate_zones=list):
        self.ctx = ctx
        self.promises = promises
        self.mirror = mirror
        self.exclusions = exclusions
        self.aggregate_zones = aggregate_zones
        self.explain_usage = explain_usage

    def request(self, params, amount=None):
        """The slots.SlotRequest of a reservation's parameters."""
        return slot_request(params, self.exclusions, self.aggregate_zones,
                            amount)

    def place(self, request, start, end, discounted=None, consumer=None,
              **kwargs):
        """A slots.Plan for the window, or a refusal that explains.

        discounted: the claims of consumer, taken out of the usage.
        A new reservation's slots are laid from the ledger's slot index
        where it can tell (slots.place_indexed), else, and for every
        refusal, by the engine on the window's forest.
        """
        max_candidates = CONF.pcloud_instance.max_candidates
        if not discounted and set(kwargs) <= {'avoid_hosts'}:
            try:
                plan = slots_mod.place_indexed(
                    db_snapshots.load_slot_index(self.ctx), request, start,
                    end, max_candidates=max_candidates, **kwargs)
            except slots_mod.SlotsUnavailable:
                plan = None     # the engine says why
            if plan is not None:
                return plan
        forest = db_snapshots.load_forest(self.ctx, start, end)
        if discounted:
            forest = slots_mod.discount(forest, discounted)
        try:
            return slots_mod.place(forest, request,
                                   max_candidates=max_candidates, **kwargs)
        except slots_mod.SlotsUnavailable as e:
            raise exception.CapacityRefused(self._refusal(
                forest, request, start, end, e.message, consumer))

    def _refusal(self, forest, request, start, end, why, consumer):
        """Say what was short, and in which part of the window."""
        short = slots_mod.slot_shortage(forest, request)
        rc, providers = short.rc, short.providers
        message = ('Cannot reserve %s from %s to %s: %s Most short: %s'
                   % (request.describe(), start, end, why, short.describe()))
        if not self.explain_usage:
            # What other projects hold, and when, is for admins to see.
            return message
        steps = res_db.usage_steps(self.ctx, rc, start, end, providers,
                                   exclude_consumer=consumer)
        peak = max(used for _at, used in steps)
        if peak:
            bounds = [moment for moment, _u in steps[1:]] + [end]
            busiest = [(moment, bounds[i])
                       for i, (moment, used) in enumerate(steps)
                       if used == peak]
            message += (' Busiest from %s to %s, when other reservations '
                        'hold %d of it.' % (busiest[0] + (peak,)))
        return message

    @staticmethod
    def _races(consumer, lost_on=_PLAN_AGAIN):
        return admission.Races(CONF.pcloud_instance.admission_retries + 1,
                               consumer, lost_on=lost_on)

    @staticmethod
    def _out_of_races(what, request, start, end, races):
        """The refusal once every plan lost its race."""
        last = races.last
        if isinstance(last, promises_mod.NoRoomInPlacement):
            return exception.CapacityRefused('%s: %s' % (what, last.message))
        # The ledger's refusal names a provider and its usage: the log's.
        LOG.info('Reserving %s from %s to %s lost every race; last: %s',
                 request.describe(), start, end, last.message)
        return exception.CapacityRefused(
            'Cannot reserve %s from %s to %s: concurrent leases kept taking '
            'the capacity it was placed on.'
            % (request.describe(), start, end))

    def claim(self, consumer, request, start, end, first=None):
        """Place and claim, again from a fresh read while concurrent

        leases win the race for the capacity a plan was made on. first:
        a plan made already (Blazar asked for the candidates before).
        """
        avoid, fresh = set(), None
        races = self._races(consumer)
        for race in races:
            try:
                plan = first or self.place(request, start, end,
                                           avoid_hosts=avoid)
            except exception.CapacityRefused as e:
                if isinstance(races.last, promises_mod.NoRoomInPlacement):
                    # The ledger's answer without the hosts Placement
                    # refused, and why Placement did.
                    raise exception.CapacityRefused(
                        '%s %s' % (e, races.last.message))
                raise
            first = None
            if fresh is None:
                # Freshness: what Placement changed on these providers
                # since the mirror last read them is in the ledger now.
                fresh = not self.mirror.refresh(self.ctx, plan.amounts)
                if not fresh:
                    plan = self.place(request, start, end,
                                      avoid_hosts=avoid)
            with race:
                db_claims.claim(self.ctx, consumer, plan.amounts, start, end,
                                unit=request.resources)
                try:
                    # Placement holds it from now on, unless instances
                    # that run outside reservations took it: then
                    # elsewhere.
                    self.promises.sync(plan.amounts)
                except Exception as e:
                    # Claimed only if Placement holds it too: the next
                    # attempt (other writers got there first, or no room
                    # here) claims anew.
                    db_claims.release(self.ctx, consumer)
                    if isinstance(e, promises_mod.NoRoomInPlacement):
                        LOG.info('Placement has no room for %s: %s',
                                 consumer, e.message)
                        avoid |= _short_hosts(plan, e)
                    raise
                return plan
        raise self._out_of_races(
            'Cannot reserve %s from %s to %s'
            % (request.describe(), start, end), request, start, end, races)

    def claim_again(self, row, params, changed, start, end, held, written):
        """Change the claim of a reservation not started yet; its new

        slots (None: the same).

        Placement is asked first to hold the new claim beside the old
        (the higher of the two at each moment), and the ledger's claim
        changes after, by compare-and-swap: the old claim is never let
        go before Placement holds the new one, so no refusal has to put
        back a claim whose capacity others may have taken meanwhile.
        ``written`` gathers the providers whose promises were written:
        the caller writes them again as the ledger ends up.
        """
        rid = row['reservation_id']
        unit = slots_mod.per_slot(params)

        def move(amounts):
            written.update(amounts)
            self.promises.sync(written, proposed={
                rid: (amounts, start, end)})
            db_claims.change_claim(self.ctx, rid, amounts=amounts,
                                   start=start, end=end, unit=unit)

        if not changed:
            try:
                move(held['amounts'])
                return None
            except exception.PLAN_OUTDATED + (
                    promises_mod.NoRoomInPlacement,):
                pass  # the slots' hosts are busy then: place them anew
        overlaps = held['start'] < end and (
            held['end'] is None or start < held['end'])
        request = self.request(params)
        preferred = [s['host_uuid'] for s in row['slots']]
        avoid = set()
        races = self._races(rid)
        for race in races:
            plan = self.place(
                request, start, end,
                discounted=held['amounts'] if overlaps else None,
                consumer=rid, preferred=preferred, avoid_hosts=avoid)
            with race:
                move(plan.amounts)
                return plan.slots()
            # Taking our own claim out of the peaks was optimistic there,
            # or boots outside reservations hold it: look elsewhere.
            avoid |= _short_hosts(plan, races.last)
        raise self._out_of_races('Cannot change reservation %s' % rid,
                                 request, start, end, races)

    def claim_beside(self, rid, request, start, end, held, kept, where):
        """Place ``request`` beside the claim ``kept`` and claim both.

        held: the reservation's claim now (taken out of the usage, so
        its own hosts count as free for it); kept: the part of it that
        stays ({provider: {class: n}}); where: placing arguments
        (only_hosts, avoid_hosts, preferred). The plan of the new slots.
        """
        races = self._races(rid, lost_on=admission.LOST_RACE)
        for race in races:
            plan = self.place(request, start, end,
                              discounted=held['amounts'], consumer=rid,
                              held=kept, **where)
            with race:
                db_claims.change_claim(
                    self.ctx, rid, start=start, end=end,
                    amounts=slots_mod.merged_amounts(kept, plan.amounts),
                    unit=request.resources)
                return plan
        raise self._out_of_races('Cannot change reservation %s' % rid,
                                 request, start, end, races)
