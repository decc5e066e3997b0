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

"""Boot checks: why a boot of the caller's project would be refused."""

from oslo_policy import policy

from pcloud_plugin.policies import base

PATH = '/v1/pcloud-boot-check'

rules = [
    policy.DocumentedRuleDefault(
        name='pcloud:boot:check', check_str=base.ANY_MEMBER,
        description='Say whether a boot of the caller\'s project with a '
        'pcloud hint and a flavor has a host, and why not: the hosts '
        'each of the PcloudFilter, Nova\'s compute services and '
        'Placement leaves out.',
        operations=[{'method': 'GET', 'path': PATH}],
        scope_types=['project']),
]


def list_rules():
    return rules
