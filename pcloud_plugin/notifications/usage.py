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
"""Usage records for billing and metering, and our other events.

They go where the host service sends its own notifications: the driver,
topics and transport of its [oslo_messaging_notifications] group
(blazar-manager for reservations, next to Blazar's lease.* events;
blazar-api too for the hosts pclouds hold for good). Every payload is
built here; the plugins and the pcloud service only say when.

Each change of what a project holds is one event, and each such event is
a usage record: ``per_host`` and ``totals`` were (or are) held from
``held_from`` to ``held_to``, both real times. A record whose
``held_to`` is set is ``closed``: final, and what to bill. A record that
opens (a start, an allocation) has ``held_to`` null and zero hours.
``record_id`` names the interval (what, and since when): the opening
record and the closing one of an interval share it, and an event sent
again after a crash repeats it, so a consumer bills each closed
``record_id`` once.

Usage events (see doc/source/admin/usage.rst for their fields):

``pcloud.reservation.start``
    a virtual:instance reservation's slots became usable (opens)
``pcloud.reservation.update``
    its amount or window changed while active: closes the interval held
    until now with the amounts before; ``next`` is what is held from now
``pcloud.reservation.end``
    it ended, at its scheduled end or earlier (``ended_early``), at the
    real time (closes)
``pcloud.host_reservation.<state>``
    a pcloud:host reservation entered a state; ``active`` opens, ``ended``
    closes what ``active`` opened
``pcloud.host_reservation.update``
    an active one's end moved (the interval stays open), or its hosts
    changed (closes the interval held until then, as a reservation's
    update does)
``pcloud.pcloud_host.allocated`` / ``pcloud.pcloud_host.released``
    a host joined a pcloud for good / left it (opens / closes)

Other events:

``pcloud.reconcile``
    the reconciler finished or undid an operation a crash or an
    unreachable service interrupted (what, on what, since when, and what
    it did)
``pcloud.placement.provider_gone``
    a provider is gone from Placement while ledger claims on it are live:
    the ledger keeps it (and them) until an operator acts
``pcloud.healing.degraded``
    healing (blazar.healing) could not place again a reservation of
    either plugin that holds a compute that is down or disabled: which
    hosts, and why; sent once each time it becomes degraded. Not a
    usage record (nor named like one): what is held has not changed

Where an interval starts is the ledger's: the start of the claim that
holds it (held_since). A change that closes an interval moves that
start to its own moment (the instance plugin's active updates do), so
that the next record starts where the last one stopped.
"""

import collections

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)

INSTANCE = 'virtual:instance'
HOST_LEASE = 'pcloud:host'
PERMANENT_HOST = 'pcloud:permanent_host'

PUBLISHER = 'pcloud.instance-reservation'
HOST_PUBLISHER = 'pcloud.host-reservation'
PCLOUD_PUBLISHER = 'pcloud.pcloud'

START = 'pcloud.reservation.start'
UPDATE = 'pcloud.reservation.update'
END = 'pcloud.reservation.end'
HOST_EVENT_PREFIX = 'pcloud.host_reservation.'
HOST_UPDATE = HOST_EVENT_PREFIX + 'update'
HOST_ALLOCATED = 'pcloud.pcloud_host.allocated'
HOST_RELEASED = 'pcloud.pcloud_host.released'
RECONCILED = 'pcloud.reconcile'
PROVIDER_GONE = 'pcloud.placement.provider_gone'
DEGRADED = 'pcloud.healing.degraded'

# Per-host amounts summed into totals, and the field of each's
# amount x hours (what the meters of etc/ceilometer read).
QUANTITIES = {'slots': 'slot_hours', 'vcpus': 'vcpu_hours',
              'memory_mb': 'memory_mb_hours', 'disk_gb': 'disk_gb_hours',
              'hosts': 'host_hours'}


def moment(value):
    return value.isoformat() if value is not None else None


def _now():
    return timeutils.utcnow().replace(microsecond=0)


def held_since(claims, fallback, now=None):
    """Where the interval a claim holds began: the claim's start

    (db.api.get_claims), or ``fallback`` when there is none; never
    later than now.
    """
    start = claims['start'] if claims else fallback
    now = now or _now()
    return now if start is None or start > now else start


def held_until(claims, now=None):
    """Where an interval that ends now ends: now, unless the claim ended

    before (its end event ran late: the ledger let it go at its end).
    """
    now = now or _now()
    end = claims['end'] if claims else None
    return end if end is not None and end < now else now


def record(resource_type, resource_id, project_id, per_host, held_from,
           held_to=None, at=None):
    """The usage record of per_host held from held_from to held_to

    (None: still held; held_from None: nothing held).
    """
    totals = collections.Counter()
    for entry in per_host:
        totals.update({q: entry[q] for q in QUANTITIES if q in entry})
    closed = held_from is not None and held_to is not None
    seconds = max(0, int((held_to - held_from).total_seconds())) \
        if closed else 0
    hours = seconds / 3600.0
    found = {
        'resource_type': resource_type,
        'resource_id': resource_id,
        'project_id': project_id,
        'record_id': ('%s@%s' % (resource_id, moment(held_from))
                      if held_from is not None else None),
        'held_from': moment(held_from),
        'held_to': moment(held_to),
        'closed': closed,
        'seconds': seconds,
        'hours': hours,
        'per_host': per_host,
        'totals': dict(totals),
        'at': moment(at or timeutils.utcnow()),
    }
    # Every field, 0 where it does not apply: a meter never reads null.
    found.update((field, totals.get(q, 0) * hours)
                 for q, field in QUANTITIES.items())
    return found


