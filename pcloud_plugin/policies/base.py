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
"""The building blocks of our rules, in the secure-RBAC personas.

Keystone's role implication (admin implies member implies reader) is
what makes an admin a member and a member a reader; the target of a rule
on a pcloud is its owner, so project_id:%(project_id)s means the pcloud's
own project.
"""

from oslo_policy import policy

ADMIN = 'rule:pcloud:admin'
PROJECT_MEMBER = 'rule:pcloud:project_member'
PROJECT_READER = 'rule:pcloud:project_reader'
ADMIN_OR_PROJECT_MEMBER = 'rule:pcloud:admin_or_project_member'
ADMIN_OR_PROJECT_READER = 'rule:pcloud:admin_or_project_reader'
ANY_READER = 'rule:pcloud:any_reader'
ANY_MEMBER = 'rule:pcloud:any_member'

rules = [
    policy.RuleDefault(
        name='pcloud:admin',
        check_str='role:admin',
        description='A cloud admin: host flavors, pools and every pcloud.'),
    policy.RuleDefault(
        name='pcloud:project_member',
        check_str='role:member and project_id:%(project_id)s',
        description='A member of the project that owns the pcloud.'),
    policy.RuleDefault(
        name='pcloud:project_reader',
        check_str='role:reader and project_id:%(project_id)s',
        description='A reader of the project that owns the pcloud.'),
    policy.RuleDefault(
        name='pcloud:admin_or_project_member',
        check_str='rule:pcloud:admin or rule:pcloud:project_member',
        description='A cloud admin, or a member of the owning project.'),
    policy.RuleDefault(
        name='pcloud:admin_or_project_reader',
        check_str='rule:pcloud:admin or rule:pcloud:project_reader',
        description='A cloud admin, or a reader of the owning project.'),
    policy.RuleDefault(
        name='pcloud:any_reader',
        check_str='rule:pcloud:admin or role:reader',
        description='Any user with a reader role on some project.'),
    policy.RuleDefault(
        name='pcloud:any_member',
        check_str='rule:pcloud:admin or role:member',
        description='Any user with a member role on some project.'),
]


def list_rules():
    return rules
