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
"""Maintenance windows: an operator takes hosts out of service for a

window, and the bookings that hold them then move out of the way ahead
of time (issue 36).

Booking one (``book``):

1. What is free on the hosts' trees in the window is held in the ledger
   (host_reservations.hold_free, the maintenance id as consumer): no new
   lease lands there from now on.
2. Every reservation of ours holding them then that has not started is
   placed again for its own window off the hosts, through the same
   engine and claims as healing's (healing._move_slots, _replace_hosts);
   its lessee gets a ``pcloud.maintenance.moved`` event.
3. What cannot move is reported: one that has started (healing moves it
   at the window's start where none of its instances run on the hosts,
   else it is degraded), a holder that is no reservation of ours (a
   pcloud's own host, Blazar's), one with no free capacity elsewhere.
   Unless the operator accepts that, every move is put back, the hold
   released and the maintenance refused (409, MaintenanceRefused):
   nothing of it is left.
4. The hold grows over what the moves freed.

At its start (the leading manager's pass, ``run_due``) the hosts'
nova-compute services are disabled with a reason that says until when
(healing.maintenance_reason): Nova schedules nothing there, and healing
treats them as failed for the reservations that hold them during it. At
its end, or when it is cancelled, the services it disabled are enabled
and its hold released.

``plugins``: {'virtual:instance': plugin, 'pcloud:host': plugin}, the
Blazar adapters' plugins (either may be missing), as healing takes them;
``nova``: a python-novaclient Client (2.53 or later).
"""

import datetime
import uuid

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import locks
from pcloud_plugin.db import maintenances as maint_db
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin.reservations import healing

LOG = logging.getLogger(__name__)
CONF = conf.CONF

INSTANCES = 'virtual:instance'
HOSTS = 'pcloud:host'
# Moves made, then the holders looked at again: what a racing lease took
# of the capacity a move freed is moved too, this many times at most.
_ROUNDS = 3
# A booking takes seconds; one older is one whose process stopped.
_BOOKING_FOR = datetime.timedelta(minutes=10)


def _now():
    return timeutils.utcnow().replace(microsecond=0)


class _Avoid(healing.Failures):
    """Healing's failures, the maintenance's hosts among them."""

    def __init__(self, nova, roots):
        super().__init__(nova)
        self._roots = roots

    def why(self, host_uuid, host_name, service_host=None, from_=None):
        if host_uuid in self._roots:
            return 'under maintenance'
        return super().why(host_uuid, host_name, service_host, from_)


def _reservation(ctx, consumer):
    """(resource type, row) of a reservation of ours, or (None, None)."""
    try:
        return INSTANCES, res_db.get(ctx, consumer)
    except res_db.ReservationNotFound:
        pass
    try:
        return HOSTS, host_db.get(ctx, consumer)
    except host_db.HostReservationNotFound:
        return None, None


