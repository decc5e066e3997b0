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
"""Reservation usage events for billing and metering.

They go where the host service sends its own notifications: the driver,
topics and transport of its [oslo_messaging_notifications] group (in
blazar-manager, next to Blazar's lease.* events). Event types:

``pcloud.reservation.start``
    a reservation's slots became usable (Nova and Placement objects made)
``pcloud.reservation.end``
    they stopped being usable (objects removed, capacity released)
``pcloud.reconcile``
    the reconciler finished or undid an operation a crash or an
    unreachable service interrupted (what, on what, since when, and what
    it did)
``pcloud.placement.provider_gone``
    a provider is gone from Placement while ledger claims on it are live:
    the ledger keeps it (and them) until an operator acts

The payload says which reservation, lease and project, the slot size, and
how many slots each host holds, so a consumer can bill slot-hours.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)

PUBLISHER = 'pcloud.instance-reservation'
START = 'pcloud.reservation.start'
END = 'pcloud.reservation.end'
RECONCILED = 'pcloud.reconcile'
PROVIDER_GONE = 'pcloud.placement.provider_gone'


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

    def _send(self, context, event_type, payload):
        try:
            self._get().info(context or {}, event_type, payload)
        except Exception:
            LOG.exception('Could not send %s for %s', event_type,
                          payload.get('reservation_id',
                                      payload.get('subject')))

    def reservation_started(self, context, reservation):
        self._send(context, START, payload(reservation))

    def reservation_ended(self, context, reservation):
        self._send(context, END, payload(reservation))

    def reconciled(self, context, what):
        self._send(context, RECONCILED, what)

    def provider_gone(self, provider_uuid, why):
        self._send({}, PROVIDER_GONE, {
            'provider_uuid': provider_uuid, 'why': why,
            'at': timeutils.utcnow().isoformat()})


def payload(reservation):
    """The event body of a reservation record (db.reservations.get)."""
    def moment(value):
        return value.isoformat() if value is not None else None

    return {
        'reservation_id': reservation['reservation_id'],
        'lease_id': reservation['lease_id'],
        'project_id': reservation['project_id'],
        'resource_type': 'virtual:instance',
        'vcpus': reservation['vcpus'],
        'memory_mb': reservation['memory_mb'],
        'disk_gb': reservation['disk_gb'],
        'amount': reservation['amount'],
        'affinity': reservation['affinity'],
        'flavor_id': reservation['flavor_id'],
        'resource_class': reservation['resource_class'],
        'start': moment(reservation['start_time']),
        'end': moment(reservation['end_time']),
        'at': timeutils.utcnow().isoformat(),
        'slots': [{'host': s['host_name'], 'host_uuid': s['host_uuid'],
                   'slots': s['slots']} for s in reservation['slots']],
    }
