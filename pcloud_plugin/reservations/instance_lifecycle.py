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
"""The life of a virtual:instance reservation after admission: its

flavor, server group and aggregate made at start (Nova side effects),
its slots held while it runs and given back at end (what still runs
keeps its share), and what crashes left halfway (sweep, reconcile).
Mixed into blazar.instance_plugin.VirtualInstancePlugin, whose helpers
(nova, promises, _ctx, slot_claims, _notify_change, ...) it uses;
Blazar's leases and events are reached through the plugin's
``reconciler`` port (blazar.reconcile), its display record through
``_show``. A start that fails raises exception.EventFailed: the
adapter's on_start makes it Blazar's.
"""

import collections
import functools
import time

from oslo_log import log as logging
from oslo_utils import timeutils
import tenacity

from pcloud_plugin.cloud import patience
from pcloud_plugin.cloud import promises as promises_mod
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import intents
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage_records
from pcloud_plugin.reservations import healing
from pcloud_plugin.reservations import registry
from pcloud_plugin.reservations import slots as slots_mod

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# The extra spec (and aggregate key) naming a reservation's server group,
# as Blazar's own plugin writes it.
AFFINITY_KEY = 'affinity_id'
# A start's hold refused by Placement, or that kept meeting other writers,
# is written again this many times in all, after a pause of this many
# seconds times the attempt: the end of the reservation that held the
# capacity before may be dropping its hold at that moment (Blazar runs a
# pass's events at once).
_HOLD_ATTEMPTS = 4
_HOLD_PAUSE = 0.5
_sleep = time.sleep


def _pause(seconds):
    if seconds:  # none at all when room was made (see _hold_pause)
        _sleep(seconds)