class _Booking:
    """One maintenance being booked: its moves, to keep or put back."""

    def __init__(self, ctx, plugins, nova, maintenance_id, roots, start,
                 end):
        self.ctx = ctx
        self.plugins = plugins
        self.nova = nova
        self.id = maintenance_id
        self.roots = roots
        self.start = start
        self.end = end
        self.moved = []      # (resource type, row before, claims before)
        self.unmovable = []  # {'reservation_id', 'lease_id', 'why'}
        self._failures = None

    def avoid(self):
        if self._failures is None:
            self._failures = _Avoid(self.nova, self.roots)
        return self._failures

    def cannot(self, consumer, row, why):
        self.unmovable.append({
            'reservation_id': consumer,
            'lease_id': row['lease_id'] if row else None,
            'project_id': row['project_id'] if row else None,
            'why': why.rstrip('.')})

    def move(self, consumer, on_hosts):
        kind, row = _reservation(self.ctx, consumer)
        plugin = self.plugins.get(kind)
        if row is None or plugin is None:
            try:
                maint_db.get(self.ctx, consumer)
                why = 'another maintenance holds them then'
            except exception.MaintenanceNotFound:
                why = ('it is no reservation of a pcloud plugin (a '
                       'pcloud\'s own host, or another holder)')
            return self.cannot(consumer, None, why)
        if row['state'] not in (res_db.RESERVED, host_db.INACTIVE):
            return self.cannot(consumer, row, (
                'it has started: healing moves it off at the window\'s '
                'start where none of its instances run there, else it is '
                'degraded'))
        margin = datetime.timedelta(seconds=CONF.pcloud.lease_event_margin)
        if row['start_time'] <= _now() + margin:
            return self.cannot(consumer, row, (
                'it starts within %d seconds: healing moves it at the '
                'window\'s start' % margin.total_seconds()))
        # The lease's lock, as the API takes it for a tenant's change.
        lock = locks.acquire('lease:' + row['lease_id'])
        try:
            self._move(kind, plugin, consumer, on_hosts)
        finally:
            locks.release(lock)

    def _move(self, kind, plugin, consumer, on_hosts):
        # Read again under the lock: a change may have ended meanwhile.
        _kind, row = _reservation(self.ctx, consumer)
        if row is None:
            return  # its lease was deleted: it holds nothing any more
        if not plugin.lease_flags.settled(row['lease_id']):
            return self.cannot(consumer, row, (
                'its lease is being changed; book the maintenance again'))
        held = db_claims.get_claims(self.ctx, consumer)
        try:
            if kind == INSTANCES:
                healing._move_slots(plugin, row, on_hosts,
                                    set(self.roots) |
                                    healing._failed_roots(plugin,
                                                          self.avoid()))
            else:
                healing._replace_hosts(
                    plugin, row, [h for h in row['hosts']
                                  if h['host_uuid'] in on_hosts],
                    self.avoid())
        except exception.CapacityRefused as e:
            return self.cannot(consumer, row,
                               'no free capacity to move it to: %s' % e)
        except Exception as e:
            # Promises (Placement) refused: as capacity for the operator.
            LOG.warning('Could not move reservation %s for maintenance '
                        '%s: %s', consumer, self.id, e)
            return self.cannot(consumer, row, 'it could not move: %s' % e)
        self.moved.append((kind, row, held))

    def put_back(self):
        """Every move undone, the last first (best effort: a move that

        cannot be undone keeps its new place, as valid as the old).
        """
        for kind, row, held in reversed(self.moved):
            try:
                if kind == INSTANCES:
                    healing.put_slots_back(self.plugins[kind], row, held)
                else:
                    host_db.claim_hosts(
                        self.ctx, row['reservation_id'],
                        [h['host_uuid'] for h in row['hosts']],
                        row['start_time'], row['end_time'], replace=True)
                    host_db.update(self.ctx, row['reservation_id'],
                                   hosts=row['hosts'])
            except Exception:
                LOG.exception('Could not put reservation %s back where it '
                              'was before maintenance %s; it stays where '
                              'it moved', row['reservation_id'], self.id)
        self.moved = []

    def notify(self, reason):
        for kind, row, _held in self.moved:
            self.plugins[kind].notifier.reservation_moved(
                kind, row, self.id, self.start, self.end, reason)


def _host_records(ctx, nova, names):
    """[{'host_uuid', 'host_name', 'service_host', 'disabled'}] of the

    compute hosts named (their providers' names, as Nova's hypervisors
    are named); a 400 for a name the ledger has no host of.
    """
    found = []
    for name in names:
        uuid_ = db_providers.provider_uuid_named(ctx, name)
        if uuid_ is None:
            raise exception.SchemaViolation(
                field='hosts', reason='no compute host is named %r' % name)
        found.append({'host_uuid': uuid_, 'host_name': name,
                      'service_host': nova.service_host(uuid_, name),
                      'disabled': False})
    return found


