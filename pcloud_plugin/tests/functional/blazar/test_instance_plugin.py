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
"""virtual:instance leases through Blazar's own manager and v1 API, with

our plugin loaded from its entry point (see base.BlazarTestCase for the
hosts: 7 slots fit on cn1, 4 on cn2, none on cn3, which is in a pcloud).
"""

import dataclasses
import datetime
import gc
import weakref

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
from blazar.utils import trusts
from blazarclient import exception as client_exc
import fixtures
from novaclient import exceptions as nova_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.blazar import instance_plugin
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.tests.functional.blazar import base


def _reservation_of(lease):
    (reservation,) = lease['reservations']
    return reservation


class LeaseAPITests(base.BlazarAPITestCase):

    def test_lease_lifecycle_through_blazarclient(self):
        lease = self.client.lease.create(
            'slots', self.minutes(60), self.minutes(120),
            [self.reservation(3)], [])
        reservation = _reservation_of(lease)
        rid = reservation['id']
        # seeds/003's response shape.
        self.assertEqual(
            {'resource_type': 'virtual:instance', 'vcpus': 2,
             'memory_mb': 1024, 'disk_gb': 10, 'amount': 3,
             'affinity': None, 'status': 'pending', 'lease_id': lease['id'],
             'flavor_id': None, 'server_group_id': None},
            {k: reservation[k] for k in (
                'resource_type', 'vcpus', 'memory_mb', 'disk_gb', 'amount',
                'affinity', 'status', 'lease_id', 'flavor_id',
                'server_group_id')})
        self.assertEqual(lease, self.client.lease.get(lease['id']))
        self.assertEqual([lease['id']],
                         [x['id'] for x in self.client.lease.list()])
        # Packed: cn2 takes all 3 and cn1 stays whole.
        row = res_db.get(self.context, rid)
        self.assertEqual([('cn2', 3)],
                         [(s['host_name'], s['slots']) for s in row['slots']])
        claims = self.claims(rid)
        self.assertEqual(30, claims['amounts'][self.hosts['ss']]['DISK_GB'])
        self.assertEqual(6, sum(a.get('VCPU', 0)
                                for a in claims['amounts'].values()))

        self.start(lease['id'])
        shown = _reservation_of(self.client.lease.get(lease['id']))
        self.assertEqual('active', shown['status'])
        self.assertEqual(rid, shown['flavor_id'])
        rc = resources.resource_class(rid)
        self.assertEqual({'cn2': {
            'total': 3, 'reserved': 0, 'min_unit': 1, 'max_unit': 1,
            'step_size': 1, 'allocation_ratio': 1.0}},
            self.reservation_inventories(rc))
        flavor = self.nova.flavor_objs[rid]
        self.assertFalse(flavor.is_public)
        self.assertEqual({base.PROJECT}, flavor.access)
        self.assertEqual((2, 1024, 10), (flavor.vcpus, flavor.ram,
                                         flavor.disk))
        self.assertEqual({'resources:%s' % rc: '1',
                          'resources:VCPU': '0', 'resources:MEMORY_MB': '1',
                          'resources:DISK_GB': '0',
                          'aggregate_instance_extra_specs:reservation': rid},
                         flavor.extra_specs)
        # What the ledger claimed is held in Placement, out of others'
        # reach: cn2's VCPU and memory, the shared storage's disk.
        held = self.placement.client.get(
            '/allocations/%s' % rid, microversion='1.26').json()
        # (A 1 MB ticket per slot stays free where a host's root has the
        # memory; cn2's is on its NUMA children: none here.)
        self.assertEqual(claims['amounts'], {
            uuid: a['resources'] for uuid, a in held['allocations'].items()})
        aggregate = self.nova.aggregate_objs[shown['aggregate_id']]
        self.assertEqual((['cn2'], {'reservation': rid}),
                         (aggregate.hosts, aggregate.metadata))
        (started,) = self.notifications.wait_for('pcloud.reservation.start')
        self.assertEqual(
            (rid, lease['id'], base.PROJECT, 3, rc,
             [{'host': 'cn2', 'host_uuid': self.hosts['cn2'], 'slots': 3}]),
            (started['reservation_id'], started['lease_id'],
             started['project_id'], started['amount'],
             started['resource_class'], started['slots']))

        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease['id'])['status'])
        self.assertIsNone(self.claims(rid))
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % rid).json()['allocations'])
        self.assertEqual({}, self.reservation_inventories(rc))
        self.assertEqual(404, self.placement.client.get(
            '/resource_classes/%s' % rc, raise_exc=False).status_code)
        self.assertNotIn(rid, self.nova.flavor_objs)
        self.assertNotIn(shown['aggregate_id'], self.nova.aggregate_objs)
        self.assertRaises(res_db.ReservationNotFound, res_db.get,
                          self.context, rid)
        (ended,) = self.notifications.wait_for('pcloud.reservation.end')
        self.assertEqual(rid, ended['reservation_id'])

    def test_refusal_says_what_was_short_and_when(self):
        # Once: the minute may turn before the message is checked.
        start, end = self.minutes(60), self.minutes(120)
        held = self.client.lease.create('held', start, end,
                                        [self.reservation(5)], [])
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'too-big', self.minutes(30), self.minutes(150),
            [self.reservation(8)], [])
        message = str(e)
        self.assertIn('Only 6 of 8 slots fit', message)
        # 24 VCPU on cn1 and cn2's NUMA nodes (cn3 is a pcloud's), 10
        # held then: 14 free in all, but counted as slots take them,
        # whole on one provider.
        self.assertIn('Most short: VCPU: a slot takes 2, and the most '
                      'free on any one host (or NUMA node) is 6: room for '
                      '7 of the 8 slots by VCPU alone.', message)
        self.assertNotIn('14 free', message)
        # What others hold, and when, is not a member's to see.
        self.assertNotIn('Busiest', message)
        self.assertNotIn(self.hosts['cn1'], message)
        self.assertEqual([held['id']],
                         [x['id'] for x in self.client.lease.list()])
        self.assertEqual(1, len(res_db.list_reservations(self.context)))
        # An admin is told (the manager works in the trust's context:
        # here an admin's).
        self.useFixture(fixtures.MockPatchObject(
            trusts, 'create_ctx_from_trust',
            side_effect=lambda trust_id: self.blazar_context(
                is_admin=True)))
        with self.blazar_context(is_admin=True):
            e = self.assertRaises(
                mgr_exc.NotEnoughHostsAvailable, self.manager.create_lease,
                {'name': 'admin-too-big', 'start_date': self.minutes(30),
                 'end_date': self.minutes(150), 'events': [],
                 'reservations': [self.reservation(8)],
                 'trust_id': 'trust-id', 'user_id': base.USER})
        self.assertIn('Busiest from %s:00 to %s:00, when other '
                      'reservations hold 10 of it.' % (start, end), str(e))

    def test_a_window_past_what_the_ledger_holds_is_400(self):
        self.assert_last_day_is_400(self.reservation(5))
        self.assertEqual([], res_db.list_reservations(self.context))

    def test_a_lease_refused_midway_leaves_no_claim(self):
        # Each fits alone (11 slots), so Blazar's candidate check passes
        # both; the first claims 6 and the second is refused. Blazar then
        # destroys its own rows; ours must go with them.
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'half', self.minutes(60), self.minutes(120),
            [self.reservation(6, vcpus=2), self.reservation(6, vcpus=2)],
            [])
        self.assertIn('Only 5 of 6 slots fit', str(e))
        self.assertEqual(409, e.kwargs['code'])
        self.assertEqual([], self.client.lease.list())
        self.assertEqual([], res_db.list_reservations(self.context))
        self.assertEqual([], db_claims.list_consumers(self.context))

    def test_a_date_of_another_type_is_400_naming_it(self):
        # Blazar's own lease route answers these with a 500.
        session, url = self.api
        for field, value in (('end_date', False), ('start_date', None),
                             ('reservations', 'none')):
            body = {'name': 'typed', 'start_date': self.minutes(60),
                    'end_date': self.minutes(120),
                    'reservations': [self.reservation(1)], 'events': []}
            body[field] = value
            response = session.post(url + '/leases', json=body,
                                    raise_exc=False)
            self.assertEqual(400, response.status_code, response.text)
            self.assertIn(field, response.json()['error_message'])
        self.assertEqual([], self.client.lease.list())

    def test_update_and_delete_through_blazarclient(self):
        lease = self.client.lease.create(
            'grow', self.minutes(60), self.minutes(120),
            [self.reservation(2)], [])
        rid = _reservation_of(lease)['id']
        lease = self.client.lease.update(
            lease['id'], prolong_for='30m',
            reservations=[{'id': rid, 'amount': 6, 'vcpus': 1}])
        shown = _reservation_of(lease)
        self.assertEqual((6, 1), (shown['amount'], shown['vcpus']))
        claims = self.claims(rid)
        self.assertEqual(6, sum(a.get('VCPU', 0)
                                for a in claims['amounts'].values()))
        self.assertEqual(lease['end_date'][:16].replace('T', ' '),
                         claims['end'].strftime('%Y-%m-%d %H:%M'))

        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.update,
            lease['id'], reservations=[{'id': rid, 'amount': 20}])
        # A capacity refusal is a conflict (Blazar's own is a 500).
        self.assertEqual(409, e.kwargs['code'])
        # One VCPU a slot now: cn2's NUMA nodes take 4 each.
        self.assertIn('Only 15 of 20 slots fit', str(e))
        self.assertNotIn('Busiest', str(e))  # its own claim is no other's
        unchanged = self.client.lease.get(lease['id'])
        self.assertEqual(status.lease.PENDING, unchanged['status'])
        self.assertEqual(6, _reservation_of(unchanged)['amount'])
        self.assertEqual(claims, self.claims(rid))

        self.client.lease.delete(lease['id'])
        self.assertEqual([], self.client.lease.list())
        self.assertIsNone(self.claims(rid))
        # Nothing was ever made in Nova: only pclouds and the project's
        # quota were looked up.
        self.assertEqual({'aggregates.list', 'quotas.get'},
                         {call for call, _a, _k in self.nova.calls})


