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
"""Changes of a virtual:instance reservation: its window, amount or

flavor, before its start or while it runs (seeds/003).

Mixed into blazar.instance_plugin.VirtualInstancePlugin beside
instance_lifecycle.Lifecycle, whose helpers (_hold, _place_slots,
_shrink_back, _notify_change) it uses; Blazar's state of the reservation
is read through the plugin's ``_started`` and ``_in_error``, its display
record written through ``_show``, Nova's quota of the project through
``_nova_quota``. Refusals are exception.UpdateRefused, CapacityRefused,
QuotaRefused and InvalidTerm (the plugin answers them as Blazar does).
"""

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.cloud import promises
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin import quota
from pcloud_plugin.reservations import slots as slots_mod

LOG = logging.getLogger(__name__)


class Updates(object):

    def change(self, row, params, start, end):
        """Move or resize the window, change the amount or the flavor.

        params: the reservation's terms as they are to be (parsed);
        start, end: its window as it is to be.
        Before start everything may change and the slots are placed
        again. Once active only the amount may grow (new slots beside the
        ones in use) and the end move; the engine and the ledger check
        each change, and a refused one changes nothing.
        """
        rid = row['reservation_id']
        changed = sorted(p for p in slots_mod.PARAMS
                         if params[p] != row[p])
        if not changed and (start, end) == (row['start_time'],
                                            row['end_time']):
            return
        quota.check_nova_quota(row['project_id'],
                               self._nova_quota(row['project_id']),
                               params, current=row)
        quota.check_instance_update(row, params, start, end)
        if self._in_error(rid):
            raise exception.UpdateRefused(
                reason='Reservation %s is in error and cannot be updated.'
                % rid)
        if self._started(rid):
            self._update_active(row, params, changed, start, end)
        else:
            self._update_pending(row, params, changed, start, end)
        self._show(row['resource_id'],
                   {p: params[p] for p in slots_mod.PARAMS})

    def _update_pending(self, row, params, changed, start, end):
        rid = row['reservation_id']
        held = db_claims.get_claims(self._ctx(), rid)
        written = set(held['amounts'])
        try:
            slots = self.slot_claims().claim_again(
                row, params, changed, start, end, held, written)
        finally:
            self._promise_claims(rid, written)
        res_db.update(self._ctx(), rid, slots=slots, start_time=start,
                      end_time=end, **params)

    def _promise_claims(self, rid, providers):
        """Placement's promises on ``providers`` as the ledger's claims

        are, no longer as a change of ``rid`` proposed them.
        """
        try:
            self.promises().sync(providers)
        except (promises.NoRoomInPlacement,
                exception.ConcurrentUpdateDetected) as e:
            # The ledger's claims stand; the next write of these
            # providers' promises (an admission, change, start or end,
            # or the sweep) writes them as the ledger says.
            LOG.warning('Placement is not yet as the ledger is on %s after '
                        'the change of reservation %s: %s',
                        sorted(providers), rid, e.message)

    def _update_active(self, row, params, changed, start, end):
        rid = row['reservation_id']
        ctx = self._ctx()
        if set(changed) - {'amount'}:
            raise exception.UpdateRefused(
                reason='Only the amount of an active instance reservation '
                'can change, not %s.' % ', '.join(
                    c for c in changed if c != 'amount'))
        extra = params['amount'] - row['amount']
        if extra < 0:
            raise exception.UpdateRefused(
                reason='The amount of an active instance reservation can '
                'only grow (%d slots may be in use).' % row['amount'])
        held = db_claims.get_claims(ctx, rid)
        if not extra:
            # Only the end moves. The claim's past is billed and over: it
            # starts again now; an end at now or earlier (Blazar's "now"
            # is this minute) is an early end, whose end event, moved
            # with it, comes due at once.
            now = timeutils.utcnow().replace(microsecond=0)
            if end > now:
                start = at = now
            elif end > held['start']:
                start, at = held['start'], end
            else:
                raise exception.InvalidTerm(
                    param='end_date (reservation %s holds capacity since '
                          '%s: it can end after that at the earliest)'
                          % (rid, held['start']))
            try:
                db_claims.change_claim(ctx, rid, start=start, end=end,
                                       unit=slots_mod.per_slot(row))
            except exception.PLAN_OUTDATED as e:
                raise exception.CapacityRefused(
                    'Cannot move reservation %s to end at %s: %s'
                    % (rid, end, e.message))
            try:
                self._hold(dict(row, end_time=end))
            except (promises.NoRoomInPlacement,
                    exception.ConcurrentUpdateDetected) as e:
                if held['end'] is not None and end <= held['end']:
                    # An earlier end stands: Placement holds too much
                    # until its next write, never too little, and what
                    # the claim let go may be another lease's already.
                    LOG.warning('Placement keeps the hold of reservation '
                                '%s as it was before its end moved to %s '
                                'until its next write: %s', rid, end,
                                e.message)
                else:
                    db_claims.change_claim(ctx, rid, start=held['start'],
                                           end=held['end'],
                                           unit=slots_mod.per_slot(row))
                    raise exception.CapacityRefused(
                        'Cannot move reservation %s to end at %s: %s'
                        % (rid, end, e.message))
            res_db.update(ctx, rid, end_time=end)
            self._notify_change(row, held, at)
            return
        # The past is over: slots added now need room from now on only.
        start = max(start, timeutils.utcnow().replace(microsecond=0))
        if end <= start:
            raise exception.InvalidTerm(
                param='end_date (slots added to an active reservation '
                      'need an end after now)')
        hosts = {s['host_uuid'] for s in row['slots']}
        where = {True: {'only_hosts': hosts},
                 False: {'avoid_hosts': hosts},
                 None: {'preferred': sorted(hosts)}}[params['affinity']]
        slot_claims = self.slot_claims()
        plan = slot_claims.claim_beside(
            rid, slot_claims.request(params, amount=extra), start, end,
            held, held['amounts'], where)
        grown = slots_mod.grown(row['slots'], plan)
        res_db.update(ctx, rid, slots=grown, end_time=end,
                      amount=params['amount'])
        try:
            self._place_slots(res_db.get(ctx, rid))
        except Exception as e:
            LOG.exception('Could not grow reservation %s in Nova or '
                          'Placement; undoing it', rid)
            db_claims.change_claim(ctx, rid, amounts=held['amounts'],
                                   start=held['start'], end=held['end'],
                                   unit=slots_mod.per_slot(row))
            res_db.update(ctx, rid, slots=row['slots'],
                          end_time=row['end_time'], amount=row['amount'])
            self._shrink_back(row, grown)
            raise exception.UpdateRefused(
                reason='Growing reservation %s failed in Nova or Placement '
                'and was undone: %s' % (rid, e))
        self._notify_change(row, held, start)
