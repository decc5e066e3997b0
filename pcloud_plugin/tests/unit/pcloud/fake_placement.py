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

"""A small stand-in for Placement's provider and inventory endpoints.

Speaks the same URLs, bodies and generation rules the Placement client
uses; ``bump_next`` makes the next write lose a generation race, as if
nova-compute had just written the provider.
"""

import copy
import types
from urllib import parse


def _response(status, body=None):
    return types.SimpleNamespace(status_code=status, text=str(body),
                                 json=lambda: copy.deepcopy(body))


class FakePlacement(object):

    def __init__(self):
        self.providers = {}   # uuid -> provider dict
        self.bump_next = 0

    def add_provider(self, name, vcpu=8, memory_mb=8192, cpu_ratio=16.0,
                     ram_ratio=1.5):
        uuid = 'rp-%s' % name
        inventories = {}
        for rc, total, ratio in (('VCPU', vcpu, cpu_ratio),
                                 ('MEMORY_MB', memory_mb, ram_ratio)):
            inventories[rc] = {'total': total, 'reserved': 0,
                               'min_unit': 1, 'max_unit': total,
                               'step_size': 1, 'allocation_ratio': ratio}
        self.providers[uuid] = {'uuid': uuid, 'name': name,
                                'generation': 0, 'inventories': inventories}

    def ratios(self, name):
        for rp in self.providers.values():
            if rp['name'] == name:
                return {rc: inv['allocation_ratio']
                        for rc, inv in rp['inventories'].items()}

    def request(self, url, method, json=None, microversion=None,
                raise_exc=True):
        if method == 'GET':
            return self.get(url)
        assert method == 'PUT', method
        return self.put(url, json=json)

    def get(self, url, microversion=None, raise_exc=True):
        path, _, query = url.partition('?')
        parts = path.strip('/').split('/')
        if parts == ['resource_providers']:
            name = parse.parse_qs(query).get('name', [None])[0]
            return _response(200, {'resource_providers': [
                {'uuid': rp['uuid'], 'name': rp['name']}
                for rp in self.providers.values()
                if name in (None, rp['name'])]})
        rp = self.providers.get(parts[1])
        if rp is None:
            return _response(404, 'no provider')
        return _response(200, {
            'resource_provider_generation': rp['generation'],
            'inventories': rp['inventories']})

    def put(self, url, json=None, microversion=None, raise_exc=True):
        rp = self.providers[url.strip('/').split('/')[1]]
        if self.bump_next:
            self.bump_next -= 1
            rp['generation'] += 1
        if json['resource_provider_generation'] != rp['generation']:
            return _response(409, 'generation conflict')
        rp['inventories'] = copy.deepcopy(json['inventories'])
        rp['generation'] += 1
        return _response(200, {})
