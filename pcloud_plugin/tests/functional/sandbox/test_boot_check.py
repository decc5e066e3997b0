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

"""A tenant learns why Nova refused a boot (issue 33).

In the sandbox, with the nova.conf the README prescribes: a boot into
the demo project's pcloud, whose one host is disabled there, is refused
with Nova's "No valid host"; ``openstack pcloud boot check`` with the
same hint and flavor says the host is disabled, and how to enable it.
Once enabled the check finds the host and the same boot lands; a flavor
bigger than the host is refused by Nova and by the check, which says
Placement has no room for it. A hint that names the pcloud by its name
is pointed to the id; alt, not authorized, is told of no pcloud at all,
and nothing of the demo project's.
"""

import json
import os
import uuid

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_pcloud_authorization

HOST = test_pcloud_authorization.HOST
SAMPLE = os.path.join(
    os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir,
    'api-ref', 'source', 'samples', 'boot-check-resp.json')


class BootCheck(test_pcloud_authorization.PcloudWithAHost):

    def _check(self, user, pcloud=None, flavor=None):
        args = ['openstack', 'pcloud', 'boot', 'check']
        if pcloud is not None:
            args += ['--hint', 'pcloud=%s' % pcloud]
        if flavor is not None:
            args += ['--flavor', flavor]
        return self.cli.json(*args, user=user)

    def test_a_refused_boot_is_told_why_and_a_bootable_one_lands(self):
        pcloud, compute = self._pcloud_with_a_host()
        hint = 'pcloud=%s' % pcloud['id']
        name = 'check-%s' % uuid.uuid4().hex[:6]
        self.assertIn('went to ERROR', commands.boot_fails(
            self.cli, name, 'm1.tiny', common.DEMO_USER, '--hint', hint))
        found = self._check(common.DEMO_USER, pcloud['id'], 'm1.tiny')
        self.assertEqual((False, 0), (found['bootable'], found['hosts']))
        (said,) = found['refused']
        self.assertIn('1 host(s): disabled in pcloud %s' % pcloud['id'],
                      said)
        self.assertIn('openstack pcloud host set --enable', said)

        # Its name is not what the hint takes; alt may not know of it.
        (said,) = self._check(common.DEMO_USER, pcloud['name'])['refused']
        self.assertIn('--hint pcloud=%s' % pcloud['id'], said)
        for hint_value in (pcloud['id'], pcloud['name']):
            found = self._check(common.ALT_USER, hint_value)
            self.assertEqual(['no pcloud %s that your project may boot '
                              'into' % hint_value], found['refused'])
            for secret in (compute, HOST, pcloud['owner']):
                self.assertNotIn(secret, json.dumps(found))

        # Enabled: the check finds its host, and the boot lands there.
        self.demo.set_host_state(pcloud['id'], HOST, 'enabled')
        self.addCleanup(self.demo.set_host_state, pcloud['id'], HOST,
                        'disabled')
        found = self._check(common.DEMO_USER, pcloud['id'], 'm1.tiny')
        self.assertEqual((True, 1, []), (found['bootable'], found['hosts'],
                                         found['refused']))
        server = fixture.boot(self, self.cli, name, 'm1.tiny',
                              common.DEMO_USER, '--hint', hint)
        self.assertEqual(compute, server['OS-EXT-SRV-ATTR:host'])

        # A flavor no host has room for: Nova refuses, and Placement says.
        big = self._bigger_than(compute)
        self.assertIn('went to ERROR', commands.boot_fails(
            self.cli, name + '-big', big, common.DEMO_USER, '--hint', hint))
        found = self._check(common.DEMO_USER, pcloud['id'], big)
        (said,) = found['refused']
        self.assertFalse(found['bootable'])
        self.assertIn('1 host(s): no room left for flavor %s' % big, said)

        # The api-ref's sample has the fields the API answers.
        api = self.demo.check_boot({'pcloud': pcloud['id'], 'flavor': big})
        with open(SAMPLE) as f:
            sample = json.load(f)['boot_check']
        self.assertEqual(sorted(sample), sorted(api))
        self.assertEqual(sorted(sample['refused'][0]),
                         sorted(api['refused'][0]))
        self.assertEqual('no_room', api['refused'][0]['reason'])

    def test_bad_queries_are_400s_naming_the_field(self):
        for params, field in (({'hint': 'x'}, 'hint'),
                              ({'pcloud': ''}, 'pcloud'),
                              ({'pcloud': ['a', 'b']}, 'pcloud')):
            error = self.assertRaises(pcloud_client.PcloudError,
                                      self.demo.check_boot, params)
            self.assertEqual(400, error.code)
            self.assertIn(field, str(error))
        error = self.assertRaises(pcloud_client.PcloudError,
                                  self.demo.check_boot,
                                  {'flavor': 'no-such-flavor'})
        self.assertEqual(404, error.code)

    def _bigger_than(self, compute):
        """A public flavor with more memory than ``compute`` has (deleted

        when the test ends).
        """
        memory = self.placement.get(
            '/resource_providers/%s/inventories/MEMORY_MB'
            % self._provider(compute)).json()
        ram = int(memory['total'] * memory['allocation_ratio']) + 1024
        flavor = self.nova.flavors.create(
            'check-big-%s' % uuid.uuid4().hex[:6], ram, 1, 1)
        self.addCleanup(self.nova.flavors.delete, flavor.id)
        return flavor.name
