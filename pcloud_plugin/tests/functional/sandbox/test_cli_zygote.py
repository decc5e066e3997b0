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

"""A forked ``openstack`` command answers as the installed command does."""

import os
import shutil
import subprocess
import sys

import testtools

from pcloud_plugin.tests.functional.sandbox import cli_zygote


def _openstack():
    return shutil.which('openstack', path=os.pathsep.join((
        os.path.dirname(sys.executable), os.environ.get('PATH', ''))))


class ForkedCommandTest(testtools.TestCase):

    def _both(self, *args, **env):
        argv = (_openstack(),) + args
        env = dict({k: v for k, v in os.environ.items()
                    if not k.startswith('OS_')}, **env)
        real = subprocess.run(argv, capture_output=True, text=True,
                              env=env, timeout=120)
        forked = cli_zygote.run(argv, env, timeout=120)
        return real, forked

    def test_output_and_exit_status_as_the_command_gives(self):
        real, forked = self._both('command', 'list', '--group',
                                  'openstack.reservation.v1', '-f', 'json')
        self.assertEqual(0, real.returncode, real.stderr)
        self.assertEqual((real.returncode, real.stdout),
                         (forked.returncode, forked.stdout))
        self.assertIn('reservation lease create', forked.stdout)

    def test_a_failing_command_fails_the_same_way(self):
        # No cloud to talk to: the client's own error, and its status.
        real, forked = self._both('server', 'list',
                                  OS_AUTH_URL='http://127.0.0.1:9/v3',
                                  OS_AUTH_TYPE='password')
        self.assertNotEqual(0, forked.returncode)
        self.assertEqual(real.returncode, forked.returncode)
        self.assertEqual(real.stderr.splitlines()[-1:],
                         forked.stderr.splitlines()[-1:])

    def test_each_command_sees_its_own_environment(self):
        first = cli_zygote.run(
            (_openstack(), 'configuration', 'show', '-f', 'json'),
            dict(os.environ, OS_REGION_NAME='first'), timeout=120)
        second = cli_zygote.run(
            (_openstack(), 'configuration', 'show', '-f', 'json'),
            dict(os.environ, OS_REGION_NAME='second'), timeout=120)
        self.assertIn('"region_name": "first"', first.stdout)
        self.assertIn('"region_name": "second"', second.stdout)
