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

"""A tempest.lib client of the Pcloud API and of Blazar's leases.

Both are at Blazar's ``reservation`` endpoint, under /v1; the routes and
bodies are those of pcloud_plugin/osc/client.py and the API reference.
"""

import json
from urllib import parse

from tempest import config
from tempest.lib.common import rest_client

FLAVORS = 'pcloud-host-flavors'
PCLOUDS = 'pclouds'
LEASES = 'leases'


def _path(*parts):
    """A URL path, relative to the endpoint, of quoted parts."""
    return '/'.join(parse.quote(str(p), safe='') for p in parts)


class PcloudClient(rest_client.RestClient):

    # Whether or not the catalog's endpoint ends in /v1 (DevStack's does,
    # behind /reservation), requests go under /v1.
    api_version = 'v1'

    def _call(self, method, expected, parts, body=None, key=None):
        resp, data = self.request(
            method, _path(*parts),
            body=None if body is None else json.dumps(body))
        self.expected_success(expected, resp.status)
        data = json.loads(data) if data else {}
        return data[key] if key else data

    # Host flavors and their pools (admins).

    def create_host_flavor(self, flavor_id, units, description=None):
        body = {'id': flavor_id, 'units': units}
        if description is not None:
            body['description'] = description
        return self._call('POST', 201, (FLAVORS,), body, 'host_flavor')

    def delete_host_flavor(self, flavor_id):
        self._call('DELETE', 204, (FLAVORS, flavor_id))

    def add_pool_host(self, flavor_id, host):
        return self._call('POST', 201, (FLAVORS, flavor_id, 'hosts'),
                          {'host': host}, 'host')

    def remove_pool_host(self, flavor_id, host):
        self._call('DELETE', 204, (FLAVORS, flavor_id, 'hosts', host))

    # Pclouds, their hosts and tenants (their owners).

    def create_pcloud(self, name):
        return self._call('POST', 201, (PCLOUDS,), {'name': name}, 'pcloud')

    def show_pcloud(self, pcloud_id):
        return self._call('GET', 200, (PCLOUDS, pcloud_id), key='pcloud')

    def delete_pcloud(self, pcloud_id):
        self._call('DELETE', 204, (PCLOUDS, pcloud_id))

    def allocate_host(self, pcloud_id, name, flavor_id):
        return self._call('POST', 201, (PCLOUDS, pcloud_id, 'hosts'),
                          {'name': name, 'flavor_id': flavor_id}, 'host')

    def set_host_state(self, pcloud_id, name, state):
        return self._call('PUT', 200, (PCLOUDS, pcloud_id, 'hosts', name),
                          {'state': state}, 'host')

    def list_hosts(self, pcloud_id):
        return self._call('GET', 200, (PCLOUDS, pcloud_id, 'hosts'),
                          key='hosts')

    def release_host(self, pcloud_id, name):
        self._call('DELETE', 204, (PCLOUDS, pcloud_id, 'hosts', name))

    def add_tenant(self, pcloud_id, tenant_id):
        return self._call('POST', 201, (PCLOUDS, pcloud_id, 'tenants'),
                          {'tenant_id': tenant_id}, 'tenants')

    # Blazar's leases.

    def create_lease(self, name, start, end, reservations):
        """``start`` and ``end``: 'YYYY-MM-DD HH:MM' (UTC) or 'now'."""
        return self._call('POST', 201, (LEASES,), {
            'name': name, 'start_date': start, 'end_date': end,
            'reservations': reservations, 'events': []}, 'lease')

    def show_lease(self, lease_id):
        return self._call('GET', 200, (LEASES, lease_id), key='lease')

    def delete_lease(self, lease_id):
        self._call('DELETE', 204, (LEASES, lease_id))


def client_of(manager):
    """A PcloudClient with the credentials of a tempest client manager."""
    return PcloudClient(manager.auth_provider,
                        **config.service_client_config('pcloud'))
