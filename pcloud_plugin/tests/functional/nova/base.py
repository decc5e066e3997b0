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

"""A real Nova with the PcloudFilter, and the Pcloud service driving it.

Nova's functional harness runs its API (a real WSGI app behind
wsgi-intercept), conductor, scheduler, several fake computes and a real
Placement, in this process. The Pcloud service reaches them the way it
does in production: python-novaclient over a keystoneauth session, and a
keystoneauth adapter for Placement, both loaded from [pcloud_nova] and
[pcloud_placement]. Only the auth plugin is ours: the harness stubs out
Keystone and reads the caller from request headers, so ``HarnessAuth``
sends those.
"""

import os
import sys

from keystoneauth1 import loading as ks_loading
from keystoneauth1 import plugin as ks_plugin
from nova.tests.functional.api import client as api_client
from nova.tests.functional import fixtures as func_fixtures
from nova.tests.functional import integrated_helpers

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin import context
from pcloud_plugin.pcloud import leases as leases_mod
from pcloud_plugin.pcloud import service as service_mod

FILTER = 'pcloud_plugin.scheduler.filters.pcloud_filter.PcloudFilter'
ENABLED_FILTERS = ['ComputeFilter', 'ComputeCapabilitiesFilter',
                   'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
                   'ServerGroupAffinityFilter', 'PcloudFilter']
TINY = '1'   # m1.tiny: 1 VCPU, 512 MB, 1 GB


class HarnessAuth(ks_plugin.BaseAuthPlugin):
    """An admin of ``project_id``, as the harness's stub Keystone reads it."""

    def __init__(self, project_id):
        super().__init__()
        self.project_id = project_id

    def get_headers(self, session, **kwargs):
        return {'X-Auth-Token': 'stub', 'X-Auth-User': 'admin',
                'X-Auth-Project-Id': self.project_id,
                'X-Roles': 'admin,member,reader'}


def user(project_id, is_admin=False):
    return context.RequestContext(project_id=project_id, is_admin=is_admin)


ADMIN = user('cloud-admin', is_admin=True)


class PcloudNovaTestCase(integrated_helpers._IntegratedTestBase):

    ADMIN_API = True
    microversion = 'latest'
    # 10 VCPU, 8 GB RAM each.
    compute_driver = 'fake.MediumFakeDriver'
    HOSTS = ('host1', 'host2', 'host3', 'host4', 'host5')

    def useFixture(self, fixture):
        # Nova before 2026.2 does not keep its Placement fixture, whose
        # endpoint and token our service's Placement client needs.
        if isinstance(fixture, func_fixtures.PlacementFixture):
            self.placement_fixture = fixture
        return super().useFixture(fixture)

    def setUp(self):
        self.flags(compute_driver=self.compute_driver)
        self.flags(api_paste_config=os.path.join(
            sys.prefix, 'etc', 'nova', 'api-paste.ini'), group='wsgi')
        self.flags(available_filters=['nova.scheduler.filters.all_filters',
                                      FILTER],
                   enabled_filters=ENABLED_FILTERS,
                   group='filter_scheduler')
        super().setUp()
        self.service = self.make_service()

    def _setup_compute_service(self):
        for host in self.HOSTS:
            self._start_compute(host)
        return self.computes[self.HOSTS[0]]

    def make_service(self):
        """A Pcloud service with its own clients, loaded from config."""
        cfg = conf.CONF
        self.flags(endpoint_override=self.api_fixture.base_url,
                   group='pcloud_nova')
        cfg.register_opts(
            ks_loading.get_auth_plugin_conf_options('admin_token'),
            group='pcloud_placement')
        self.flags(auth_type='admin_token',
                   endpoint=self.placement_fixture.endpoint,
                   token=self.placement_fixture.token,
                   group='pcloud_placement')
        return service_mod.PcloudService(
            nova_client.get_client(auth=HarnessAuth('cloud-admin')),
            placement_client.get_adapter(), cfg,
            leases=leases_mod.NoLeases())

    def tenant_api(self, project_id):
        api = api_client.TestOpenStackClient(
            'fake', self.api_fixture.base_url, project_id=project_id,
            roles=['reader', 'member'])
        api.microversion = 'latest'
        return api

    # Steps an operator takes by hand before pclouds.

    def disable_compute(self, host):
        nova = self.service.nova
        svc, = nova.services.list(host=host, binary='nova-compute')
        nova.services.disable(svc.id)

    def make_pool(self, flavor_id='big', hosts=('host1', 'host2', 'host3'),
                  units=1):
        self.service.create_host_flavor(ADMIN, flavor_id, 'a big host',
                                        units)
        for host in hosts:
            self.disable_compute(host)
            self.service.add_pool_host(ADMIN, flavor_id, host)

    def pcloud_hosts(self, pcloud_id):
        """Name -> real host, as only an admin may see it."""
        for agg in self.service.nova.aggregates.list():
            if agg.name == 'Pcloud:' + pcloud_id:
                return {k[len('pcloud:host:'):]: v
                        for k, v in agg.metadata.items()
                        if k.startswith('pcloud:host:')}

    # Booting, as tenants do.

    def boot(self, api, pcloud_id=None, count=1, expected='ACTIVE',
             flavor_id=TINY):
        body = {'server': self._build_server(flavor_id=flavor_id,
                                             networks='none')}
        if count > 1:
            body['server']['min_count'] = count
            body['server']['max_count'] = count
            body['server']['return_reservation_id'] = True
        if pcloud_id:
            body['os:scheduler_hints'] = {'pcloud': pcloud_id}
        created = api.post_server(body)
        if count > 1:
            servers = self.admin_api.get_servers(
                detail=True, search_opts={
                    'reservation_id': created['reservation_id'],
                    'all_tenants': 1})
        else:
            servers = [created]
        return [self._wait_for_state_change(s, expected) for s in servers]

    def assert_no_valid_host(self, servers):
        for server in servers:
            self.assertEqual('ERROR', server['status'])
            self.assertIn('No valid host', server['fault']['message'])

    def host_of(self, server):
        return server['OS-EXT-SRV-ATTR:host']
