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
"""Healing (blazar.healing): reservations of both plugins move off

computes that are down or disabled, through Blazar's own manager with our
plugins, a real Placement and the ledger; Nova's os-services as the
recording fake answers it (Services below).
"""

from unittest import mock

from blazar.db import api as blazar_db
from blazar import status

from pcloud_plugin.blazar import host_plugin
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.notifications import usage
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import healing
from pcloud_plugin.reservations import registry
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import fake_nova
from pcloud_plugin.tests.functional.blazar import test_host_plugin


def _reservation_of(lease):
    (reservation,) = lease['reservations']
    return reservation


class Services:
    """Nova's os-services and hypervisors list on a FakeNova: each compute

    up and enabled until a test says otherwise.
    """

    def __init__(self, nova):
        self.state = {host: ('up', 'enabled')
                      for host in nova.hypervisor_hosts.values()}
        nova.services = fake_nova._Manager(nova, 'services',
                                           {'list': self._list})
        nova.hypervisors._methods['list'] = lambda detailed=True: [
            fake_nova._Obj(id=node, hypervisor_hostname=host,
                           service={'host': host})
            for node, host in nova.hypervisor_hosts.items()]

    def _list(self, host=None, binary=None):
        return [fake_nova._Obj(host=name, binary='nova-compute',
                               state=state, status=enabled,
                               forced_down=False, disabled_reason=None)
                for name, (state, enabled) in sorted(self.state.items())
                if host in (None, name)]

    def down(self, host):
        self.state[host] = ('down', self.state[host][1])

    def disable(self, host):
        self.state[host] = (self.state[host][0], 'disabled')

    def enable(self, host):
        self.state[host] = ('up', 'enabled')


class _Healing:

    def blazar_flags(self, rid):
        found = blazar_db.reservation_get(rid)
        return {f: found[f] for f in (healing.MISSING, healing.CHANGED)}

    def degraded_events(self, rid):
        return [p for p in self.notifications.of(usage.DEGRADED)
                if p['reservation_id'] == rid]


