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

"""An honest in-memory stand-in for the parts of novaclient we call.

It answers the way Nova's API does (the same refusals, with novaclient's
exception types), keeps its state under one lock, and hands out copies, so
callers see a snapshot exactly as they would over HTTP. ``latency`` adds a
random pause to every call, letting threads interleave as they would
against a real API.
"""

import contextlib
import copy
import itertools
import random
import threading
import time
import types

from novaclient import exceptions as nova_exc


def _id(obj):
    return getattr(obj, 'id', obj)


class _Manager(object):
    def __init__(self, nova):
        self._nova = nova


class _Aggregates(_Manager):

    def list(self):
        with self._nova.call():
            return [self._nova.snapshot(a)
                    for a in self._nova.aggregates_by_id.values()]

    def create(self, name, availability_zone):
        with self._nova.call():
            if any(a['name'] == name
                   for a in self._nova.aggregates_by_id.values()):
                raise nova_exc.Conflict(409, 'Aggregate %s exists' % name)
            agg = {'id': next(self._nova.ids), 'name': name,
                   'availability_zone': availability_zone, 'hosts': [],
                   'metadata': {}}
            if availability_zone:
                agg['metadata']['availability_zone'] = availability_zone
            self._nova.aggregates_by_id[agg['id']] = agg
            return self._nova.snapshot(agg)

    def _get(self, aggregate):
        try:
            return self._nova.aggregates_by_id[_id(aggregate)]
        except KeyError:
            raise nova_exc.NotFound(404, 'No aggregate %s' % _id(aggregate))

    def add_host(self, aggregate, host):
        with self._nova.call('add_host'):
            agg = self._get(aggregate)
            if host not in self._nova.computes:
                raise nova_exc.NotFound(404, 'No compute host %s' % host)
            if host in agg['hosts']:
                raise nova_exc.Conflict(409, 'Host already in aggregate')
            agg['hosts'].append(host)
            return self._nova.snapshot(agg)

    def remove_host(self, aggregate, host):
        with self._nova.call('remove_host'):
            agg = self._get(aggregate)
            if host not in agg['hosts']:
                raise nova_exc.NotFound(404, 'Host not in aggregate')
            agg['hosts'].remove(host)
            return self._nova.snapshot(agg)

    def set_metadata(self, aggregate, metadata):
        with self._nova.call('set_metadata'):
            agg = self._get(aggregate)
            for key, value in metadata.items():
                if len(key) > 255 or (value is not None and len(value) > 255):
                    raise nova_exc.BadRequest(400, 'Too long')
                if value is None:
                    agg['metadata'].pop(key, None)
                else:
                    agg['metadata'][key] = value
            return self._nova.snapshot(agg)

    def delete(self, aggregate):
        with self._nova.call('delete'):
            agg = self._get(aggregate)
            if agg['hosts']:
                raise nova_exc.BadRequest(400, 'Aggregate has hosts')
            del self._nova.aggregates_by_id[agg['id']]


class _Quotas(_Manager):
    """os-quota-sets: none unless quota_sets says ({project: {...}})."""

    def get(self, project_id):
        with self._nova.call():
            return types.SimpleNamespace(**dict(
                {'instances': -1, 'cores': -1},
                **self._nova.quota_sets.get(project_id, {})))


class _Services(_Manager):

    def list(self, host=None, binary=None):
        with self._nova.call():
            return [types.SimpleNamespace(**s)
                    for s in self._nova.computes.values()
                    if host in (None, s['host'])
                    and binary in (None, s['binary'])]

    def _by_id(self, service_id):
        for service in self._nova.computes.values():
            if service['id'] == service_id:
                return service
        raise nova_exc.NotFound(404, 'No service %s' % service_id)

    def enable(self, service_id):
        with self._nova.call('enable'):
            self._by_id(service_id)['status'] = 'enabled'

    def disable_log_reason(self, service_id, reason):
        with self._nova.call('disable'):
            self._by_id(service_id)['status'] = 'disabled'


