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
"""The operations of seeds/000 over Nova host aggregates.

All state is aggregate metadata in Nova (see aggregates.py), read with one
list of every aggregate per step and written through python-novaclient
with admin credentials; the caller's project comes from the context. Each
multi-step write is ordered so that an interruption leaves either a
complete state or a harmless one that a retry finishes or replaces:
metadata that names a host is written before the host joins an aggregate
and removed after it leaves, and a host that has just joined a pcloud is
disabled, so the filter lets nothing onto it until its owner says so.
"""

import random
import time

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import tenacity

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import clients
from pcloud_plugin.clients import keystone as keystone_client
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage as usage_mod
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import boot_check
from pcloud_plugin.pcloud import cloud as cloud_mod
from pcloud_plugin.pcloud import host_flavors
from pcloud_plugin.pcloud import leases as leases_mod
from pcloud_plugin.pcloud import ratios as ratios_mod
from pcloud_plugin import quota

CONF = conf.CONF
LOG = logging.getLogger(__name__)

COMPUTE_BINARY = 'nova-compute'
# The operations recorded as intents (db.intents) and their fault steps.
ALLOCATE = 'allocate'
RELEASE = 'release'
_HYPERVISOR_PAGE = 500
# Not seeded: allocations made by different processes must not pick in step.
_RANDOM = random.SystemRandom()


