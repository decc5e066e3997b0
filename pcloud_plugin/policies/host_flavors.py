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
"""Host flavors and their pools of compute hosts."""

from oslo_policy import policy

from pcloud_plugin.policies import base

ROOT = 'pcloud:host_flavor:%s'
COLLECTION = '/v1/pcloud-host-flavors'
RESOURCE = COLLECTION + '/{flavor_id}'
POOL = RESOURCE + '/hosts'


def _rule(action, check_str, description, *operations):
    return policy.DocumentedRuleDefault(
        name=ROOT % action, check_str=check_str, description=description,
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=['project'])


rules = [
    _rule('list', base.ANY_READER,
          'List host flavors and how many hosts of each are free.',
          ('GET', COLLECTION)),
    _rule('get', base.ANY_READER, 'Show a host flavor.',
          ('GET', RESOURCE)),
    _rule('get_pool', base.ADMIN,
          'See the compute hosts of a host flavor\'s pool (in a show of '
          'the host flavor and in the list of its hosts).',
          ('GET', RESOURCE), ('GET', POOL)),
    _rule('create', base.ADMIN, 'Create a host flavor.',
          ('POST', COLLECTION)),
    _rule('delete', base.ADMIN, 'Delete a host flavor with an empty pool.',
          ('DELETE', RESOURCE)),
    _rule('add_host', base.ADMIN,
          'Put a compute host in the pool of a host flavor.',
          ('POST', POOL)),
    _rule('remove_host', base.ADMIN,
          'Take a compute host out of the pool of a host flavor.',
          ('DELETE', POOL + '/{host}')),
]


def list_rules():
    return rules
