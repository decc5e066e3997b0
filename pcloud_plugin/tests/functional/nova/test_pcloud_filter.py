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

"""The PcloudFilter in Nova's real scheduler: where instances land."""

import datetime

from nova.tests.functional.api import client as api_client
from oslo_utils import timeutils

from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.tests.functional.nova import base

OWNER = 'owner-project'
FRIEND = 'friend-project'
STRANGER = 'stranger-project'


class PcloudFilterTests(base.PcloudNovaTestCase):
    """host1-3 form the pool of host flavor "big"; host4-5 are general."""

    def setUp(self):
        super().setUp()
        self.make_pool()
        self.owner = base.user(OWNER)
        self.pcloud = self.service.create_pcloud(self.owner, 'mine')['id']
        self.service.allocate_host(self.owner, self.pcloud, 'on', 'big')
        self.service.allocate_host(self.owner, self.pcloud, 'off', 'big')
        self.service.enable_host(self.owner, self.pcloud, 'on')
        self.hosts = self.pcloud_hosts(self.pcloud)
        self.owner_api = self.tenant_api(OWNER)

    def test_hint_lands_on_the_enabled_host_only(self):
        servers = self.boot(self.owner_api, self.pcloud, count=3)
        self.assertEqual({self.hosts['on']},
                         {self.host_of(s) for s in servers})
        listed = self.service.list_hosts(self.owner, self.pcloud)
        self.assertEqual(
            [('off', 'disabled', []),
             ('on', 'enabled', sorted(s['id'] for s in servers))],
            [(h['name'], h['state'], h['instances']) for h in listed])

    def test_without_hint_never_on_pool_or_pcloud_hosts(self):
        servers = self.boot(self.owner_api, count=6)
        self.assertEqual({'host4', 'host5'},
                         {self.host_of(s) for s in servers})

    def test_tenants_must_be_authorized(self):
        stranger = self.tenant_api(STRANGER)
        self.assert_no_valid_host(
            self.boot(stranger, self.pcloud, expected='ERROR'))
        friend = self.tenant_api(FRIEND)
        self.assert_no_valid_host(
            self.boot(friend, self.pcloud, expected='ERROR'))
        self.service.authorize_tenant(self.owner, self.pcloud, FRIEND)
        server, = self.boot(friend, self.pcloud)
        self.assertEqual(self.hosts['on'], self.host_of(server))
        # The owner may take itself off its own list.
        self.service.deauthorize_tenant(self.owner, self.pcloud, OWNER)
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))

    def test_disabled_host_gets_nothing_new_and_release_waits(self):
        server, = self.boot(self.owner_api, self.pcloud)
        self.service.disable_host(self.owner, self.pcloud, 'on')
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))
        e = self.assertRaises(exception.PcloudHostBusy,
                              self.service.release_host, self.owner,
                              self.pcloud, 'on')
        self.assertIn('still runs 1 instance(s)', str(e))
        self._delete_server(server)
        self.service.release_host(self.owner, self.pcloud, 'on')
        self.assertEqual(['off'], self.service.show_pcloud(
            self.owner, self.pcloud)['hosts'])

    def test_ratio_change_sets_how_many_instances_fit(self):
        """10 VCPU at 0.4: four 1-VCPU instances; at 0.6, two more."""
        self.service.set_allocation_ratios(self.owner, self.pcloud,
                                           cpu_allocation_ratio=0.4)
        # nova-compute's periodic update must leave the ratio alone.
        self._run_periodics()
        rp = self._get_provider_uuid_by_host(self.hosts['on'])
        self.assertEqual(0.4, self._get_provider_inventory(rp)['VCPU'][
            'allocation_ratio'])
        self.boot(self.owner_api, self.pcloud, count=4)
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))
        self.service.set_allocation_ratios(self.owner, self.pcloud,
                                           cpu_allocation_ratio=0.6)
        self.boot(self.owner_api, self.pcloud)
        self.boot(self.owner_api, self.pcloud)
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))

    def _lease(self, host, start, end):
        """An aggregate as a pcloud:host lease makes for its host."""
        nova = self.service.nova
        aggregate = nova.aggregates.create('pcloud-lease:test', None)
        metadata = codec.lease_window_metadata(self.pcloud, start, end)
        metadata[codec.LEASE_ID] = 'a-lease'
        nova.aggregates.set_metadata(aggregate.id, metadata)
        nova.aggregates.add_host(aggregate.id, host)
        return aggregate

    def test_a_leased_host_takes_boots_within_the_window(self):
        now = timeutils.utcnow()
        self._lease(self.hosts['on'], now - datetime.timedelta(hours=1),
                    now + datetime.timedelta(hours=1))
        server, = self.boot(self.owner_api, self.pcloud)
        self.assertEqual(self.hosts['on'], self.host_of(server))

    def test_a_leased_host_takes_none_once_the_window_has_passed(self):
        """Blazar's end event has not run: the host is still in the

        pcloud, enabled, and in the lease's aggregate.
        """
        now = timeutils.utcnow()
        lease = self._lease(self.hosts['on'],
                            now - datetime.timedelta(hours=2),
                            now - datetime.timedelta(minutes=1))
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))
        # What refused it was the window alone.
        self.service.nova.aggregates.set_metadata(lease.id, {
            codec.LEASE_END: codec.format_moment(
                now + datetime.timedelta(hours=1))})
        server, = self.boot(self.owner_api, self.pcloud)
        self.assertEqual(self.hosts['on'], self.host_of(server))


