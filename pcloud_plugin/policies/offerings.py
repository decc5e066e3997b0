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
"""Offerings: when a reservation could be had, from the ledger."""

from oslo_policy import policy

from pcloud_plugin.policies import base

HOSTS = '/v1/pcloud-offerings/hosts'
INSTANCES = '/v1/pcloud-offerings/instances'


def _rule(name, description, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=base.ANY_MEMBER, description=description,
        operations=[{'method': 'GET', 'path': path}],
        scope_types=['project'])


rules = [
    _rule('pcloud:offering:hosts',
          'List the earliest windows in which whole hosts of a host '
          'flavor could be leased.', HOSTS),
    _rule('pcloud:offering:instances',
          'List the earliest windows in which instance slots of a flavor '
          'could be reserved.', INSTANCES),
]


def list_rules():
    return rules
