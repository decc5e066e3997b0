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
"""Policy, then the Pcloud service: what each API call does.

Each method takes the caller's context (Blazar's, built from
keystonemiddleware's headers) and checked input, authorizes the call,
and answers with plain dicts. The service is called with a context of
its own whose is_admin says what policy allowed: policy, not the
service's own admin check, decides who may do what.

A pcloud that policy does not let the caller see does not exist for
them: 404, as for one that does not exist at all; only callers of the
owning project learn, by a 403, that their role is not enough.
"""

import datetime
import threading

from blazar import exceptions as blazar_exc
from oslo_log import log as logging
from oslo_utils import strutils
from oslo_utils import timeutils

from pcloud_plugin.blazar.api import lease_guard
from pcloud_plugin.blazar.api import policy
from pcloud_plugin.blazar.api import schemas
from pcloud_plugin.capacity import host_windows
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin import context as pcloud_context
from pcloud_plugin.db import maintenances as maint_db
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import cloud as cloud_mod
from pcloud_plugin.pcloud import service as service_mod
from pcloud_plugin import quota
from pcloud_plugin.reservations import allocations
from pcloud_plugin.reservations import hints as hints_mod
from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import instance_claims
from pcloud_plugin.reservations import lease_states
from pcloud_plugin.reservations import maintenance
from pcloud_plugin.reservations import offerings
from pcloud_plugin.reservations import slots as slots_mod
from pcloud_plugin.reservations import terms

CONF = conf.CONF
LOG = logging.getLogger(__name__)

_SERVICE = None
_LOCK = threading.Lock()


def get_service():
    """One PcloudService per process, on [pcloud_nova]'s client."""
    global _SERVICE
    with _LOCK:
        if _SERVICE is None:
            _SERVICE = service_mod.PcloudService(nova_client.get_client())
        return _SERVICE


def reset():
    global _SERVICE
    with _LOCK:
        _SERVICE = None


def _service_context(ctx, is_admin):
    return pcloud_context.RequestContext(
        user_id=ctx.user_id, project_id=ctx.project_id,
        request_id=ctx.request_id, roles=list(ctx.roles),
        is_admin=is_admin, overwrite=False)


def _own(ctx):
    return {'project_id': ctx.project_id, 'user_id': ctx.user_id}


def _pool_hosts(flavor):
    """A pool's hosts from show_host_flavor, as the API lists them."""
    hosts = [{'host': h, 'pcloud_id': None} for h in flavor['free_hosts']]
    hosts.extend({'host': h, 'pcloud_id': p}
                 for h, p in flavor['allocated_hosts'].items())
    return sorted(hosts, key=lambda h: h['host'])


def _invalid(field, reason):
    return exception.SchemaViolation(field=field, reason=reason)


def _int(query, field, minimum, maximum, default=None):
    """An integer of the query in [minimum, maximum], or default."""
    if field not in query:
        return default
    value = int(query[field])
    if not minimum <= value <= maximum:
        raise _invalid(field, 'must be from %d to %d, got %d'
                       % (minimum, maximum, value))
    return value


def _moment(query, field, default):
    """A moment of the query (terms.moment), ``default`` when not given."""
    if field not in query:
        return default
    return terms.moment(query[field], field)


def _not_before(query):
    """The query's ``start``, default now; nothing is reserved in the

    past: a start before this minute (Blazar takes lease dates to the
    minute) means now.
    """
    now = timeutils.utcnow().replace(microsecond=0)
    return max(_moment(query, 'start', now), now.replace(second=0))


def _terms(query):
    """(amount, duration, not before, count) of an offerings query."""
    amount = _int(query, 'amount', 1, 2 ** 31 - 1)
    duration = datetime.timedelta(minutes=_int(
        query, 'duration', 1, schemas.MAX_DURATION))
    not_before = _not_before(query)
    count = _int(query, 'count', 1, offerings.MAX_COUNT,
                 offerings.DEFAULT_COUNT)
    return amount, duration, not_before, count


