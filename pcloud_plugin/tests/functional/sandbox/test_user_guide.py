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

"""Every command of the user guide, run against the sandbox.

The pages are those of doc/source/user/index.rst's toctree, in its
order. In each, every line of a ``.. code-block:: console`` block that
starts with ``$ `` is a command (continued on the next lines while it
ends with ``\\``); they run in order, with the real clients, as the
sandbox's demo member, or as its admin when the block follows the
comment ``.. run as: admin``. The placeholders the guide's index
defines are replaced (PLACEHOLDERS below), each worked out when a
command first needs it. Whatever the commands made is removed at the
end, whether they passed or not.
"""

import datetime
import json
import os
import re
import shlex

import fixtures
from testtools import content

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

USER_DOCS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                         os.pardir, os.pardir, 'doc', 'source', 'user')
ADMIN_MARK = '.. run as: admin'
_CONSOLE = re.compile(r'^(\s*)\.\. code-block:: console\s*$')
_PLACEHOLDER = re.compile(r'<([a-z][a-z-]*)>')
# What the guide names the things it makes (cleaned up by name).
PCLOUD = 'mine'
HOST_FLAVOR = 'c16'
SERVERS = ('my-server', 'my-reserved-server')
LEASES = ('my-hosts', 'my-spare-hosts', 'my-flexible-hosts', 'my-slots',
          'my-fast-slot', 'my-flexible-slots')
# The instance lease whose reservation <reservation-id> stands for.
SLOTS_LEASE = 'my-slots'


class Example(object):
    """One command of the guide: where it is, who runs it, its text."""

    def __init__(self, page, line, user, text):
        self.page, self.line, self.user, self.text = page, line, user, text

    def __str__(self):
        return '%s:%d (%s) $ %s' % (self.page, self.line, self.user,
                                    self.text)


def pages():
    """The user guide's pages, in its toctree's order."""
    names = []
    with open(os.path.join(USER_DOCS, 'index.rst')) as f:
        in_toctree = False
        for line in f:
            if line.startswith('.. toctree::'):
                in_toctree = True
            elif in_toctree and line.strip() and not line.strip(
                    ).startswith(':'):
                if not line.startswith(' '):
                    break
                names.append(line.strip() + '.rst')
    return names


def examples(page):
    """The commands of one page, in order."""
    with open(os.path.join(USER_DOCS, page)) as f:
        lines = f.read().splitlines()
    found = []
    user = common.DEMO_USER
    i = 0
    while i < len(lines):
        if lines[i].strip() == ADMIN_MARK:
            user = 'admin'
        match = _CONSOLE.match(lines[i])
        if not match:
            i += 1
            continue
        indent = len(match.group(1))
        i += 1
        command = None
        while i < len(lines) and (not lines[i].strip() or len(
                lines[i]) - len(lines[i].lstrip()) > indent):
            text = lines[i].strip()
            if command is not None:
                command.text += ' ' + text
            elif text.startswith('$ '):
                command = Example(page, i + 1, user, text[2:])
                found.append(command)
            if command is not None and command.text.endswith('\\'):
                command.text = command.text[:-1].rstrip()
            else:
                command = None
            i += 1
        user = common.DEMO_USER
    return found


def _minute(hours):
    return (datetime.datetime.now(datetime.timezone.utc)
            + datetime.timedelta(hours=hours)).strftime('%Y-%m-%d %H:%M')


