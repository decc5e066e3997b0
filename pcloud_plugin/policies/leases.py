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
"""Leases as seeds/001 names their states, with their terms."""

from oslo_policy import policy

from pcloud_plugin.policies import base

COLLECTION = '/v1/pcloud-leases'
RESOURCE = COLLECTION + '/{lease_id}'
HINTS = '/v1/pcloud-hints'

rules = [
    policy.DocumentedRuleDefault(
        name='pcloud:lease:list', check_str=base.ANY_READER,
        description="List the leases of the caller's project that hold "
        'pcloud:host or virtual:instance reservations, with their states '
        'and terms.',
        operations=[{'method': 'GET', 'path': COLLECTION}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='pcloud:lease:list_all_projects', check_str=base.ADMIN,
        description='List the leases of any project (project_id query).',
        operations=[{'method': 'GET', 'path': COLLECTION}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='pcloud:lease:hints', check_str=base.ANY_READER,
        description='Show what a lease may ask for: the terms of each '
        'reservation type, the host flavors, zones, pclouds and traits '
        "on offer, and the limits the caller's project is held to.",
        operations=[{'method': 'GET', 'path': HINTS}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='pcloud:lease:exceed_limits', check_str=base.ADMIN,
        description='Create or grow a reservation past the amounts the '
        'operator limits reservations to ([pcloud_host] max_amount, '
        '[pcloud_instance] max_amount).',
        operations=[{'method': 'POST', 'path': '/v1/leases'},
                    {'method': 'PUT', 'path': '/v1/leases/{lease_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='pcloud:lease:get', check_str=base.ADMIN_OR_PROJECT_READER,
        description="Show a lease's state and the terms of its "
        'pcloud:host and virtual:instance reservations.',
        operations=[{'method': 'GET', 'path': RESOURCE}],
        scope_types=['project']),
]


def list_rules():
    return rules
