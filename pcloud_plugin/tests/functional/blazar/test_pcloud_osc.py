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
"""``openstack pcloud ...``: the real OpenStackClient shell, in-process,

with our plugin loaded from its entry points, over HTTP to the in-process
API (see pcloud_api_base), with token auth straight at its endpoint.
"""

import io
import json
import logging
import os

import fixtures
from openstackclient import shell
from osc_lib import clientmanager

from pcloud_plugin.osc import plugin
from pcloud_plugin.tests.functional.blazar import pcloud_api_base as api_base

ALICE = api_base.ALICE
BOB = api_base.BOB


class OSCTest(api_base.PcloudAPITestCase):

    def setUp(self):
        super().setUp()
        for name in list(os.environ):
            if name.startswith('OS_') and not name.startswith(
                    ('OS_STDOUT', 'OS_STDERR', 'OS_LOG', 'OS_TEST',
                     'OS_DEBUG')):
                self.useFixture(fixtures.EnvironmentVariable(name))
        # The shell configures the root logger: put it back after.
        root = logging.getLogger()
        self.addCleanup(setattr, root, 'handlers', list(root.handlers))
        self.addCleanup(root.setLevel, root.level)

    def openstack(self, token, *args, expect=0):
        """Run one command; (exit code, stdout, stderr)."""
        # OSC keeps each plugin's client in a descriptor on its
        # ClientManager class: a shell per process is fine, but here a new
        # shell would reuse the last one's client and token.
        vars(clientmanager.ClientManager)[plugin.API_NAME]._handle = None
        cli = shell.OpenStackShell()
        cli.stdout = io.StringIO()
        # Errors go to a log handler the shell sets up on sys.stderr.
        cli.stderr = io.StringIO()
        argv = ['--os-auth-type', 'admin_token', '--os-endpoint', self.url,
                '--os-token', token] + list(args)
        with fixtures.MonkeyPatch('sys.stderr', cli.stderr):
            code = cli.run(argv)
        out, err = cli.stdout.getvalue(), cli.stderr.getvalue()
        if expect is not None:
            self.assertEqual(expect, code, '%s: %s %s' % (args, out, err))
        return code, out, err

    def json(self, token, *args):
        return json.loads(self.openstack(token, *(args + ('-f', 'json')))[1])

    def test_admin_commands(self):
        made = self.json('admin', 'pcloud', 'host', 'flavor', 'create',
                         'big', '--units', '2', '--description',
                         'a big host')
        self.assertEqual({'id': 'big', 'description': 'a big host',
                          'units': 2, 'free_hosts': 0, 'hosts': []}, made)
        for host in ('cn1', 'cn2'):
            added = self.json('admin', 'pcloud', 'host', 'flavor', 'host',
                              'add', 'big', host)
            self.assertEqual({'host': host, 'pcloud_id': None}, added)
        self.assertEqual(
            [{'Host': 'cn1', 'Pcloud ID': None},
             {'Host': 'cn2', 'Pcloud ID': None}],
            self.json('admin', 'pcloud', 'host', 'flavor', 'host', 'list',
                      'big'))
        shown = self.json('admin', 'pcloud', 'host', 'flavor', 'show',
                          'big')
        self.assertEqual(['cn1', 'cn2'],
                         [h['host'] for h in shown['hosts']])
        self.openstack('admin', 'pcloud', 'host', 'flavor', 'host',
                       'remove', 'big', 'cn1')
        _, _, err = self.openstack('admin', 'pcloud', 'host', 'flavor',
                                   'delete', 'big', expect=1)
        self.assertIn('HTTP 409', err)
        self.openstack('admin', 'pcloud', 'host', 'flavor', 'host',
                       'remove', 'big', 'cn2')
        self.openstack('admin', 'pcloud', 'host', 'flavor', 'delete', 'big')
        self.assertEqual([], self.json('admin', 'pcloud', 'host', 'flavor',
                                       'list'))

    def test_user_commands(self):
        self.make_pool(units=2)
        self.assertEqual(
            [{'ID': 'big', 'Description': 'a big host', 'Units': 2,
              'Free Hosts': 3}],
            self.json('alice-reader', 'pcloud', 'host', 'flavor', 'list'))
        self.assertEqual(
            {'id': 'big', 'description': 'a big host', 'units': 2,
             'free_hosts': 3},
            self.json('alice-reader', 'pcloud', 'host', 'flavor', 'show',
                      'big'))
        _, _, err = self.openstack('alice-member', 'pcloud', 'host',
                                   'flavor', 'host', 'list', 'big',
                                   expect=1)
        self.assertIn('HTTP 403', err)

        pcloud = self.json('alice-member', 'pcloud', 'create', 'mine')
        self.assertEqual('mine', pcloud['name'])
        self.assertEqual(ALICE, pcloud['owner'])
        host = self.json('alice-member', 'pcloud', 'host', 'allocate',
                         'mine', 'h1', '--flavor', 'big')
        self.assertEqual({'name': 'h1', 'state': 'disabled',
                          'flavor_id': 'big', 'instances': []}, host)
        _, out, _ = self.openstack('alice-member', 'pcloud', 'host', 'set',
                                   'mine', 'h1', '--enable')
        self.assertEqual('', out)
        self.assertEqual(
            [{'Name': 'h1', 'State': 'enabled', 'Flavor ID': 'big',
              'Instances': []}],
            self.json('alice-reader', 'pcloud', 'host', 'list', 'mine'))
        self.assertEqual([], self.json('alice-reader', 'pcloud', 'host',
                                       'list', 'mine', '--state',
                                       'disabled'))
        _, table, _ = self.openstack('alice-reader', 'pcloud', 'host',
                                     'list', pcloud['id'])
        self.assertIn('| Name | State   | Flavor ID | Instances |', table)
        self.assertIn('| h1   | enabled | big       |           |', table)

        self.openstack('alice-member', 'pcloud', 'tenant', 'add', 'mine',
                       BOB)
        _, out, _ = self.openstack('alice-reader', 'pcloud', 'tenant',
                                   'list', 'mine', '-f', 'value')
        self.assertEqual(sorted([ALICE, BOB]), out.split())
        self.openstack('alice-member', 'pcloud', 'tenant', 'remove', 'mine',
                       BOB)

        self.openstack('alice-member', 'pcloud', 'allocation', 'ratio',
                       'set', 'mine', '--cpu', '4', '--ram', '1.5')
        self.assertEqual(
            {'cpu_allocation_ratio': 4.0, 'ram_allocation_ratio': 1.5},
            self.json('alice-reader', 'pcloud', 'allocation', 'ratio',
                      'show', 'mine'))
        shown = self.json('alice-reader', 'pcloud', 'show', 'mine')
        self.assertEqual(['h1'], shown['hosts'])
        self.assertEqual([ALICE], shown['tenants'])

        # Others' pclouds do not exist; readers may not write.
        _, _, err = self.openstack('bob-member', 'pcloud', 'show',
                                   pcloud['id'], expect=1)
        self.assertIn('HTTP 404', err)
        _, _, err = self.openstack('bob-member', 'pcloud', 'show', 'mine',
                                   expect=1)
        self.assertIn('No pcloud with a name or id of mine', err)
        _, _, err = self.openstack('alice-reader', 'pcloud', 'host', 'set',
                                   'mine', 'h1', '--disable', expect=1)
        self.assertIn('HTTP 403', err)
        _, _, err = self.openstack('alice-member', 'pcloud', 'host',
                                   'release', 'mine', 'h1', expect=1)
        self.assertIn('HTTP 409', err)
        self.assertIn('disable it first', err)

        self.openstack('alice-member', 'pcloud', 'host', 'set', 'mine', 'h1',
                       '--disable')
        self.openstack('alice-member', 'pcloud', 'host', 'release', 'mine',
                       'h1')
        listed = self.json('admin', 'pcloud', 'list', '--project', ALICE)
        self.assertEqual([{'ID': pcloud['id'], 'Name': 'mine',
                           'Owner': ALICE, 'Hosts': []}], listed)
        self.openstack('alice-member', 'pcloud', 'delete', 'mine')
        self.assertEqual([], self.json('alice-member', 'pcloud', 'list'))
