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
"""Pclouds, their hosts, tenants and allocation ratios.

The target's project_id is the project that owns the pcloud (the
caller's own project when it creates or lists them, or sees one its
project is authorized on).
"""

from oslo_policy import policy

from pcloud_plugin.policies import base

COLLECTION = '/v1/pclouds'
RESOURCE = COLLECTION + '/{pcloud_id}'
HOSTS = RESOURCE + '/hosts'
HOST = HOSTS + '/{name}'
TENANTS = RESOURCE + '/tenants'
RATIOS = RESOURCE + '/allocation-ratios'


def _rule(name, check_str, description, *operations):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=['project'])


rules = [
    _rule('pcloud:pcloud:create', base.ADMIN_OR_PROJECT_MEMBER,
          'Create a pcloud owned by the caller\'s project.',
          ('POST', COLLECTION)),
    _rule('pcloud:pcloud:list', base.ADMIN_OR_PROJECT_READER,
          'List the pclouds of the caller\'s project.',
          ('GET', COLLECTION)),
    _rule('pcloud:pcloud:list_all_projects', base.ADMIN,
          'List the pclouds of every project.',
          ('GET', COLLECTION)),
    _rule('pcloud:pcloud:get', base.ADMIN_OR_PROJECT_READER,
          'Show a pcloud.', ('GET', RESOURCE)),
    # Its target is the caller's own project, which the pcloud authorizes.
    _rule('pcloud:pcloud:get_authorized', base.ADMIN_OR_PROJECT_READER,
          'See the pclouds another project owns that the caller\'s '
          'project is authorized on, in the list of pclouds and one by '
          'one: without their hosts or the other projects authorized.',
          ('GET', COLLECTION), ('GET', RESOURCE)),
    _rule('pcloud:pcloud:delete', base.ADMIN_OR_PROJECT_MEMBER,
          'Delete a pcloud that holds no host.', ('DELETE', RESOURCE)),
    _rule('pcloud:host:list', base.ADMIN_OR_PROJECT_READER,
          'List the hosts of a pcloud.', ('GET', HOSTS)),
    _rule('pcloud:host:get', base.ADMIN_OR_PROJECT_READER,
          'Show a host of a pcloud.', ('GET', HOST)),
    _rule('pcloud:host:allocate', base.ADMIN_OR_PROJECT_MEMBER,
          'Take a free host of a host flavor into a pcloud.',
          ('POST', HOSTS)),
    _rule('pcloud:host:update', base.ADMIN_OR_PROJECT_MEMBER,
          'Enable or disable a host of a pcloud.',
          ('PUT', HOST), ('PATCH', HOST)),
    _rule('pcloud:host:release', base.ADMIN_OR_PROJECT_MEMBER,
          'Give a disabled, empty host of a pcloud back to its pool.',
          ('DELETE', HOST)),
    _rule('pcloud:tenant:list', base.ADMIN_OR_PROJECT_READER,
          'List the projects authorized on a pcloud.',
          ('GET', TENANTS)),
    _rule('pcloud:tenant:add', base.ADMIN_OR_PROJECT_MEMBER,
          'Authorize a project on a pcloud.', ('POST', TENANTS)),
    _rule('pcloud:tenant:remove', base.ADMIN_OR_PROJECT_MEMBER,
          'Take a project\'s authorization on a pcloud away.',
          ('DELETE', TENANTS + '/{tenant_id}')),
    _rule('pcloud:allocation_ratios:get', base.ADMIN_OR_PROJECT_READER,
          'Show the allocation ratios of a pcloud.', ('GET', RATIOS)),
    _rule('pcloud:allocation_ratios:set', base.ADMIN_OR_PROJECT_MEMBER,
          'Set the allocation ratios of a pcloud\'s hosts.',
          ('PUT', RATIOS), ('PATCH', RATIOS)),
]


def list_rules():
    return rules