def _left_over(claims, slots, running, forest):
    """What of a claim the instances still running use: per provider, its

    share for the slots of its host that still run one (shared providers:
    of all slots), rounded up. {} when none runs.
    """
    if not claims or not running:
        return {}
    count = {s['host_uuid']: s['slots'] for s in slots}
    everywhere = (sum(running.values()), sum(count.values()))
    left = {}
    for rp, amounts in claims['amounts'].items():
        root = forest[rp].root_uuid if rp in forest.providers else None
        used, of = ((running.get(root, 0), count[root]) if root in count
                    else everywhere)
        if used:
            left[rp] = {rc: -(-n * used // of) for rc, n in amounts.items()}
    return left


def _ended(claims, now=None):
    """Whether a reservation's claims (db.claims.get_claims) have ended."""
    return claims is None or (claims['end'] is not None and claims['end']
                              <= (now or timeutils.utcnow()))


class Lifecycle(object):

    def _place_slots(self, row):
        """Placement inventory of the reservation's class, and aggregate

        membership once there is an aggregate, for every host whose slots
        are not all there yet.
        """
        ctx = self._ctx()
        rc = row['resource_class']
        placement = self.placement()
        # The hosts' own capacity first: refused if boots took it already.
        tenacity.Retrying(
            stop=tenacity.stop_after_attempt(_HOLD_ATTEMPTS),
            retry=tenacity.retry_if_exception_type(
                (exception.ConcurrentUpdateDetected,
                 promises_mod.NoRoomInPlacement)),
            wait=functools.partial(self._hold_pause, row),
            sleep=_pause, reraise=True)(self._hold, row)
        placement.ensure_class(rc)
        for slot in row['slots']:
            if slot['placed'] == slot['slots']:
                continue
            placement.set_slots(slot['host_uuid'], slot['host_name'], rc,
                                slot['slots'])
            res_db.set_placed(ctx, row['reservation_id'], slot['host_uuid'],
                              slot['slots'])
            if row['aggregate_id']:
                self._join(row['aggregate_id'], slot)

    def _hold_pause(self, row, state):
        """The pause before holding again (tenacity's wait): none once

        holds that outlived their claims were ended to make room.
        """
        error = state.outcome.exception()
        if (isinstance(error, promises_mod.NoRoomInPlacement)
                # The last refusal is raised: nothing to make room for.
                and state.attempt_number < _HOLD_ATTEMPTS
                and self._end_outlived_holds(
                    error.kwargs['uuids'] or db_claims.get_claims(
                        self._ctx(), row['reservation_id'])['amounts'],
                    row['reservation_id'])):
            return 0
        return _HOLD_PAUSE * state.attempt_number

    def _hold(self, row, amounts=None, end=None):
        """Hold in Placement what the ledger claimed for the reservation

        (its hosts' capacity, shared storage included; ``amounts``, e.g.
        what instances use after the end, open-ended) and write the
        promises of those providers with it (cloud.promises).
        """
        if amounts is None:
            amounts = db_claims.get_claims(self._ctx(),
                                           row['reservation_id'])['amounts']
            end = row['end_time']
        amounts = {uuid: dict(held) for uuid, held in amounts.items()}
        for slot in row['slots']:
            # Less one ticket per slot, which its boot takes (see resources).
            memory = amounts.get(slot['host_uuid'], {})
            if memory.get('MEMORY_MB'):
                memory['MEMORY_MB'] -= slot['slots'] * resources.TICKET_MB
        self.promises().sync((), holds={row['reservation_id']: (
            amounts, end)}, project_id=row['project_id'])

    def _end_outlived_holds(self, providers, starting):
        """End our reservations other than ``starting`` that hold capacity

        on ``providers`` in Placement though their claims in the ledger
        have ended (their end has not run: its lease mid-change, or its
        manager dead in it): the ledger gave it to ``starting``. True if
        any was ended; if none, what Placement has there is logged.
        """
        ctx = self._ctx()
        now = timeutils.utcnow()
        placement = self.placement()
        there = collections.defaultdict(dict)
        for rp in providers:
            for consumer, amounts in placement.consumers_on(rp).items():
                there[consumer][rp] = amounts
        there.pop(starting, None)
        ended = False
        for rid in sorted(res_db.reservation_ids(ctx, among=there)):
            claims = db_claims.get_claims(ctx, rid)
            if not _ended(claims, now):
                continue
            LOG.warning('Reservation %s still holds %s in Placement after '
                        'its claim ended; ending it', rid, there[rid])
            ended = True
            try:
                other = res_db.get(ctx, rid)
                if other['state'] == res_db.ACTIVE:
                    self._finish(other)
                else:
                    # Its start died midway and runs again later: only the
                    # hold goes (that start then finds the claim ended).
                    self._drop_hold(other,
                                    claims['amounts'] if claims else ())
            except res_db.ReservationNotFound:
                # Its own end (Blazar's event, another manager's sweep)
                # finished it meanwhile: gone all the same.
                LOG.info('Reservation %s was ended meanwhile', rid)
        if not ended:
            LOG.warning('Placement refused the hold of %s; there now: %s',
                        starting, dict(there))
        return ended

    def _drop_hold(self, row, providers=()):
        """No hold any more; the promises of its providers written again

        (a claim still in the ledger is promised again).
        """
        self.promises().sync(providers, holds={
            row['reservation_id']: ({}, None)})

    def _join(self, aggregate_id, slot):
        nova = self.nova()
        nova.add_host(aggregate_id, nova.service_host(slot['host_uuid'],
                                                      slot['host_name']))

    def _shrink_back(self, row, grown):
        """Best effort after a failed growth: Placement as row says.

        Whatever is left over is removed with the reservation at its end.
        """
        before = {s['host_uuid']: s for s in row['slots']}
        placement = self.placement()
        try:
            self._hold(row)
        except Exception:
            LOG.exception('Could not put back what reservation %s holds',
                          row['reservation_id'])
        for slot in grown:
            old = before.get(slot['host_uuid'])
            try:
                if old is None:
                    placement.remove_slots(slot['host_uuid'],
                                           row['resource_class'])
                elif old['placed']:
                    placement.set_slots(slot['host_uuid'],
                                        slot['host_name'],
                                        row['resource_class'], old['slots'])
            except Exception:
                LOG.exception('Could not put back the slots of %s on %s',
                              row['reservation_id'], slot['host_name'])

    def _make_objects(self, row):
        """Every object of an active reservation.

        Each is recorded as it is made, so a failure midway can be undone.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        nova = self.nova()
        faults.step(intents.LEASE_START, 'slots')
        self._place_slots(row)
        if not row['aggregate_id']:
            faults.step(intents.LEASE_START, 'aggregate')
            metadata = {resources.RESERVATION_KEY: rid}
            row['aggregate_id'] = nova.create_aggregate(
                resources.flavor_name(rid), metadata)
            res_db.update(ctx, rid, aggregate_id=row['aggregate_id'])
        for slot in row['slots']:
            self._join(row['aggregate_id'], slot)
        if row['affinity'] is not None and not row['server_group_id']:
            faults.step(intents.LEASE_START, 'server-group')
            # In the lessee's project: Nova shows a server group (and takes
            # it as a boot's hint) only to its own project.
            row['server_group_id'] = self.lessee_nova().create_server_group(
                resources.flavor_name(rid), row['affinity'])
            res_db.update(ctx, rid, server_group_id=row['server_group_id'])
        if row['server_group_id']:
            # The flavor asks for it (affinity_id): so must the aggregate,
            # for AggregateInstanceExtraSpecsFilter.
            nova.set_aggregate_metadata(row['aggregate_id'], {
                AFFINITY_KEY: row['server_group_id']})
        extra_specs = {'resources:%s' % row['resource_class']: '1',
                       resources.FLAVOR_EXTRA_SPEC: rid}
        # The reservation's hold has the capacity: a boot takes a slot,
        # and the ticket on its host (Nova schedules to the host a boot
        # takes something from).
        extra_specs.update(('resources:%s' % rc, '0')
                           for rc in resources.SLOT_CLASSES)
        extra_specs['resources:MEMORY_MB'] = str(resources.TICKET_MB)
        required, forbidden = slots_mod.parse_properties(
            row['resource_properties'])
        extra_specs.update(('trait:%s' % t, 'required') for t in required)
        extra_specs.update(('trait:%s' % t, 'forbidden') for t in forbidden)
        if row['server_group_id']:
            extra_specs[AFFINITY_KEY] = row['server_group_id']
        # Last, so the flavor shows up only once all it relies on exists.
        faults.step(intents.LEASE_START, 'flavor')
        res_db.update(ctx, rid, flavor_id=rid)
        nova.create_flavor(rid, resources.flavor_name(rid), row['vcpus'],
                           row['memory_mb'], row['disk_gb'], extra_specs,
                           row['project_id'])

    def _remove_objects(self, row):
        """Remove what a reservation made; True when nothing is left.

        Every removal is tried even if another failed; the failed ones
        are tried again by sweep(). The reservation's class stays (closed)
        on hosts where instances booted into it still run: those are never
        killed (seeds/001).
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        nova = self.nova()
        placement = self.placement()
        steps = []
        if row['flavor_id']:
            steps.append((lambda: nova.delete_flavor(row['flavor_id'],
                                                     row['project_id']),
                          {'flavor_id': None}))
        if row['aggregate_id']:
            steps.append((lambda: nova.delete_aggregate(row['aggregate_id']),
                          {'aggregate_id': None}))
        if row['server_group_id']:
            steps.append((lambda: nova.delete_server_group(
                row['server_group_id']), {'server_group_id': None}))
        gone = True
        for step, done in steps:
            try:
                step()
                res_db.update(ctx, rid, **done)
            except Exception:
                LOG.exception('Could not remove %s of reservation %s',
                              ', '.join(done), rid)
                gone = False
        for slot in row['slots']:
            if not slot['placed']:
                continue
            try:
                if placement.remove_slots(slot['host_uuid'],
                                          row['resource_class']):
                    res_db.set_placed(ctx, rid, slot['host_uuid'], 0)
                else:
                    gone = False
            except Exception:
                LOG.exception('Could not remove the slots of reservation '
                              '%s on %s', rid, slot['host_name'])
                gone = False
        return gone and placement.remove_class(row['resource_class'])

    def _sweep_aside(self):
        """The sweep a start or end runs beside its own work: a failure

        of it is the next sweep's to retry, never the lease's.
        """
        try:
            self.sweep()
        except Exception:
            LOG.exception('Sweep failed; the next one tries again')

    def start_reservation(self, resource_id):
        self._sweep_aside()
        ctx = self._ctx()
        try:
            row = res_db.get_by_resource_id(ctx, resource_id)
        except res_db.ReservationNotFound:
            # Blazar holds its resource id only once our row is made: a
            # start run again (its first run's process died before Blazar
            # marked it done) after our sweep ended it, its end come due.
            LOG.info('Reservation with resource %s ended before its start '
                     'ran again; nothing to start', resource_id)
            return
        rid = row['reservation_id']
        if _ended(db_claims.get_claims(ctx, rid)):
            # A start run again after its end came (its first try died):
            # nothing to make; its end, next, removes what is left.
            LOG.info('Reservation %s ended before its start ran; nothing '
                     'to start', rid)
            return
        self.reconciler.record_event(ctx, intents.LEASE_START, rid,
                                     row['lease_id'], self.resource_type)
        try:
            patience.patiently('Starting reservation %s' % rid,
                               self._make_objects, row)
        except Exception as e:
            LOG.exception('Starting reservation %s failed; undoing it', rid)
            try:
                self._drop_hold(row, db_claims.get_claims(ctx, rid)['amounts'])
                self._remove_objects(res_db.get(ctx, rid))
            except Exception:
                LOG.exception('Could not undo reservation %s; its end or '
                              'deletion will retry', rid)
            raise exception.EventFailed(
                error='Nova or Placement failed while starting reservation '
                      '%s: %s' % (rid, e))
        faults.step(intents.LEASE_START, 'active')
        res_db.update(ctx, rid, state=res_db.ACTIVE)
        self._show(resource_id, {
            'flavor_id': rid, 'aggregate_id': row['aggregate_id'],
            'server_group_id': row['server_group_id']})
        row = res_db.get(ctx, rid)
        self.notifier.reservation_started(
            self._notify_ctx(row), row, usage_records.held_since(
                db_claims.get_claims(ctx, rid), row['start_time']))

    def _show(self, resource_id, values):
        """Blazar's display record of the reservation shows ``values``

        (the flavor, aggregate and server group made at start; the terms
        after a change): the adapter's.
        """
        raise NotImplementedError()

    def end_reservation(self, resource_id):
        ctx = self._ctx()
        try:
            row = res_db.get_by_resource_id(ctx, resource_id)
        except res_db.ReservationNotFound:
            LOG.info('Reservation with resource %s already ended',
                     resource_id)
            return
        self.reconciler.record_event(ctx, intents.LEASE_END,
                                     row['reservation_id'], row['lease_id'],
                                     self.resource_type)
        try:
            self._finish(row)
        except res_db.ReservationNotFound:
            # A sweep of this or another manager (an overdue end, or the
            # retried clean-up of one) finished it meanwhile: ended.
            LOG.info('Reservation %s was ended meanwhile',
                     row['reservation_id'])
        self._sweep_aside()

    def _finish(self, row):
        """Release the capacity and remove the objects; what cannot be

        removed yet is left for sweep() to retry. Instances booted into
        the reservation keep running (seeds/001): what they use stays
        claimed, open-ended, and held in Placement until they are gone.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        if row['state'] == res_db.ACTIVE:
            # Its end (or a deletion, or Blazar forgetting it), at the real
            # time; sent before the claim goes, so that a crash sends it
            # again (the same record_id) rather than never. What instances
            # still running keep after it is theirs, not the reservation's.
            claims = db_claims.get_claims(ctx, rid)
            self.notifier.reservation_ended(
                self._notify_ctx(row), row,
                usage_records.held_since(claims, row['start_time']),
                usage_records.held_until(claims),
                instances=registry.instances(ctx, [rid])[rid])
        faults.step(intents.LEASE_END, 'release')
        try:
            gone, still = self._keep_what_runs(row)
        except Exception:
            # Placement unreachable: the claim ends as booked and the hold
            # stays, until sweep() can count what still runs.
            LOG.exception('Could not count what still runs of reservation '
                          '%s; it will be retried', rid)
            gone, still = False, None
        try:
            faults.step(intents.LEASE_END, 'remove')
            gone = self._remove_objects(row) and gone
        except Exception:
            LOG.exception('Clean-up of reservation %s failed; it will be '
                          'retried', rid)
            gone = False
        faults.step(intents.LEASE_END, 'ended')
        if gone:
            res_db.delete(ctx, rid)
        else:
            res_db.update(ctx, rid, state=res_db.ENDING,
                          slots=still['slots'] if still else None)
        return gone

    def _keep_what_runs(self, row):
        """Shrink the claim and the hold to what the instances still

        running use (none: released, dropped). (Nothing left, the row as
        its slots are now if something is.)
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        claims = db_claims.get_claims(ctx, rid)
        providers = set(claims['amounts']) if claims else set()
        running = self._running(row)
        left = _left_over(claims, row['slots'], running,
                          db_snapshots.load_forest(ctx) if running else None)
        if not left:
            db_claims.release(ctx, rid)
            self._drop_hold(row, providers)
            return True, None
        still = dict(row, slots=[dict(s, slots=running[s['host_uuid']])
                                 for s in row['slots']
                                 if running.get(s['host_uuid'])])
        try:
            db_claims.change_claim(ctx, rid, amounts=left,
                                   start=timeutils.utcnow().replace(
                                    microsecond=0), open_end=True,
                                   unit=slots_mod.per_slot(row))
        except exception.PLAN_OUTDATED as e:
            # Booked for someone else after the end: Placement's hold
            # still keeps the host from being overcommitted.
            LOG.warning('Instances of ended reservation %s still use '
                        'capacity promised to other reservations: %s',
                        rid, e.message)
            db_claims.release(ctx, rid)
        self._hold(still, left)
        return False, still

    def _running(self, row):
        """{host uuid: instances booted into the reservation running

        there}, from Placement's usage of its class.
        """
        placement = self.placement()
        running = {}
        for slot in row['slots']:
            if slot['placed']:
                n = placement.slots_in_use(slot['host_uuid'],
                                           row['resource_class'])
                if n:
                    running[slot['host_uuid']] = n
        return running

    def sweep(self):
        """Retry the clean-up of ended reservations that left objects;

        end those whose Blazar reservation is gone, and release claims
        nothing holds (see reconcile).
        """
        ctx = self._ctx()
        older_than = intents.since(CONF.pcloud.operation_timeout)
        self.reconciler.recover_events(
            ctx, self.resource_type, self._undo_failed_start, self.notifier,
            older_than)
        self.reconciler.repair_leases(ctx, intents.since(
            CONF.pcloud.lease_transition_timeout))
        live = [row for row in res_db.list_reservations(ctx)
                if row['state'] != res_db.ENDING]
        for row in self.reconciler.orphan_rows(live):
            LOG.warning('Reservation %s is gone from Blazar; ending it',
                        row['reservation_id'])
            try:
                self._finish(row)
            except res_db.ReservationNotFound:
                pass  # another sweep, or its end, finished it meanwhile
        for row in self.reconciler.overdue_rows(
                [row for row in live if row['state'] == res_db.ACTIVE]):
            # Its end, before the start that needs its capacity; Blazar's
            # own end then finds it ended.
            LOG.info('Reservation %s is past its end, which Blazar has not '
                     'run yet; ending it', row['reservation_id'])
            try:
                self._finish(row)
            except res_db.ReservationNotFound:
                pass  # its end, or another sweep, finished it meanwhile
        self.reconciler.release_orphan_claims(ctx)
        for row in res_db.list_reservations(ctx, state=res_db.ENDING):
            try:
                if self._finish(row):
                    LOG.info('Finished cleaning up reservation %s',
                             row['reservation_id'])
            except Exception:
                LOG.exception('Clean-up of reservation %s failed again',
                              row['reservation_id'])

    def heal(self):
        """Move reservations off computes that failed (blazar.healing);

        {reservation id: the flags set on Blazar's reservation}.
        """
        return healing.heal_instances(self)

    def _undo_failed_start(self, intent):
        """What a failed start left in Nova and Placement goes; the lease

        is ERROR.
        """
        try:
            row = res_db.get(self._ctx(), intent['subject'])
        except res_db.ReservationNotFound:
            return None
        if row['state'] == res_db.ACTIVE:
            return None
        claims = db_claims.get_claims(self._ctx(), row['reservation_id'])
        self._drop_hold(row, claims['amounts'] if claims else ())
        if not self._remove_objects(row):
            return intents.KEEP
        return 'its flavor, aggregate and slots are gone after it failed'

    @staticmethod
    def _notify_ctx(row):
        return {'project_id': row['project_id']}

    def _notify_change(self, before, held, at):
        """An active reservation changed at ``at``, where its claim starts

        now: the record of what it held since its claim's start before
        (``held``) is closed there.
        """
        after = res_db.get(self._ctx(), before['reservation_id'])
        self.notifier.reservation_changed(
            self._notify_ctx(after), before, after,
            usage_records.held_since(held, before['start_time'], at), at)
