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
