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
"""Usage records for billing and metering, and our other events: their
names, and the notifier that sends them.

They go where the host service sends its own notifications: the driver,
topics and transport of its [oslo_messaging_notifications] group
(blazar-manager for reservations, next to Blazar's lease.* events;
blazar-api too for the hosts pclouds hold for good). The plugins and the
pcloud service only say when; every payload is built in this package:
the usage record each usage event carries in ``usage_records``, the
rest of the body per reservation kind in ``instance_payloads`` and
``host_payloads``, the other events' bodies here.

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
``pcloud.ledger.repaired``
    a periodic pass of the Placement mirror found usage the ledger held
    wrong (Nova's events about it lost, late, or not followed) and
    repaired it: on which providers
``pcloud.healing.degraded``
    healing (blazar.healing) could not place again a reservation of
    either plugin that holds a compute that is down or disabled: which
    hosts, and why; sent once each time it becomes degraded. Not a
    usage record (nor named like one): what is held has not changed
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

from pcloud_plugin.notifications import host_payloads
from pcloud_plugin.notifications import instance_payloads
from pcloud_plugin.notifications import usage_records

LOG = logging.getLogger(__name__)

PUBLISHER = 'pcloud.instance-reservation'
HOST_PUBLISHER = 'pcloud.host-reservation'
PCLOUD_PUBLISHER = 'pcloud.pcloud'

START = 'pcloud.reservation.start'
UPDATE = 'pcloud.reservation.update'
END = 'pcloud.reservation.end'
HOST_EVENT_PREFIX = 'pcloud.host_reservation.'
HOST_UPDATE = HOST_EVENT_PREFIX + 'update'
HAND_OVER = HOST_EVENT_PREFIX + 'hand_over'
HOST_ALLOCATED = 'pcloud.pcloud_host.allocated'
HOST_RELEASED = 'pcloud.pcloud_host.released'
RECONCILED = 'pcloud.reconcile'
PROVIDER_GONE = 'pcloud.placement.provider_gone'
DEGRADED = 'pcloud.healing.degraded'
MOVED = 'pcloud.maintenance.moved'
BACKFILL_WARNING = 'pcloud.backfill.warning'
BACKFILL_END = 'pcloud.backfill.end'
REPAIRED = 'pcloud.ledger.repaired'


def host_event_type(state):
    """pcloud.host_reservation.<state>, e.g. ...in_progress."""
    return HOST_EVENT_PREFIX + state.lower().replace('-', '_')


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
        self._send(context, START,
                   instance_payloads.payload(reservation, held_from))

    def reservation_changed(self, context, before, after, held_from, at):
        self._send(context, UPDATE, instance_payloads.update_payload(
            before, after, held_from, at))

    def reservation_ended(self, context, reservation, held_from=None,
                          held_to=None, instances=()):
        held_to = held_to or usage_records.utcnow()
        self._send(context, END, instance_payloads.end_payload(
            reservation, held_from or reservation['start_time'], held_to,
            instances=instances))

    # pcloud:host

    def host_reservation(self, row, previous=None, held_from=None,
                         held_to=None, event_type=None, instances=()):
        """The event of the state row entered (or event_type)."""
        self._send(self._ctx(row['project_id']),
                   event_type or host_event_type(row['state']),
                   host_payloads.payload(row, previous, held_from,
                                         held_to, instances=instances))

    def hand_over_due(self, row):
        """Tell the lessee that others have some of its hosts next

        (row['hand_over']).
        """
        body = host_payloads.payload(row)
        body['hand_over'] = row['hand_over']
        self._send(self._ctx(row['project_id']), HAND_OVER, body)

    def host_reservation_changed(self, before, after, held_from, at):
        """Hosts joined or left an active one at ``at``, where its claim

        starts now (see host_payloads.update_payload).
        """
        self._send(self._ctx(after['project_id']), HOST_UPDATE,
                   host_payloads.update_payload(before, after, held_from,
                                                at))

    # hosts of pclouds, for good

    def pcloud_host_allocated(self, project_id, pcloud_id, name,
                              host_flavor, held_from):
        self._send(self._ctx(project_id), HOST_ALLOCATED,
                   host_payloads.pcloud_host_payload(
                       project_id, pcloud_id, name, host_flavor, held_from))

    def pcloud_host_released(self, project_id, pcloud_id, name,
                             host_flavor, held_from, held_to=None):
        self._send(self._ctx(project_id), HOST_RELEASED,
                   host_payloads.pcloud_host_payload(
                       project_id, pcloud_id, name, host_flavor, held_from,
                       held_to or usage_records.utcnow()))

    # the rest

    def reconciled(self, context, what):
        self._send(context, RECONCILED, what)

    def provider_gone(self, provider_uuid, why):
        self._send({}, PROVIDER_GONE, {
            'provider_uuid': provider_uuid, 'why': why,
            'at': timeutils.utcnow().isoformat()})

    def ledger_repaired(self, provider_uuids):
        self._send({}, REPAIRED, {
            'provider_uuids': sorted(provider_uuids),
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
            'start': usage_records.moment(row['start_time']),
            'end': usage_records.moment(row['end_time']),
            'hosts': sorted(hosts),
            'why': why, 'at': timeutils.utcnow().isoformat()})

    def reservation_moved(self, resource_type, row, maintenance_id, start,
                          end, reason=None):
        """A reservation that had not started (either plugin's record,

        before the move) was placed again, in its own window, off hosts
        an operator's maintenance takes from ``start`` to ``end``.
        """
        self._send(self._ctx(row['project_id']), MOVED, {
            'resource_type': resource_type,
            'reservation_id': row['reservation_id'],
            'lease_id': row['lease_id'], 'project_id': row['project_id'],
            'start': usage_records.moment(row['start_time']),
            'end': usage_records.moment(row['end_time']),
            'maintenance_id': maintenance_id,
            'maintenance_start': usage_records.moment(start),
            'maintenance_end': usage_records.moment(end),
            'why': reason, 'at': timeutils.utcnow().isoformat()})

    # backfill servers (cloud.backfill)

    @staticmethod
    def _backfill(server, until):
        return {'instance_id': server.id,
                'project_id': getattr(server, 'tenant_id', None),
                'user_id': getattr(server, 'user_id', None),
                'flavor': (getattr(server, 'flavor', None) or {}).get(
                    'original_name'),
                'started_at': getattr(server, 'created', None),
                'until': usage_records.moment(until)}

    def backfill_warning(self, server, until):
        """A backfill server is shelved at ``until``: soon."""
        body = self._backfill(server, until)
        body['at'] = timeutils.utcnow().isoformat()
        self._send(self._ctx(body['project_id']), BACKFILL_WARNING, body)

    def backfill_ended(self, server, until, at):
        """A backfill server was shelved at ``at`` (its usage record)."""
        body = self._backfill(server, until)
        body['ended_at'] = usage_records.moment(at)
        self._send(self._ctx(body['project_id']), BACKFILL_END, body)


class HostUsageNotifier(UsageNotifier):
    """Usage events of pcloud:host reservations, one per state entered."""

    def __init__(self, conf_, **kwargs):
        kwargs.setdefault('publisher_id', HOST_PUBLISHER)
        super().__init__(conf_, **kwargs)

    def state_entered(self, row, previous=None, held_from=None,
                      held_to=None, instances=()):
        self.host_reservation(row, previous, held_from, held_to,
                              instances=instances)