class PlacementTests(base.BlazarTestCase):

    def test_affinity_true_puts_all_slots_on_one_host(self):
        lease = self.create_lease(self.reservation(6, affinity=True))
        rid = _reservation_of(lease)['id']
        self.assertEqual([('cn1', 6)], [
            (s['host_name'], s['slots'])
            for s in res_db.get(self.context, rid)['slots']])
        self.assertEqual([{'resource_id': self.hosts['cn1'],
                           'reservations': [{
                               'id': rid, 'lease_id': lease['id'],
                               'start_date': lease['start_date'],
                               'end_date': lease['end_date'],
                               'slots': 6}]}],
                         self.plugin.list_allocations({'lease_id':
                                                       lease['id']}))
        self.start(lease['id'])
        (group,) = self.nova.group_objs.values()
        self.assertEqual('affinity', group.policy)
        self.assertEqual(group.id, self.nova.flavor_objs[rid].extra_specs[
            'affinity_id'])
        # What is left: 1 slot on cn1, 4 on cn2; no host takes 5.
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.reservation(5, affinity=True))
        self.assertIn('Only 4 of 5 slots fit (affinity true', str(e))

    def test_affinity_false_uses_distinct_hosts_never_a_pclouds(self):
        lease = self.create_lease(self.reservation(2, affinity=False))
        rid = _reservation_of(lease)['id']
        self.assertEqual([('cn1', 1), ('cn2', 1)], sorted(
            (s['host_name'], s['slots'])
            for s in res_db.get(self.context, rid)['slots']))
        # cn3 is free but in a pcloud: there is no third host.
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.reservation(3, affinity=False))
        self.assertIn('Only 2 of 3 slots fit (affinity false', str(e))

    def test_hosts_of_blazars_physical_host_plugin_are_never_used(self):
        # Registered with Blazar's plugin: in its freepool, or leased by
        # it (a pool with blazar:owner), as Nova's aggregates say.
        self.nova.aggregates.create('freepool', None).hosts.append('cn2')
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease,
                              self.reservation(2, affinity=False))
        self.assertIn('Only 1 of 2 slots fit (affinity false', str(e))
        leased = self.nova.aggregates.create('a1b2', None)
        leased.metadata['blazar:owner'] = 'someone'
        leased.hosts.append('cn1')
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable, self.create_lease,
                          self.reservation(1))

    def test_capacity_is_placements_not_the_hosts_raw_size(self):
        # 7 on cn1 (memory after reserved), 4 on cn2 (NUMA nodes, shared
        # disk), none on cn3 (pcloud): 11, though cn3 alone has room for 32.
        lease = self.create_lease(self.reservation(11))
        rid = _reservation_of(lease)['id']
        self.assertEqual({'cn1': 7, 'cn2': 4}, {
            s['host_name']: s['slots']
            for s in res_db.get(self.context, rid)['slots']})
        self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                          self.create_lease, self.reservation(1))
        # Outside the window everything is free again.
        self.create_lease(self.reservation(11), start=130, end=200)

    def test_resource_properties_are_placement_traits(self):
        lease = self.create_lease(self.reservation(
            3, resource_properties='["=", "$HW_NUMA_ROOT", "true"]'))
        rid = _reservation_of(lease)['id']
        self.assertEqual(['cn2'], [
            s['host_name'] for s in res_db.get(self.context, rid)['slots']])
        self.start(lease['id'])
        self.assertEqual('required', self.nova.flavor_objs[rid].extra_specs[
            'trait:HW_NUMA_ROOT'])
        # Blazar's host facts are test_blazar_properties'; a name that is
        # none is refused.
        e = self.assertRaises(mgr_exc.MalformedRequirements,
                              self.create_lease, self.reservation(
                                  1, resource_properties=(
                                      '[">=", "$ram", "4096"]')))
        self.assertIn('resource_properties (no host fact $ram;', str(e))

    def test_an_availability_zone_takes_only_its_hosts(self):
        # As Nova does: the zone is an aggregate's, mirrored in Placement.
        zone = self.nova.aggregates.create('zone-1', 'az1')
        zone.hosts.append('cn1')
        self.placement.set_aggregates(self.hosts['cn1'], [zone.uuid])
        self.sync()
        lease = self.create_lease(self.reservation(
            3, availability_zone='az1'))
        e = self.assertRaises(mgr_exc.NotEnoughHostsAvailable,
                              self.create_lease, self.reservation(
                                  2, affinity=False, availability_zone='az1'))
        self.assertIn('Only 1 of 2 slots fit', str(e))
        rid = _reservation_of(lease)['id']
        row = res_db.get(self.context, rid)
        self.assertEqual(('az1', ['cn1']), (
            row['availability_zone'], [s['host_name'] for s in row['slots']]))
        # The default zone: the hosts in no other zone's aggregate.
        other = self.create_lease(self.reservation(
            2, affinity=True, availability_zone='nova'))
        self.assertEqual(['cn2'], [s['host_name'] for s in res_db.get(
            self.context, _reservation_of(other)['id'])['slots']])
        e = self.assertRaises(mgr_exc.MalformedParameter, self.create_lease,
                              self.reservation(1, availability_zone='nowhere'))
        self.assertIn("availability_zone (no availability zone 'nowhere' in "
                      'this cloud; its zones: az1, nova)', str(e))
        # Once started, the zone's hosts serve the reserved flavor.
        self.start(lease['id'])
        self.assertEqual(['cn1'], self.nova.aggregate_objs[
            res_db.get(self.context, rid)['aggregate_id']].hosts)


