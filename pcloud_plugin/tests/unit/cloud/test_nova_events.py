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

"""cloud.nova_events: which providers each Nova event has read again.

The mirror and Nova are recordings here; what a follow does to the
ledger against a real Placement is in functional/test_placement_mirror.
"""

import time
import types
from unittest import mock

import fixtures
import oslo_messaging as messaging

from pcloud_plugin.cloud import nova_events
from pcloud_plugin.tests import base

INSTANCE = 'a1a1a1a1-0000-4000-8000-000000000001'


def _payload(name, **data):
    return {'nova_object.name': name, 'nova_object.namespace': 'nova',
            'nova_object.version': '1.0', 'nova_object.data': data}


def _instance(**data):
    return _payload('InstanceActionPayload', uuid=INSTANCE, **data)


class _Mirror(object):
    def __init__(self):
        self.follows = []

    def follow(self, context, uuids=(), consumers=()):
        self.follows.append((set(uuids), list(consumers)))
        return types.SimpleNamespace(
            read=[], usage_written=[], requests=0, seconds=0.0,
            consumers={c: {'uuid-cn1': {'VCPU': 1}} for c in consumers})


class NovaEventsTests(base.TestCase):

    def setUp(self):
        super().setUp()
        self.mirror = _Mirror()
        self.nova = mock.Mock()
        self.events = nova_events.NovaEvents(lambda: self.mirror,
                                             lambda: self.nova)
        # The ledger's providers, by name.
        names = {'cn1': 'uuid-cn1', 'cn2': 'uuid-cn2'}
        self.useFixture(fixtures.MockPatch(
            'pcloud_plugin.db.providers.provider_uuid_named',
            lambda context, name: names.get(name)))

    def test_a_delete_reads_its_host_and_where_it_was(self):
        self.events.handle('instance.delete.end',
                           _instance(host='cn1', node='cn1'))
        self.assertEqual([({'uuid-cn1'}, [INSTANCE])], self.mirror.follows)
        self.nova.migrations.list.assert_not_called()

    def test_the_registry_hears_where_placement_has_the_instance(self):
        heard = []
        self.events.on_instance.append(
            lambda context, uuid, allocations: heard.append(
                (uuid, allocations)))
        self.events.handle('instance.create.end', _instance(node='cn1'))
        self.assertEqual([(INSTANCE, {'uuid-cn1': {'VCPU': 1}})], heard)

    def test_an_offloaded_instance_without_a_node_is_looked_for(self):
        self.events.handle('instance.shelve_offload.end',
                           _instance(host=None, node=None))
        self.assertEqual([(set(), [INSTANCE])], self.mirror.follows)

    def test_a_move_reads_both_ends_of_the_last_migration(self):
        self.nova.migrations.list.return_value = [
            types.SimpleNamespace(id=1, created_at='2026-11-01T00:00:00',
                                  source_node='cn2', dest_node='cn9'),
            types.SimpleNamespace(id=2, created_at='2026-11-02T00:00:00',
                                  source_node='cn1', dest_node='cn2')]
        self.events.handle('instance.resize_confirm.end',
                           _instance(host='cn2', node='cn2'))
        self.assertEqual([({'uuid-cn1', 'uuid-cn2'}, [INSTANCE])],
                         self.mirror.follows)
        self.nova.migrations.list.assert_called_once_with(
            instance_uuid=INSTANCE)

    def test_a_compute_service_change_reads_its_nodes_and_heals(self):
        healed = []
        self.events.on_service.append(lambda: healed.append(1))
        self.nova.hypervisors.list.return_value = [
            types.SimpleNamespace(hypervisor_hostname='cn1',
                                  service={'host': 'h1'}),
            types.SimpleNamespace(hypervisor_hostname='cn2',
                                  service={'host': 'h2'})]
        self.events.handle('service.update', _payload(
            'ServiceStatusPayload', host='h1', binary='nova-compute',
            disabled=True))
        self.assertEqual([({'uuid-cn1'}, [])], self.mirror.follows)
        self.assertEqual([1], healed)

    def test_other_services_are_left_alone(self):
        healed = []
        self.events.on_service.append(lambda: healed.append(1))
        self.events.handle('service.update', _payload(
            'ServiceStatusPayload', host='h1', binary='nova-scheduler'))
        self.assertEqual(([], []), (self.mirror.follows, healed))

    def test_a_failure_is_logged_and_left_to_the_periodic_pass(self):
        self.mirror.follow = mock.Mock(side_effect=RuntimeError('down'))
        logged = self.useFixture(fixtures.FakeLogger())
        self.events.info({}, 'nova-compute:cn1', 'instance.delete.end',
                         _instance(node='cn1'), {})
        self.assertIn('instance.delete.end not followed: down',
                      logged.output)

    def test_only_the_events_that_move_capacity_pass_the_filter(self):
        rule = nova_events.NovaEvents.filter_rule
        for event_type in ('instance.delete.end', 'instance.create.end',
                           'instance.live_migration_post.end',
                           'instance.evacuate', 'service.update'):
            self.assertTrue(rule.match({}, 'nova-compute:cn1', event_type,
                                       {}, {}), event_type)
        for event_type in ('instance.delete.start', 'instance.update',
                           'instance.power_off.end', 'aggregate.create.end',
                           'instance.create.endx'):
            self.assertFalse(rule.match({}, 'nova-compute:cn1', event_type,
                                        {}, {}), event_type)


class ListenerTests(base.TestCase):
    """Nova's notifications reach the endpoint over oslo.messaging, in

    the pool every blazar-manager shares.
    """

    def test_a_notification_on_novas_topic_is_followed(self):
        self.conf([], project='pcloud')
        # Nova sends to its own exchange ([DEFAULT] control_exchange,
        # registered with the first transport).
        messaging.get_notification_transport(self.conf, url='fake:/')
        self.conf.set_override('control_exchange', 'nova')
        transport = messaging.get_notification_transport(
            self.conf, url='fake:/')
        mirror = _Mirror()
        endpoint = nova_events.NovaEvents(lambda: mirror, mock.Mock())
        self.useFixture(fixtures.MockPatch(
            'pcloud_plugin.db.providers.provider_uuid_named',
            lambda context, name: 'uuid-' + name))
        listener = nova_events.listener(endpoint, transport)
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)
        notifier = messaging.Notifier(
            transport, 'nova-compute:cn1', driver='messagingv2',
            topics=['versioned_notifications'])
        notifier.info({}, 'instance.update', _instance(node='cn1'))
        notifier.info({}, 'instance.delete.end', _instance(node='cn1'))
        deadline = 100
        while not mirror.follows and deadline:
            deadline -= 1
            time.sleep(0.05)
        self.assertEqual([({'uuid-cn1'}, [INSTANCE])], mirror.follows)

    def test_no_listener_when_turned_off(self):
        self.conf.set_override('nova_notifications', False, group='pcloud')
        self.assertIsNone(nova_events.listener(mock.Mock(), mock.Mock()))
