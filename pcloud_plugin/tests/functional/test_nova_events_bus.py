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

"""cloud.nova_events on a real RabbitMQ whose link to blazar-manager goes

down: what Nova sends meanwhile waits in the listeners' pool queue and
is followed when the link is back, once each.
"""

import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import uuid

import oslo_messaging as messaging

from pcloud_plugin.cloud import nova_events
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.cloud import test_nova_events as unit

RABBIT = ('127.0.0.1', 5672)


class _Link(object):
    """A TCP relay to RabbitMQ on a port of its own, cut and restored by

    the test: blazar-manager's side of the bus.
    """

    def __init__(self, target):
        self.target = target
        probe = socket.socket()
        probe.bind(('127.0.0.1', 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._server = None
        self._open = []
        self._guard = threading.Lock()

    def up(self):
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(('127.0.0.1', self.port))
        server.listen(16)
        self._server = server
        threading.Thread(target=self._accept, args=(server,),
                         daemon=True).start()

    def down(self):
        """Refuse new connections and break those open."""
        server, self._server = self._server, None
        if server is not None:
            # Shut first: a close alone leaves a blocked accept() (and
            # so the port) listening.
            try:
                server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            server.close()
        with self._guard:
            open_, self._open = self._open, []
        for sock in open_:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, server):
        while True:
            try:
                near, _address = server.accept()
            except OSError:
                return  # closed: down
            try:
                far = socket.create_connection(self.target)
            except OSError:
                near.close()
                continue
            with self._guard:
                self._open += [near, far]
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(a, b),
                                 daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _rabbitmqctl(*args):
    subprocess.run(('rabbitmqctl',) + args, check=True, capture_output=True,
                   timeout=120)


class BusDownTests(base.TestCase):

    def setUp(self):
        super().setUp()
        try:
            socket.create_connection(RABBIT, timeout=3).close()
        except OSError as e:
            self.skipTest('no RabbitMQ for this test: %s' % e)
        if not shutil.which('rabbitmqctl'):
            self.skipTest('no rabbitmqctl to make a virtual host for this '
                          'test')
        vhost = 'pcloud_bus_%s' % uuid.uuid4().hex[:12]
        _rabbitmqctl('add_vhost', vhost)
        self.addCleanup(_rabbitmqctl, 'delete_vhost', vhost)
        _rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*',
                     '.*')
        self.link = _Link(RABBIT)
        self.link.up()
        self.addCleanup(self.link.down)
        url = 'rabbit://guest:guest@%s:%d/' + urllib.parse.quote(vhost)
        self.conf([], project='pcloud')
        self.conf.set_override('nova_notifications', True, group='pcloud')
        # Nova sends to its own exchange ([DEFAULT] control_exchange,
        # registered with the first transport).
        messaging.get_notification_transport(self.conf, url='fake:/')
        self.conf.set_override('control_exchange', 'nova')
        # Nova's side reaches RabbitMQ directly; ours through the link.
        self.nova = messaging.Notifier(
            messaging.get_notification_transport(
                self.conf, url=url % RABBIT), 'nova-compute:cn1',
            driver='messagingv2', topics=['versioned_notifications'])
        self.mirror = unit._Mirror()
        self.useFixture(base.fixtures.MockPatch(
            'pcloud_plugin.db.providers.provider_uuid_named',
            lambda context, name: 'uuid-' + name))
        listener = nova_events.listener(
            nova_events.NovaEvents(lambda: self.mirror, None),
            messaging.get_notification_transport(
                self.conf, url=url % ('127.0.0.1', self.link.port)))
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)

    def _deleted(self, instance):
        self.nova.info({}, 'instance.delete.end', unit._payload(
            'InstanceActionPayload', uuid=instance, node='cn1'))

    def _followed(self, timeout):
        """The instances followed, once at least one is or in timeout."""
        deadline = time.monotonic() + timeout
        while not self.mirror.follows and time.monotonic() < deadline:
            time.sleep(0.05)
        return [c for _roots, consumers in self.mirror.follows
                for c in consumers]

    def test_events_sent_while_the_link_is_down_are_followed_once_back(self):
        before, during, after = (str(uuid.uuid4()) for _ in range(3))
        self._deleted(before)
        self.assertEqual([before], self._followed(30))
        del self.mirror.follows[:]

        self.link.down()
        self._deleted(during)
        self.assertEqual([], self._followed(2))

        self.link.up()
        # oslo.messaging reconnects, backing off up to 30 s a try.
        self.assertEqual([during], self._followed(90))
        del self.mirror.follows[:]
        self._deleted(after)
        self.assertEqual([after], self._followed(30))
        # Nothing followed twice.
        time.sleep(1)
        self.assertEqual([after], self._followed(0))
