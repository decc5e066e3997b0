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
"""Usage notifications through a real RabbitMQ, where one answers.

Each test uses its own exchange and topic, and deletes them after.
"""

import datetime
import os
import socket
import threading

import kombu
from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_utils import uuidutils

from pcloud_plugin.notifications import usage
from pcloud_plugin.tests import base

RABBIT = os.environ.get('PCLOUD_TEST_RABBIT_URL',
                        'rabbit://guest:guest@127.0.0.1:5672/')


def _answers(host='127.0.0.1', port=5672):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


class _Collector:
    def __init__(self):
        self.events = []
        self.arrived = threading.Event()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.events.append((publisher_id, event_type, payload))
        if len(self.events) == 2:
            self.arrived.set()


def reservation():
    return {
        'reservation_id': uuidutils.generate_uuid(),
        'lease_id': uuidutils.generate_uuid(), 'project_id': 'p1',
        'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10, 'amount': 3,
        'affinity': None, 'flavor_id': 'f1',
        'resource_class': 'CUSTOM_RESERVATION_X',
        'start_time': datetime.datetime(2031, 1, 1, 10),
        'end_time': datetime.datetime(2031, 1, 1, 12),
        'slots': [{'host_name': 'cn1', 'host_uuid': 'u1', 'slots': 2},
                  {'host_name': 'cn2', 'host_uuid': 'u2', 'slots': 1}]}


class RabbitNotificationTests(base.TestCase):

    def setUp(self):
        super().setUp()
        if not _answers():
            self.skipTest('no RabbitMQ answers on 127.0.0.1:5672')
        # A private config, so the exchange is ours alone.
        conf = cfg.ConfigOpts()
        for group, opts in messaging_opts.list_opts():
            conf.register_opts(opts, group=group)
        conf([], project='pcloud', default_config_files=[])
        self.exchange = 'pcloud-test-%s' % uuidutils.generate_uuid()
        self.topic = 'pcloud-usage-%s' % uuidutils.generate_uuid()
        conf.set_override('control_exchange', self.exchange)
        self.transport = messaging.get_notification_transport(
            conf, url=RABBIT)
        self.addCleanup(self._delete_queue_and_exchange)
        self.addCleanup(self.transport.cleanup)
        self.conf_ = conf

    def _delete_queue_and_exchange(self):
        with kombu.Connection(RABBIT.replace('rabbit://', 'amqp://')) as c:
            channel = c.channel()
            channel.queue_delete('%s.info' % self.topic)
            channel.exchange_delete(self.exchange)

    def test_start_and_end_arrive_with_the_slots(self):
        collector = _Collector()
        listener = messaging.get_notification_listener(
            self.transport, [messaging.Target(topic=self.topic)],
            [collector], executor='threading')
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)

        notifier = usage.UsageNotifier(self.conf_, transport=self.transport,
                                       topics=[self.topic],
                                       driver='messagingv2')
        res = reservation()
        notifier.reservation_started({'project_id': 'p1'}, res)
        notifier.reservation_ended({'project_id': 'p1'}, res)
        self.assertTrue(collector.arrived.wait(30),
                        'notifications did not arrive: %s'
                        % collector.events)
        (start, end) = collector.events
        self.assertEqual((usage.PUBLISHER, usage.START), start[:2])
        self.assertEqual((usage.PUBLISHER, usage.END), end[:2])
        payload = start[2]
        self.assertEqual(res['reservation_id'], payload['reservation_id'])
        self.assertEqual([{'host': 'cn1', 'host_uuid': 'u1', 'slots': 2},
                          {'host': 'cn2', 'host_uuid': 'u2', 'slots': 1}],
                         payload['slots'])
        self.assertEqual(('2031-01-01T10:00:00', '2031-01-01T12:00:00'),
                         (payload['start'], payload['end']))
        self.assertEqual('p1', payload['project_id'])


class NotifierFailureTests(base.TestCase):

    def test_a_messaging_failure_never_breaks_the_lease(self):
        class Broken:
            def info(self, *args):
                raise RuntimeError('broker gone')

        notifier = usage.UsageNotifier(self.conf)
        notifier._notifier = Broken()
        notifier.reservation_started({}, reservation())  # logs, no raise
