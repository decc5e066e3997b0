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
"""Allocations: which reservations and pclouds hold each host."""

from oslo_policy import policy

from pcloud_plugin.policies import base

COLLECTION = '/v1/pcloud-allocations'

rules = [
    policy.DocumentedRuleDefault(
        name='pcloud:allocation:list', check_str=base.ADMIN,
        description='List, per host, the whole-host leases, instance '
        'reservations and pclouds that hold it in a window.',
        operations=[{'method': 'GET', 'path': COLLECTION}],
        scope_types=['project']),
]


def list_rules():
    return rules
