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
"""What a failed or interrupted lease creation left of ours, and undoing it.

Blazar's manager rolls back only its own rows: when a lease's second
reservation is refused, or the manager dies between our claim and
Blazar's record of it, the claims our plugins made stay in the ledger and
their rows in our tables. Blazar's reservation table is the record of
which reservations exist; a claim or row of ours whose reservation it
does not hold is a leftover.

Ledger consumers named by a bare UUID are Blazar reservations' (both
plugins claim under the reservation id); any other holder of capacity
uses another name and is never touched here.

Interrupted operations: ``db.intents.recover`` hands each to the
owner's handler, then reports what it did in the log and as a
``pcloud.reconcile`` event. A lease start or end that died with its
process leaves Blazar's lease STARTING or TERMINATING and its event
IN_PROGRESS for good; ``run_again`` puts them back as they were before,
and Blazar's manager runs the event again (our on_start and on_end pick
up where the dead one stopped).
"""

import collections
import contextlib
import datetime
import re

from blazar.db import api as blazar_db
from blazar.db import exceptions as blazar_db_exc
from blazar import status
from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import timeutils

from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin.db import locks
from pcloud_plugin.db import reservations as res_db

LOG = logging.getLogger(__name__)

_RESERVATION_ID = re.compile(
    r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
# Our reservation tables; each has list_reservations(lease_id=) and delete.
_TABLES = (res_db, host_db)

# Per operation: Blazar's event type, the lease status before it, and the
# reservation statuses after and before it.
_EVENTS = {
    intents.LEASE_START: ('start_lease', status.lease.PENDING,
                          status.reservation.ACTIVE,
                          status.reservation.PENDING),
    intents.LEASE_END: ('end_lease', status.lease.ACTIVE,
                        status.reservation.DELETED,
                        status.reservation.ACTIVE),
}


def gone(reservation_ids):
    """Those of ``reservation_ids`` Blazar holds no reservation of."""
    if not reservation_ids:
        return set()
    held = {r['id'] for r in blazar_db.reservation_get_all_by_values()}
    return set(reservation_ids) - held


def orphan_rows(rows):
    """The reservation rows among ``rows`` whose Blazar reservation is

    gone (its lease deleted or never created) without our end or delete
    having run.
    """
    missing = gone([row['reservation_id'] for row in rows])
    return [row for row in rows if row['reservation_id'] in missing]


def overdue_rows(rows):
    """The rows among ``rows`` whose lease's end came due and that Blazar

    has not begun ending: its loop runs the starts of a pass before the
    ends that came due meanwhile. A start then meets, in Placement, the
    hold of a reservation whose claim the ledger ended and gave to it.
    Only a lease in a stable state, whose end event is still to do and
    due (an update that moved the end moved the event too).
    """
    now = timeutils.utcnow()
    overdue = []
    for row in rows:
        if row['end_time'] > now:
            continue
        lease = blazar_db.lease_get(row['lease_id'])
        if lease is None or lease['status'] not in status.lease.STABLE:
            continue
        end = blazar_db.event_get_first_sorted_by_filters(
            'time', 'asc', {'lease_id': row['lease_id'],
                            'event_type': 'end_lease'})
        if (end is not None and end['status'] == status.event.UNDONE
                and end['time'] <= now):
            overdue.append(row)
    return overdue


@contextlib.contextmanager
def creation_of(ctx, lease_id):
    """Around a reserve_resource: if it fails, undo_creation(lease_id),

    and let the original failure through whatever the undo meets.
    """
    try:
        yield
    except Exception:
        with excutils.save_and_reraise_exception():
            try:
                undo_creation(ctx, lease_id)
            except Exception:
                LOG.exception('Could not undo the reservations of lease %s; '
                              'the next sweep releases them', lease_id)


def undo_creation(ctx, lease_id):
    """Forget the reservations of ours of a lease Blazar is creating.

    Called when one of its reservations is refused: Blazar then destroys
    the lease and its own rows. Nothing of a lease being created has
    started, so its claims and rows are all there is. Returns the ids.
    """
    lease = blazar_db.lease_get(lease_id)
    if lease is None or lease['status'] != status.lease.CREATING:
        return []
    undone = []
    for table in _TABLES:
        for row in table.list_reservations(ctx, lease_id=lease_id):
            rid = row['reservation_id']
            db_claims.release(ctx, rid)
            table.delete(ctx, rid)
            undone.append(rid)
    if undone:
        LOG.info('Lease %s was not created: released reservations %s',
                 lease_id, ', '.join(undone))
    return undone


def release_orphan_claims(ctx):
    """Release the claims of reservations that neither our tables nor

    Blazar know (the manager died between the claim and the record).
    Returns the consumer ids released.
    """
    known = {row['reservation_id'] for table in _TABLES
             for row in table.list_reservations(ctx)}
    candidates = [consumer for consumer in db_claims.list_consumers(ctx)
                  if _RESERVATION_ID.match(consumer)
                  and consumer not in known]
    released = sorted(gone(candidates))
    for rid in released:
        db_claims.release(ctx, rid)
        LOG.warning('Released the ledger claims of reservation %s, which '
                    'Blazar does not hold', rid)
    return released


def record_event(ctx, operation, reservation_id, lease_id, resource_type):
    """The intent of a lease start or end (db.intents), made as the

    plugin's on_start / on_end begins. It is not dropped when they return:
    recover_events reads Blazar's event to tell how the start or end went.
    """
    intents.begin(ctx, operation, reservation_id,
                  {'lease_id': lease_id, 'resource_type': resource_type})


def recover_events(ctx, resource_type, undo_failed_start, notifier,
                   older_than):
    """Recover the lease starts and ends of ``resource_type`` (see

    record_event): one whose intent is abandoned (db.intents, with
    ``older_than``) is handed back to Blazar (run_again); after a start
    that failed, ``undo_failed_start(intent)`` takes out of Nova what it
    left, and returns what it did (as recover's handlers do).
    """
    def handle(intent):
        event = event_of(intent)
        if event is None or event['status'] in (status.event.DONE,
                                                status.event.UNDONE):
            return None  # gone (sweep ends it), finished, or to run again
        if event['status'] == status.event.IN_PROGRESS:
            if not intents.abandoned(intent, older_than):
                return intents.KEEP
            run_again(intent, event)
            return ('its process died: Blazar runs the %s of lease %s '
                    'again' % (event['event_type'],
                               intent['details']['lease_id']))
        if intent['operation'] == intents.LEASE_START:
            return undo_failed_start(intent)
        return None

    found = [i for i in intents.list_intents(
        ctx, (intents.LEASE_START, intents.LEASE_END))
             if i['details'].get('resource_type') == resource_type]
    return intents.recover(ctx, found, handle, notifier)


def event_of(intent):
    """The Blazar event a lease start or end intent ran in, or None when

    its lease is gone.
    """
    event_type = _EVENTS[intent['operation']][0]
    if blazar_db.lease_get(intent['details']['lease_id']) is None:
        return None
    return blazar_db.event_get_first_sorted_by_filters(
        'lease_id', 'asc', {'lease_id': intent['details']['lease_id'],
                            'event_type': event_type})


def run_again(intent, event):
    """Put the lease of an interrupted start or end back as it was before,

    with its event to do: Blazar's manager runs it again.
    """
    _run_again(intent['operation'], intent['details']['lease_id'], event)


def _run_again(operation, lease_id, event):
    _type, lease_status, done, before = _EVENTS[operation]
    for reservation in blazar_db.reservation_get_all_by_lease_id(lease_id):
        if reservation['status'] == done:
            blazar_db.reservation_update(reservation['id'],
                                         {'status': before})
    blazar_db.lease_update(lease_id, {'status': lease_status})
    blazar_db.event_update(event['id'], {'status': status.event.UNDONE})


def repair_leases(ctx, older_than):
    """Make every lease one Blazar's manager can start, end and delete.

    Blazar's event loop stops at an event whose lease is gone (for every
    lease of the cloud), a lease without its start or end event can be
    neither updated nor deleted, and a lease left in a transitional
    state by a process that died (its last change before
    ``older_than``) takes no change again. So: such events are removed,
    missing events made again from the lease's dates, and such leases
    put back: a creation undone, a deletion finished, an update back to
    the state its events say, a start or end run again (one our plugin
    recorded is recover_events'). Returns {lease id: what was done}.
    """
    done = {}
    # Events first: a lease created after this read has its events.
    events = collections.defaultdict(list)
    for event in blazar_db.event_get_all():
        events[event['lease_id']].append(event)
    leases = {lease['id']: lease for lease in blazar_db.lease_get_all()}
    for lease_id in set(events) - set(leases):
        for event in events.pop(lease_id):
            try:
                blazar_db.event_destroy(event['id'])
            except blazar_db_exc.BlazarDBNotFound:
                continue
            done.setdefault(lease_id, []).append(
                'removed its %s event' % event['event_type'])
    for lease_id, lease in leases.items():
        if _since(lease, 'created_at') >= older_than:
            continue
        # Blazar makes a lease's events once its reservations are made.
        what = ([] if lease['status'] == status.lease.CREATING
                else _events_again(lease, events[lease_id]))
        what += _events_to_do_again(lease, events[lease_id], older_than)
        if lease['status'] in status.lease.TRANSITIONAL and \
                _since(lease, 'updated_at') < older_than:
            what += _unstick_locked(ctx, lease)
        if what:
            done[lease_id] = what
    for lease_id, what in done.items():
        LOG.warning('Repaired lease %s: %s', lease_id, '; '.join(what))
    return done


def _since(lease, field):
    moment = lease.get(field) or lease.get('created_at')
    if isinstance(moment, str):  # Blazar's to_dict makes them text
        moment = datetime.datetime.fromisoformat(moment)
    return moment


def _events_again(lease, events):
    """Make again the start or end event a lease has lost, done when its

    reservations say so (the lease's own status when it has none).
    """
    kinds = {event['event_type'] for event in events}
    if {'start_lease', 'end_lease'} <= kinds:
        return []
    reservations = {r['status'] for r in
                    blazar_db.reservation_get_all_by_lease_id(lease['id'])}
    started = (bool(reservations & {status.reservation.ACTIVE,
                                    status.reservation.DELETED})
               if reservations else lease['status'] in (
                   status.lease.ACTIVE, status.lease.TERMINATED))
    ended = (reservations == {status.reservation.DELETED} if reservations
             else lease['status'] == status.lease.TERMINATED)
    made = []
    for kind, moment, done in (('start_lease', lease['start_date'], started),
                               ('end_lease', lease['end_date'], ended)):
        if kind in kinds:
            continue
        blazar_db.event_create({
            'lease_id': lease['id'], 'event_type': kind, 'time': moment,
            'status': status.event.DONE if done else status.event.UNDONE})
        made.append('made its lost %s event again' % kind)
    return made


def _events_to_do_again(lease, events, older_than):
    """An event left IN_PROGRESS by a dead manager before it set the

    lease STARTING or TERMINATING: Blazar's loop runs only events to do,
    and our API guard refuses changes while one is under way, so the
    lease would neither start nor go. Back to do.
    """
    if lease['status'] not in status.lease.STABLE:
        return []
    again = []
    for event in events:
        if event['status'] == status.event.IN_PROGRESS and \
                _since(event, 'updated_at') < older_than:
            blazar_db.event_update(event['id'],
                                   {'status': status.event.UNDONE})
            again.append('its %s, left under way, is to do again'
                         % event['event_type'])
    return again


def _unstick_locked(ctx, lease):
    """_unstick under the lease's lock (api.lease_lock's), if it was left

    as it was read: never beside a request of the API on the lease.
    """
    held = locks.acquire('lease:' + lease['id'], wait=False)
    if held is None:
        return []  # a request holds it: the next pass looks again
    try:
        now = blazar_db.lease_get(lease['id'])
        if now is None or (now['status'], now.get('updated_at')) != (
                lease['status'], lease.get('updated_at')):
            return []
        return _unstick(ctx, lease)
    finally:
        locks.release(held)


def _unstick(ctx, lease):
    """Put back a lease a dead process left in a transitional state."""
    lease_id, state = lease['id'], lease['status']
    if state in (status.lease.CREATING, status.lease.DELETING):
        # Its creation never answered, or its deletion was asked: our
        # reservations are released here or by the sweep (orphan_rows).
        if state == status.lease.CREATING:
            undo_creation(ctx, lease_id)
        try:
            blazar_db.lease_destroy(lease_id)
        except blazar_db_exc.BlazarDBNotFound:
            pass
        return ['its %s died: deleted it' % (
            'creation' if state == status.lease.CREATING else 'deletion')]
    if state == status.lease.UPDATING:
        stable = status.lease.derive_stable_status(lease_id)
        blazar_db.lease_update(lease_id, {'status': stable})
        return ['its update died: back to %s' % stable]
    operation = (intents.LEASE_START if state == status.lease.STARTING
                 else intents.LEASE_END)
    if any(i['details'].get('lease_id') == lease_id
           for i in intents.list_intents(ctx, (operation,))):
        return []  # recover_events', which knows whether it still runs
    event = blazar_db.event_get_first_sorted_by_filters(
        'lease_id', 'asc', {'lease_id': lease_id,
                            'event_type': _EVENTS[operation][0]})
    _run_again(operation, lease_id, event)
    return ['its %s died: Blazar runs it again' % _EVENTS[operation][0]]
