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
"""A recording stand-in for python-novaclient, for in-process Blazar tests

ONLY: the real Nova API cannot share a process with Blazar (both register
global options such as ``host``). It keeps the objects the plugin makes,
answers like Nova does for the calls the plugin uses (Conflict on a
duplicate, NotFound on a missing object) and fails a named call on
demand. The real Nova path is exercised by the sandbox.
"""

import itertools

from novaclient import api_versions
from novaclient import exceptions as nova_exc
from oslo_utils import uuidutils


# The fields of a server an admin sees: its host, its task.
HOST = 'OS-EXT-SRV-ATTR:host'
TASK = 'OS-EXT-STS:task_state'


class _Obj:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class FakeNova:
    """``hypervisors``: {compute node uuid: service host}."""

    def __init__(self, hypervisors=None):
        self.api_version = api_versions.APIVersion('2.53')
        self.calls = []
        self.failures = {}
        self.hypervisor_hosts = dict(hypervisors or {})
        self.flavor_objs = {}
        self.aggregate_objs = {}
        self.group_objs = {}
        self._ids = itertools.count(1)
        self.flavors = _Manager(self, 'flavors', {
            'create': self._flavor_create, 'get': self._flavor_get,
            'delete': self._flavor_delete})
        self.flavor_access = _Manager(self, 'flavor_access', {
            'add_tenant_access': self._access_add,
            'remove_tenant_access': self._access_remove})
        self.aggregates = _Manager(self, 'aggregates', {
            'list': lambda: list(self.aggregate_objs.values()),
            'create': self._aggregate_create, 'get': self._aggregate_get,
            'set_metadata': self._aggregate_metadata,
            'add_host': self._aggregate_add, 'delete': self._aggregate_delete,
            'remove_host': self._aggregate_remove})
        self.server_groups = _Manager(self, 'server_groups', {
            'list': lambda: list(self.group_objs.values()),
            'create': self._group_create, 'delete': self._group_delete})
        self.hypervisors = _Manager(self, 'hypervisors', {
            'get': self._hypervisor_get, 'search': self._hypervisor_search,
            'list': self._hypervisor_list})
        # {project id: {'instances': n, 'cores': n}}; none: no limit.
        self.quota_sets = {}
        self.quotas = _Manager(self, 'quotas', {'get': self._quota_get})
        self.server_objs = {}
        self.servers = _Manager(self, 'servers', {
            'list': self._servers_list, 'live_migrate': self._live_migrate})

    def fail(self, call, error=None):
        """Make ``call`` ('server_groups.create', ...) raise from now on."""
        self.failures[call] = error or nova_exc.ClientException(
            500, 'injected failure of %s' % call)

    def add_pcloud_aggregate(self, name, hosts, kind='pcloud', uuid=None):
        agg = self._aggregate_create(name, None)
        agg.uuid = uuid or agg.uuid
        agg.metadata['pcloud:type'] = kind
        agg.hosts.extend(hosts)
        return agg

    # --- flavors ---------------------------------------------------------

    def _flavor_create(self, name, ram, vcpus, disk, flavorid='auto',
                       is_public=True):
        if flavorid in self.flavor_objs:
            raise nova_exc.Conflict(409, 'Flavor %s exists' % flavorid)
        flavor = _Obj(id=flavorid, name=name, ram=ram, vcpus=vcpus,
                      disk=disk, is_public=is_public, extra_specs={},
                      access=set())
        flavor.set_keys = flavor.extra_specs.update
        self.flavor_objs[flavorid] = flavor
        return flavor

    def _flavor_get(self, flavor_id):
        try:
            return self.flavor_objs[flavor_id]
        except KeyError:
            raise nova_exc.NotFound(404, 'No flavor %s' % flavor_id)

    def _flavor_delete(self, flavor_id):
        self._flavor_get(flavor_id)
        del self.flavor_objs[flavor_id]

    def _access_add(self, flavor, tenant):
        flavor = self._flavor_get(getattr(flavor, 'id', flavor))
        if tenant in flavor.access:
            raise nova_exc.Conflict(409, 'access exists')
        flavor.access.add(tenant)

    def _access_remove(self, flavor, tenant):
        flavor = self._flavor_get(getattr(flavor, 'id', flavor))
        if tenant not in flavor.access:
            raise nova_exc.NotFound(404, 'no access')
        flavor.access.discard(tenant)

    # --- aggregates ------------------------------------------------------

    def _aggregate_create(self, name, availability_zone):
        if any(a.name == name for a in self.aggregate_objs.values()):
            raise nova_exc.Conflict(409, 'Aggregate %s exists' % name)
        agg = _Obj(id=next(self._ids), uuid=uuidutils.generate_uuid(),
                   name=name, metadata={}, hosts=[],
                   availability_zone=availability_zone)
        self.aggregate_objs[agg.id] = agg
        return agg

    def _aggregate_get(self, agg_id):
        agg_id = getattr(agg_id, 'id', agg_id)  # novaclient takes either
        try:
            return self.aggregate_objs[agg_id]
        except KeyError:
            raise nova_exc.NotFound(404, 'No aggregate %s' % agg_id)

    def _aggregate_metadata(self, agg_id, metadata):
        held = self._aggregate_get(agg_id).metadata
        for key, value in metadata.items():
            # As Nova: None removes the key.
            if value is None:
                held.pop(key, None)
            else:
                held[key] = value

    def _aggregate_add(self, agg_id, host):
        agg = self._aggregate_get(agg_id)
        if host not in self.hypervisor_hosts.values():
            raise nova_exc.NotFound(404, 'No compute host %s' % host)
        if host in agg.hosts:
            raise nova_exc.Conflict(409, 'Host %s in aggregate' % host)
        agg.hosts.append(host)

    def _aggregate_remove(self, agg_id, host):
        agg = self._aggregate_get(agg_id)
        if host not in agg.hosts:
            raise nova_exc.NotFound(404, 'Host %s not in aggregate' % host)
        agg.hosts.remove(host)

    def _aggregate_delete(self, agg_id):
        agg = self._aggregate_get(agg_id)
        if agg.hosts:
            raise nova_exc.BadRequest(400, 'Aggregate still has hosts')
        del self.aggregate_objs[agg.id]

    # --- servers and their live migrations ------------------------------

    def _quota_get(self, project_id):
        return _Obj(**dict({'instances': -1, 'cores': -1},
                           **self.quota_sets.get(project_id, {})))

    def add_server(self, host, project, vcpus=2, ram=4096, disk=20):
        """A server running on ``host``, with the fields Nova shows an

        admin (2.47+: the flavor's sizes inline).
        """
        server = _Obj(id=uuidutils.generate_uuid(), tenant_id=project,
                      status='ACTIVE',
                      flavor={'vcpus': vcpus, 'ram': ram, 'disk': disk},
                      **{HOST: host, TASK: None})
        self.server_objs[server.id] = server
        return server

    def _servers_list(self, search_opts=None):
        host = (search_opts or {}).get('host')
        return [s for s in self.server_objs.values()
                if host is None or getattr(s, HOST) == host]

    def _live_migrate(self, server, host, block_migration):
        found = self.server_objs.get(getattr(server, 'id', server))
        if found is None:
            raise nova_exc.NotFound(404, 'No server %s' % server)
        if found.status != 'ACTIVE' or getattr(found, TASK) is not None:
            raise nova_exc.Conflict(409, "Cannot 'os-migrateLive' instance "
                                    'while it is in vm_state %s'
                                    % found.status.lower())
        setattr(found, TASK, 'migrating')
        found.status = 'MIGRATING'

    def end_migration(self, server_id, to=None, error=False):
        """End a server's live migration as Nova does: on host ``to``,

        or back where it was (it failed), in ERROR with ``error``.
        """
        server = self.server_objs[server_id]
        setattr(server, TASK, None)
        server.status = 'ERROR' if error else 'ACTIVE'
        if to is not None:
            setattr(server, HOST, to)

    # --- server groups and hypervisors -----------------------------------

    def _group_create(self, name, policies=None, policy=None):
        if self.api_version < api_versions.APIVersion('2.64'):
            assert policy is None and len(policies) == 1, policies
            policy = policies[0]
        group = _Obj(id=uuidutils.generate_uuid(), name=name, policy=policy)
        self.group_objs[group.id] = group
        return group

    def _group_delete(self, group_id):
        if self.group_objs.pop(group_id, None) is None:
            raise nova_exc.NotFound(404, 'No server group %s' % group_id)

    def _hypervisor_search(self, hostname, servers=False, detailed=False):
        """Hypervisors named as their service host; no servers run here.

        (The sandbox tests boot real ones.)
        """
        found = [_Obj(id=node, hypervisor_hostname=host, servers=[],
                      service={'host': host})
                 for node, host in self.hypervisor_hosts.items()
                 if host == hostname]
        if not found:
            raise nova_exc.NotFound(404, 'No hypervisor %s' % hostname)
        return found

    def _hypervisor_list(self, detailed=True, marker=None, limit=None):
        """Every hypervisor, up and enabled, in one page."""
        return [_Obj(id=node, hypervisor_hostname=host, state='up',
                     status='enabled', service={'host': host})
                for node, host in sorted(self.hypervisor_hosts.items())]

    def _hypervisor_get(self, hypervisor_id):
        try:
            return _Obj(id=hypervisor_id, service={
                'host': self.hypervisor_hosts[hypervisor_id]})
        except KeyError:
            raise nova_exc.NotFound(404, 'No hypervisor %s' % hypervisor_id)


class _Manager:
    def __init__(self, nova, name, methods):
        self._nova = nova
        self._name = name
        self._methods = methods

    def __getattr__(self, method):
        if method not in self._methods:
            raise AttributeError(method)
        call = '%s.%s' % (self._name, method)

        def recorded(*args, **kwargs):
            self._nova.calls.append((call, args, kwargs))
            failure = self._nova.failures.get(call)
            if failure is not None:
                raise failure
            return self._methods[method](*args, **kwargs)
        return recorded