def _timeline(query):
    """(first hour's start, hours) of an availability query: ``start``

    as offerings take it, rounded up to the minute; the hours must end
    by the end of time.
    """
    start = offerings.ceil_minute(_not_before(query))
    hours = _int(query, 'hours', 1, offerings.MAX_HOURS,
                 offerings.DEFAULT_HOURS)
    if hours * offerings.HOUR > window_mod.FOREVER - start:
        raise _invalid('start', 'must be at least %d hours before %s'
                       % (hours, window_mod.FOREVER))
    return start, hours


def _maintenance(found):
    """A maintenance as the API shows it."""
    return {'id': found['id'], 'state': found['state'],
            'hosts': [h['host_name'] for h in found['hosts']],
            'start_date': found['start_time'], 'end_date': found['end_time'],
            'reason': found['reason'], 'moved': found['report']['moved'],
            'unmovable': found['report']['unmovable']}


def _offerings(found):
    windows, searched_until = found
    return {'offerings': windows, 'searched_until': searched_until}


class API(object):

    def __init__(self, service=None):
        self._service = service
        self._plugins = None

    @property
    def service(self):
        return self._service or get_service()

    # Host flavors.

    def list_host_flavors(self, ctx):
        policy.authorize(ctx, 'pcloud:host_flavor:list', _own(ctx))
        return self.service.list_host_flavors(_service_context(ctx, False))

    def show_host_flavor(self, ctx, flavor_id):
        policy.authorize(ctx, 'pcloud:host_flavor:get', _own(ctx))
        codec.validate_flavor_id(flavor_id)
        if policy.authorize(ctx, 'pcloud:host_flavor:get_pool', _own(ctx),
                            do_raise=False):
            found = self.service.show_host_flavor(
                _service_context(ctx, True), flavor_id)
            hosts = _pool_hosts(found)
            return {'id': found['id'], 'description': found['description'],
                    'units': found['units'],
                    'free_hosts': len(found['free_hosts']),
                    'hosts': hosts}
        for flavor in self.service.list_host_flavors(
                _service_context(ctx, False)):
            if flavor['id'] == flavor_id:
                return flavor
        raise exception.HostFlavorNotFound(flavor_id=flavor_id)

    def create_host_flavor(self, ctx, body):
        policy.authorize(ctx, 'pcloud:host_flavor:create', _own(ctx))
        made = self.service.create_host_flavor(
            _service_context(ctx, True), body['id'],
            body.get('description', ''), body['units'])
        return dict(made, free_hosts=0, hosts=[])

    def delete_host_flavor(self, ctx, flavor_id):
        policy.authorize(ctx, 'pcloud:host_flavor:delete', _own(ctx))
        self.service.delete_host_flavor(_service_context(ctx, True),
                                        flavor_id)

    def list_pool_hosts(self, ctx, flavor_id):
        policy.authorize(ctx, 'pcloud:host_flavor:get_pool', _own(ctx))
        return _pool_hosts(self.service.show_host_flavor(
            _service_context(ctx, True), flavor_id))

    def add_pool_host(self, ctx, flavor_id, host):
        policy.authorize(ctx, 'pcloud:host_flavor:add_host', _own(ctx))
        self.service.add_pool_host(_service_context(ctx, True), flavor_id,
                                   host)
        return {'host': host, 'pcloud_id': None}

    def remove_pool_host(self, ctx, flavor_id, host):
        policy.authorize(ctx, 'pcloud:host_flavor:remove_host', _own(ctx))
        self.service.remove_pool_host(_service_context(ctx, True),
                                      flavor_id, host)

    # Pclouds.

    @staticmethod
    def _tenant_view(ctx, found):
        """What ctx's project sees of another's pcloud it is authorized on,

        if policy lets it (else None): enough to pick it and boot into it,
        nothing of what it holds (its hosts' names) or of whom else it
        lets in.
        """
        if (found['owner'] == ctx.project_id
                or ctx.project_id not in found['tenants']
                or not policy.authorize(ctx, 'pcloud:pcloud:get_authorized',
                                        _own(ctx), do_raise=False)):
            return None
        return dict(found, own=False, hosts=[], tenants=[ctx.project_id])

    def _pcloud(self, ctx, action, pcloud_id, as_tenant=False):
        """The pcloud, if policy lets ctx do action on it; or, with

        ``as_tenant``, its _tenant_view. Refused: 404 for those who may
        not see it at all, 403 for the others.
        """
        codec.validate_pcloud_id(pcloud_id)
        found = self.service.show_pcloud(_service_context(ctx, True),
                                         pcloud_id)
        target = {'project_id': found['owner'], 'user_id': ctx.user_id}
        if policy.authorize(ctx, action, target, do_raise=False):
            return found
        seen = self._tenant_view(ctx, found)
        if seen is not None and as_tenant:
            return seen
        if seen is None and ctx.project_id != found['owner']:
            raise exception.PcloudNotFound(pcloud_id=pcloud_id)
        raise exception.PolicyNotAuthorized(action=action)

    def list_pclouds(self, ctx, project_id=None):
        """The pclouds policy lets ctx see: its project's, those it is

        authorized on (as _tenant_view), every one for admins; of those,
        with ``project_id``, the ones that project owns or may use.
        """
        policy.authorize(ctx, 'pcloud:pcloud:list', _own(ctx))
        every = policy.authorize(ctx, 'pcloud:pcloud:list_all_projects',
                                 _own(ctx), do_raise=False)
        found = []
        for pcloud in self.service.list_pclouds(_service_context(ctx,
                                                                 True)):
            if not every and pcloud['owner'] != ctx.project_id:
                pcloud = self._tenant_view(ctx, pcloud)
                if pcloud is None:
                    continue
            if project_id in (None, pcloud['owner']) or (
                    project_id in pcloud['tenants']):
                found.append(pcloud)
        return found

    def create_pcloud(self, ctx, name):
        policy.authorize(ctx, 'pcloud:pcloud:create', _own(ctx))
        return self.service.create_pcloud(_service_context(ctx, False),
                                          name)

    def show_pcloud(self, ctx, pcloud_id):
        return self._pcloud(ctx, 'pcloud:pcloud:get', pcloud_id,
                            as_tenant=True)

    def delete_pcloud(self, ctx, pcloud_id):
        self._pcloud(ctx, 'pcloud:pcloud:delete', pcloud_id)
        self.service.delete_pcloud(_service_context(ctx, True), pcloud_id)

    # The hosts of a pcloud.

    def _hosts(self, ctx, pcloud_id):
        return self.service.list_hosts(_service_context(ctx, True),
                                       pcloud_id)

    def _host(self, ctx, pcloud_id, name):
        codec.validate_host_name(name)
        for host in self._hosts(ctx, pcloud_id):
            if host['name'] == name:
                return host
        raise exception.PcloudHostNotFound(pcloud_id=pcloud_id, name=name)

    def list_hosts(self, ctx, pcloud_id, state=None):
        self._pcloud(ctx, 'pcloud:host:list', pcloud_id)
        hosts = self._hosts(ctx, pcloud_id)
        if state is not None:
            hosts = [h for h in hosts if h['state'] == state]
        return hosts

    def show_host(self, ctx, pcloud_id, name):
        self._pcloud(ctx, 'pcloud:host:get', pcloud_id)
        return self._host(ctx, pcloud_id, name)

    def allocate_host(self, ctx, pcloud_id, body):
        self._pcloud(ctx, 'pcloud:host:allocate', pcloud_id)
        made = self.service.allocate_host(
            _service_context(ctx, True), pcloud_id, body['name'],
            body['flavor_id'], body.get('availability_zone'))
        return dict(made, instances=[])

    def update_host(self, ctx, pcloud_id, name, state):
        self._pcloud(ctx, 'pcloud:host:update', pcloud_id)
        codec.validate_host_name(name)
        svc_ctx = _service_context(ctx, True)
        if state == codec.ENABLED:
            self.service.enable_host(svc_ctx, pcloud_id, name)
        else:
            self.service.disable_host(svc_ctx, pcloud_id, name)
        return self._host(ctx, pcloud_id, name)

    def release_host(self, ctx, pcloud_id, name):
        self._pcloud(ctx, 'pcloud:host:release', pcloud_id)
        self.service.release_host(_service_context(ctx, True), pcloud_id,
                                  name)

    # Authorized tenants.

    def list_tenants(self, ctx, pcloud_id):
        return self._pcloud(ctx, 'pcloud:tenant:list', pcloud_id)['tenants']

    def add_tenant(self, ctx, pcloud_id, tenant_id):
        """``tenant_id``: a project's id or name, which the service

        resolves in Keystone (after policy: no one else learns from it
        which projects exist).
        """
        self._pcloud(ctx, 'pcloud:tenant:add', pcloud_id)
        return self.service.authorize_project(_service_context(ctx, True),
                                              pcloud_id, tenant_id)

    def remove_tenant(self, ctx, pcloud_id, tenant_id):
        self._pcloud(ctx, 'pcloud:tenant:remove', pcloud_id)
        self.service.deauthorize_project(_service_context(ctx, True),
                                         pcloud_id, tenant_id)

    # Allocation ratios.

    @staticmethod
    def _ratios(pcloud):
        return {'cpu_allocation_ratio': pcloud['cpu_allocation_ratio'],
                'ram_allocation_ratio': pcloud['ram_allocation_ratio']}

    def show_allocation_ratios(self, ctx, pcloud_id):
        return self._ratios(self._pcloud(
            ctx, 'pcloud:allocation_ratios:get', pcloud_id))

    def set_allocation_ratios(self, ctx, pcloud_id, body):
        self._pcloud(ctx, 'pcloud:allocation_ratios:set', pcloud_id)
        return self._ratios(self.service.set_allocation_ratios(
            _service_context(ctx, True), pcloud_id,
            cpu_allocation_ratio=body.get('cpu_allocation_ratio'),
            ram_allocation_ratio=body.get('ram_allocation_ratio'),
            unset=[field for field, value in body.items() if value is None]))

    # Offerings.

    def _aggregates(self):
        nova = self.service.nova
        try:
            return nova.aggregates.list()
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('list aggregates', e)

    def _host_terms(self, query):
        """(pools, params) of a whole-host query: its host flavor (404

        for one there is not), availability_zone and required_traits, as
        a pcloud:host reservation takes them.
        """
        pools = host_requests.Pools(self._aggregates(),
                                    CONF.pcloud.default_availability_zone)
        if query['host_flavor'] not in pools.pools:
            raise exception.HostFlavorNotFound(
                flavor_id=query['host_flavor'])
        traits = query.get('required_traits') or None
        if traits:
            try:
                # As a reservation's: several groups joined by '&'.
                host_windows.parse_traits(traits.split('&'))
            except exception.Invalid as e:
                raise _invalid('required_traits', e.kwargs.get(
                    'reason', e.message))
        return pools, {'host_flavor': query['host_flavor'],
                       'availability_zone': query.get('availability_zone'),
                       'required_traits': traits}

    def host_offerings(self, ctx, query):
        """When ``amount`` hosts of a host flavor could be leased."""
        policy.authorize(ctx, 'pcloud:offering:hosts', _own(ctx))
        amount, duration, not_before, count = _terms(query)
        pools, params = self._host_terms(query)
        params['amount'] = amount
        admin = pcloud_context.get_admin_context()
        return _offerings(offerings.host_offerings(
            admin, db_snapshots.load_forest(admin), pools, params, duration,
            not_before, count))

    def host_availability(self, ctx, query):
        """How many whole hosts of a host flavor are free each hour: counts

        only, nothing of which hosts or whose leases.
        """
        policy.authorize(ctx, 'pcloud:availability:hosts', _own(ctx))
        start, hours = _timeline(query)
        pools, params = self._host_terms(query)
        admin = pcloud_context.get_admin_context()
        total, free = offerings.host_availability(
            admin, db_snapshots.load_forest(admin), pools, params, start,
            hours)
        return {'host_flavor': params['host_flavor'], 'start': start,
                'step_minutes': offerings.HOUR // offerings.MINUTE,
                'hosts': total, 'free': free}

    def _slot_request(self, query, amount):
        """The SlotRequest of an instance slots query: its shape

        (vcpus, memory_mb, disk_gb), affinity and resource_properties as a
        virtual:instance reservation takes them, and admission's
        exclusions (the hosts of pclouds and pools).
        """
        per_slot = {'VCPU': _int(query, 'vcpus', 1, 2 ** 31 - 1),
                    'MEMORY_MB': _int(query, 'memory_mb', 1, 2 ** 31 - 1),
                    'DISK_GB': _int(query, 'disk_gb', 0, 2 ** 31 - 1)}
        affinity = query.get('affinity', 'none').lower()
        if affinity in ('', 'none', 'null'):
            affinity = None
        elif strutils.is_valid_boolstr(affinity):
            affinity = strutils.bool_from_string(affinity)
        else:
            raise _invalid('affinity', 'true, false or none, got %r'
                           % query['affinity'])
        try:
            properties = host_properties.parse(
                query.get('resource_properties') or '')
        except exception.Invalid as e:
            raise _invalid('resource_properties', e.kwargs.get(
                'param', e.message))
        try:
            excluded_aggregates, excluded_hosts = resources.NovaObjects(
                self.service.nova).pcloud_exclusions()
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('list aggregates', e)
        return slots_mod.SlotRequest(
            per_slot, amount, affinity=affinity,
            required=properties.required, forbidden=properties.forbidden,
            forbidden_aggregates=excluded_aggregates,
            excluded_hosts=excluded_hosts,
            hosts_matching=properties.hosts_matching)

    def instance_offerings(self, ctx, query):
        """When ``amount`` instance slots of a flavor could be reserved."""
        policy.authorize(ctx, 'pcloud:offering:instances', _own(ctx))
        amount, duration, not_before, count = _terms(query)
        request = self._slot_request(query, amount)
        return _offerings(offerings.slot_offerings(
            pcloud_context.get_admin_context(), request, duration,
            not_before, count))

    def instance_availability(self, ctx, query):
        """How many instance slots of a shape could be reserved each

        hour: counts only.
        """
        policy.authorize(ctx, 'pcloud:availability:instances', _own(ctx))
        start, hours = _timeline(query)
        request = self._slot_request(query, 1)
        free = offerings.slot_availability(
            pcloud_context.get_admin_context(), request, start, hours)
        return {'start': start,
                'step_minutes': offerings.HOUR // offerings.MINUTE,
                'free': free}

    # A flexible lease's window.

    def flexible_window(self, ctx, reservation, duration, earliest,
                        latest_end):
        """(start, end): the earliest window of ``duration`` from

        ``earliest``, ending by ``latest_end`` (None: any), in which a
        lease of the one reservation given would be admitted now, as
        offerings find it; NoWindowFits if none. A reservation whose
        terms do not parse gets the earliest window: admission then
        refuses it naming the term, as for any lease.
        """
        # Here, not at the top: the plugin's module brings Blazar's
        # manager and its options (blazar-api has loaded it already for
        # lease_guard), which the Pcloud API needs nowhere else.
        from pcloud_plugin.blazar import instance_plugin
        latest_start = None if latest_end is None else latest_end - duration
        admin = pcloud_context.get_admin_context()
        kind = reservation.get('resource_type')
        try:
            if kind == instance_plugin.RESOURCE_TYPE:
                policy.authorize(ctx, 'pcloud:offering:instances', _own(ctx))
                params = instance_plugin.parse_params(reservation)
                nova = resources.NovaObjects(self.service.nova)
                request = instance_claims.slot_request(
                    params, nova.pcloud_exclusions, nova.aggregate_zones)
                found = offerings.slot_offerings(
                    admin, request, duration, earliest, 1, latest_start)
            else:
                policy.authorize(ctx, 'pcloud:offering:hosts', _own(ctx))
                params = host_requests.parse_params(reservation)
                if params['lease_type'] != host_requests.SCHEDULE:
                    raise _invalid('reservations.0.lease_type', (
                        'a flexible window books a %s lease, not %s' % (
                            host_requests.SCHEDULE, params['lease_type'])))
                pools = host_requests.Pools(
                    self._aggregates(), CONF.pcloud.default_availability_zone)
                found = offerings.host_offerings(
                    admin, db_snapshots.load_forest(admin), pools, params,
                    duration, earliest, 1, latest_start)
        except exception.SchemaViolation:
            raise
        except (blazar_exc.BlazarException, exception.Invalid) as e:
            LOG.debug('Flexible lease: terms left to admission: %s', e)
            start = offerings.ceil_minute(earliest)
            return start, start + duration
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('list aggregates', e)
        windows, searched_until = found
        if windows:
            return windows[0]['start'], windows[0]['end']
        if latest_end is not None:
            until, why = 'to %s' % latest_end, 'each is taken'
        else:
            until = 'on'
            why = ('none up to %s, where the search stops' % searched_until
                   if searched_until else 'too few hosts may hold it')
        raise exception.NoWindowFits(
            minutes=duration // offerings.MINUTE, earliest=earliest,
            until=until, why=why)

    # Allocations.

    def list_allocations(self, ctx, query):
        """What holds each host in a window (admins)."""
        policy.authorize(ctx, 'pcloud:allocation:list', _own(ctx))
        now = timeutils.utcnow().replace(microsecond=0)
        start = _moment(query, 'start', now)
        end = _moment(query, 'end', start)
        if end < start:
            raise _invalid('end', 'must not be before start')
        return allocations.host_allocations(
            pcloud_context.get_admin_context(), self._aggregates(), start,
            end, host=query.get('host'))

    # Maintenance windows (operators).

    def _maintenance_plugins(self):
        """The two plugins' objects, as the manager has them, for the

        moves a maintenance makes (reservations.maintenance).
        """
        # Here, not at the top: as flexible_window's import.
        from pcloud_plugin.blazar import host_plugin
        from pcloud_plugin.blazar import instance_plugin
        with _LOCK:
            if self._plugins is None:
                self._plugins = {
                    instance_plugin.RESOURCE_TYPE:
                        instance_plugin.VirtualInstancePlugin(),
                    host_plugin.RESOURCE_TYPE:
                        host_plugin.PcloudHostPlugin()}
        return self._plugins

    def create_maintenance(self, ctx, body):
        """Book a maintenance window (reservations.maintenance.book)."""
        policy.authorize(ctx, 'pcloud:maintenance:create', _own(ctx))
        now = timeutils.utcnow().replace(microsecond=0)
        start = max(terms.moment(body['start_date'], 'start_date')
                    if body['start_date'] != 'now' else now, now)
        end = terms.moment(body['end_date'], 'end_date')
        if end <= start:
            raise _invalid('end_date', 'must be after start_date (%s)'
                           % start)
        return _maintenance(maintenance.book(
            pcloud_context.get_admin_context(), self._maintenance_plugins(),
            resources.NovaObjects(self.service.nova),
            self._maintained_hosts(body), start, end,
            reason=body.get('reason'),
            accept_unmovable=body.get('accept_unmovable', False)))

    def _maintained_hosts(self, body):
        """The compute hosts a maintenance asks for: ``hosts``, or the

        hypervisors of ``host_flavor``'s pool.
        """
        if ('hosts' in body) == ('host_flavor' in body):
            raise _invalid('hosts', 'give either hosts or host_flavor')
        if 'hosts' in body:
            return body['hosts']
        pools = host_requests.Pools(self._aggregates(),
                                    CONF.pcloud.default_availability_zone)
        pool = pools.pools.get(body['host_flavor'])
        if pool is None:
            raise _invalid('host_flavor', 'no host flavor %r'
                           % body['host_flavor'])
        if not pool.hosts:
            raise _invalid('host_flavor', 'the pool of %r has no host'
                           % body['host_flavor'])
        return sorted(pools.node_of.get(host, host) for host in pool.hosts)

    def list_maintenances(self, ctx):
        policy.authorize(ctx, 'pcloud:maintenance:list', _own(ctx))
        return [_maintenance(found) for found in maint_db.list_all(
            pcloud_context.get_admin_context())]

    def show_maintenance(self, ctx, maintenance_id):
        policy.authorize(ctx, 'pcloud:maintenance:get', _own(ctx))
        return _maintenance(maint_db.get(
            pcloud_context.get_admin_context(), maintenance_id))

    def delete_maintenance(self, ctx, maintenance_id):
        """Cancel one not started, end one under way: its hosts given

        back at once. One done already is forgotten.
        """
        policy.authorize(ctx, 'pcloud:maintenance:delete', _own(ctx))
        admin = pcloud_context.get_admin_context()
        found = maint_db.get(admin, maintenance_id)
        if found['state'] != maint_db.DONE:
            maintenance.finish(admin, self.service.nova, found)
        maint_db.delete(admin, maintenance_id)

    # Leases as seeds/001 names their states.

    # Boot checks.

    def check_boot(self, ctx, query):
        """Why a boot by ctx's project with ``query``'s pcloud hint and

        flavor would be refused (PcloudService.check_boot). A pcloud ctx
        may not see is one there is not, as everywhere in this API.
        """
        policy.authorize(ctx, 'pcloud:boot:check', _own(ctx))
        every = policy.authorize(ctx, 'pcloud:pcloud:list_all_projects',
                                 _own(ctx), do_raise=False)

        def visible(pcloud):
            return (every or pcloud['owner'] == ctx.project_id
                    or ctx.project_id in pcloud['tenants'])
        return self.service.check_boot(
            _service_context(ctx, False), query.get('pcloud'),
            query.get('flavor'), visible)

    def list_leases(self, ctx, project_id=None):
        """The leases of the caller's project (an admin's: of

        ``project_id``, if given) that hold reservations of ours.
        """
        policy.authorize(ctx, 'pcloud:lease:list', _own(ctx))
        if project_id not in (None, ctx.project_id):
            policy.authorize(ctx, 'pcloud:lease:list_all_projects',
                             _own(ctx))
        return lease_states.find(pcloud_context.get_admin_context(),
                                 project_id=project_id or ctx.project_id)

    def show_lease(self, ctx, lease_id):
        """One lease; 404 for one no reservation of ours is in, or one

        of a project policy does not let the caller read.
        """
        found = lease_states.find(pcloud_context.get_admin_context(),
                                  lease_id=lease_id)
        if not found:
            raise exception.LeaseNotFound(lease_id=lease_id)
        (lease,) = found
        target = {'project_id': lease['project_id'],
                  'user_id': ctx.user_id}
        if not policy.authorize(ctx, 'pcloud:lease:get', target,
                                do_raise=False):
            if ctx.project_id != lease['project_id']:
                raise exception.LeaseNotFound(lease_id=lease_id)
            raise exception.PolicyNotAuthorized(action='pcloud:lease:get')
        return lease_states.with_instances(
            pcloud_context.get_admin_context(), lease)

    def may_exceed_limits(self, ctx):
        """Whether policy lets the caller ask a reservation past the

        operator's limits (lease_guard.amount_limits).
        """
        return policy.authorize(ctx, 'pcloud:lease:exceed_limits',
                                _own(ctx), do_raise=False)

    def reservation_type(self, reservation_id):
        """The type of a reservation of ours, or None."""
        return lease_states.type_of(pcloud_context.get_admin_context(),
                                    reservation_id)

    def with_our_terms(self, leases):
        """Blazar's own lease answers (which Blazar's policy let through)

        with our reservations' terms and states (lease_states).
        """
        return lease_states.shown_in_blazar(
            pcloud_context.get_admin_context(), leases)

    def lease_hints(self, ctx):
        """What the caller's project may ask a lease for (reservations.

        hints), and the limits it is held to.
        """
        policy.authorize(ctx, 'pcloud:lease:hints', _own(ctx))
        admin = pcloud_context.get_admin_context()
        limits = {name: quota.LIMITS.limit(ctx.project_id, name)
                  for name in (quota.HOST_UNITS,) + quota.INSTANCE_RESOURCES}
        try:
            nova_quota = resources.NovaObjects(
                self.service.nova).instance_quota(ctx.project_id)
        except cloud_mod.NOVA_FAILURES as e:
            raise cloud_mod.nova_failure('read the quotas', e)
        limits.update(('nova_' + name, limit)
                      for name, limit in nova_quota.items())
        if not self.may_exceed_limits(ctx):
            # The operator's: the most one reservation of a type asks for.
            limits.update(('%s max_amount' % kind, limit) for kind, (
                _option, limit) in lease_guard.amount_limits().items())
        return hints_mod.hints(
            host_requests.Pools(self._aggregates(),
                                CONF.pcloud.default_availability_zone),
            self.list_host_flavors(ctx), self.list_pclouds(ctx),
            db_providers.traits_in_use(admin), limits,
            [region for region in (lease_guard.this_region(),) if region])
