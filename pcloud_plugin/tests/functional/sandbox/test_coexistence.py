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

"""Blazar's own physical:host plugin beside ours, in the sandbox (which

loads it, as DevStack does): the hosts registered with it are its alone
(pcloud.partition), in either order. A host given to Blazar's plugin
takes none of our instance slots, and its physical:host lease starts;
a host our slots hold cannot be given to Blazar's plugin (409 saying
until when).
"""

import datetime
import time
import uuid

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture


class PhysicalHostBesideOurs(base.TestCase):

    # The sandbox whose Nova also runs Blazar's filters, or the plain one.
    blazar_filters = False

    def setUp(self):
        super().setUp()
        cloud = self.useFixture(fixture.SandboxFixture(self.blazar_filters))
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        self.clients = fixture.Clients(self.sandbox)
        self.computes = sorted(c['name'] for c in self.sandbox.computes)

    def _lease(self, name, reservation):
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.clients.demo._request('POST', '/leases', {
            'name': name, 'start_date': 'now', 'events': [],
            'end_date': end.strftime('%Y-%m-%d %H:%M'),
            'reservations': [reservation]})['lease']
        self.addCleanup(fixture.delete_lease, self.clients.demo,
                        lease['id'])
        return self.cli.wait(
            'lease %s to start' % name, ('openstack', 'reservation', 'lease',
                                         'show', lease['id']),
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            user=common.DEMO_USER)

    def _slots(self, amount):
        return {'resource_type': 'virtual:instance', 'amount': amount,
                'vcpus': 1, 'memory_mb': 64, 'disk_gb': 1,
                'affinity': False, 'resource_properties': ''}

    def test_each_plugin_keeps_to_its_own_hosts(self):
        blazars = self.computes[-1]
        ours = self.computes[:-1]
        fixture.blazar_host(self, self.sandbox, self.clients.admin, blazars)
        # One slot on each of the other hosts fits; one more host's
        # worth does not: Blazar's host takes none.
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.clients.demo._request, 'POST',
            '/leases', {'name': 'too-wide', 'start_date': 'now',
                        'end_date': '2099-01-01 00:00', 'events': [],
                        'reservations': [self._slots(len(ours) + 1)]})
        self.assertEqual(409, refused.code, refused)
        spread = self._lease('spread', self._slots(len(ours)))
        self.assertEqual('ACTIVE', spread['status'])
        rid = fixture.reservation_of(self.sandbox, spread['id'])
        hosts = fixture.ledger_sql(
            self.sandbox, 'SELECT host_name FROM '
            'pcloud_instance_reservation_slots WHERE reservation_id = :rid',
            rid=rid)
        self.assertEqual(sorted(ours), sorted(hosts))
        # Blazar's plugin leases its host.
        physical = self._lease('physical', {
            'resource_type': 'physical:host', 'min': 1, 'max': 1,
            'hypervisor_properties': '', 'resource_properties': ''})
        self.assertEqual('ACTIVE', physical['status'])
        # And may not have a host our slots hold.
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.clients.admin._request, 'POST',
            '/os-hosts', {'name': ours[0]})
        self.assertEqual(409, refused.code, refused)
        self.assertIn('reservations of pcloud-plugin hold it until', str(
            refused))

    def test_a_host_of_blazars_joins_no_pool_and_no_pcloud(self):
        nova = self.clients.nova
        blazars, pooled = self.computes[-1], self.computes[0]
        fixture.blazar_host(self, self.sandbox, self.clients.admin, blazars)
        flavor = 'split-%s' % uuid.uuid4().hex[:6]
        self.clients.admin.create_host_flavor(flavor, 1)
        self.addCleanup(self.clients.admin.delete_host_flavor, flavor)
        # Blazar first: its host joins no pool.
        fixture.out_of_service(self, nova, blazars)
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.clients.admin.add_pool_host,
            flavor, blazars)
        self.assertEqual(409, refused.code, refused)
        self.assertIn("Blazar's physical:host plugin holds it",
                      str(refused))
        # A pool host Blazar's freepool took behind our back (a cloud
        # from before the guards): no pcloud is given it.
        fixture.out_of_service(self, nova, pooled)
        self.clients.admin.add_pool_host(flavor, pooled)
        self.addCleanup(self.clients.admin.remove_pool_host, flavor,
                        pooled)
        (freepool,) = [a for a in nova.aggregates.list()
                       if a.name == 'freepool']
        nova.aggregates.add_host(freepool, pooled)
        self.addCleanup(self._leave, freepool, pooled)
        pcloud = self.clients.demo.create_pcloud(flavor)['id']
        self.addCleanup(self.clients.demo.delete_pcloud, pcloud)
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.clients.demo.allocate_host,
            pcloud, 'web', flavor)
        self.assertEqual(409, refused.code, refused)
        self.assertIn("1 free one(s) are held by Blazar's physical:host "
                      "plugin", str(refused))
        self.assertEqual([], self.clients.demo.list_hosts(pcloud))
        # Ours first: Blazar's plugin is refused the pool's host.
        self._leave(freepool, pooled)
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.clients.admin._request, 'POST',
            '/os-hosts', {'name': pooled})
        self.assertEqual(409, refused.code, refused)
        self.assertIn('it is in a pcloud or host flavor pool', str(refused))

    def _leave(self, aggregate, host):
        if host in self.clients.nova.aggregates.get(aggregate.id).hosts:
            self.clients.nova.aggregates.remove_host(aggregate, host)

    def test_a_host_running_plain_servers_is_not_said_to_be_ours(self):
        server = self.cli.json(
            'openstack', 'server', 'create', '--flavor', 'm1.tiny',
            '--image', 'cirros', '--nic', 'none', '--wait', 'plain',
            user=common.ALT_USER)
        self.addCleanup(fixture.delete_server, self.cli, server['id'],
                        common.ALT_USER)
        host = getattr(self.clients.nova.servers.get(server['id']),
                       'OS-EXT-SRV-ATTR:host')
        # The ledger has what runs there: two mirror passes later.
        for _pass in range(2):
            before = self._last_pass()
            deadline = time.monotonic() + 120
            while self._last_pass() == before:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.5)
        try:
            added = self.clients.admin._request('POST', '/os-hosts',
                                                {'name': host})['host']
        except pcloud_client.PcloudError as e:
            # Blazar's own answer, if it has one: not ours.
            self.assertNotIn('pcloud', str(e).lower(), e)
        else:
            self.clients.admin._request('DELETE', '/os-hosts/%s'
                                        % added['id'])
            fixture.forget_providers(self.sandbox)

    def _last_pass(self):
        return fixture.ledger_sql(
            self.sandbox, 'SELECT finished_at FROM pcloud_mirror_passes')


class PhysicalHostBesideOursBlazarFilters(PhysicalHostBesideOurs):
    blazar_filters = True
