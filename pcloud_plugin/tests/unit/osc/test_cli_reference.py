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
"""Every ``openstack pcloud`` command of setup.cfg is in the CLI reference.

A command is documented by a row of the commands table and an
``autoprogram-cliff`` directive; an old name (a command marked
deprecated) by a row of the old names table giving its replacement.
"""

import configparser
import importlib
import os
import re

from pcloud_plugin.tests import base

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir, os.pardir, os.pardir))
SETUP_CFG = os.path.join(ROOT, 'setup.cfg')
CLI_REFERENCE = os.path.join(ROOT, 'doc', 'source', 'cli', 'index.rst')
GROUP = 'openstack.pcloud.v1'


def entry_points(path=SETUP_CFG):
    """{command name: 'module:Class'} of the group in setup.cfg."""
    parser = configparser.ConfigParser()
    parser.read(path)
    found = {}
    for line in parser['entry_points'][GROUP].strip().splitlines():
        name, _sep, target = line.partition('=')
        found[name.strip().replace('_', ' ')] = target.strip()
    return found


def _class(target):
    module, _sep, name = target.partition(':')
    return getattr(importlib.import_module(module), name)


def missing(text, commands):
    """The commands (name: class) text does not document, each with why."""
    directives = set(re.findall(
        r'^\.\. autoprogram-cliff:: %s\n   :command: (.+?)\s*$'
        % re.escape(GROUP), text, re.M))
    rows = {}
    for line in text.splitlines():
        cells = re.findall(r'``openstack ([^`<]+?)\s*(?:<[^`]*)?``', line)
        if cells and line.startswith('``openstack '):
            rows[cells[0]] = cells[1:]
    problems = []
    for name, cls in sorted(commands.items()):
        if getattr(cls, 'deprecated', False):
            if rows.get(name) != [cls.replacement]:
                problems.append('%s: no old-name row giving "%s"'
                                % (name, cls.replacement))
            continue
        if name not in rows:
            problems.append('%s: no row in the commands table' % name)
        if name not in directives:
            problems.append('%s: no autoprogram-cliff directive' % name)
    return problems


class CliReferenceTest(base.TestCase):

    def setUp(self):
        super().setUp()
        with open(CLI_REFERENCE) as f:
            self.text = f.read()
        self.commands = {name: _class(target)
                         for name, target in entry_points().items()}

    def test_every_entry_point_is_documented(self):
        self.assertIn('pcloud offering list', self.commands)
        self.assertEqual([], missing(self.text, self.commands))

    def test_a_command_left_out_is_named(self):
        text = self.text.replace(
            '.. autoprogram-cliff:: %s\n   :command: pcloud allocation list\n'
            % GROUP, '')
        self.assertEqual(
            ['pcloud allocation list: no autoprogram-cliff directive'],
            missing(text, self.commands))
        text = re.sub(r'^``openstack pcloud tenant add``.*\n', '', self.text,
                      flags=re.M)
        self.assertEqual(
            ['pcloud tenant add: no old-name row giving '
             '"pcloud add project"'], missing(text, self.commands))
