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

"""The registry of instances in reservations (reservations.registry),

against a real Placement and Blazar's manager: what Nova's events tell
(follow_instance, with what Placement allocates the instance) and what
the periodic pass repairs when events are lost (repair_from_cloud).
"""

import datetime
from unittest import mock

from pcloud_plugin.blazar.api import host_guard
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.notifications import usage
from pcloud_plugin.reservations import lease_states
from pcloud_plugin.reservations import registry
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin

BOOTED = ('6c2b9f1e-3d4a-4b5c-8d7e-000000000001',
          '6c2b9f1e-3d4a-4b5c-8d7e-000000000002')


class RegistryTests(base.BlazarTestCase):

    def setUp(self):
        super().setUp()
        self.lease_id, self.rid, self.rc, self.host_name = (
            self.started_on_one_host(2))
        self.host = self.hosts[self.host_name]
        self.adapter = placement_client.get_adapter()

    def boot(self, instance):
        """As Nova boots with the reserved flavor: a slot of the class on

        our child provider.
        """
        self.placement.allocate(instance, {
            resources.child_uuid(self.host): {self.rc: 1}})

    def told(self, instance):
        """Nova's event about ``instance``, as cloud.nova_events tells."""
        return registry.follow_instance(
            self.context, instance,
            placement_client.read_consumer(self.adapter, instance))

    def shown(self):
        """{instance: left_at} on the lease, as its lessee is shown it."""
        (lease,) = lease_states.find(self.context, lease_id=self.lease_id)
        (reservation,) = lease_states.with_instances(
            self.context, lease)['reservations']
        return {stay['id']: stay['left_at']
                for stay in reservation['instances']}

    def test_an_instance_joins_when_booted_and_leaves_when_deleted(self):
        self.boot(BOOTED[0])
        self.assertTrue(self.told(BOOTED[0]))
        self.assertEqual({BOOTED[0]: None}, self.shown())
        # The same event again changes nothing.
        self.assertFalse(self.told(BOOTED[0]))
        self.placement.client.delete('/allocations/%s' % BOOTED[0])
        self.assertTrue(self.told(BOOTED[0]))
        self.assertIsNotNone(self.shown()[BOOTED[0]])
        self.assertFalse(self.told(BOOTED[0]))

    def test_an_instance_outside_reservations_is_not_registered(self):
        # Where Placement would have an on-demand boot: other classes.
        for host in self.hosts.values():
            self.assertFalse(registry.follow_instance(
                self.context, BOOTED[0], {host: {'VCPU': 1}}))
        self.assertEqual({}, self.shown())

    def test_the_closing_usage_record_lists_its_instances(self):
        for instance in BOOTED:
            self.boot(instance)
            self.told(instance)
        self.placement.client.delete('/allocations/%s' % BOOTED[0])
        self.told(BOOTED[0])
        self.end(self.lease_id)
        (ended,) = self.notifications.wait_for(usage.END)
        self.assertEqual(
            {BOOTED[0]: True, BOOTED[1]: False},
            {i['id']: i['left_at'] is not None for i in ended['instances']})
        self.assertTrue(all(i['joined_at'] for i in ended['instances']))

    def test_blazar_is_told_what_holds_the_host_after_the_end(self):
        """blazar-api's host guard (issue 32): after its end, what holds

        the host is the instances still running, not a reservation.
        """
        self.boot(BOOTED[0])
        self.assertIn('reservations of pcloud-plugin hold it until',
                      host_guard.why_held(self.host_name, []))
        self.end(self.lease_id)
        self.assertEqual(res_db.ENDING,
                         res_db.get(self.context, self.rid)['state'])
        self.assertEqual(
            'instances booted into ended reservation(s) %s of pcloud-plugin '
            'still run there; their capacity is held until they are '
            'deleted' % self.rid, host_guard.why_held(self.host_name, []))

    def test_the_periodic_pass_repairs_what_no_event_told(self):
        nova = mock.Mock()  # no whole-host lease here to ask Nova about
        for instance in BOOTED:
            self.boot(instance)
        # Both creations' events lost.
        self.assertEqual((2, 0), registry.repair_from_cloud(
            self.context, self.adapter, nova))
        self.assertEqual({BOOTED[0]: None, BOOTED[1]: None}, self.shown())
        self.assertEqual((0, 0), registry.repair_from_cloud(
            self.context, self.adapter, nova))
        # A deletion's event lost.
        self.placement.client.delete('/allocations/%s' % BOOTED[0])
        self.assertEqual((0, 1), registry.repair_from_cloud(
            self.context, self.adapter, nova))
        self.assertIsNotNone(self.shown()[BOOTED[0]])
        # The lease ends: its instances run on, no longer in it.
        self.end(self.lease_id)
        self.assertEqual((0, 1), registry.repair_from_cloud(
            self.context, self.adapter, nova))
        self.assertTrue(all(self.shown().values()))
        nova.servers.list.assert_not_called()


class HostLeaseRegistryTests(test_host_plugin.HostLeaseTestCase):
    """Servers booted on a host a whole-host lease put into its pcloud

    run in that lease; what ran there before it started does not.
    """

    def boot(self, host, minutes_after_start):
        server = self.nova.add_server(host, base.PROJECT)
        setattr(server, 'OS-SRV-USG:launched_at', (
            self.started + datetime.timedelta(minutes=minutes_after_start)
        ).isoformat())
        return server.id

    def shown(self, lease):
        (found,) = lease_states.find(self.context, lease_id=lease['id'])
        (reservation,) = lease_states.with_instances(
            self.context, found)['reservations']
        return {stay['id']: stay['left_at']
                for stay in reservation['instances']}

    def test_servers_booted_on_a_leased_host_join_its_lease(self):
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        self.start(lease['id'])
        self.started = self.row(lease)['start_time']
        (host,) = self.leased(lease)
        adapter = placement_client.get_adapter()
        before = self.boot(host, -1)
        told = self.boot(host, 1)
        # Nova's event: what Placement allocates it, on the leased host.
        self.assertTrue(registry.follow_instance(
            self.context, told, {self.hosts[host]: {'VCPU': 2}}))
        self.assertEqual({told: None}, self.shown(lease))
        # Another's event lost: the pass registers it; the one booted
        # before the lease started is not the lessee's.
        untold = self.boot(host, 2)
        self.assertEqual((1, 0), registry.repair_from_cloud(
            self.context, adapter, self.nova))
        self.assertEqual({told: None, untold: None}, self.shown(lease))
        self.assertNotIn(before, self.shown(lease))
        # Deleted: Nova's event takes it from the lease.
        del self.nova.server_objs[told]
        self.assertTrue(registry.follow_instance(self.context, told, {}))
        self.assertIsNotNone(self.shown(lease)[told])
        self.assertEqual((0, 0), registry.repair_from_cloud(
            self.context, adapter, self.nova))
        # Its closing usage record says what ran under it.
        self.end(lease['id'])
        (ended,) = self.notifications.wait_for(
            usage.host_event_type('ENDED'))
        self.assertEqual({told: True, untold: False},
                         {i['id']: i['left_at'] is not None
                          for i in ended['instances']})
