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

"""A member authorizes another project on its pcloud by name (issue 30).

The sandbox's real Keystone does not let the demo member look the alt
project up; the Pcloud API, inside blazar-api, resolves the name with
its own admin credentials and stores alt's id. A name Keystone does not
know is refused. The alt project then sees the pcloud in its list and
by id, without the names of its hosts, real or given.
"""

import json
import uuid

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

HOST = 'rack-authz'


class PcloudWithAHost(test_capacity_truth._Capacity):
    """The shared sandbox, where each test makes a pcloud of the demo

    project's holding one host (disabled in it), with alt's project id.
    """

    def setUp(self):
        super().setUp()
        self.alt_id = fixture.session(self.sandbox,
                                      common.ALT_USER).get_project_id()

    def _empty_compute(self):
        """A compute that runs no server and is in no aggregate."""
        busy = {getattr(s, 'OS-EXT-SRV-ATTR:host') for s in
                self.nova.servers.list(search_opts={'all_tenants': 1})}
        for aggregate in self.nova.aggregates.list():
            busy.update(aggregate.hosts)
        free = sorted(c['name'] for c in self.sandbox.computes
                      if c['name'] not in busy)
        self.assertTrue(free, 'no empty compute in the sandbox')
        return free[0]

    def _pcloud_with_a_host(self):
        """A pcloud of the demo project's holding one host; all of it

        undone when the test ends.
        """
        compute = self._empty_compute()
        flavor = 'authz-%s' % uuid.uuid4().hex[:6]
        self.admin.create_host_flavor(flavor, 1)
        self.addCleanup(self.admin.delete_host_flavor, flavor)
        fixture.out_of_service(self, self.nova, compute)
        self.admin.add_pool_host(flavor, compute)
        self.addCleanup(self.admin.remove_pool_host, flavor, compute)
        pcloud = self.demo.create_pcloud('authz-%s' % uuid.uuid4().hex[:6])
        self.addCleanup(self.demo.delete_pcloud, pcloud['id'])
        self.demo.allocate_host(pcloud['id'], HOST, flavor)
        self.addCleanup(self.demo.release_host, pcloud['id'], HOST)
        return pcloud, compute


class ProjectByName(PcloudWithAHost):

    def _project(self, verb, pcloud, project):
        return self.cli.run('openstack', 'pcloud', verb, 'project', pcloud,
                            project, user=common.DEMO_USER)

    def _projects(self, pcloud):
        return [row['ID'] for row in self.cli.json(
            'openstack', 'pcloud', 'project', 'list', pcloud,
            user=common.DEMO_USER)]

    def test_a_member_authorizes_alt_by_name_and_alt_sees_it(self):
        pcloud, compute = self._pcloud_with_a_host()
        demo_id = pcloud['owner']
        # The member may not look alt up itself.
        commands.refused(self.cli, ('openstack', 'project', 'show',
                                    common.ALT_PROJECT),
                         common.DEMO_USER)

        self._project('add', pcloud['name'], common.ALT_PROJECT)
        self.addCleanup(self.demo.remove_tenant, pcloud['id'], self.alt_id)
        self.assertEqual(sorted([demo_id, self.alt_id]),
                         sorted(self._projects(pcloud['name'])))

        commands.refused(
            self.cli, ('openstack', 'pcloud', 'add', 'project',
                       pcloud['name'], 'garbage'), common.DEMO_USER,
            'HTTP 404', 'Keystone has no project with the id or name '
            '"garbage"')
        self.assertEqual(sorted([demo_id, self.alt_id]),
                         sorted(self._projects(pcloud['name'])))

        # Alt sees it: not its own, without its hosts.
        listed = self.cli.run('openstack', 'pcloud', 'list', '--long',
                              '-f', 'json', user=common.ALT_USER)
        shown = self.cli.run('openstack', 'pcloud', 'show', pcloud['id'],
                             '-f', 'json', user=common.ALT_USER)
        (row,) = [p for p in json.loads(listed) if p['ID'] == pcloud['id']]
        self.assertEqual((demo_id, [], [self.alt_id]),
                         (row['Owner'], row['Hosts'], row['Projects']))
        self.assertEqual((False, []), (json.loads(shown)['own'],
                                       json.loads(shown)['hosts']))
        (api,) = [p for p in self.alt.list_pclouds()
                  if p['id'] == pcloud['id']]
        self.assertFalse(api['own'])
        for text in (json.dumps(row), shown, json.dumps(api)):
            for secret in (compute, HOST):
                self.assertNotIn(secret, text)
        # Its owner sees its host, by the name it gave.
        self.assertEqual([HOST], self.demo.show_pcloud(pcloud['id'])[
            'hosts'])

        # Taken away by name too.
        self._project('remove', pcloud['name'], common.ALT_PROJECT)
        self.assertEqual([demo_id], self._projects(pcloud['name']))
        self.assertNotIn(pcloud['id'],
                         [p['id'] for p in self.alt.list_pclouds()])