class UserGuide(base.TestCase):

    def setUp(self):
        super().setUp()
        # Many commands, two boots and a lease start: longer than
        # OS_TEST_TIMEOUT (a new alarm replaces it).
        self.useFixture(fixtures.Timeout(900, gentle=True))
        cloud = self.useFixture(fixture.SandboxFixture())
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        self.clients = fixture.Clients(self.sandbox)
        self.values = {}

    # -- the placeholders of doc/source/user/index.rst ----------------------

    def _compute_host(self):
        """A compute that runs no server and is in no aggregate."""
        busy = {s['Host'] for s in self.cli.json(
            'openstack', 'server', 'list', '--all-projects', '--long')}
        for aggregate in self.clients.nova.aggregates.list():
            busy.update(aggregate.hosts)
        free = sorted(c['name'] for c in self.sandbox.computes
                      if c['name'] not in busy)
        self.assertTrue(free, 'no empty compute in the sandbox')
        return free[-1]

    def _pcloud_id(self):
        return self.cli.json('openstack', 'pcloud', 'show', PCLOUD,
                             user=common.DEMO_USER)['id']

    def _project(self):
        return self.cli.json('openstack', 'project', 'show',
                             common.ALT_PROJECT)['id']

    def _reservation_id(self):
        lease = self.cli.wait(
            'lease %s to start' % SLOTS_LEASE,
            ('openstack', 'reservation', 'lease', 'show', SLOTS_LEASE),
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            user=common.DEMO_USER, timeout=120)
        self.assertEqual('ACTIVE', lease['status'], lease)
        reservations = lease['reservations']
        if isinstance(reservations, str):
            reservations = json.loads(reservations)
        if isinstance(reservations, dict):
            reservations = [reservations]
        return reservations[0]['id']

    PLACEHOLDERS = {
        'compute-host': _compute_host,
        'pcloud-id': _pcloud_id,
        'project': _project,
        'start': lambda self: _minute(1),
        'end': lambda self: _minute(2),
        'reservation-id': _reservation_id,
    }

    def _value(self, match):
        name = match.group(1)
        if name not in self.values:
            self.assertIn(name, self.PLACEHOLDERS,
                          'a placeholder the test does not know')
            self.values[name] = self.PLACEHOLDERS[name](self)
        return self.values[name]

    # -- clean-up, by the names the guide gives ------------------------------

    def _quietly(self, *args, user='admin'):
        try:
            self.cli.run(*args, user=user)
        except commands.CommandFailed:
            pass

    def _clean_up(self):
        member = common.DEMO_USER
        for name in SERVERS:
            self._quietly('openstack', 'server', 'delete', '--wait', name,
                          user=member)
        leases = {lease['name']: lease['id'] for lease in self.cli.json(
            'openstack', 'reservation', 'lease', 'list', user=member)}
        for name in LEASES:
            if name in leases:
                fixture.delete_lease(self.clients.demo, leases[name])
        for pcloud in self.clients.demo.list_pclouds():
            if pcloud['name'] != PCLOUD:
                continue
            for host in self.clients.demo.list_hosts(pcloud['id']):
                self.clients.demo.set_host_state(pcloud['id'], host['name'],
                                                 'disabled')
                self.clients.demo.release_host(pcloud['id'], host['name'])
            self.clients.demo.delete_pcloud(pcloud['id'])
        if HOST_FLAVOR in [f['id']
                           for f in self.clients.admin.list_host_flavors()]:
            for host in self.clients.admin.list_pool_hosts(HOST_FLAVOR):
                self.clients.admin.remove_pool_host(HOST_FLAVOR,
                                                    host['host'])
            self.clients.admin.delete_host_flavor(HOST_FLAVOR)
        if 'compute-host' in self.values:
            self._quietly('openstack', 'compute', 'service', 'set',
                          '--enable', self.values['compute-host'],
                          'nova-compute')

    # -- the test ------------------------------------------------------------

    def test_every_example_runs(self):
        found = [example for page in pages() for example in examples(page)]
        self.assertGreater(len(found), 20, 'examples: %s'
                           % '\n'.join(map(str, found)))
        self.addCleanup(self._clean_up)
        report, failed = [], []
        for example in found:
            try:
                command = _PLACEHOLDER.sub(self._value, example.text)
                self.cli.run(*shlex.split(command), user=example.user)
            except Exception as e:
                failed.append('%s\n    %s' % (example, e))
                report.append('FAIL %s' % example)
            else:
                report.append('ok   %s' % example)
        self.addDetail('examples', content.text_content('\n'.join(report)))
        self.assertEqual([], failed, '%d of %d examples failed:\n%s' % (
            len(failed), len(found), '\n'.join(failed)))