class InstanceHealingTests(_Healing, base.BlazarTestCase):
    """Hosts of base.BlazarTestCase: 7 slots on cn1, 4 on cn2."""

    def setUp(self):
        super().setUp()
        self.services = Services(self.nova)

    def slots(self, rid):
        return {s['host_name']: s['slots']
                for s in res_db.get(self.context, rid)['slots']}

    def on_host(self, rid, name):
        """The claim's amounts on one host's tree (sharing ones not)."""
        roots = {self.hosts[n] for n in self.hosts
                 if n == name or n.startswith(name + '-')}
        return {rp: a for rp, a in self.claims(rid)['amounts'].items()
                if rp in roots}

    def test_a_future_reservation_moves_off_a_host_that_went_down(self):
        lease = self.create_lease(self.reservation(3))
        rid = _reservation_of(lease)['id']
        self.assertEqual({'cn2': 3}, self.slots(rid))
        self.assertEqual({}, self.plugin.heal())

        self.services.down('cn2')
        self.assertEqual({}, self.plugin.heal())
        # Its window and slots, on cn1; nothing left on cn2 or its disk.
        self.assertEqual({'cn1': 3}, self.slots(rid))
        claims = self.claims(rid)
        self.assertEqual({self.hosts['cn1']: {
            'VCPU': 6, 'MEMORY_MB': 3072, 'DISK_GB': 30}}, claims['amounts'])
        self.assertEqual(res_db.get(self.context, rid)['start_time'],
                         claims['start'])
        # What Blazar's allocation API shows.
        self.assertEqual(
            {self.hosts['cn1']: [rid], self.hosts['cn2']: []},
            {h: [a['id'] for a in allocs] for h, allocs in
             self.plugin.query_allocations(
                 [self.hosts['cn1'], self.hosts['cn2']]).items()})
        self.assertEqual({healing.MISSING: False, healing.CHANGED: False},
                         self.blazar_flags(rid))
        self.assertEqual([], self.degraded_events(rid))
        # Started on its new host.
        self.start(lease['id'])
        self.assertEqual(['cn1'], list(self.reservation_inventories(
            resources.resource_class(rid))))

    def test_slots_elsewhere_stay_and_the_shared_disk_follows(self):
        # 5 slots: cn2's 4, with their disk on the sharing provider ss,
        # and 1 on cn1, with its own disk (another lease held the rest).
        filler = self.create_lease(self.reservation(6, affinity=True))
        lease = self.create_lease(self.reservation(5))
        rid = _reservation_of(lease)['id']
        self.assertEqual({'cn1': 1, 'cn2': 4}, self.slots(rid))
        self.delete_lease(filler['id'])
        self.services.down('cn2')
        self.assertEqual({}, self.plugin.heal())
        self.assertEqual({'cn1': 5}, self.slots(rid))
        self.assertEqual({self.hosts['cn1']: {
            'VCPU': 10, 'MEMORY_MB': 5120, 'DISK_GB': 50}},
            self.claims(rid)['amounts'])

    def test_nothing_fits_degraded_then_whole_once_enabled_again(self):
        # Every slot of cn1 and cn2, from 60 to 120 minutes.
        lease = self.create_lease(self.reservation(11))
        rid = _reservation_of(lease)['id']
        before = self.claims(rid)
        self.services.disable('cn2')
        self.assertEqual({rid: {healing.MISSING: True}}, self.plugin.heal())
        # Never overbooked: the claim stays as it was, on cn2, and cn1
        # holds its 7 slots' memory, no more.
        self.assertEqual(before, self.claims(rid))
        self.assertEqual({'cn1': 7, 'cn2': 4}, self.slots(rid))
        self.assertEqual(7 * 1024, db_claims.get_usage(
            self.context, self.hosts['cn1'], before['start'],
            before['end'])['MEMORY_MB'])
        self.assertEqual({healing.MISSING: True, healing.CHANGED: False},
                         self.blazar_flags(rid))
        self.assertTrue(blazar_db.lease_get(lease['id'])['degraded'])
        (event,) = self.notifications.wait_for(usage.DEGRADED)
        self.assertEqual(
            ('virtual:instance', rid, lease['id'], base.PROJECT, ['cn2']),
            (event['resource_type'], event['reservation_id'],
             event['lease_id'], event['project_id'], event['hosts']))
        self.assertIn('disabled', event['why'])
        # A second pass changes nothing and says nothing again.
        self.assertEqual({}, self.plugin.heal())
        self.assertEqual(1, len(self.degraded_events(rid)))

        self.services.enable('cn2')
        self.assertEqual({rid: {healing.MISSING: False}},
                         self.plugin.heal())
        self.assertEqual(before, self.claims(rid))
        self.assertEqual({healing.MISSING: False, healing.CHANGED: False},
                         self.blazar_flags(rid))
        self.assertFalse(blazar_db.lease_get(lease['id'])['degraded'])

    def test_degraded_until_capacity_frees_up_then_moved(self):
        lease = self.create_lease(self.reservation(3))
        rid = _reservation_of(lease)['id']
        filler = self.create_lease(self.reservation(7, affinity=True))
        self.assertEqual({'cn2': 3}, self.slots(rid))
        self.assertEqual({'cn1': 7}, self.slots(
            _reservation_of(filler)['id']))
        self.services.down('cn2')
        self.assertEqual({rid: {healing.MISSING: True}}, self.plugin.heal())
        (event,) = self.notifications.wait_for(usage.DEGRADED)
        self.assertIn('down', event['why'])

        self.delete_lease(filler['id'])
        self.assertEqual({rid: {healing.MISSING: False}},
                         self.plugin.heal())
        self.assertEqual({'cn1': 3}, self.slots(rid))
        self.assertEqual([self.hosts['cn1']],
                         list(self.claims(rid)['amounts']))

    def test_an_active_one_whose_host_runs_its_instance_stays(self):
        _lease, rid, rc, host = self.started_on_one_host(1)
        # An instance booted with the reserved flavor, as Nova would.
        self.placement.allocate('6c2b9f1e-3d4a-4b5c-8d7e-9f0a1b2c3d4e', {
            resources.child_uuid(self.hosts[host]): {rc: 1}})
        before = self.claims(rid)
        self.services.down(host)
        self.assertEqual({rid: {healing.MISSING: True}}, self.plugin.heal())
        self.assertEqual(before, self.claims(rid))
        self.assertEqual({host: 1}, self.slots(rid))
        self.assertEqual([host], list(self.reservation_inventories(rc)))
        (event,) = self.notifications.wait_for(usage.DEGRADED)
        self.assertIn('instances', event['why'])

    def test_an_active_one_with_nothing_running_there_moves(self):
        _lease, rid, rc, host = self.started_on_one_host(2)
        other = ({'cn1', 'cn2'} - {host}).pop()
        self.services.down(host)
        self.assertEqual({rid: {healing.CHANGED: True}}, self.plugin.heal())
        self.assertEqual({other: 2}, self.slots(rid))
        # Placement follows: the slots are on the new host, open to
        # boots, and the reservation's aggregate holds it.
        self.assertEqual([other], list(self.reservation_inventories(rc)))
        aggregate = self.nova.aggregate_objs[
            res_db.get(self.context, rid)['aggregate_id']]
        self.assertEqual([other], aggregate.hosts)
        held = self.placement.client.get(
            '/allocations/%s' % rid).json()['allocations']
        roots = {self.hosts[other]} | {
            self.hosts[n] for n in self.hosts if n.startswith(other + '-')}
        self.assertTrue(set(held) <= roots | {self.hosts['ss']}, held)
        # What it held until now is closed; from now, on the other host.
        (update,) = self.notifications.wait_for(usage.UPDATE)
        self.assertEqual([host], [h['host'] for h in update['per_host']])
        self.assertEqual([other], [h['host']
                                   for h in update['next']['per_host']])

    def test_the_monitor_heals_every_interval_and_blazar_does_not(self):
        self.conf.set_override('healing_interval', 30, group='pcloud')
        self.assertEqual(0, self.plugin.monitor.get_healing_interval())
        self.assertEqual(30, self.plugin.monitor.get_polling_interval())
        with mock.patch.object(healing, 'heal_instances',
                               return_value={'r': {'x': True}}) as heal:
            self.plugin.monitor.poll()
            heal.assert_called_once_with(self.plugin)
            self.assertEqual({'r': {'x': True}}, self.plugin.monitor.heal())
        self.conf.set_override('healing_interval', 0, group='pcloud')
        self.assertFalse(self.plugin.monitor.is_polling_enabled())


