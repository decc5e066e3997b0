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

"""pcloud-sandbox without what its extra installs: one line naming the
extra, no traceback; and the extra names every module it checks.
"""

import configparser
import importlib.util
import io
import os
import re
import subprocess
import sys
from unittest import mock

import fixtures

import pcloud_plugin
from pcloud_plugin.cmd import sandbox
from pcloud_plugin.sandbox import supervisor
from pcloud_plugin.tests import base

SETUP_CFG = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(pcloud_plugin.__file__))), 'setup.cfg')


class MissingModules(base.TestCase):

    def assertOneLineNamingTheExtra(self, stderr, module):
        lines = stderr.splitlines()
        self.assertEqual(1, len(lines), stderr)
        self.assertIn('needs %s,' % module, lines[0])
        self.assertIn("pip install 'pcloud-plugin[sandbox]'", lines[0])

    def test_a_module_missing_is_one_line_naming_the_extra(self):
        find_spec = importlib.util.find_spec
        self.useFixture(fixtures.MockPatch(
            'importlib.util.find_spec',
            side_effect=lambda name, *a: (
                None if name == 'wsgi_intercept' else find_spec(name, *a))))
        started = self.useFixture(fixtures.MockPatchObject(
            supervisor, 'Sandbox')).mock
        stderr = self.useFixture(fixtures.MockPatch(
            'sys.stderr', io.StringIO())).mock
        self.assertEqual(2, sandbox.main(['--demo']))
        self.assertOneLineNamingTheExtra(stderr.getvalue(), 'wsgi_intercept')
        started.assert_not_called()

    def test_a_module_missing_at_import_is_one_line_naming_the_extra(self):
        # None in sys.modules: "import psutil" raises ImportError, as
        # where it is not installed.
        result = subprocess.run(
            [sys.executable, '-c',
             'import sys; sys.modules["psutil"] = None; '
             'from pcloud_plugin.cmd import sandbox; '
             'sys.exit(sandbox.main(["--demo"]))'],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(2, result.returncode, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        self.assertOneLineNamingTheExtra(result.stderr, 'psutil')


class SandboxExtra(base.TestCase):

    def test_the_extra_installs_every_module_checked(self):
        parser = configparser.ConfigParser()
        parser.read(SETUP_CFG)
        extra = {re.split(r'[<>=!~;\[ ]', line.strip(), 1)[0].lower()
                 for line in parser['extras']['sandbox'].splitlines()
                 if line.strip()}
        wanted = {dist.lower() for _module, dist in
                  supervisor.REQUIREMENTS + sandbox.EXTRA_MODULES}
        self.assertEqual(set(), wanted - extra)


class ReadyOutput(base.TestCase):
    """Where the clients are: beside the sandbox's Python, seldom on PATH."""

    def _bin_dir(self, *names):
        bin_dir = self.useFixture(fixtures.TempDir()).path
        for name in names:
            open(os.path.join(bin_dir, name), 'w').close()
        return bin_dir

    def _ready(self, bin_dir):
        ready = mock.Mock(resumed=False, started_in=1.5, computes=[{}] * 4,
                          ports={'keystone': 1, 'nova': 2, 'placement': 3,
                                 'blazar': 4})
        ready.rss.return_value = 2 ** 30
        ready.path.side_effect = lambda *parts: os.path.join('/s', *parts)
        ready.env.return_value = {'OS_USERNAME': 'admin'}
        out = self.useFixture(fixtures.StringStream('stdout')).stream
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.useFixture(fixtures.MonkeyPatch(
            'sys.executable', os.path.join(bin_dir, 'python')))
        sandbox._print_ready(ready)
        out.seek(0)
        return out.read().splitlines()

    def test_the_clients_are_named_by_their_path(self):
        bin_dir = self._bin_dir('openstack', 'nova', 'blazar', 'activate')
        lines = self._ready(bin_dir)
        self.assertEqual(
            'Clients: %s, %s, %s (or "source %s" to have them on your PATH).'
            % tuple(os.path.join(bin_dir, name) for name in
                    ('openstack', 'nova', 'blazar', 'activate')), lines[1])
        self.assertEqual('Use them with these (also in /s/admin-openrc; '
                         '/s/demo-openrc is the "demo" member):', lines[2])
        self.assertEqual('export OS_USERNAME=admin', lines[3])
        self.assertNotIn('clients with these', '\n'.join(lines))

    def test_only_the_clients_there_and_no_activate_outside_a_venv(self):
        bin_dir = self._bin_dir('openstack')
        self.assertEqual('Clients: %s.' % os.path.join(bin_dir, 'openstack'),
                         sandbox.clients_line(bin_dir))
        empty = self._bin_dir('activate')
        self.assertEqual('Clients: none of openstack, nova, blazar in %s.'
                         % empty, sandbox.clients_line(empty))
