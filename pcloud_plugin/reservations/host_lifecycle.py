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
"""The life of a pcloud:host reservation after admission: hosts joining

the pcloud and the lease's aggregate at start, leaving them at end, and
what crashes left halfway (reconcile, sweep). Mixed into
blazar.host_plugin.PcloudHostPlugin, whose helpers (nova, pclouds,
_ctx, _mark_reservation, _notify, ...) it uses; Blazar's leases and
events are reached through the plugin's ``reconciler`` port
(blazar.reconcile). A start or end that fails raises
exception.EventFailed: the adapter's on_start/on_end make it Blazar's.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.cloud import patience
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage_records
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import service as pcloud_service
from pcloud_plugin.reservations import healing
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.reservations import host_resize
from pcloud_plugin.reservations import registry

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# The lease's own aggregate (seeds/001): its name and metadata keys.
AGGREGATE_PREFIX = 'pcloud-lease:'
FILTER_KEY = 'filter_lease_id'
RESERVATION_KEY = 'pcloud:reservation_id'


class Lifecycle(object):

    def _lease_aggregate(self, row):
        if row['aggregate_id']:
            return row['aggregate_id']
        faults.step(intents.LEASE_START, 'aggregate')
        nova_objects = resources.NovaObjects(self.nova())
        # The window too: the PcloudFilter lets boots in only within it.
        metadata = codec.lease_window_metadata(
            row['pcloud_id'], row['start_time'], row['end_time'])
        metadata.update({FILTER_KEY: row['lease_id'],
                         RESERVATION_KEY: row['reservation_id']})
        aggregate_id = nova_objects.create_aggregate(
            AGGREGATE_PREFIX + row['reservation_id'], metadata)
        host_db.update(self._ctx(), row['reservation_id'],
                       aggregate_id=aggregate_id)
        row['aggregate_id'] = aggregate_id
        return aggregate_id

    def _join(self, row):
        """Put the hosts in the pcloud (named, enabled) and the lease's

        aggregate; each host is recorded as it joins.
        """
        nova = self.nova()
        pcloud = self.pools().pclouds.get(row['pcloud_id'])
        if pcloud is None:
            raise exception.PcloudNotFound(pcloud_id=row['pcloud_id'])
        lease_agg = self._lease_aggregate(row)
        for host in row['hosts']:
            if not host['joined']:
                # The names first, so the pcloud knows the host as it
                # joins; forgotten again if it cannot join.
                names = {codec.host_key(host['name']): host['host_name'],
                         codec.host_state_key(host['host_name']):
                             codec.ENABLED}
                faults.step(intents.LEASE_START, 'name')
                nova.aggregates.set_metadata(pcloud.id, names)
                try:
                    faults.step(intents.LEASE_START, 'add')
                    self._add_host(pcloud.id, host['service_host'])
                except Exception:
                    try:
                        nova.aggregates.set_metadata(
                            pcloud.id, dict.fromkeys(names))
                    except Exception:
                        LOG.exception('Could not forget host %s in pcloud '
                                      '%s', host['name'], row['pcloud_id'])
                    raise
                faults.step(intents.LEASE_START, 'joined')
                host_db.set_joined(self._ctx(), row['reservation_id'],
                                   host['host_uuid'], True)
                host['joined'] = True
            # The pcloud's allocation ratios while it is in it (again
            # after a crash: it is safe to).
            self.pclouds().lend_ratios(pcloud, host['host_name'])
            faults.step(intents.LEASE_START, 'lease-aggregate')
            self._add_host(lease_agg, host['service_host'])

    def _add_host(self, aggregate_id, host):
        try:
            self.nova().aggregates.add_host(aggregate_id, host)
        except nova_client.Conflict:
            pass  # already a member

    def _leave(self, row):
        """Disable the hosts, take them out of the pcloud and delete the

        lease's aggregate. True when all is done; what failed is retried
        by sweep(). Their instances keep running.
        """
        nova = self.nova()
        done = True
        try:
            pcloud = self.pools().pclouds.get(row['pcloud_id'])
        except Exception:
            # Nova down: nothing is taken out yet, sweep() does it all.
            LOG.exception('Could not read pcloud %s to take the hosts of '
                          'reservation %s out', row['pcloud_id'],
                          row['reservation_id'])
            return False
        for host in row['hosts']:
            if not host['joined']:
                if pcloud is not None and not self._forget_unjoined(
                        pcloud, host):
                    done = False
                continue
            try:
                if pcloud is not None:
                    faults.step(intents.LEASE_END, 'disable')
                    nova.aggregates.set_metadata(pcloud.id, {
                        codec.host_state_key(host['host_name']):
                            codec.DISABLED})
                    self.pclouds().restore_ratios(pcloud,
                                                  host['host_name'])
                    faults.step(intents.LEASE_END, 'remove')
                    try:
                        nova.aggregates.remove_host(pcloud.id,
                                                    host['service_host'])
                    except nova_client.NotFound:
                        pass
                    faults.step(intents.LEASE_END, 'forget')
                    nova.aggregates.set_metadata(pcloud.id, {
                        codec.host_key(host['name']): None,
                        codec.host_state_key(host['host_name']): None})
                faults.step(intents.LEASE_END, 'left')
                host_db.set_joined(self._ctx(), row['reservation_id'],
                                   host['host_uuid'], False)
                host['joined'] = False
            except Exception:
                LOG.exception('Could not take host %s of reservation %s out '
                              'of pcloud %s', host['name'],
                              row['reservation_id'], row['pcloud_id'])
                done = False
        if row['aggregate_id']:
            try:
                faults.step(intents.LEASE_END, 'aggregate')
                resources.NovaObjects(nova).delete_aggregate(
                    row['aggregate_id'])
                host_db.update(self._ctx(), row['reservation_id'],
                               aggregate_id=None)
            except Exception:
                LOG.exception('Could not delete aggregate %s of reservation '
                              '%s', row['aggregate_id'],
                              row['reservation_id'])
                done = False
        return done

    def _forget_unjoined(self, pcloud, host):
        """Forget the names a join that failed wrote for a host that is

        not in the pcloud (its own rollback may have failed too).
        """
        key = codec.host_key(host['name'])
        if (pcloud.metadata.get(key) != host['host_name']
                or host['service_host'] in (pcloud.hosts or ())):
            return True
        try:
            self.pclouds().restore_ratios(pcloud, host['host_name'])
            self.nova().aggregates.set_metadata(pcloud.id, {
                key: None, codec.host_state_key(host['host_name']): None})
        except Exception:
            LOG.exception('Could not forget host %s in pcloud %s',
                          host['name'], pcloud.id)
            return False
        return True

    def _activate(self, row, previous=None):
        """Put the hosts in the pcloud, once a BEST-EFFORT reservation's

        are empty of other projects' instances; returns the new state.
        """
        rid = row['reservation_id']
        ctx = self._ctx()
        waiting, row = patience.patiently(
            'Emptying the hosts of reservation %s' % rid, self._hosts_ready,
            rid, previous or row['state'], previous or host_db.INACTIVE)
        if waiting:
            return waiting
        try:
            patience.patiently('Starting host reservation %s' % rid,
                               self._join, row)
        except Exception as e:
            LOG.exception('Starting reservation %s failed; undoing it', rid)
            self._leave(host_db.get(ctx, rid))
            raise exception.EventFailed(
                error='Nova failed while starting host reservation %s: %s'
                      % (rid, e))
        faults.step(intents.LEASE_START, 'active')
        host_db.update(ctx, rid, state=host_db.ACTIVE)
        self._mark_reservation(rid, missing_resources=False)
        self._notify(rid, previous or row['state'],
                     held_from=self._held_since(row))
        return host_db.ACTIVE

    def _hosts_ready(self, rid, state, waits_from):
        """(None, the record) once the reservation's hosts run no other

        project's instance; (the state it waits in, None) while they are
        being emptied or other hosts awaited.
        """
        # Read again at each try: one cut short may have moved them.
        row = host_db.get(self._ctx(), rid)
        occupants = self._movers(row)
        if occupants is not None:
            return self._vacate(row, occupants, state)
        row = self._empty_hosts(row)
        if row is None:
            # BEST-EFFORT: other hosts may come free before its end.
            return self._wait_for_hosts(rid, waits_from), None
        return None, row

    def _row(self, resource_id):
        try:
            return host_db.get(self._ctx(), resource_id)
        except host_db.HostReservationNotFound as e:
            raise exception.EventFailed(error=e.message)

    def _record(self, operation, row):
        self.reconciler.record_event(
            self._ctx(), operation, row['reservation_id'], row['lease_id'],
            self.resource_type)

    def start_reservation(self, resource_id):
        self._end_overdue()
        row = self._row(resource_id)
        self._record(intents.LEASE_START, row)
        if row['state'] == host_db.INACTIVE:
            try:
                self._activate(row)
            except exception.CapacityRefused as e:
                # Too few empty hosts for it (reservations.host_vacate).
                raise exception.EventFailed(error=e.message) from e
        elif row['state'] == host_db.ACTIVE:
            # Run again after a crash left Blazar's side unfinished.
            self._join(row)
        elif row['state'] == host_db.IN_PROGRESS:
            if self._try_waiting(row, True) == host_db.TIMEDOUT:
                raise exception.EventFailed(
                    error='%s reservation %s timed out'
                    % (row['lease_type'], resource_id))
        elif row['state'] == host_db.ENDED:
            # Run again (its first run's process died before Blazar
            # marked it done) after our sweep ended it, its end come due.
            LOG.info('Host reservation %s ended before its start ran '
                     'again; nothing to start', resource_id)
        else:
            raise exception.EventFailed(
                error='Host reservation %s cannot start from %s'
                % (resource_id, row['state']))

    def end_reservation(self, resource_id):
        ctx = self._ctx()
        try:
            row = host_db.get(ctx, resource_id)
        except host_db.HostReservationNotFound:
            LOG.info('Host reservation %s is already gone', resource_id)
            return
        if row['state'] == host_db.ENDED:
            return
        self._record(intents.LEASE_END, row)
        self._leave(row)
        if row['state'] == host_db.ACTIVE:
            self._notify_end(row)
        faults.step(intents.LEASE_END, 'release')
        db_claims.release(ctx, resource_id)
        faults.step(intents.LEASE_END, 'ended')
        host_db.update(ctx, resource_id, state=host_db.ENDED)
        if row['state'] != host_db.ACTIVE:
            self._notify(resource_id, row['state'])
        else:
            try:
                self._move_ahead(row)
            except Exception:
                # The next start moves them: its end is done.
                LOG.exception('Could not move what reservation %s left '
                              'on its hosts ahead of the next start',
                              resource_id)
        # Hosts may have come free for those waiting.
        self.retry_waiting()

    def _end_overdue(self):
        """End the reservations whose end came due but that Blazar has

        not begun ending (reconcile.overdue_rows), before a start that may
        need their hosts; Blazar's own end then finds them ended. One that
        cannot end now is left to its own end event.
        """
        for row in self.reconciler.overdue_rows(host_db.list_reservations(
                self._ctx(), states=(host_db.ACTIVE,))):
            LOG.info('Host reservation %s is past its end, which Blazar '
                     'has not run yet; ending it', row['reservation_id'])
            try:
                self.end_reservation(row['reservation_id'])
            except Exception:
                LOG.exception('Could not end host reservation %s; its end '
                              'event will', row['reservation_id'])

    def poll(self):
        self.reconcile()
        self.retry_waiting()
        self.sweep()
        self.warn_hand_overs()

    def heal(self):
        """Move reservations off computes that failed (blazar.healing);

        {reservation id: the flags set on Blazar's reservation}.
        """
        return healing.heal_hosts(self)

    # --- notifications -------------------------------------------------

    def _notify(self, reservation_id, previous, held_from=None,
                held_to=None):
        """The event of the state the reservation entered; held_from set

        when it holds its hosts (usage_records.record), held_to when that
        ends.
        """
        row = host_db.get(self._ctx(), reservation_id)
        self.notifier.state_entered(row, previous, held_from, held_to)
        return row

    def _held_since(self, row):
        """Where its hosts' interval began: its claim's start."""
        return usage_records.held_since(
            db_claims.get_claims(self._ctx(), row['reservation_id']),
            row['start_time'])

    def _notify_end(self, row):
        """The record of what an active reservation held, closed now; sent

        before its claim goes, so that a crash sends it again (the same
        record_id) rather than never.
        """
        ctx, rid = self._ctx(), row['reservation_id']
        claims = db_claims.get_claims(ctx, rid)
        self.notifier.state_entered(
            dict(row, state=host_db.ENDED), row['state'],
            usage_records.held_since(claims, row['start_time']),
            usage_records.held_until(claims),
            instances=registry.instances(ctx, [rid])[rid])

    # --- the hand-over warning ------------------------------------------

    def warn_hand_overs(self):
        """Tell, once, the lessee of each active reservation ending within

        [pcloud_host] hand_over_warning minutes which of its hosts another
        holder has next (a claim of any other consumer, but usage outside
        reservations, from its end on), and from when: instances outlive
        the lease, and what it leaves on them stands in the next holder's
        way. {reservation id: the hand-over} of those told now.
        """
        lead = CONF.pcloud_host.hand_over_warning
        if not lead:
            return {}
        ctx = self._ctx()
        now = timeutils.utcnow().replace(microsecond=0)
        told = {}
        for row in host_db.list_reservations(ctx, states=[host_db.ACTIVE]):
            end = row['end_time']
            if row['hand_over'] or end > now + datetime.timedelta(
                    minutes=lead):
                continue
            busy = host_db.busy_intervals(
                ctx, [h['host_uuid'] for h in row['hosts']], end,
                exclude_consumer=row['reservation_id'],
                exclude_prefix=db_claims.USAGE_PREFIX)
            next_from = {h['name']: min(
                (start for start, _end in busy[h['host_uuid']]
                 if start >= end), default=None) for h in row['hosts']}
            hosts = sorted(name for name, start in next_from.items()
                           if start is not None)
            if not hosts:
                continue
            row['hand_over'] = {
                'warned_at': now.isoformat(), 'hosts': hosts,
                'next_from': min(next_from[n] for n in hosts).isoformat()}
            if not host_db.record_hand_over(ctx, row['reservation_id'],
                                            row['hand_over']):
                continue
            LOG.info('Reservation %s: host(s) %s are another holder\'s '
                     'from %s; its lessee is told', row['reservation_id'],
                     ', '.join(hosts), row['hand_over']['next_from'])
            self.notifier.hand_over_due(row)
            told[row['reservation_id']] = row['hand_over']
        return told

    # --- waiting (BEST-EFFORT) -------------------------------------------

    def _timed_out(self, row, now):
        """Past its deadline: its hosts given back (out of the pcloud if a

        join was cut short, claim released), the reservation TIMEDOUT.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        given_back = self._leave(row) if row['hosts'] else True
        db_claims.release(ctx, rid)
        # Hosts still joined stay recorded, for sweep() to take out.
        host_db.update(ctx, rid, state=host_db.TIMEDOUT,
                       **({'hosts': []} if given_back else {}))
        LOG.info('%s reservation %s timed out at %s: its hosts were not '
                 'free, or not emptied, by then', row['lease_type'], rid,
                 row['deadline'])
        if now >= row['start_time']:
            self._mark_failed(rid)
        self._notify(rid, row['state'])

    def _try_waiting(self, row, started):
        """Take the hosts of a waiting reservation if they are free now;

        go on with one that holds its hosts (other projects' instances
        moving off them, or a join cut short). Returns its new state.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        now = timeutils.utcnow().replace(microsecond=0)
        if row['deadline'] is not None and now >= row['deadline']:
            self._timed_out(row, now)
            return host_db.TIMEDOUT
        if row['hosts']:
            # Only a start (start_reservation) sets it going.
            return (self._activate(row, previous=row['state']) if started
                    else row['state'])
        start = max(row['start_time'], now)
        if start >= row['end_time']:
            return row['state']
        params = asked.params_of(row)
        try:
            hosts = self._admit(rid, params, start, row['end_time'],
                                occupants=self._occupants(row))
        except exception.CapacityRefused as e:
            LOG.debug('Reservation %s still waits: %s', rid, e)
            return row['state']
        if started:
            # IN-PROGRESS until its hosts have joined: whatever stops
            # this midway, the next check goes on from the ledger.
            host_db.update(ctx, rid, hosts=hosts, migrations=[])
            return self._activate(host_db.get(ctx, rid),
                                  previous=row['state'])
        host_db.update(ctx, rid, hosts=hosts, state=host_db.INACTIVE)
        self._mark_reservation(rid, missing_resources=False)
        self._notify(rid, row['state'])
        return host_db.INACTIVE

    def retry_waiting(self, skip=None):
        """Give the waiting (IN-PROGRESS) reservations, oldest first, the

        hosts that are free now, and check the migrations of those
        emptying theirs; time out those past their deadline. Returns
        {reservation id: new state} of those checked.
        """
        result = {}
        for row in host_db.list_reservations(
                self._ctx(), states=[host_db.IN_PROGRESS]):
            rid = row['reservation_id']
            if rid == skip:
                continue
            try:
                result[rid] = self._try_waiting(row, self._started(rid))
            except Exception:
                LOG.exception('Could not check waiting reservation %s', rid)
        return result

    # --- after crashes ---------------------------------------------------

    def reconcile(self):
        """Finish or undo what crashes and unreachable services

        interrupted (db.intents): lease starts and ends, host allocations
        and releases. Runs at manager start and every retry_interval.
        """
        ctx = self._ctx()
        older_than = intents.since(CONF.pcloud.operation_timeout)
        done = self.reconciler.recover_events(
            ctx, self.resource_type, self._undo_failed_start, self.notifier,
            older_than)
        done.update(intents.recover(
            ctx, intents.interrupted(
                ctx, (pcloud_service.ALLOCATE, pcloud_service.RELEASE),
                older_than),
            self.pclouds().recover, self.notifier, take_first=True))
        done.update(host_resize.recover(self, ctx, older_than))
        self.reconciler.repair_leases(ctx, intents.since(
            CONF.pcloud.lease_transition_timeout))
        return done

    def _undo_failed_start(self, intent):
        """What a failed start left in Nova leaves; the lease is ERROR."""
        try:
            row = host_db.get(self._ctx(), intent['subject'])
        except host_db.HostReservationNotFound:
            return None
        if row['state'] == host_db.ACTIVE or not (
                row['aggregate_id'] or any(h['joined']
                                           for h in row['hosts'])):
            return None
        if not self._leave(row):
            return intents.KEEP
        return 'its hosts left pcloud %s after it failed' % row['pcloud_id']

    def sweep(self):
        """Retry taking out of pclouds the hosts of ended (or timed out)

        reservations; end those whose Blazar reservation is gone, and
        release claims nothing holds (see reconcile).
        """
        ctx = self._ctx()
        rows = host_db.list_reservations(ctx)
        for row in self.reconciler.orphan_rows(
                [r for r in rows if r['state'] != host_db.ENDED]):
            rid = row['reservation_id']
            LOG.warning('Host reservation %s is gone from Blazar; ending '
                        'it', rid)
            if row['state'] == host_db.ACTIVE:
                self._notify_end(row)
            db_claims.release(ctx, rid)
            if self._leave(row):
                host_db.delete(ctx, rid)
            else:
                host_db.update(ctx, rid, state=host_db.ENDED)
        for row in rows:
            if row['state'] in (host_db.ENDED, host_db.TIMEDOUT) and (
                    any(h['joined'] for h in row['hosts']) or
                    row['aggregate_id']):
                self._leave(row)
        self.reconciler.release_orphan_claims(ctx)