class HostHealingTests(_Healing, test_host_plugin.HostLeaseTestCase):
    """Pool "big" of test_host_plugin: cn1, cn2, cn4 (cn3 another's)."""

    def setUp(self):
        super().setUp()
        self.services = Services(self.nova)

    def test_a_future_lease_moves_off_a_host_that_went_down(self):
        lease = self.create_lease(self.hosts_res(1), start=60, end=120)
        rid = _reservation_of(lease)['id']
        self.assertEqual(['cn1'], self.leased(lease))
        (name,) = [h['name'] for h in self.row(lease)['hosts']]
        self.services.down('cn1')
        self.assertEqual({}, self.host_plugin.heal())
        (host,) = self.row(lease)['hosts']
        self.assertNotEqual('cn1', host['host_name'])
        self.assertEqual(name, host['name'])
        self.assertEqual(host_db.INACTIVE, self.row(lease)['state'])
        # The claim is on the new host's tree, whole, and on cn1 no more.
        claimed = set(self.claims(rid)['amounts'])
        self.assertIn(host['host_uuid'], claimed)
        self.assertNotIn(self.hosts['cn1'], claimed)
        self.assertEqual(
            {self.hosts['cn1']: [], host['host_uuid']: [rid]},
            {h: [a['id'] for a in allocs] for h, allocs in
             self.host_plugin.query_allocations(
                 [self.hosts['cn1'], host['host_uuid']]).items()})
        self.start(lease['id'])
        self.assertEqual([host['service_host']], self.pcloud.hosts)

    def test_nothing_fits_degraded_then_whole_once_enabled_again(self):
        lease = self.create_lease(self.hosts_res(3), start=60, end=120)
        rid = _reservation_of(lease)['id']
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(lease))
        before = self.claims(rid)
        self.services.disable('cn2')
        self.assertEqual({rid: {healing.MISSING: True}},
                         self.host_plugin.heal())
        self.assertEqual(before, self.claims(rid))
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(lease))
        self.assertTrue(self.blazar_reservation(lease)['missing_resources'])
        self.assertTrue(blazar_db.lease_get(lease['id'])['degraded'])
        (event,) = self.notifications.wait_for(usage.DEGRADED)
        self.assertEqual(('pcloud:host', rid),
                         (event['resource_type'], event['reservation_id']))
        # Its name in the pcloud, never the real host's (seeds/000).
        self.assertEqual([h['name'] for h in self.row(lease)['hosts']
                          if h['host_name'] == 'cn2'], event['hosts'])

        self.services.enable('cn2')
        self.assertEqual({rid: {healing.MISSING: False}},
                         self.host_plugin.heal())
        self.assertFalse(self.blazar_reservation(lease)['missing_resources'])
        self.assertFalse(blazar_db.lease_get(lease['id'])['degraded'])
        self.assertEqual(status.event.DONE, self.run_event(
            lease['id'], 'start_lease')['status'])

    def test_a_refused_move_never_takes_a_held_host(self):
        # cn4 is another lease's then: cn1's lease has nowhere to go.
        mine = self.create_lease(self.hosts_res(1), start=60, end=120)
        other = self.create_lease(self.hosts_res(2), start=90, end=150)
        self.assertEqual(['cn1'], self.leased(mine))
        self.assertEqual(['cn2', 'cn4'], self.leased(other))
        theirs = self.claims(_reservation_of(other)['id'])
        self.services.down('cn1')
        self.assertEqual({_reservation_of(mine)['id']: {
            healing.MISSING: True}}, self.host_plugin.heal())
        self.assertEqual(['cn1'], self.leased(mine))
        self.assertEqual(theirs, self.claims(_reservation_of(other)['id']))

    def test_an_active_lease_moves_unless_its_host_runs_its_instances(self):
        lease = self.create_lease(self.hosts_res(2), start=0, end=120)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        names = {h['host_name']: h['name'] for h in self.row(lease)['hosts']}
        # The lessee runs an instance on cn1 (the registry has it from
        # Nova's event): it stays, degraded. One the registry has not
        # (left on cn2 from before the lease) pins nothing.
        booted = self.nova.add_server('cn1', base.PROJECT).id
        self.assertTrue(registry.follow_instance(
            self.context, booted, {self.hosts['cn1']: {'VCPU': 1}}))
        self.nova.add_server('cn2', 'another-project')
        self.services.down('cn1')
        self.services.down('cn2')
        self.assertEqual({rid: {healing.CHANGED: True,
                                healing.MISSING: True}},
                         self.host_plugin.heal())
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))
        # cn4 took cn2's name in the pcloud and its place in the lease's
        # aggregate; cn2 left both.
        self.assertEqual({'cn1': names['cn1'], 'cn4': names['cn2']},
                         {h['host_name']: h['name']
                          for h in self.row(lease)['hosts']})
        self.assertTrue(all(h['joined'] for h in self.row(lease)['hosts']))
        self.assertEqual(['cn1', 'cn4'], sorted(self.pcloud.hosts))
        view = codec.Pcloud(self.pcloud.metadata)
        self.assertEqual({names['cn1']: 'cn1', names['cn2']: 'cn4'},
                         {n: node for n, node in view.all_hosts.items()
                          if node})
        aggregate = self.nova.aggregate_objs[self.row(lease)['aggregate_id']]
        self.assertEqual(['cn1', 'cn4'], sorted(aggregate.hosts))
        self.assertNotIn(self.hosts['cn2'], self.claims(rid)['amounts'])
        # What it held until now is closed; from now, with cn4.
        # (Delivered by the notifier's own thread: waited for.)
        (update,) = self.notifications.wait_for(usage.HOST_UPDATE)
        self.assertEqual(2, len(update['next']['per_host']))
        self.assertEqual(update['held_to'], update['next']['held_from'])
        (event,) = self.notifications.wait_for(usage.DEGRADED)
        self.assertEqual([names['cn1']], event['hosts'])

    def test_the_monitor_heals_host_leases(self):
        self.conf.set_override('healing_interval', 30, group='pcloud')
        plugin = host_plugin.PcloudHostPlugin()
        self.assertEqual(30, plugin.monitor.get_polling_interval())
        # Its other tasks are off (test_host_plugin's setUp).
        with mock.patch.object(healing, 'heal_hosts',
                               return_value={}) as heal:
            plugin.monitor.poll()
            heal.assert_called_once_with(plugin)