# --- virtual:instance ------------------------------------------------------

def instance_hosts(reservation):
    """Per host: its slots and what they are, of a reservation record

    (db.reservations).
    """
    return [{'host': s['host_name'], 'host_uuid': s['host_uuid'],
             'slots': s['slots'],
             'vcpus': s['slots'] * reservation['vcpus'],
             'memory_mb': s['slots'] * reservation['memory_mb'],
             'disk_gb': s['slots'] * reservation['disk_gb']}
            for s in reservation['slots']]


def payload(reservation, held_from=None, held_to=None, at=None):
    """The event body of a reservation record (db.reservations.get):

    the reservation as it is, and the usage record of its slots from
    held_from (default: its start) to held_to.
    """
    if held_from is None:
        held_from = reservation['start_time']
    body = record(INSTANCE, reservation['reservation_id'],
                  reservation['project_id'], instance_hosts(reservation),
                  held_from, held_to, at)
    body.update({
        'reservation_id': reservation['reservation_id'],
        'lease_id': reservation['lease_id'],
        'vcpus': reservation['vcpus'],
        'memory_mb': reservation['memory_mb'],
        'disk_gb': reservation['disk_gb'],
        'amount': reservation['amount'],
        'affinity': reservation['affinity'],
        'flavor_id': reservation['flavor_id'],
        'resource_class': reservation['resource_class'],
        'start': moment(reservation['start_time']),
        'end': moment(reservation['end_time']),
        'slots': [{'host': s['host_name'], 'host_uuid': s['host_uuid'],
                   'slots': s['slots']} for s in reservation['slots']],
    })
    return body


def update_payload(before, after, held_from, at):
    """An active reservation changed at ``at``: the record of what

    ``before`` held since held_from, closed; ``next``, what ``after``
    holds from then. The rest describes the reservation as it is now.
    """
    body = payload(before, held_from, at, at)
    now = payload(after)
    body.update((k, now[k]) for k in (
        'amount', 'flavor_id', 'start', 'end', 'slots'))
    body['previous_amount'] = before['amount']
    body['previous_end'] = moment(before['end_time'])
    body['next'] = {'held_from': moment(at), 'per_host': now['per_host'],
                    'totals': now['totals'], 'end': now['end']}
    return body


def end_payload(reservation, held_from, held_to, at=None):
    body = payload(reservation, held_from, held_to, at)
    body['ended_early'] = held_to < reservation['end_time']
    return body


# --- pcloud:host -----------------------------------------------------------

def host_lease_hosts(row):
    """Per host of a host reservation record (db.host_reservations),

    by its name in the pcloud only (seeds/000: users never learn the real
    host names).
    """
    return [{'host': h['name'], 'host_flavor': row['host_flavor'],
             'hosts': 1} for h in row['hosts']]


def host_event_type(state):
    """pcloud.host_reservation.<state>, e.g. ...in_progress."""
    return HOST_EVENT_PREFIX + state.lower().replace('-', '_')


def host_payload(row, previous=None, held_from=None, held_to=None,
                 at=None):
    """The event body of a host reservation record: the reservation as

    it is, and the usage record of its hosts (held_from None: a state in
    which it holds none).
    """
    body = record(HOST_LEASE, row['reservation_id'], row['project_id'],
                  host_lease_hosts(row) if held_from is not None else [],
                  held_from, held_to, at)
    body.update({
        'reservation_id': row['reservation_id'],
        'lease_id': row['lease_id'],
        'pcloud_id': row['pcloud_id'],
        'host_flavor': row['host_flavor'],
        'amount': row['amount'],
        'lease_type': row['lease_type'],
        'state': row['state'],
        'previous_state': previous,
        'start': moment(row['start_time']),
        'end': moment(row['end_time']),
        'deadline': moment(row['deadline']),
        'hosts': [h['name'] for h in row['hosts']],
    })
    if held_to is not None:
        body['ended_early'] = held_to < row['end_time']
    return body


def host_update_payload(before, after, held_from, at):
    """An active host reservation's hosts changed at ``at`` (hosts

    joined or left): the record of ``before``'s since held_from, closed;
    ``next``, what ``after`` holds from then. For a change of its end
    alone, which keeps the interval open, send host_payload instead.
    """
    body = host_payload(before, before['state'], held_from, at, at)
    del body['ended_early']
    now = host_payload(after, before['state'], at)
    body.update((k, now[k]) for k in ('amount', 'end', 'hosts', 'state'))
    body['previous_amount'] = before['amount']
    body['previous_end'] = moment(before['end_time'])
    body['next'] = {'held_from': moment(at), 'per_host': now['per_host'],
                    'totals': now['totals'], 'end': now['end']}
    return body