class StartupHeapTests(base.BlazarTestCase):

    def test_the_first_plugin_collects_cycles_then_freezes_the_heap(self):
        # As if no plugin had been made in this process yet.
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.blazar.hosts_view._startup_heap_frozen', False))
        self.addCleanup(gc.unfreeze)

        class Cycle:
            pass

        cycle = Cycle()
        cycle.itself = cycle
        garbage = weakref.ref(cycle)
        del cycle
        instance_plugin.VirtualInstancePlugin()
        # Collected, not frozen for good.
        self.assertIsNone(garbage())
        frozen = gc.get_freeze_count()
        self.assertGreater(frozen, 0)
        # Once per process: a second plugin freezes nothing more.
        instance_plugin.VirtualInstancePlugin()
        self.assertEqual(frozen, gc.get_freeze_count())


class UpdateTests(base.BlazarTestCase):

    def test_moving_into_a_busy_window_is_refused_and_changes_nothing(self):
        self.create_lease(self.reservation(7, affinity=True))
        lease = self.create_lease(self.reservation(7, affinity=True),
                                  start=130, end=190)
        rid = _reservation_of(lease)['id']
        before = self.claims(rid)
        # Once: the minute may turn before the claim is checked.
        start = self.minutes(100)
        self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                          lease['id'], start_date=start)
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(before, self.claims(rid))
        # Four slots do fit beside the first lease, on cn2.
        self.update_lease(lease['id'], start_date=start,
                          reservations=[{'id': rid, 'amount': 4}])
        self.assertEqual([('cn2', 4)], [
            (s['host_name'], s['slots'])
            for s in res_db.get(self.context, rid)['slots']])
        self.assertEqual(start, self.claims(rid)['start']
                         .strftime('%Y-%m-%d %H:%M'))

    def test_active_reservation_only_grows(self):
        lease = self.create_lease(self.reservation(2), start=0)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        rc = resources.resource_class(rid)
        self.assertEqual({'cn2': 2}, {
            h: inv['total']
            for h, inv in self.reservation_inventories(rc).items()})

        self.update_lease(lease['id'],
                          reservations=[{'id': rid, 'amount': 6}])
        # The 2 slots in use stay; 2 more fill cn2, 2 go to cn1.
        self.assertEqual({'cn1': 2, 'cn2': 4}, {
            h: inv['total']
            for h, inv in self.reservation_inventories(rc).items()})
        shown = blazar_db.reservation_get(rid)
        self.assertEqual(6, shown['amount'])
        self.assertEqual(['cn1', 'cn2'], sorted(
            self.nova.aggregate_objs[shown['aggregate_id']].hosts))

        for change in ({'amount': 1}, {'vcpus': 4}):
            change['id'] = rid
            self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'], reservations=[change])
            self.assertEqual(status.lease.ACTIVE,
                             blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(6, res_db.get(self.context, rid)['amount'])


class FailureTests(base.BlazarTestCase):

    def test_a_start_run_again_after_its_end_is_no_error(self):
        # Its first run's process died before Blazar marked it done;
        # meanwhile its end came due and our sweep ended it.
        lease = self.create_lease(self.reservation(1), start=0)
        rid = _reservation_of(lease)['id']
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        row = res_db.get(self.context, rid)
        self.plugin._finish(row)
        self.assertIsNone(self.plugin.on_start(row['resource_id']))
        self.assertIsNone(db_claims.get_claims(self.context, rid))

    def test_a_start_waits_out_an_unreachable_nova(self):
        lease = self.create_lease(self.reservation(2, affinity=False))
        rid = _reservation_of(lease)['id']
        waits = self.nova_down_for_a_while('flavors.create')
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual([1], waits)
        self.assertEqual([rid], list(self.nova.flavor_objs))

    def test_a_start_waits_out_a_nova_server_error(self):
        """Nova's 500 ("Unexpected API Error", its database locked, say)

        is waited out as an unreachable Nova is; a 4xx is not.
        """
        lease = self.create_lease(self.reservation(2, affinity=False))
        rid = _reservation_of(lease)['id']
        waits = self.nova_down_for_a_while(
            'flavors.create', nova_exc.ClientException(
                500, 'Unexpected API Error. Please contact the '
                'administrator'))
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual([1], waits)
        self.assertEqual([rid], list(self.nova.flavor_objs))
        refused = self.create_lease(self.reservation(1, affinity=False))
        waits = self.nova_down_for_a_while(
            'flavors.create', nova_exc.Forbidden(403, 'policy says no'))
        event = self.run_event(refused['id'], 'start_lease')
        self.assertEqual(status.event.ERROR, event['status'])
        self.assertEqual([], waits)

    def test_a_nova_failure_at_start_leaves_nothing_behind(self):
        lease = self.create_lease(self.reservation(2, affinity=False))
        rid = _reservation_of(lease)['id']
        self.nova.fail('flavors.create')
        event = self.run_event(lease['id'], 'start_lease')
        self.assertEqual(status.event.ERROR, event['status'])
        self.assertEqual(status.reservation.ERROR,
                         blazar_db.reservation_get(rid)['status'])
        rc = resources.resource_class(rid)
        self.assertEqual({}, self.reservation_inventories(rc))
        self.assertEqual(404, self.placement.client.get(
            '/resource_classes/%s' % rc, raise_exc=False).status_code)
        self.assertEqual({}, self.nova.flavor_objs)
        self.assertEqual({}, self.nova.group_objs)
        self.assertEqual(['Pcloud:abc'], [
            a.name for a in self.nova.aggregate_objs.values()])
        # The lease still holds its capacity until it is deleted.
        self.assertIsNotNone(self.claims(rid))
        self.delete_lease(lease['id'])
        self.assertIsNone(self.claims(rid))
        self.assertEqual([], res_db.list_reservations(self.context))

    def test_an_update_once_a_failed_start_has_ended_is_refused(self):
        lease = self.create_lease(self.reservation(2, affinity=False),
                                  start=0)
        self.nova.fail('flavors.create')
        self.assertEqual(status.event.ERROR, self.run_event(
            lease['id'], 'start_lease')['status'])
        self.run_event(lease['id'], 'end_lease')
        rid = _reservation_of(lease)['id']
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'],
                              reservations=[{'id': rid, 'amount': 1}])
        self.assertIn('has ended', str(e))
        self.delete_lease(lease['id'])

    def test_an_end_that_a_sweep_finishes_meanwhile_ends_the_lease(self):
        # Blazar's end runs while a sweep of the manager (an overdue end,
        # or a clean-up retried after Nova came back) ends the same
        # reservation: the sweep gets there first.
        lease = self.create_lease(self.reservation(2), start=0)
        self.start(lease['id'])
        rid = _reservation_of(lease)['id']
        remove, swept = self.plugin._remove_objects, []

        def the_sweep_first(row):
            if not swept:
                swept.append(rid)
                self.plugin._finish(res_db.get(self.context, rid))
            return remove(row)
        self.useFixture(fixtures.MockPatchObject(
            self.plugin, '_remove_objects', side_effect=the_sweep_first))
        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease['id'])['status'])
        self.assertEqual([rid], swept)
        self.assertRaises(res_db.ReservationNotFound, res_db.get,
                          self.context, rid)
        self.assertFalse(db_claims.get_claims(self.context, rid))

    def test_sweep_releases_what_blazar_no_longer_holds(self):
        lease = self.create_lease(self.reservation(2))
        rid = _reservation_of(lease)['id']
        kept = self.create_lease(self.reservation(1))
        # Blazar forgets a lease without telling the plugin (its
        # rollback of a lease whose other reservation failed, or a crash).
        blazar_db.lease_destroy(lease['id'])
        # A claim made just before the manager died, never recorded.
        lost = uuidutils.generate_uuid()
        db_claims.claim(self.context, lost, {self.hosts['cn1']: {'VCPU': 1}},
                        timeutils.utcnow(), timeutils.utcnow() +
                        datetime.timedelta(hours=1))
        # A holder that is no Blazar reservation is not ours to judge.
        db_claims.claim(self.context, 'pcloud-host:cn1',
                        {self.hosts['cn1']: {'VCPU': 1}})

        self.plugin.sweep()
        self.assertIsNone(self.claims(rid))
        self.assertIsNone(self.claims(lost))
        self.assertRaises(res_db.ReservationNotFound, res_db.get,
                          self.context, rid)
        kept_rid = _reservation_of(kept)['id']
        self.assertEqual([kept_rid, 'pcloud-host:cn1'], sorted(
            db_claims.list_consumers(self.context)))
        self.assertEqual([kept_rid], [
            r['reservation_id']
            for r in res_db.list_reservations(self.context)])

    def test_a_failed_growth_is_undone(self):
        lease = self.create_lease(self.reservation(2), start=0)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        before = self.claims(rid)
        self.nova.fail('aggregates.add_host')
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'],
                              reservations=[{'id': rid, 'amount': 6}])
        self.assertIn('was undone', str(e))
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(before['amounts'], self.claims(rid)['amounts'])
        self.assertEqual({'cn2': 2}, {
            h: inv['total'] for h, inv in self.reservation_inventories(
                resources.resource_class(rid)).items()})
        self.assertEqual(2, res_db.get(self.context, rid)['amount'])

    def test_an_inventory_changed_under_a_plan_is_placed_again(self):
        # Between the plan and its claim the mirror lowers the planned
        # provider's MEMORY_MB max_unit below one slot: the claim breaks
        # it, and the slots are placed again elsewhere (not a server
        # error).
        claim, lowered = db_claims.claim, []

        def mirror_then_claim(ctx, consumer, amounts, *args, **kwargs):
            if not lowered:
                rp = next(rp for rp, r in amounts.items() if 'MEMORY_MB' in r)
                inventories = db_providers.get_inventories(ctx, rp)
                inventories['MEMORY_MB'] = dataclasses.replace(
                    inventories['MEMORY_MB'],
                    max_unit=kwargs['unit']['MEMORY_MB'] - 1)
                db_providers.set_inventories(ctx, rp, inventories)
                lowered.append(rp)
            return claim(ctx, consumer, amounts, *args, **kwargs)
        self.useFixture(fixtures.MockPatchObject(db_claims, 'claim',
                                                 mirror_then_claim))
        lease = self.create_lease(self.reservation(2, affinity=True))
        amounts = db_claims.get_claims(self.context,
                                       _reservation_of(lease)['id'])['amounts']
        (rp,) = lowered
        self.assertNotIn('MEMORY_MB', amounts.get(rp, {}))
        self.assertEqual(2048, sum(r.get('MEMORY_MB', 0)
                                   for r in amounts.values()))

    def test_instances_outlive_the_end_and_clean_up_follows(self):
        lease_id, rid, rc, host = self.started_on_one_host(1)
        child = resources.child_uuid(self.hosts[host])
        # An instance booted with the reserved flavor, as Nova would.
        instance = '6c2b9f1e-3d4a-4b5c-8d7e-9f0a1b2c3d4e'
        self.placement.allocate(instance, {child: {rc: 1}})

        claimed = self.claims(rid)['amounts']
        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease_id)['status'])
        # What the instance uses stays claimed, from now on with no end,
        # and held in Placement (less the ticket its boot holds).
        left = self.claims(rid)
        self.assertEqual(claimed, left['amounts'])
        self.assertIsNone(left['end'])
        held = self.placement.client.get(
            '/allocations/%s' % rid).json()['allocations']
        self.assertEqual(
            {rp: {rc: n - (resources.TICKET_MB
                           if (rp, rc) == (self.hosts[host], 'MEMORY_MB')
                           else 0) for rc, n in amounts.items()}
             for rp, amounts in claimed.items()},
            {rp: a['resources'] for rp, a in held.items()})
        self.assertNotIn(rid, self.nova.flavor_objs)
        # The instance runs on; its slot is closed to any other.
        inventory = self.reservation_inventories(rc)[host]
        self.assertEqual(inventory['total'], inventory['reserved'])
        self.assertEqual(res_db.ENDING,
                         res_db.get(self.context, rid)['state'])

        self.placement.client.delete('/allocations/%s' % instance)
        self.plugin.sweep()
        self.assertIsNone(self.claims(rid))
        self.assertEqual({}, self.placement.client.get(
            '/allocations/%s' % rid).json()['allocations'])
        self.assertEqual({}, self.reservation_inventories(rc))
        self.assertEqual(404, self.placement.client.get(
            '/resource_classes/%s' % rc, raise_exc=False).status_code)
        self.assertEqual([], res_db.list_reservations(self.context))
