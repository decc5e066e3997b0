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
"""Host flavors and their pools, for cloud admins (seeds/000): the part

of the pcloud service (pcloud.service.PcloudService) that makes, lists
and deletes host flavors and puts hosts in and out of their pools.
Imports aggregates and cloud of ours.
"""


from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import cloud as cloud_mod


class HostFlavors(object):
    """Mixed into PcloudService, whose Nova helpers (_call, _cloud,

    _set_metadata, _membership, _quietly, _pool, _compute_service, ...)
    it uses.
    """

    def create_host_flavor(self, ctx, flavor_id, description, units):
        self._require_admin(ctx)
        flavor = codec.HostFlavor(
            codec.validate_flavor_id(flavor_id),
            codec.validate_text('description', description,
                                allow_empty=True),
            codec.validate_units(units))
        name = codec.pool_name(flavor.id)
        try:
            agg = self.nova.aggregates.create(name, None)
        except nova_client.Conflict:
            agg = self._adoptable(name)
            if agg is None:
                raise exception.HostFlavorExists(flavor_id=flavor.id)
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('create aggregate %s' % name, e)
        try:
            self._set_metadata(agg, codec.pool_metadata(flavor))
        except exception.NovaError:
            self._quietly('delete aggregate %s' % name,
                          self.nova.aggregates.delete, agg)
            raise
        return cloud_mod.flavor_dict(flavor)

    def _adoptable(self, name):
        """An aggregate of this name left bare by an interrupted create."""
        for agg in self._call('list aggregates', self.nova.aggregates.list):
            if (agg.name == name and not agg.hosts
                    and codec.TYPE not in agg.metadata):
                return agg
        return None

    def list_host_flavors(self, ctx):
        """Every host flavor with how many of its hosts are free."""
        cloud = self._cloud()
        default_az = self.conf.pcloud.default_availability_zone
        result = []
        for flavor_id, agg in sorted(cloud.pools.items()):
            item = cloud_mod.flavor_dict(codec.host_flavor(agg.metadata))
            item['free_hosts'] = len(
                cloud.free_hosts(flavor_id, None, default_az))
            result.append(item)
        return result

    def show_host_flavor(self, ctx, flavor_id):
        """A host flavor and its pool: free hosts and allocated ones."""
        self._require_admin(ctx)
        cloud = self._cloud()
        agg = self._pool(cloud, flavor_id)
        result = cloud_mod.flavor_dict(codec.host_flavor(agg.metadata))
        result['free_hosts'] = cloud.free_hosts(
            flavor_id, None, self.conf.pcloud.default_availability_zone)
        result['allocated_hosts'] = {
            host: cloud.holders[host][0]
            for host in sorted(agg.hosts) if cloud.holders.get(host)}
        return result

    def delete_host_flavor(self, ctx, flavor_id):
        self._require_admin(ctx)
        agg = self._pool(self._cloud(), flavor_id)
        if agg.hosts:
            raise exception.HostFlavorInUse(flavor_id=flavor_id,
                                            count=len(agg.hosts))
        self._call('delete aggregate %s' % agg.name,
                   self.nova.aggregates.delete, agg)

    def add_pool_host(self, ctx, flavor_id, host):
        """Put an empty compute host, its service disabled, in a pool.

        Enables its compute service: from then on only the PcloudFilter
        decides who may use it.
        """
        self._require_admin(ctx)
        codec.validate_hostname(host)
        cloud = self._cloud()
        agg = self._pool(cloud, flavor_id)
        if host in cloud.flavor_of:
            raise exception.HostNotEligible(
                host=host, reason='it is already in the pool of host '
                'flavor %s' % cloud.flavor_of[host])
        if cloud.blazar_holds(host):
            raise exception.HostNotEligible(
                host=host, reason="Blazar's physical:host plugin holds it "
                "(openstack reservation host delete gives it back)")
        service = self._compute_service(host)
        if service.status != 'disabled':
            raise exception.HostNotEligible(
                host=host, reason='its nova-compute service is enabled: '
                'disable it first')
        nodes = self._nodes_of(host)
        if len(nodes) != 1:
            raise exception.HostNotEligible(
                host=host, reason='it has %d hypervisors, a pcloud host '
                'needs exactly one' % len(nodes))
        node = codec.validate_hostname(nodes[0].hypervisor_hostname)
        servers = self._servers_on(node)
        if servers:
            raise exception.HostNotEligible(
                host=host, reason='it runs %d instance(s)' % len(servers))
        key = codec.node_key(host)
        self._set_metadata(agg, {key: node})
        try:
            self._call('add host %s to %s' % (host, agg.name),
                       self._membership, self.nova.aggregates.add_host,
                       agg, host)
        except exception.NovaError:
            self._quietly('forget host', self._set_metadata, agg, {key: None})
            raise
        try:
            self._call('enable the compute service of %s' % host,
                       self.nova.services.enable, service.id)
        except exception.NovaError:
            if self._quietly('remove host', self._membership,
                             self.nova.aggregates.remove_host, agg, host):
                self._quietly('forget host', self._set_metadata, agg,
                              {key: None})
            raise

    def remove_pool_host(self, ctx, flavor_id, host):
        """Take a host no pcloud holds out of its pool.

        Its compute service is disabled first, as it was before it joined,
        so it takes no general instances until an admin says so.
        """
        self._require_admin(ctx)
        codec.validate_hostname(host)
        cloud = self._cloud()
        agg = self._pool(cloud, flavor_id)
        if host not in agg.hosts:
            raise exception.NotFound(
                reason='host %s is not in the pool of host flavor %s'
                % (host, flavor_id))
        if cloud.holders.get(host):
            raise exception.HostAllocated(host=host,
                                          pcloud_id=cloud.holders[host][0])
        service = self._compute_service(host)
        self._call('disable the compute service of %s' % host,
                   self.nova.services.disable_log_reason, service.id,
                   'removed from pcloud host flavor %s' % flavor_id)
        self._call('remove host %s from %s' % (host, agg.name),
                   self._membership, self.nova.aggregates.remove_host,
                   agg, host)
        self._set_metadata(agg, {codec.node_key(host): None})
