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

"""What Placement says, asked as the admin: the demo's (and the sandbox

tests') view of what the ledger and the scheduler go by.
"""

from keystoneauth1 import adapter
from keystoneauth1 import loading
from keystoneauth1 import session


def admin_client(sandbox):
    """The admin's Placement (what osc-placement would ask, were it

    installed): what the ledger and the scheduler go by.
    """
    env = sandbox.env('admin')
    auth = loading.get_plugin_loader('password').load_from_options(
        auth_url=env['OS_AUTH_URL'], username=env['OS_USERNAME'],
        password=env['OS_PASSWORD'], project_name=env['OS_PROJECT_NAME'],
        user_domain_id='default', project_domain_id='default')
    return adapter.Adapter(session.Session(auth=auth),
                           service_type='placement')


def _provider_url(client, host):
    """The Placement URL of a compute's provider, with a trailing /."""
    (provider,) = client.get('/resource_providers?name=%s' % host).json()[
        'resource_providers']
    return '/resource_providers/%s/' % provider['uuid']


def vcpu_ratio(sandbox, host):
    """The VCPU allocation ratio Placement has for a compute."""
    client = admin_client(sandbox)
    return client.get(_provider_url(client, host) + 'inventories/VCPU'
                      ).json()['allocation_ratio']


def free(sandbox, rc):
    """{compute: how much of ``rc`` Placement has free on it}."""
    client = admin_client(sandbox)
    found = {}
    for compute in sandbox.computes:
        url = _provider_url(client, compute['name'])
        inventory = client.get(url + 'inventories').json()[
            'inventories'][rc]
        used = client.get(url + 'usages').json()['usages'].get(rc, 0)
        found[compute['name']] = int(
            (inventory['total'] - inventory['reserved'])
            * inventory['allocation_ratio']) - used
    return found