# --- hosts of pclouds, for good --------------------------------------------

def pcloud_host_payload(project_id, pcloud_id, name, host_flavor,
                        held_from, held_to=None, at=None):
    """A host a pcloud holds for good, under its name there."""
    body = record(PERMANENT_HOST, '%s/%s' % (pcloud_id, name), project_id,
                  [{'host': name, 'host_flavor': host_flavor, 'hosts': 1}],
                  held_from, held_to, at)
    body.update({'pcloud_id': pcloud_id, 'host': name,
                 'host_flavor': host_flavor})
    return body


class UsageNotifier:
    """Sends usage events; never lets a messaging failure break a lease.

    :param conf: the oslo.config object whose notification options apply
    :param transport: a notification transport (default: from conf)
    :param topics: overrides [oslo_messaging_notifications] topics
    :param driver: overrides [oslo_messaging_notifications] driver
    """

    def __init__(self, conf, transport=None, topics=None, driver=None,
                 publisher_id=PUBLISHER):
        self._conf = conf
        self._transport = transport
        self._topics = topics
        self._driver = driver
        self._publisher_id = publisher_id
        self._notifier = None

    def _get(self):
        if self._notifier is None:
            transport = (self._transport or
                         messaging.get_notification_transport(self._conf))
            self._notifier = messaging.Notifier(
                transport, publisher_id=self._publisher_id,
                driver=self._driver, topics=self._topics)
        return self._notifier

    def _send(self, context, event_type, body):
        try:
            self._get().info(context or {}, event_type, body)
        except Exception:
            LOG.exception('Could not send %s for %s', event_type,
                          body.get('record_id') or body.get(
                              'reservation_id', body.get('subject')))

    @staticmethod
    def _ctx(project_id):
        return {'project_id': project_id}

    # virtual:instance

    def reservation_started(self, context, reservation, held_from=None):
        self._send(context, START, payload(reservation, held_from))

    def reservation_changed(self, context, before, after, held_from, at):
        self._send(context, UPDATE,
                   update_payload(before, after, held_from, at))

    def reservation_ended(self, context, reservation, held_from=None,
                          held_to=None):
        held_to = held_to or _now()
        self._send(context, END, end_payload(
            reservation, held_from or reservation['start_time'], held_to))

    # pcloud:host

    def host_reservation(self, row, previous=None, held_from=None,
                         held_to=None, event_type=None):
        """The event of the state row entered (or event_type)."""
        self._send(self._ctx(row['project_id']),
                   event_type or host_event_type(row['state']),
                   host_payload(row, previous, held_from, held_to))

    def host_reservation_changed(self, before, after, held_from, at):
        """Hosts joined or left an active one at ``at``, where its claim

        starts now (see host_update_payload).
        """
        self._send(self._ctx(after['project_id']), HOST_UPDATE,
                   host_update_payload(before, after, held_from, at))

    # hosts of pclouds, for good

    def pcloud_host_allocated(self, project_id, pcloud_id, name,
                              host_flavor, held_from):
        self._send(self._ctx(project_id), HOST_ALLOCATED,
                   pcloud_host_payload(project_id, pcloud_id, name,
                                       host_flavor, held_from))

    def pcloud_host_released(self, project_id, pcloud_id, name,
                             host_flavor, held_from, held_to=None):
        self._send(self._ctx(project_id), HOST_RELEASED,
                   pcloud_host_payload(project_id, pcloud_id, name,
                                       host_flavor, held_from,
                                       held_to or _now()))

    # the rest

    def reconciled(self, context, what):
        self._send(context, RECONCILED, what)

    def provider_gone(self, provider_uuid, why):
        self._send({}, PROVIDER_GONE, {
            'provider_uuid': provider_uuid, 'why': why,
            'at': timeutils.utcnow().isoformat()})

    def reservation_degraded(self, resource_type, row, hosts, why):
        """A reservation (either plugin's record) holds ``hosts`` (their

        names as its lessee knows them), whose computes failed, and
        could not be placed elsewhere: ``why``.
        """
        self._send(self._ctx(row['project_id']), DEGRADED, {
            'resource_type': resource_type,
            'reservation_id': row['reservation_id'],
            'lease_id': row['lease_id'], 'project_id': row['project_id'],
            'start': moment(row['start_time']),
            'end': moment(row['end_time']), 'hosts': sorted(hosts),
            'why': why, 'at': timeutils.utcnow().isoformat()})


class HostUsageNotifier(UsageNotifier):
    """Usage events of pcloud:host reservations, one per state entered."""

    def __init__(self, conf_, **kwargs):
        kwargs.setdefault('publisher_id', HOST_PUBLISHER)
        super().__init__(conf_, **kwargs)

    def state_entered(self, row, previous=None, held_from=None,
                      held_to=None):
        self.host_reservation(row, previous, held_from, held_to)