class PcloudService(host_flavors.HostFlavors, ratios_mod.AllocationRatios,
                    boot_check.BootCheck):
    """Host flavors for cloud admins, pclouds for their owners.

    (Host flavors and pools are pcloud.host_flavors', allocation ratios
    pcloud.ratios', the boot check pcloud.boot_check's.)

    ``nova`` is a python-novaclient Client with admin credentials (see
    clients/nova.py); ``placement`` a keystoneauth adapter for Placement,
    built from [pcloud_placement] when first needed if not given;
    ``keystone`` one for Keystone's v3 API (clients/keystone.py), likewise
    on [pcloud_nova]'s credentials. ``ctx``
    is the caller's request context: its project_id owns what it creates,
    and is_admin opens the host flavor operations and every pcloud.
    """

    def __init__(self, nova, placement=None, conf_=None, leases=None,
                 usage=None, keystone=None):
        self.nova = nova
        self._placement = placement
        self._keystone = keystone
        self.conf = conf_ or CONF
        # Who holds pclouds and hosts by lease: the ledger's record.
        self.leases = leases or leases_mod.LeaseHolds()
        # Hosts held for good are usage too (notifications.usage).
        self.usage = usage or usage_mod.UsageNotifier(
            self.conf, publisher_id=usage_mod.PCLOUD_PUBLISHER)

    @property
    def placement(self):
        if self._placement is None:
            self._placement = placement_client.get_adapter(self.conf)
        return self._placement

    @property
    def keystone(self):
        if self._keystone is None:
            self._keystone = keystone_client.get_adapter(self.conf)
        return self._keystone

    # Nova calls, each mapped to our errors.

    def _call(self, action, func, *args, **kwargs):
        try:
            return func(*args, **kwargs)
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure(action, e)

    @staticmethod
    def _placement_call(action, func, *args):
        try:
            return func(*args)
        except clients.NoConnection as e:
            raise exception.PlacementUnreachable(action=action, reason=e)

    def _cloud(self):
        return cloud_mod.Cloud(self._call('list aggregates',
                                          self.nova.aggregates.list),
                               self.conf.pcloud.blazar_freepool_name)

    def _set_metadata(self, agg, metadata):
        self._call('set metadata of aggregate %s' % agg.name,
                   self.nova.aggregates.set_metadata, agg, metadata)

    def _membership(self, func, agg, host):
        """Add a host to, or remove it from, an aggregate: every change of

        membership goes through here. Nova mirrors membership into
        Placement and answers 409 when a concurrent request updated the
        same compute node's provider there first (allocations racing for
        one host do exactly that): such a call is tried again after a
        short random pause. A host to remove that is not there is out.
        """
        removing = func == self.nova.aggregates.remove_host
        interval = self.conf.pcloud.allocate_retry_interval

        def change():
            try:
                return func(agg, host)
            except nova_client.NotFound:
                if not removing:
                    raise
                # Not in the aggregate (any more): an earlier try that
                # Nova carried out though its answer was lost.
                LOG.info('Host %s was already out of aggregate %s', host,
                         getattr(agg, 'id', agg))
                return None

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(
                self.conf.pcloud.allocate_retries + 1),
            retry=tenacity.retry_if_exception_type(nova_client.Conflict),
            wait=lambda _state: _RANDOM.uniform(0, interval),
            reraise=True)(change)

    def _quietly(self, action, func, *args):
        """Best effort, for rollbacks: the original error is what counts."""
        try:
            func(*args)
        except Exception as e:
            LOG.warning('Rollback step failed, %s: %s', action, e)
            return False
        return True

    def _compute_service(self, host):
        services = self._call('list compute services',
                              self.nova.services.list,
                              host=host, binary=COMPUTE_BINARY)
        services = [s for s in services if s.host == host]
        if not services:
            raise exception.ComputeHostNotFound(host=host)
        return services[0]

    def _nodes_of(self, host):
        """The hypervisors of a compute host."""
        try:
            found = self._call('search hypervisors',
                               self.nova.hypervisors.search, host,
                               detailed=True)
        except exception.NovaError:
            found = []
        nodes = [h for h in found if h.service['host'] == host]
        # Its hypervisor_hostname need not contain the host name.
        return nodes or [h for h in self._hypervisors()
                         if h.service['host'] == host]

    def _hypervisors(self):
        """Every hypervisor of Nova, detailed, page by page."""
        marker = None
        while True:
            page = self._call('list hypervisors', self.nova.hypervisors.list,
                              detailed=True, marker=marker,
                              limit=_HYPERVISOR_PAGE)
            yield from page
            if len(page) < _HYPERVISOR_PAGE:
                return
            marker = page[-1].id

    def _servers_on(self, hostname):
        """uuids of the instances on a hypervisor."""
        try:
            found = self.nova.hypervisors.search(hostname, servers=True)
        except nova_client.NotFound:
            return []
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('list servers of a host', e)
        return sorted(s['uuid'] for h in found
                      if h.hypervisor_hostname == hostname
                      for s in (getattr(h, 'servers', None) or ()))

    # Lookups.

    @staticmethod
    def _require_admin(ctx):
        if not ctx.is_admin:
            raise exception.Forbidden(
                reason='host flavors are managed by cloud admins')

    @staticmethod
    def _pool(cloud, flavor_id):
        codec.validate_flavor_id(flavor_id)
        try:
            return cloud.pools[flavor_id]
        except KeyError:
            raise exception.HostFlavorNotFound(flavor_id=flavor_id)

    @staticmethod
    def _pcloud(ctx, cloud, pcloud_id):
        """A pcloud's aggregate and view, if ctx may manage it."""
        codec.validate_pcloud_id(pcloud_id)
        agg = cloud.pclouds.get(pcloud_id)
        if agg is None:
            raise exception.PcloudNotFound(pcloud_id=pcloud_id)
        view = codec.Pcloud(agg.metadata)
        # Others' pclouds do not exist, as far as a user can tell.
        if not ctx.is_admin and view.owner != ctx.project_id:
            raise exception.PcloudNotFound(pcloud_id=pcloud_id)
        return agg, view

    @staticmethod
    def _named_host(cloud, agg, view, name):
        codec.validate_host_name(name)
        hostname = view.hosts(cloud.member_nodes(agg)).get(name)
        if hostname is None:
            raise exception.PcloudHostNotFound(pcloud_id=view.id, name=name)
        return hostname

    def _pcloud_dict(self, cloud, agg, view, ctx=None):
        """A pcloud as the API shows it; with ``own`` (whether ctx's

        project owns it) when ctx is given.
        """
        found = {
            'id': view.id, 'name': view.name, 'owner': view.owner,
            'tenants': sorted(view.tenants),
            'cpu_allocation_ratio': view.cpu_allocation_ratio,
            'ram_allocation_ratio': view.ram_allocation_ratio,
            'hosts': sorted(view.hosts(cloud.member_nodes(agg))),
        }
        if ctx is not None:
            found['own'] = view.owner == ctx.project_id
        return found

    def _quota(self, project_id):
        # Keystone's pcloud_host_units limit when it has one, else the
        # [pcloud] options; read again after quota_cache_seconds.
        return quota.limits_for(self.conf).limit(project_id,
                                                 quota.HOST_UNITS)

    def _check_quota(self, cloud, project_id, extra, start=None, end=None,
                     exclude=None):
        """QuotaExceeded unless its units stay within the limit:

        the project's hosts for good, plus ``extra``, plus the most its
        host leases hold at once in [start, end) (from now on by default).
        """
        limit = self._quota(project_id)
        if limit < 0:
            return
        start = start or timeutils.utcnow().replace(microsecond=0)
        requested = (cloud.units_held(project_id, self.leases.leased_hosts())
                     + extra + self.leases.units_peak(
                         project_id, cloud.flavor_units, start,
                         end or window_mod.FOREVER, exclude))
        if requested > limit:
            raise exception.QuotaExceeded(
                project_id=project_id, requested=requested, limit=limit)

    def check_lease_quota(self, project_id, flavor_id, amount, start, end,
                          exclude=None):
        """For a pcloud:host lease: QuotaExceeded unless its hosts fit in

        the project's units quota beside its other leases and its hosts
        for good, all through its window.
        """
        if self._quota(project_id) < 0:
            return  # no limit: no need to read Nova's aggregates
        cloud = self._cloud()
        self._check_quota(cloud, project_id,
                          amount * cloud.flavor_units(flavor_id), start, end,
                          exclude)

    # Users: pclouds.

    def create_pcloud(self, ctx, name):
        name = codec.validate_text('name', name)
        owner = ctx.project_id
        if not owner:
            raise exception.InvalidField(field='project_id', value=owner,
                                         reason='the caller has no project')
        codec.validate_tenant_id(owner)
        pcloud_id = uuidutils.generate_uuid()
        metadata = codec.pcloud_metadata(pcloud_id, name, owner)
        agg = self._call('create aggregate', self.nova.aggregates.create,
                         codec.pcloud_name(pcloud_id), None)
        try:
            self._set_metadata(agg, metadata)
        except exception.NovaError:
            self._quietly('delete aggregate', self.nova.aggregates.delete,
                          agg)
            raise
        return self._pcloud_dict(cloud_mod.Cloud([]), agg,
                                 codec.Pcloud(metadata), ctx)

    def list_pclouds(self, ctx):
        cloud = self._cloud()
        result = []
        for agg in cloud.pclouds.values():
            view = codec.Pcloud(agg.metadata)
            if ctx.is_admin or view.owner == ctx.project_id:
                result.append(self._pcloud_dict(cloud, agg, view, ctx))
        # An aggregate made by hand may lack either.
        return sorted(result, key=lambda p: (p['name'] or '', p['id'] or ''))

    def show_pcloud(self, ctx, pcloud_id):
        cloud = self._cloud()
        agg, view = self._pcloud(ctx, cloud, pcloud_id)
        return self._pcloud_dict(cloud, agg, view, ctx)

    def _refuse_if_leased(self, pcloud_id, action, name=None):
        """PcloudLeased if a lease targets the pcloud (name None) or holds

        its host ``name``.
        """
        if name is None:
            leases = self.leases.live(pcloud_id)
            row = leases[0] if leases else None
            holds = 'targets it'
        else:
            row = self.leases.holding_host(pcloud_id, name)
            holds = 'holds host %s' % name
        if row is not None:
            raise exception.PcloudLeased(
                pcloud_id=pcloud_id, action=action, lease_id=row['lease_id'],
                state=row['state'], end=row['end_time'].isoformat(),
                holds=holds)

    def delete_pcloud(self, ctx, pcloud_id):
        agg, view = self._pcloud(ctx, self._cloud(), pcloud_id)
        self._refuse_if_leased(pcloud_id, 'be deleted')
        if agg.hosts:
            raise exception.PcloudNotEmpty(pcloud_id=pcloud_id,
                                           count=len(agg.hosts))
        self._call('delete aggregate %s' % agg.name,
                   self.nova.aggregates.delete, agg)

    def authorize_tenant(self, ctx, pcloud_id, tenant_id):
        return self._set_tenant(ctx, pcloud_id, tenant_id, codec.TENANT)

    def deauthorize_tenant(self, ctx, pcloud_id, tenant_id):
        """Owners may remove themselves too."""
        return self._set_tenant(ctx, pcloud_id, tenant_id, None)

    @staticmethod
    def _project_ref(value):
        """A project's id or name as the API takes it (Keystone names are

        up to 64 characters).
        """
        if (not isinstance(value, str) or not 1 <= len(value) <= 64
                or any(ord(c) > 0xFFFF for c in value)):
            raise exception.InvalidField(
                field='tenant_id', value=value,
                reason='must be a project id or name of 1 to 64 '
                       'characters')
        return value

    def authorize_project(self, ctx, pcloud_id, project):
        """authorize_tenant of the project ``project`` is the id or the

        name of, as Keystone says (a member may not ask it about other
        projects): what is stored is always its id.
        """
        project_id = keystone_client.resolve_project(
            self.keystone, self._project_ref(project))
        return self.authorize_tenant(ctx, pcloud_id, project_id)

    def deauthorize_project(self, ctx, pcloud_id, project):
        """deauthorize_tenant of a project by id or name, as

        authorize_project; one that Keystone cannot name (gone since, a
        name an older release stored as it came) but that is stored as
        given is removed as stored.
        """
        project = self._project_ref(project)
        try:
            project_id = keystone_client.resolve_project(self.keystone,
                                                         project)
        except (exception.ProjectNotFound,
                exception.ProjectNameAmbiguous):
            _agg, view = self._pcloud(ctx, self._cloud(), pcloud_id)
            if project not in view.tenants:
                raise
            project_id = project
        tenants = self.deauthorize_tenant(ctx, pcloud_id, project_id)
        if project != project_id and project in tenants:
            # Stored as given by an older release, beside its id.
            tenants = self.deauthorize_tenant(ctx, pcloud_id, project)
        return tenants

    def _set_tenant(self, ctx, pcloud_id, tenant_id, value):
        codec.validate_tenant_id(tenant_id)
        agg, view = self._pcloud(ctx, self._cloud(), pcloud_id)
        self._set_metadata(agg, {codec.tenant_key(tenant_id): value})
        tenants = set(view.tenants)
        if value:
            tenants.add(tenant_id)
        else:
            tenants.discard(tenant_id)
        return sorted(tenants)

    # Users: the hosts of a pcloud.

    def allocate_host(self, ctx, pcloud_id, name, flavor_id,
                      availability_zone=None):
        """Take a free host of a host flavor into a pcloud, disabled.

        seeds/000's race protection: pick at random among the free hosts,
        add, then count the pclouds holding the host; if more than one,
        give it back and try again, up to [pcloud] allocate_retries more
        times. Of allocations that took one host together at most one
        keeps it; so that one does, the one of the lowest pcloud id waits
        for the others to leave (see _settle).
        """
        codec.validate_host_name(name)
        codec.validate_flavor_id(flavor_id)
        if availability_zone is not None:
            availability_zone = codec.validate_text('availability_zone',
                                                    availability_zone)
        with cloud_mod.pcloud_lock(pcloud_id):
            cloud = self._cloud()
            agg, view = self._pcloud(ctx, cloud, pcloud_id)
            pool = self._pool(cloud, flavor_id)
            if name in view.hosts(cloud.member_nodes(agg)):
                raise exception.PcloudHostNameExists(pcloud_id=pcloud_id,
                                                     name=name)
            units = codec.host_flavor(pool.metadata).units
            self._check_quota(cloud, view.owner, units)
            return self._allocate(cloud, agg, view, name, flavor_id,
                                  availability_zone)

    def _allocate(self, cloud, agg, view, name, flavor_id, az):
        default_az = self.conf.pcloud.default_availability_zone
        pause = self.conf.pcloud.allocate_retry_interval
        # TryAgain: lost (or contended), pick again after a random pause
        # doubling at each retry; a break or return ends the tries.
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(
                self.conf.pcloud.allocate_retries + 1),
            retry=tenacity.retry_never,
            wait=lambda state: _RANDOM.uniform(
                0, pause * 2 ** (state.attempt_number - 1)),
            retry_error_callback=lambda _state: None)  # NoFreeHost below
        for attempt in retrying:
            if attempt.retry_state.attempt_number > 1:
                cloud = self._cloud()
                agg = cloud.pclouds.get(view.id)
                if agg is None:
                    raise exception.PcloudNotFound(pcloud_id=view.id)
                if flavor_id not in cloud.pools:
                    raise exception.HostFlavorNotFound(flavor_id=flavor_id)
            free = cloud.free_hosts(flavor_id, az, default_az)
            host, booked, intent = self._claim_one(cloud, free, view, name)
            blazars = cloud.free_hosts(flavor_id, az, default_az,
                                       blazars=True)
            if host is None and blazars and not booked:
                booked = ("%d free one(s) are held by Blazar's "
                          "physical:host plugin" % len(blazars))
            if host is None:
                if cloud.contended(flavor_id):
                    with attempt:
                        raise tenacity.TryAgain
                    continue
                break
            node = cloud.node_of[host]
            started = time.monotonic()
            try:
                taken = self._take(agg, view, host, node, name)
            except Exception:
                self.leases.release_host(node)
                # Its rollback may have stopped halfway: the reconciler
                # finishes it.
                self.leases.end(intent, failed=True)
                raise
            if not taken:
                self.leases.release_host(node)
            self.leases.end(intent)
            if taken:
                # Held since its claim: released, that is what is billed.
                self.usage.pcloud_host_allocated(
                    view.owner, view.id, name, flavor_id,
                    self.leases.held_since(node) or
                    timeutils.utcnow().replace(microsecond=0))
                return {'name': name, 'state': codec.DISABLED,
                        'flavor_id': flavor_id}
            # Pause on the scale of what a collision costs here.
            pause = max(pause, time.monotonic() - started)
            with attempt:
                raise tenacity.TryAgain
        raise exception.NoFreeHost(
            flavor_id=flavor_id,
            where=' in availability zone %s' % az if az else '',
            why=(': %s' % booked if booked else ''))

    def _claim_one(self, cloud, free, view, name):
        """(host, None, intent): a host of ``free``, at random, now claimed

        for good in the ledger, and the intent of its allocation (see
        db.intents); or (None, why the last one tried was not, None).
        """
        booked = None
        for host in _RANDOM.sample(free, len(free)):
            node = cloud.node_of[host]
            # Instances outlive the leases they were booted in: a pcloud
            # is handed only empty hosts.
            running = self._servers_on(node)
            if running:
                booked = ('a free one runs %d instance(s) an ended lease '
                          'left' % len(running))
                continue
            intent = self.leases.begin(
                ALLOCATE, '%s/%s' % (view.id, name), pcloud_id=view.id,
                name=name, host=host, hostname=node)
            faults.step(ALLOCATE, 'claim')
            held = self.leases.claim_host(node)
            if held is None:
                return host, None, intent
            booked = 'every free one is reserved in the ledger (%s)' % held
            self.leases.end(intent)
        return None, booked, None

    def _take(self, agg, view, host, hostname, name):
        """Add one host to a pcloud; whether it is ours alone after."""
        faults.step(ALLOCATE, 'name')
        self._set_metadata(agg, {codec.host_key(name): hostname,
                                 codec.host_state_key(hostname):
                                     codec.DISABLED})
        faults.step(ALLOCATE, 'add')
        try:
            self._call('add a host to pcloud %s' % view.id,
                       self._membership, self.nova.aggregates.add_host,
                       agg, host)
        except exception.NovaError:
            self._quietly('forget host', self._set_metadata, agg,
                          {codec.host_key(name): None,
                           codec.host_state_key(hostname): None})
            raise
        cloud = self._settle(agg, view, host, hostname, name)
        if cloud is None:
            return False
        fresh = codec.Pcloud(cloud.pclouds[view.id].metadata)
        if fresh.all_hosts.get(name) != hostname:
            # A concurrent allocation of the same name wrote it last: the
            # name is theirs.
            self._give_back(agg, host, None, hostname)
            raise exception.PcloudHostNameExists(pcloud_id=view.id,
                                                 name=name)
        try:
            self._check_quota(cloud, view.owner, 0)
            ratios = ratios_mod.ratios_of(fresh.cpu_allocation_ratio,
                                          fresh.ram_allocation_ratio)
            if ratios:
                faults.step(ALLOCATE, 'ratios')
                self._apply_ratios(agg, fresh, hostname, ratios)
        except exception.PcloudException:
            self._give_back(agg, host, name, hostname)
            raise
        faults.step(ALLOCATE, 'done')
        return True

    def _settle(self, agg, view, host, hostname, name):
        """Count the pclouds holding a host just added to ours.

        Alone: ours (returns the aggregates read). Not alone: give it
        back, except the holder of the lowest pcloud id, which waits a
        while for the others to do so. Every holder keeps the host only
        when it sees itself alone, so two never both keep it; the waiting
        makes one of them keep it when they all took it together.
        """
        deadline = time.monotonic() + self.conf.pcloud.allocate_settle_timeout
        poll = max(self.conf.pcloud.allocate_retry_interval, 0.01)
        while True:
            try:
                cloud = self._cloud()
            except exception.NovaError:
                self._give_back(agg, host, name, hostname)
                raise
            holders = cloud.holders.get(host, [])
            if holders == [view.id]:
                return cloud
            if view.id not in holders:
                # Someone else (an admin) took it out of our pcloud.
                self._quietly('forget host', self._set_metadata, agg, {
                    codec.host_key(name): None,
                    codec.host_state_key(hostname): None})
                return None
            if (min(holders) != view.id
                    or time.monotonic() > deadline):
                LOG.info('Pcloud %s lost a host to a concurrent '
                         'allocation, giving it back', view.id)
                self._give_back(agg, host, name, hostname)
                return None
            time.sleep(poll)

    def _give_back(self, agg, host, name, hostname):
        """Undo _take; if the host cannot leave, its keys stay with it."""
        if not self._quietly('remove host from pcloud', self._membership,
                             self.nova.aggregates.remove_host, agg, host):
            return
        metadata = {codec.host_state_key(hostname): None,
                    codec.saved_ratios_key(hostname): None}
        if name:
            metadata[codec.host_key(name)] = None
        self._quietly('forget host', self._set_metadata, agg, metadata)

    def _host_state(self, ctx, pcloud_id, name, state):
        cloud = self._cloud()
        agg, view = self._pcloud(ctx, cloud, pcloud_id)
        hostname = self._named_host(cloud, agg, view, name)
        if state == codec.DISABLED:
            self._refuse_if_leased(pcloud_id, 'disable its host', name)
        self._set_metadata(agg, {codec.host_state_key(hostname): state})
        return {'name': name, 'state': state}

    def enable_host(self, ctx, pcloud_id, name):
        return self._host_state(ctx, pcloud_id, name, codec.ENABLED)

    def disable_host(self, ctx, pcloud_id, name):
        return self._host_state(ctx, pcloud_id, name, codec.DISABLED)

    def list_hosts(self, ctx, pcloud_id):
        """Names, states and instance uuids; never a real hostname."""
        cloud = self._cloud()
        agg, view = self._pcloud(ctx, cloud, pcloud_id)
        result = []
        for name, hostname in sorted(
                view.hosts(cloud.member_nodes(agg)).items()):
            result.append({
                'name': name, 'state': view.state(hostname),
                'flavor_id': cloud.flavor_of.get(cloud.host_of[hostname]),
                'instances': self._servers_on(hostname)})
        return result

    def release_host(self, ctx, pcloud_id, name):
        """Give an empty, disabled host back to its pool.

        Its own allocation ratios are put back in Placement first, then it
        leaves the pcloud, then its keys go: a retry after any failure
        picks up where this stopped.
        """
        codec.validate_host_name(name)
        with cloud_mod.pcloud_lock(pcloud_id):
            cloud = self._cloud()
            agg, view = self._pcloud(ctx, cloud, pcloud_id)
            hostname = view.all_hosts.get(name)
            if hostname is None:
                raise exception.PcloudHostNotFound(pcloud_id=pcloud_id,
                                                   name=name)
            self._refuse_if_leased(pcloud_id, 'release its host', name)
            host = cloud.host_of.get(hostname)
            if host in agg.hosts:
                if view.state(hostname) != codec.DISABLED:
                    raise exception.PcloudHostBusy(
                        pcloud_id=pcloud_id, name=name,
                        reason='it is enabled: disable it first')
                servers = self._servers_on(hostname)
                if servers:
                    raise exception.PcloudHostBusy(
                        pcloud_id=pcloud_id, name=name,
                        reason='it still runs %d instance(s)'
                        % len(servers))
            # Else an earlier release stopped before forgetting the name.
            with self.leases.recorded(
                    RELEASE, '%s/%s' % (pcloud_id, name), pcloud_id=pcloud_id,
                    name=name, host=host, hostname=hostname):
                self._hand_back(RELEASE, cloud, agg, view, host, hostname,
                                name)

    def _hand_back(self, operation, cloud, agg, view, host, hostname, name):
        """Take a host out of a pcloud for good, each step safe to run

        again: its own allocation ratios back in Placement, out of the
        aggregate, its keys forgotten, its permanent claim released
        unless another pcloud holds it.
        """
        if view.saved_ratios.get(hostname):
            faults.step(operation, 'ratios')
            self._restore_ratios(view, hostname)
        if host in agg.hosts:
            faults.step(operation, 'remove')
            self._call('remove a host from pcloud %s' % view.id,
                       self._membership, self.nova.aggregates.remove_host,
                       agg, host)
        faults.step(operation, 'forget')
        forget = {codec.host_state_key(hostname): None,
                  codec.saved_ratios_key(hostname): None}
        if view.all_hosts.get(name) == hostname:
            forget[codec.host_key(name)] = None
        self._set_metadata(agg, forget)
        if set(cloud.holders.get(host, ())) <= {view.id}:
            since = self.leases.held_since(hostname)
            if operation == RELEASE and since is not None:
                # Before the claim goes: a crash sends it again (the same
                # record_id), never not at all.
                self.usage.pcloud_host_released(
                    view.owner, view.id, name, cloud.flavor_of.get(host),
                    since)
            faults.step(operation, 'unclaim')
            self.leases.release_host(hostname)

    def recover(self, intent):
        """Finish an interrupted release, or undo an interrupted

        allocation (db.intents): either way the host ends out of the
        pcloud, as before the allocation. What is left of it is only what
        this allocation wrote: a host the pcloud knows under another name
        stays. Returns what was done, or None if there was nothing to do.
        """
        details = intent['details']
        cloud = self._cloud()
        agg = cloud.pclouds.get(details['pcloud_id'])
        host, hostname = details['host'], details['hostname']
        if agg is None:
            if not cloud.holders.get(host):
                self.leases.release_host(hostname)
            return 'pcloud %s is gone' % details['pcloud_id']
        view = codec.Pcloud(agg.metadata)
        named = view.all_hosts.get(details['name'])
        if named not in (None, hostname):
            return None  # the name is another host's now
        if host in agg.hosts and named is None:
            return None  # in the pcloud, but not by this operation
        if (host not in agg.hosts and named is None
                and hostname not in view.saved_ratios):
            # Nothing of it left in Nova; in the ledger perhaps its claim.
            if not cloud.holders.get(host):
                self.leases.release_host(hostname)
            return None
        self._hand_back(intent['operation'], cloud, agg, view, host,
                        hostname, details['name'])
        return 'host %s out of pcloud %s' % (details['name'], view.id)
