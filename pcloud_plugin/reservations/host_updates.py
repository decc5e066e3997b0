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
"""Changes of a pcloud:host reservation (seeds/001).

Before its start anything may change and the hosts are picked again (a
refused change changes nothing); once active the end may move, on the
same hosts, or the amount change (hosts join or leave:
reservations.host_resize); a waiting (IN-PROGRESS) one takes its new
terms and looks again. Mixed into blazar.host_plugin.PcloudHostPlugin,
whose helpers (_admit, _check_quota, _occupants, nova, pools, ...) and
lifecycle (_try_waiting, _held_since) it uses. Refusals are
exception.UpdateRefused, CapacityRefused and InvalidTerm.
"""

from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import timeutils

from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin import exception
from pcloud_plugin.notifications import usage
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import admission
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.reservations import host_resize

LOG = logging.getLogger(__name__)


class Updates(object):

    def change(self, row, params, start, end):
        """Change the reservation of ``row`` to ``params`` (parsed) over

        [start, end).
        """
        ctx = self._ctx()
        reservation_id = row['reservation_id']
        changed = sorted(p for p in asked.STORED if params[p] != row[p])
        if not changed and (start, end) == (row['start_time'],
                                            row['end_time']):
            return
        state = row['state']
        if state in (host_db.TIMEDOUT, host_db.ENDED):
            raise exception.UpdateRefused(
                reason='Host reservation %s (%s) cannot be updated'
                % (reservation_id, state))
        if state == host_db.ACTIVE:
            if changed == ['amount'] and start == row['start_time']:
                # Hosts join or leave (reservations.host_resize).
                return host_resize.resize(self, row, params, end)
            if changed or start != row['start_time']:
                raise exception.UpdateRefused(
                    reason='%s of active host reservation %s cannot be '
                    'updated' % (', '.join(changed) or 'start_date',
                                 reservation_id))
            return self._move_end(row, params, start, end)
        now = timeutils.utcnow().replace(microsecond=0)
        asked.check_type(params, start, now)
        if 'pcloud_id' in changed:
            asked.check_pcloud(self.pools(), params['pcloud_id'],
                               row['project_id'])
        self._check_quota(row['project_id'], params, start, end,
                          exclude=reservation_id)
        fields = dict(params, start_time=start, end_time=end,
                      deadline=asked.deadline(params, start))
        if state == host_db.INACTIVE:
            hosts = self._admit(reservation_id, params, start, end,
                                replace=True,
                                occupants=self._occupants(params))
            host_db.update(ctx, reservation_id, hosts=hosts, **fields)
            return
        if row['hosts']:
            # Other projects' instances are moving off the hosts it holds.
            raise exception.UpdateRefused(
                reason='Host reservation %s (IN-PROGRESS: other projects\' '
                'instances are moving off its hosts; try again once it is '
                'ACTIVE) cannot be updated' % reservation_id)
        # IN-PROGRESS: record the new terms and look again.
        host_db.update(ctx, reservation_id, **fields)
        self._try_waiting(host_db.get(ctx, reservation_id),
                          self._started(reservation_id))

    def _move_end(self, row, params, start, end):
        """An active reservation's end moves, on the same hosts: in the

        ledger's claim and in the window the PcloudFilter reads.
        """
        ctx = self._ctx()
        reservation_id = row['reservation_id']
        if end > row['end_time']:
            self._check_quota(row['project_id'], params, start, end,
                              exclude=reservation_id)

        def claim(until):
            try:
                host_db.claim_hosts(
                    ctx, reservation_id,
                    [h['host_uuid'] for h in row['hosts']],
                    row['start_time'], until, replace=True)
            except admission.LOST_RACE as e:
                LOG.info('Reservation %s cannot end at %s: %s',
                         reservation_id, until, e)
                # Not e's message: it names a real host (seeds/000).
                raise exception.CapacityRefused(
                    'Cannot move the end of reservation %s to %s: '
                    'another reservation holds one of its hosts before '
                    'then.' % (reservation_id, until))

        def window(until):
            # The end the PcloudFilter lets boots in until.
            if not row['aggregate_id']:
                return
            try:
                self.nova().aggregates.set_metadata(
                    row['aggregate_id'], codec.lease_window_metadata(
                        row['pcloud_id'], row['start_time'], until))
            except Exception as e:
                LOG.exception('Could not end reservation %s at %s in '
                              'Nova', reservation_id, until)
                raise exception.UpdateRefused(
                    reason='Nova failed while moving the end of '
                    'reservation %s; try again: %s' % (reservation_id, e))

        # The filter's end must never pass the claim's: a later end is
        # claimed before Nova has it, an earlier one goes to Nova
        # first. The first step is undone if the second fails: a
        # refused update (409) leaves the lease as it was.
        first, then = ((claim, window) if end > row['end_time']
                       else (window, claim))
        first(end)
        try:
            then(end)
        except Exception:
            with excutils.save_and_reraise_exception():
                try:
                    first(row['end_time'])
                except Exception:
                    LOG.exception('Could not undo the new end of '
                                  'reservation %s', reservation_id)
        host_db.update(ctx, reservation_id, end_time=end)
        # Same hosts, held on: the interval stays open.
        self.notifier.host_reservation(
            host_db.get(ctx, reservation_id), host_db.ACTIVE,
            held_from=self._held_since(row),
            event_type=usage.HOST_UPDATE)
