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

"""cloud.mirror against a real Placement over HTTP: passes read only what

moved, and usage that is not ours is held in the ledger.
"""

import datetime
from unittest import mock

from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import mirror
from pcloud_plugin.cloud import promises
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional import placement_service

PCLOUD_AGG = 'aaaaaaaa-0000-4000-8000-000000000001'


class _Mirrored(base.LedgerTestCase):
    """Three computes in a real Placement, cn3 in a pcloud; a Mirror."""

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(placement_service.PlacementService())
        placement_service.use_placement(self.conf, self.placement.url)
        self.hosts = {}
        for name in ('cn1', 'cn2', 'cn3'):
            self.hosts[name] = self.add_compute(name)
        self.placement.set_aggregates(self.hosts['cn3'], [PCLOUD_AGG])
        self.notifier = mock.Mock()
        self.mirror = mirror.Mirror(
            placement_client.get_adapter(),
            lambda: ({PCLOUD_AGG}, set()), self.notifier)

    def add_compute(self, name):
        uuid = self.placement.create_provider(name)
        self.placement.set_inventories(uuid, {
            'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192},
            'DISK_GB': {'total': 100}})
        return uuid

    def boot(self, host, memory_mb, consumer=None):
        consumer = consumer or uuidutils.generate_uuid()
        self.placement.allocate(consumer, {
            self.hosts[host]: {'VCPU': 1, 'MEMORY_MB': memory_mb}})
        return consumer

    def usage(self, host):
        held = db_claims.get_claims(self.context, mirror.usage_consumer(
            self.hosts[host]))
        if held is None:
            return None
        self.assertIsNone(held['end'])  # open-ended
        return held['amounts'][self.hosts[host]]


class MirrorTests(_Mirrored):

    def test_a_pass_reads_only_what_moved(self):
        first = self.mirror.run(self.context)
        self.assertEqual(sorted(self.hosts.values()), first.read)
        self.assertEqual(1 + 4 * 3, first.requests)
        again = self.mirror.run(self.context)
        self.assertEqual(([], 1), (again.read, again.requests))
        # A ratio change (a pcloud's, or an operator's) and a new compute.
        self.placement.set_inventories(self.hosts['cn1'], {
            'VCPU': {'total': 8, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 8192}, 'DISK_GB': {'total': 100}})
        self.hosts['cn4'] = self.add_compute('cn4')
        moved = self.mirror.run(self.context)
        self.assertEqual(sorted([self.hosts['cn1'], self.hosts['cn4']]),
                         moved.read)
        self.assertEqual(1 + 4 * 2, moved.requests)
        self.assertEqual(4.0, db_providers.get_inventories(
            self.context, self.hosts['cn1'])['VCPU'].allocation_ratio)
        # Reservable without any command: the ledger claims on it.
        db_claims.claim(self.context, 'c', {self.hosts['cn4']: {'VCPU': 8}})

    def test_usage_that_is_not_ours_is_held_until_it_goes(self):
        self.mirror.run(self.context)
        instance = self.boot('cn1', 2048)
        self.mirror.run(self.context)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 2048}, self.usage('cn1'))
        # A claim beside it fits in what is left, not more.
        later = timeutils.utcnow() + datetime.timedelta(days=30)
        self.assertRaises(
            exception.CapacityExceeded, db_claims.claim, self.context, 'r1',
            {self.hosts['cn1']: {'MEMORY_MB': 6145}}, later,
            later + datetime.timedelta(hours=1))
        db_claims.claim(self.context, 'r2',
                        {self.hosts['cn1']: {'MEMORY_MB': 6144}}, later,
                        later + datetime.timedelta(hours=1))
        self.placement.client.delete('/allocations/%s' % instance)
        self.mirror.run(self.context)
        self.assertIsNone(self.usage('cn1'))

    def test_our_consumers_and_whole_hosts_do_not_count(self):
        self.mirror.run(self.context)
        # A promise of cn1 (in two pieces: see promises.pieces), and an
        # instance booted into a reservation (a slot of its class on our
        # child provider, and its ticket).
        for piece in (0, 1):
            self.placement.allocate(promises.promise_consumer(
                self.hosts['cn1'], piece), {
                    self.hosts['cn1']: {'MEMORY_MB': 1024}})
        rc = 'CUSTOM_RESERVATION_X'
        self.placement.client.put('/resource_classes/%s' % rc)
        child = self.placement.create_provider(
            resources.CHILD_PREFIX + 'cn1', parent=self.hosts['cn1'],
            uuid=resources.child_uuid(self.hosts['cn1']))
        self.placement.set_inventories(child, {rc: {'total': 2}})
        reserved = uuidutils.generate_uuid()
        self.placement.allocate(reserved, {
            child: {rc: 1}, self.hosts['cn1']: {'MEMORY_MB': 1}})
        # Instances of a pcloud's host run inside its whole-host claim.
        self.boot('cn3', 4096)
        self.mirror.run(self.context)
        self.assertIsNone(self.usage('cn1'))
        self.assertIsNone(self.usage('cn3'))
        # Someone else's boot on cn1 does count, only it.
        self.boot('cn1', 512)
        self.mirror.run(self.context)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512}, self.usage('cn1'))

    def test_a_provider_gone_with_live_claims_is_kept_and_reported(self):
        self.mirror.run(self.context)
        db_claims.claim(self.context, 'r', {self.hosts['cn2']: {'VCPU': 1}})
        self.placement.delete_provider(self.hosts['cn2'])
        report = self.mirror.run(self.context)
        self.assertEqual([self.hosts['cn2']], report.sync.kept)
        self.assertIsNotNone(db_providers.provider_name(self.context,
                                                        self.hosts['cn2']))
        self.notifier.provider_gone.assert_called_once_with(
            self.hosts['cn2'], mock.ANY)

    def test_refresh_reads_the_providers_about_to_be_claimed(self):
        self.mirror.run(self.context)
        self.assertFalse(self.mirror.refresh(self.context,
                                             [self.hosts['cn1']]))
        self.boot('cn1', 1024)
        self.assertTrue(self.mirror.refresh(self.context,
                                            [self.hosts['cn1']]))
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 1024}, self.usage('cn1'))

    def test_a_pass_that_repairs_usage_says_so(self):
        self.mirror.run(self.context)
        self.notifier.ledger_repaired.assert_not_called()
        self.boot('cn1', 1024)
        self.mirror.run(self.context)
        self.notifier.ledger_repaired.assert_called_once_with(
            [self.hosts['cn1']])
        self.mirror.run(self.context)
        self.assertEqual(1, self.notifier.ledger_repaired.call_count)