class MoveTests(base.PcloudNovaTestCase):
    """An instance booted into the owner's pcloud on host "on", left

    there when the pcloud's hold on the host ended (the host is back in
    the pool, idle, its compute service enabled), is moved away the ways
    Nova moves instances: each lands where its project may still run,
    and never on an idle pool host or another pcloud's host.
    """

    def setUp(self):
        super().setUp()
        self.make_pool()
        self.owner = base.user(OWNER)
        self.owner_api = self.tenant_api(OWNER)
        self.pcloud = self.service.create_pcloud(self.owner, 'mine')['id']
        self.service.allocate_host(self.owner, self.pcloud, 'on', 'big')
        self.service.enable_host(self.owner, self.pcloud, 'on')
        self.source = self.pcloud_hosts(self.pcloud)['on']
        self.server, = self.boot(self.owner_api, self.pcloud)
        self.assertEqual(self.source, self.host_of(self.server))
        self._hold_ends('on')
        # Another tenant's pcloud holds one of the two other pool hosts.
        stranger = base.user(STRANGER)
        theirs = self.service.create_pcloud(stranger, 'theirs')['id']
        self.service.allocate_host(stranger, theirs, 'x', 'big')
        self.service.enable_host(stranger, theirs, 'x')
        self.forbidden = {'host1', 'host2', 'host3'} - {self.source}

    def _hold_ends(self, name):
        """Take the host out of the pcloud as a whole-host lease's end

        does (host_lifecycle._leave): disabled there, out of the
        aggregate, its name forgotten; its instances keep running.
        """
        nova = self.service.nova
        host = self.pcloud_hosts(self.pcloud)[name]
        agg, = [a for a in nova.aggregates.list()
                if a.name == codec.pcloud_name(self.pcloud)]
        nova.aggregates.remove_host(agg.id, host)
        nova.aggregates.set_metadata(agg.id, {
            codec.host_key(name): None, codec.host_state_key(host): None})

    def assert_moved_to(self, server, hosts):
        server = self.admin_api.get_server(server['id'])
        self.assertIn(self.host_of(server), hosts)
        self.assertNotIn(self.host_of(server), self.forbidden)

    def test_live_migration_goes_to_an_ordinary_host(self):
        server = self._live_migrate(self.server)
        self.assert_moved_to(server, {'host4', 'host5'})

    def test_cold_migration_goes_to_an_ordinary_host(self):
        server = self._migrate_server(self.server)
        self.assert_moved_to(server, {'host4', 'host5'})
        self._confirm_resize(server)

    def test_resize_goes_to_an_ordinary_host(self):
        server = self._resize_server(self.server, '2')   # m1.small
        self.assert_moved_to(server, {'host4', 'host5'})

    def test_evacuation_goes_to_an_ordinary_host(self):
        service_id = self.admin_api.get_services(
            host=self.source, binary='nova-compute')[0]['id']
        self.computes[self.source].stop()
        self.admin_api.put_service(service_id, {'forced_down': 'true'})
        server = self._evacuate_server(self.server)
        self.assert_moved_to(server, {'host4', 'host5'})

    def test_unshelve_goes_to_an_ordinary_host(self):
        self._shelve_server(self.server)
        server = self._unshelve_server(self.server)
        self.assert_moved_to(server, {'host4', 'host5'})

    def test_a_move_takes_its_pcloud_other_host_first(self):
        self.service.allocate_host(self.owner, self.pcloud, 'next', 'big')
        self.service.enable_host(self.owner, self.pcloud, 'next')
        mine = self.pcloud_hosts(self.pcloud)['next']
        self.forbidden.discard(mine)
        server = self._live_migrate(self.server)
        self.assert_moved_to(server, {mine})

    def test_with_no_ordinary_host_free_the_move_is_refused(self):
        """The idle pool host and the other pcloud's host are enabled

        computes with room: only the filter keeps the instance off them.
        """
        for host in ('host4', 'host5'):
            self.disable_compute(host)
        # The harness runs the conductor's cast as a call: its
        # NoValidHost reaches the API.
        e = self.assertRaises(
            api_client.OpenStackApiException,
            self.admin_api.post_server_action, self.server['id'],
            {'os-migrateLive': {'host': None, 'block_migration': 'auto'}})
        self.assertIn('NoValidHost', str(e))
        self._wait_for_migration_status(self.server, ['error'])
        server = self.admin_api.get_server(self.server['id'])
        self.assertEqual(self.source, self.host_of(server))
        self.assertEqual('ACTIVE', server['status'])

    def test_a_boot_with_the_hint_is_still_refused(self):
        """The pcloud has no host now: a new boot is no move."""
        self.assert_no_valid_host(
            self.boot(self.owner_api, self.pcloud, expected='ERROR'))
