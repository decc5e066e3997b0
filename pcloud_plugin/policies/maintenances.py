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
"""Operators' maintenance windows on compute hosts."""

from oslo_policy import policy

from pcloud_plugin.policies import base

ROOT = 'pcloud:maintenance:%s'
COLLECTION = '/v1/pcloud-maintenances'
RESOURCE = COLLECTION + '/{maintenance_id}'


def _rule(action, description, *operations):
    return policy.DocumentedRuleDefault(
        name=ROOT % action, check_str=base.ADMIN, description=description,
        operations=[{'method': m, 'path': p} for m, p in operations],
        scope_types=['project'])


rules = [
    _rule('list', 'List maintenance windows.', ('GET', COLLECTION)),
    _rule('get', 'Show a maintenance window.', ('GET', RESOURCE)),
    _rule('create',
          'Book a maintenance window on compute hosts, moving the '
          'reservations that hold them then.', ('POST', COLLECTION)),
    _rule('delete',
          'Cancel or end a maintenance window: its hosts are given back.',
          ('DELETE', RESOURCE)),
]


def list_rules():
    return rules