class FollowTests(_Mirrored):
    """Mirror.follow, what Nova's events (cloud.nova_events) call: the

    usage of the providers named, and of those where a consumer is or
    was, read again at once, whatever their generation.
    """

    def test_a_deleted_allocation_leaves_the_ledger_at_once(self):
        instance = self.boot('cn1', 2048)
        self.mirror.run(self.context)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 2048}, self.usage('cn1'))
        self.placement.client.delete('/allocations/%s' % instance)
        # A pass does not see it: the generation did not move, and this
        # provider's turn among the rechecks is not now.
        self.conf.set_override('placement_mirror_usage_rechecks', 0,
                               group='pcloud')
        self.mirror.run(self.context)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 2048}, self.usage('cn1'))
        # Nova's delete names the instance (gone from Placement now): the
        # mirror remembers where it was.
        report = self.mirror.follow(self.context, consumers=[instance])
        self.assertEqual([self.hosts['cn1']], report.read)
        self.assertEqual([self.hosts['cn1']], report.usage_written)
        self.assertIsNone(self.usage('cn1'))

    def test_a_new_instance_is_held_where_placement_has_it(self):
        self.mirror.run(self.context)
        instance = self.boot('cn2', 512)
        report = self.mirror.follow(self.context, consumers=[instance])
        self.assertEqual([self.hosts['cn2']], report.read)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512}, self.usage('cn2'))
        # Again (a duplicate event): nothing more is counted.
        again = self.mirror.follow(self.context, consumers=[instance])
        self.assertEqual([], again.usage_written)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512}, self.usage('cn2'))

    def test_a_moved_instance_is_counted_once_where_it_is(self):
        self.mirror.run(self.context)
        instance = self.boot('cn1', 1024)
        self.mirror.follow(self.context, consumers=[instance])
        held = self.placement.client.get('/allocations/%s' % instance).json()
        self.placement.client.put('/allocations/%s' % instance, json={
            'allocations': {self.hosts['cn2']: {'resources': {
                'VCPU': 1, 'MEMORY_MB': 1024}}},
            'project_id': 'proj', 'user_id': 'user',
            'consumer_generation': held['consumer_generation'],
            'consumer_type': 'INSTANCE'})
        report = self.mirror.follow(self.context, consumers=[instance])
        self.assertEqual(sorted([self.hosts['cn1'], self.hosts['cn2']]),
                         report.read)
        self.assertIsNone(self.usage('cn1'))
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 1024}, self.usage('cn2'))

    def test_events_late_or_out_of_order_leave_placements_state(self):
        self.mirror.run(self.context)
        instance = self.boot('cn1', 1024)
        # An event read before the delete: counted as it runs, once.
        self.mirror.follow(self.context, consumers=[instance])
        self.mirror.follow(self.context, consumers=[instance])
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 1024}, self.usage('cn1'))
        self.placement.client.delete('/allocations/%s' % instance)
        # Its create's event, late, after the delete, then the delete's
        # twice: whatever the order, Placement's state now.
        for _event in range(3):
            self.mirror.follow(self.context, consumers=[instance])
            self.assertIsNone(self.usage('cn1'))

    def test_a_host_is_read_with_its_reservation_child(self):
        self.mirror.run(self.context)
        child = self.placement.create_provider(
            resources.CHILD_PREFIX + 'cn1', parent=self.hosts['cn1'],
            uuid=resources.child_uuid(self.hosts['cn1']))
        rc = 'CUSTOM_RESERVATION_Y'
        self.placement.client.put('/resource_classes/%s' % rc)
        self.placement.set_inventories(child, {rc: {'total': 2}})
        self.mirror.run(self.context)
        reserved = uuidutils.generate_uuid()
        self.placement.allocate(reserved, {
            child: {rc: 1}, self.hosts['cn1']: {'MEMORY_MB': 256}})
        report = self.mirror.follow(self.context, [self.hosts['cn1']])
        self.assertEqual(sorted([self.hosts['cn1'], child]), report.read)
        # Booted into a reservation: not usage of others.
        self.assertIsNone(self.usage('cn1'))
