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
"""The Pcloud API's default policies and their entry point.

No Blazar here: unit tests share a process with Nova's (see tox.ini).
"""

import os
import re

from oslo_context import context as oslo_context
from oslo_policy import policy as oslo_policy
import stevedore

from pcloud_plugin.blazar.api import policy
from pcloud_plugin import exception
from pcloud_plugin import policies
from pcloud_plugin.tests import base

HANDLERS = os.path.join(os.path.dirname(policy.__file__), 'handlers.py')

X = 'project-x'
Y = 'project-y'


def _ctx(project_id, *roles):
    return oslo_context.RequestContext(project_id=project_id,
                                       roles=list(roles))


ADMIN = _ctx('admin-project', 'admin', 'member', 'reader')
MEMBER_X = _ctx(X, 'member', 'reader')
READER_X = _ctx(X, 'reader')
NOROLE_X = _ctx(X, 'creator')
MEMBER_Y = _ctx(Y, 'member', 'reader')


class PolicyDefaultsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        # The enforcer looks for a policy file: in the config's directories.
        self.conf([], project='pcloud', default_config_files=[])
        policy.reset()
        self.addCleanup(policy.reset)

    def allowed(self, ctx, action, project_id=X):
        return bool(policy.authorize(ctx, action, {'project_id': project_id},
                                     do_raise=False))

    def test_names_are_unique_and_scoped(self):
        rules = policies.list_rules()
        names = [r.name for r in rules]
        self.assertEqual(len(names), len(set(names)))
        for rule in rules:
            self.assertTrue(rule.name.startswith('pcloud:'), rule.name)
            if isinstance(rule, oslo_policy.DocumentedRuleDefault):
                self.assertEqual(['project'], rule.scope_types)

    def test_entry_point(self):
        manager = stevedore.NamedExtensionManager(
            'oslo.policy.policies', names=['pcloud_plugin'],
            invoke_on_load=True)
        loaded = [r.name for ext in manager for r in ext.obj]
        self.assertEqual([r.name for r in policies.list_rules()], loaded)

    def test_handlers_only_name_registered_rules(self):
        # Read, not imported: the handlers import Blazar, which cannot
        # share this process with the unit tests that import Nova.
        with open(HANDLERS) as f:
            named = set(re.findall(r"'(pcloud:[a-z_:]+)'", f.read()))
        registered = {r.name for r in policies.list_rules()}
        self.assertTrue(named)
        self.assertEqual(set(), named - registered)

    def test_host_flavors(self):
        for action in ('list', 'get'):
            action = 'pcloud:host_flavor:' + action
            for ctx in (ADMIN, MEMBER_X, READER_X, MEMBER_Y):
                self.assertTrue(self.allowed(ctx, action, ctx.project_id))
            self.assertFalse(self.allowed(NOROLE_X, action))
        for action in ('get_pool', 'create', 'delete', 'add_host',
                       'remove_host'):
            action = 'pcloud:host_flavor:' + action
            self.assertTrue(self.allowed(ADMIN, action, ADMIN.project_id))
            for ctx in (MEMBER_X, READER_X, NOROLE_X):
                self.assertFalse(self.allowed(ctx, action, ctx.project_id))

    def test_pcloud_reads(self):
        for action in ('pcloud:pcloud:list', 'pcloud:pcloud:get',
                       'pcloud:host:list', 'pcloud:host:get',
                       'pcloud:tenant:list',
                       'pcloud:allocation_ratios:get'):
            self.assertTrue(self.allowed(ADMIN, action))
            self.assertTrue(self.allowed(MEMBER_X, action))
            self.assertTrue(self.allowed(READER_X, action))
            self.assertFalse(self.allowed(NOROLE_X, action))
            self.assertFalse(self.allowed(MEMBER_Y, action))

    def test_pcloud_writes(self):
        for action in ('pcloud:pcloud:create', 'pcloud:pcloud:delete',
                       'pcloud:host:allocate', 'pcloud:host:update',
                       'pcloud:host:release', 'pcloud:tenant:add',
                       'pcloud:tenant:remove',
                       'pcloud:allocation_ratios:set'):
            self.assertTrue(self.allowed(ADMIN, action))
            self.assertTrue(self.allowed(MEMBER_X, action))
            self.assertFalse(self.allowed(READER_X, action))
            self.assertFalse(self.allowed(NOROLE_X, action))
            self.assertFalse(self.allowed(MEMBER_Y, action))

    def test_all_projects_is_for_admins(self):
        action = 'pcloud:pcloud:list_all_projects'
        self.assertTrue(self.allowed(ADMIN, action, ADMIN.project_id))
        self.assertFalse(self.allowed(MEMBER_X, action))

    def test_refusal_raises(self):
        self.assertRaises(exception.PolicyNotAuthorized, policy.authorize,
                          READER_X, 'pcloud:pcloud:delete',
                          {'project_id': X})

    def test_system_scope_is_refused(self):
        system_admin = oslo_context.RequestContext(
            system_scope='all', roles=['admin', 'member', 'reader'])
        self.assertFalse(self.allowed(system_admin,
                                      'pcloud:host_flavor:create'))