def book(ctx, plugins, nova, names, start, end, reason=None,
         accept_unmovable=False):
    """Book a maintenance of the hosts named for [start, end): the

    maintenance's record, with its report ({'moved': [reservation ids],
    'unmovable': [...]}). Raises MaintenanceRefused, nothing kept, when
    a reservation cannot move and ``accept_unmovable`` is False.

    ``nova``: cloud.resources.NovaObjects (service hosts of computes).
    """
    hosts = _host_records(ctx, nova, names)
    roots = {h['host_uuid'] for h in hosts}
    maintenance_id = str(uuid.uuid4())
    booking = _Booking(ctx, plugins, nova.nova, maintenance_id, roots,
                       start, end)
    # Recorded first: a crash midway leaves a record run_due forgets.
    maint_db.create(ctx, maintenance_id, hosts, start, end, reason)
    try:
        host_db.hold_free(ctx, maintenance_id, roots, start, end)
        seen = set()
        for last in [False] * _ROUNDS + [True]:
            # Placement usage (instances running now) is not a booking:
            # the operator migrates it as for any maintenance.
            found = host_db.consumers_on(
                ctx, roots, start, end,
                exclude_prefix=db_claims.USAGE_PREFIX)
            found.pop(maintenance_id, None)
            new = sorted(set(found) - seen)
            if not new:
                break
            for consumer in new:
                seen.add(consumer)
                if last:
                    # Leases kept taking what moves freed: say so.
                    booking.cannot(consumer, _reservation(ctx, consumer)[1],
                                   'booked there while the maintenance was')
                else:
                    booking.move(consumer, found[consumer])
            if not last:
                host_db.hold_free(ctx, maintenance_id, roots, start, end)
        if booking.unmovable and not accept_unmovable:
            raise exception.MaintenanceRefused(
                hosts=', '.join(names), start=start, end=end,
                unmovable='; '.join(
                    '%s (lease %s): %s' % (u['reservation_id'],
                                           u['lease_id'], u['why'])
                    for u in booking.unmovable))
        report = {'moved': [row['reservation_id']
                            for _kind, row, _held in booking.moved],
                  'unmovable': booking.unmovable}
        maint_db.advance(ctx, maintenance_id, maint_db.BOOKING,
                         maint_db.SCHEDULED, report=report)
    except Exception:
        # The hold first: it took what the moves freed, their way back.
        db_claims.release(ctx, maintenance_id)
        booking.put_back()
        maint_db.delete(ctx, maintenance_id)
        raise
    booking.notify(reason)
    LOG.info('Maintenance %s of %s from %s to %s booked: moved %s; left '
             '%s', maintenance_id, ', '.join(names), start, end,
             report['moved'], report['unmovable'])
    return maint_db.get(ctx, maintenance_id)


# --- its start and end (the leading manager) ------------------------------

def _service(nova, service_host):
    found = nova.services.list(host=service_host, binary='nova-compute')
    return found[0] if found else None


def _disable(nova, maintenance):
    """Disable its hosts' services; the hosts' records, each saying

    whether it disabled it (one an operator disabled before stays so).
    """
    why = healing.maintenance_reason(maintenance['id'],
                                     maintenance['end_time'],
                                     maintenance['reason'])
    hosts = []
    for host in maintenance['hosts']:
        service = _service(nova, host['service_host'])
        ours = False
        if service is None:
            LOG.warning('Maintenance %s: no nova-compute on %s',
                        maintenance['id'], host['service_host'])
        elif service.status == 'enabled':
            nova.services.disable_log_reason(service.id, why)
            ours = True
        else:
            # Disabled by us before a crash, or by an operator.
            found = healing.maintenance_of(
                getattr(service, 'disabled_reason', None))
            ours = bool(found) and found[0] == maintenance['id']
        hosts.append(dict(host, disabled=ours))
    return hosts


def _enable(nova, maintenance):
    for host in maintenance['hosts']:
        service = _service(nova, host['service_host'])
        if service is None or service.status != 'disabled':
            continue
        found = healing.maintenance_of(
            getattr(service, 'disabled_reason', None))
        if found and found[0] == maintenance['id']:
            nova.services.enable(service.id)


def finish(ctx, nova, maintenance):
    """End it now: the services it disabled enabled, its hold released,

    DONE. False if another process finished it first.
    """
    _enable(nova, maintenance)
    db_claims.release(ctx, maintenance['id'])
    return maint_db.advance(ctx, maintenance['id'], maintenance['state'],
                            maint_db.DONE)


def run_due(ctx, nova, now=None):
    """Start the maintenances whose start came, finish those whose end

    came, forget those whose booking a crash interrupted: {maintenance
    id: state entered (None: forgotten)}.
    """
    now = now or _now()
    done = {}
    for found in maint_db.list_all(ctx, states=[
            maint_db.BOOKING, maint_db.SCHEDULED, maint_db.ACTIVE]):
        try:
            if found['state'] == maint_db.BOOKING:
                if found['created_at'] <= now - _BOOKING_FOR:
                    # What it moved stays moved, as valid as before.
                    LOG.warning('Maintenance %s was never booked whole '
                                '(its process stopped); forgotten',
                                found['id'])
                    db_claims.release(ctx, found['id'])
                    maint_db.delete(ctx, found['id'])
                    done[found['id']] = None
            elif found['end_time'] <= now:
                if finish(ctx, nova, found):
                    done[found['id']] = maint_db.DONE
            elif found['state'] == maint_db.SCHEDULED and \
                    found['start_time'] <= now:
                if maint_db.advance(ctx, found['id'], maint_db.SCHEDULED,
                                    maint_db.ACTIVE,
                                    hosts=_disable(nova, found)):
                    done[found['id']] = maint_db.ACTIVE
        except Exception:
            LOG.exception('Could not start or end maintenance %s',
                          found['id'])
    return done