class _Hypervisors(_Manager):

    def _view(self, host, servers):
        node = self._nova.nodes[host]
        view = {'id': node['id'], 'hypervisor_hostname': node['name'],
                'service': {'host': host}, 'state': node['state'],
                'status': self._nova.computes[host]['status']}
        if servers and node['servers']:
            view['servers'] = [{'uuid': u, 'name': u}
                               for u in node['servers']]
        return types.SimpleNamespace(**view)

    def search(self, hypervisor_match, servers=False, detailed=False):
        with self._nova.call():
            found = [self._view(host, servers) for host, node
                     in sorted(self._nova.nodes.items())
                     if hypervisor_match in node['name']]
            if not found:
                raise nova_exc.NotFound(404, 'No hypervisor matching')
            return found

    def list(self, detailed=True, marker=None, limit=None):
        with self._nova.call():
            views = [self._view(host, False)
                     for host in sorted(self._nova.nodes)]
            if marker is not None:
                views = views[[v.id for v in views].index(marker) + 1:]
            return views[:limit]


class _Flavors(_Manager):

    def get(self, flavor_id):
        with self._nova.call():
            try:
                return self._nova.flavor_rows[flavor_id]
            except KeyError:
                raise nova_exc.NotFound(404, 'No flavor %s' % flavor_id)

    def list(self, is_public=True):
        with self._nova.call():
            return list(self._nova.flavor_rows.values())


class _FlavorAccess(_Manager):

    def list(self, flavor):
        with self._nova.call():
            return [types.SimpleNamespace(tenant_id=p)
                    for p in self._nova.flavor_projects[flavor]]


class FakeNova(object):

    def __init__(self, latency=0.0):
        self.latency = latency
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.aggregates_by_id = {}
        self.computes = {}   # host -> service dict
        self.nodes = {}      # host -> {'id', 'name', 'servers'}
        self.failures = {}   # call name -> exception to raise once
        self.writes = 0
        self.aggregates = _Aggregates(self)
        self.services = _Services(self)
        self.hypervisors = _Hypervisors(self)
        self.quota_sets = {}
        self.quotas = _Quotas(self)
        self.flavor_rows = {}      # id -> flavor
        self.flavor_projects = {}  # id -> projects of a private one
        self.flavors = _Flavors(self)
        self.flavor_access = _FlavorAccess(self)

    def add_compute(self, host, node=None, status='disabled', servers=()):
        self.computes[host] = {'id': 'svc-%s' % host, 'host': host,
                               'binary': 'nova-compute', 'status': status}
        self.nodes[host] = {'id': 'node-%s' % host, 'name': node or host,
                            'servers': list(servers), 'state': 'up'}

    def add_flavor(self, flavor_id, name, vcpus=1, ram=512, disk=1,
                   extra_specs=None, projects=None):
        """A flavor; private to ``projects`` when given."""
        self.flavor_rows[flavor_id] = types.SimpleNamespace(**{
            'id': flavor_id, 'name': name, 'vcpus': vcpus, 'ram': ram,
            'disk': disk, 'swap': '', 'OS-FLV-EXT-DATA:ephemeral': 0,
            'os-flavor-access:is_public': projects is None,
            'get_keys': lambda: dict(extra_specs or {})})
        self.flavor_projects[flavor_id] = list(projects or ())

    def snapshot(self, agg):
        return types.SimpleNamespace(**copy.deepcopy(agg))

    def fail_next(self, call, error=None):
        self.failures[call] = error or nova_exc.ClientException(
            500, 'injected failure of %s' % call)

    @contextlib.contextmanager
    def call(self, name=None):
        """One API call; ``name`` marks a write that fail_next can break."""
        if self.latency:
            time.sleep(random.uniform(0, self.latency))
        with self.lock:
            if name in self.failures:
                raise self.failures.pop(name)
            if name:
                self.writes += 1
            yield

    def state(self):
        """Everything about aggregates, to compare before and after."""
        with self.lock:
            return copy.deepcopy(self.aggregates_by_id)
