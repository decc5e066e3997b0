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

"""A pcloud takes the hinted boots of its tenants, and only those."""

from tempest import config
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from pcloud_plugin.tests.tempest.scenario import base

CONF = config.CONF


# Serial: while its host is pooled nothing but this pcloud's boots may go
# there, and Blazar's own host scenarios must not take it meanwhile.
@decorators.serial
class PcloudScenarioTest(base.ScenarioTest):

    def _services(self):
        return self.os_admin.services_client.list_services(
            binary='nova-compute')['services']

    def _empty_compute_host(self):
        """An up, enabled compute host with no server and no aggregate."""
        aggregated = set()
        for aggregate in self.os_admin.aggregates_client.list_aggregates()[
                'aggregates']:
            aggregated.update(aggregate['hosts'])
        candidates = [
            service['host'] for service in self._services()
            if service['state'] == 'up' and service['status'] == 'enabled'
            and service['host'] not in aggregated
            and not self.admin_servers.list_servers(
                all_tenants=True, host=service['host'])['servers']]
        wanted = CONF.pcloud.pool_host
        if wanted:
            if wanted not in candidates:
                self.fail('[pcloud] pool_host %s is not an empty, up, '
                          'enabled compute host in no aggregate' % wanted)
            return wanted
        if not candidates:
            raise self.skipException('no compute host is empty, up, '
                                     'enabled and in no aggregate')
        return candidates[0]

    def _set_service(self, host, status):
        (service,) = [s for s in self._services() if s['host'] == host]
        self.os_admin.services_client.update_service(service['id'],
                                                     status=status)

    def _pool(self, host):
        """The admin pools the host in a new host flavor; its id."""
        # A pool takes a host only with its nova-compute service disabled,
        # so that no plain boot lands there on the way in; pooling enables
        # it, leaving the pool disables it, and the end enables it again.
        self._set_service(host, 'disabled')
        self.addCleanup(self._set_service, host, 'enabled')
        flavor_id = data_utils.rand_name(prefix='pcloud-tempest',
                                         name='flavor')
        self.admin_pcloud.create_host_flavor(flavor_id, 1,
                                             'tempest pcloud scenario')
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.admin_pcloud.delete_host_flavor, flavor_id)
        self.admin_pcloud.add_pool_host(flavor_id, host)
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.admin_pcloud.remove_pool_host, flavor_id, host)
        return flavor_id

    def _pcloud_holding(self, flavor_id, name):
        """The member's new pcloud, holding a host of the flavor, enabled."""
        pcloud_id = self.pcloud.create_pcloud(
            data_utils.rand_name(prefix='pcloud-tempest', name='pcloud'))['id']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.pcloud.delete_pcloud, pcloud_id)
        # A host is free in the ledger a while after its last server went
        # (blazar-manager's next pass: [pcloud_instance] cleanup_interval,
        # [pcloud] placement_mirror_interval); until then NoFreeHost.
        self.wait_for('a free host of %s' % flavor_id,
                      lambda: self._allocate(pcloud_id, name, flavor_id),
                      bool, CONF.pcloud.lease_timeout)
        self.addCleanup(self._release, pcloud_id, name)
        self.pcloud.set_host_state(pcloud_id, name, 'enabled')
        return pcloud_id

    def _allocate(self, pcloud_id, name, flavor_id):
        """The host allocated, or None while none is free."""
        try:
            return self.pcloud.allocate_host(pcloud_id, name, flavor_id)
        except lib_exc.Conflict as e:
            body = e.resp_body if isinstance(e.resp_body, dict) else {}
            if body.get('error_name') != 'NoFreeHost':
                raise
            return None

    def _release(self, pcloud_id, name):
        # A host leaves its pcloud only disabled (and empty: the servers'
        # clean-ups, added later, have run).
        test_utils.call_and_ignore_notfound_exc(
            self.pcloud.set_host_state, pcloud_id, name, 'disabled')
        test_utils.call_and_ignore_notfound_exc(
            self.pcloud.release_host, pcloud_id, name)

    @decorators.idempotent_id('61075452-1d3a-4f5b-ba54-db3156cdfff4')
    def test_pcloud_takes_only_its_tenants_hinted_boots(self):
        host = self._empty_compute_host()
        pcloud_id = self._pcloud_holding(self._pool(host), 'rack-a')
        hint = {'pcloud': pcloud_id}
        flavor = CONF.compute.flavor_ref

        # The member boots into the pcloud with its hint.
        self.assert_on(self.boot(self.servers, flavor, scheduler_hints=hint),
                       [host])

        # Without the hint, not there: elsewhere, or nowhere (ERROR) on a
        # cloud of one compute host.
        plain = self.boot(self.servers, flavor)
        self.assertNotEqual(host, self.host_of(plain))
        if plain['status'] == 'ERROR':
            self.assert_no_valid_host(plain)
        # Nor when an admin asks for that very host: the filter says no.
        self.assert_no_valid_host(self.boot(self.admin_servers, flavor,
                                            host=host))

        # Another project, not authorized, is refused even with the hint...
        alt_project = self.os_alt.credentials.project_id
        self.assert_no_valid_host(self.boot(self.alt_servers, flavor,
                                            scheduler_hints=hint))
        # ... until the member authorizes it.
        self.pcloud.add_tenant(pcloud_id, alt_project)
        self.assert_on(self.boot(self.alt_servers, flavor,
                                 scheduler_hints=hint), [host])
