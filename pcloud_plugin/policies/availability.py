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
"""Availability: how many whole hosts or instance slots are free each

hour, from the ledger.
"""

from oslo_policy import policy

from pcloud_plugin.policies import base

HOSTS = '/v1/pcloud-availability/hosts'
INSTANCES = '/v1/pcloud-availability/instances'

rules = [
    policy.DocumentedRuleDefault(
        name='pcloud:availability:hosts', check_str=base.ANY_MEMBER,
        description='Show how many whole hosts of a host flavor are free '
                    'each hour (counts only: no hosts, no projects).',
        operations=[{'method': 'GET', 'path': HOSTS}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name='pcloud:availability:instances', check_str=base.ANY_MEMBER,
        description='Show how many instance slots of a shape could be '
                    'reserved each hour (counts only).',
        operations=[{'method': 'GET', 'path': INSTANCES}],
        scope_types=['project']),
]


def list_rules():
    return rules
