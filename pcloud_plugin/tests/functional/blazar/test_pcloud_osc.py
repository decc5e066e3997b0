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
Keystone's project lookups are answered by a fake identity client (the
caller's) and a fake Keystone (the Pcloud service's, which resolves the
names a caller could not); Blazar's manager, behind the lease API, by
mocks of its RPC calls.
"""

import io
import json
import logging
import os
import types

from blazar.manager import exceptions as mgr_exc
from blazar.manager.leases import rpcapi as lease_rpcapi
# Registers blazar.conf's [manager] plugins, which pcloud_api_base sets:
# nothing else does when this module runs alone.
from blazar.manager import service as _manager_service  # noqa: F401
import fixtures
from keystoneauth1 import access
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import token_endpoint
from keystoneclient import exceptions as kc_exc
from keystoneclient.v3 import domains
from keystoneclient.v3 import projects
from openstackclient import shell
from osc_lib import clientmanager

from pcloud_plugin.clients import keystone as keystone_client
from pcloud_plugin.osc import plugin
from pcloud_plugin.tests.functional.blazar import pcloud_api_base as api_base
from pcloud_plugin.tests.unit.pcloud import fake_keystone

ALICE = api_base.ALICE
BOB = api_base.BOB
CAROL_IN_D2 = 'c0000000000000000000000000000002'
LEASE = '9d1c2f5e-3b7a-4e8d-a6c4-1f2e3d4c5b6a'
HOST_RESERVATION = '5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716'
OTHER_RESERVATION = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'


class FakeManager(object):
    """A keystoneclient v3 manager as osc_lib.utils.find_resource uses it:

    get by id, find by name (and domain), list; 404 as NotFound and, when
    ``forbidden``, 403 for every call.
    """

    def __init__(self, resource_class, items, forbidden=False):
        self.resource_class = resource_class
        self.items = items
        self.forbidden = forbidden

    def _check(self):
        if self.forbidden:
            raise ks_exc.Forbidden()

    def get(self, item_id, **query):
        self._check()
        for item in self.items:
            if item.id == item_id:
                return item
        raise ks_exc.NotFound()

    def find(self, **query):
        self._check()
        found = [i for i in self.items
                 if all(getattr(i, k) == v for k, v in query.items())]
        if not found:
            raise ks_exc.NotFound()
        if len(found) > 1:
            raise kc_exc.NoUniqueMatch()
        return found[0]

    def list(self, **query):
        self._check()
        return list(self.items)


def _project(project_id, name, domain_id='default'):
    return types.SimpleNamespace(id=project_id, name=name,
                                 domain_id=domain_id)


PROJECTS = ((ALICE, 'alice'), (BOB, 'bob'),
            (BOB.replace('b0b', 'cab'), 'carol'),
            (CAROL_IN_D2, 'carol', 'd2'))


class FakeIdentity(object):
    def __init__(self, forbidden=False):
        self.projects = FakeManager(projects.Project, [
            _project(*p) for p in PROJECTS], forbidden)
        self.domains = FakeManager(domains.Domain, [
            types.SimpleNamespace(id='default', name='Default'),
            types.SimpleNamespace(id='d2', name='second')], forbidden)


class OSCTest(api_base.PcloudAPITestCase):

    def setUp(self):
        super().setUp()
        # openstacksdk reads every OS_* variable as cloud config (OS_DEBUG
        # makes the shell print its debug log): only the test runner's stay.
        for name in list(os.environ):
            if name.startswith('OS_') and not name.startswith(
                    ('OS_STDOUT', 'OS_STDERR', 'OS_LOG', 'OS_TEST')):
                self.useFixture(fixtures.EnvironmentVariable(name))
        # The shell configures the root logger: put it back after.
        root = logging.getLogger()
        self.addCleanup(setattr, root, 'handlers', list(root.handlers))
        self.addCleanup(root.setLevel, root.level)
        self.identity = FakeIdentity()
        self.useFixture(fixtures.MockPatchObject(
            clientmanager.ClientManager, 'identity', self.identity))
        self.keystone = fake_keystone.FakeKeystone(PROJECTS)
        self.useFixture(fixtures.MockPatchObject(
            keystone_client, 'get_adapter', return_value=self.keystone))

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

    def scoped_logins(self):
        """Logins that know their project and catalog, as a password or

        token login's would, rather than a bare token and endpoint.
        """
        def auth_ref(plugin, session):
            user, project, roles = api_base.USERS[plugin.token]
            token = ks_fixture.V3Token(user_id=user, project_id=project)
            token.add_service('reservation').add_standard_endpoints(
                public=self.url, internal=self.url, admin=self.url)
            return access.create(body=token, auth_token=plugin.token)
        self.useFixture(fixtures.MockPatchObject(
            token_endpoint.Token, 'get_auth_ref', auth_ref))

    def test_admin_commands(self):
        made = self.json('admin', 'pcloud', 'host', 'flavor', 'create',
                         'big', '--units', '2', '--description',
                         'a big host')
        self.assertEqual({'id': 'big', 'description': 'a big host',
                          'units': 2, 'free_hosts': 0, 'hosts': []}, made)
        for host in ('cn1', 'cn2'):
            added = self.json('admin', 'pcloud', 'host', 'flavor', 'add',
                              'host', 'big', host)
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
        self.openstack('admin', 'pcloud', 'host', 'flavor', 'remove',
                       'host', 'big', 'cn1')
        _, _, err = self.openstack('admin', 'pcloud', 'host', 'flavor',
                                   'delete', 'big', expect=1)
        self.assertIn('HTTP 409', err)
        self.openstack('admin', 'pcloud', 'host', 'flavor', 'remove',
                       'host', 'big', 'cn2')
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
        host = self.json('alice-member', 'pcloud', 'add', 'host', 'mine',
                         'h1', '--host-flavor', 'big')
        self.assertEqual({'name': 'h1', 'state': 'disabled',
                          'flavor_id': 'big', 'instances': []}, host)
        _, out, _ = self.openstack('alice-member', 'pcloud', 'host', 'set',
                                   'mine', 'h1', '--enable')
        self.assertEqual('', out)
        self.assertEqual(
            [{'Name': 'h1', 'State': 'enabled', 'Flavor ID': 'big',
              'Instances': []}],
            self.json('alice-reader', 'pcloud', 'host', 'list', 'mine'))
        self.assertEqual(
            [{'Name': 'h1', 'State': 'enabled', 'Flavor ID': 'big',
              'Instances': [], 'Units': 2}],
            self.json('alice-reader', 'pcloud', 'host', 'list', 'mine',
                      '--long'))
        self.assertEqual([], self.json('alice-reader', 'pcloud', 'host',
                                       'list', 'mine', '--state',
                                       'disabled'))
        _, table, _ = self.openstack('alice-reader', 'pcloud', 'host',
                                     'list', pcloud['id'])
        self.assertIn('| Name | State   | Flavor ID | Instances |', table)
        self.assertIn('| h1   | enabled | big       |           |', table)

        self.openstack('alice-member', 'pcloud', 'add', 'project', 'mine',
                       BOB)
        _, out, _ = self.openstack('alice-reader', 'pcloud', 'project',
                                   'list', 'mine', '-f', 'value')
        self.assertEqual(sorted([ALICE, BOB]), out.split())
        self.openstack('alice-member', 'pcloud', 'remove', 'project',
                       'mine', BOB)

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
        _, _, err = self.openstack('alice-member', 'pcloud', 'remove',
                                   'host', 'mine', 'h1', expect=1)
        self.assertIn('HTTP 409', err)
        self.assertIn('disable it first', err)

        self.openstack('alice-member', 'pcloud', 'host', 'set', 'mine', 'h1',
                       '--disable')
        self.openstack('alice-member', 'pcloud', 'remove', 'host', 'mine',
                       'h1')
        listed = self.json('admin', 'pcloud', 'list', '--project', ALICE)
        self.assertEqual([{'ID': pcloud['id'], 'Name': 'mine',
                           'Owner': ALICE, 'Hosts': []}], listed)
        self.openstack('alice-member', 'pcloud', 'delete', 'mine')
        self.assertEqual([], self.json('alice-member', 'pcloud', 'list'))

    def test_deprecated_names_warn_and_work_as_before(self):
        def old(token, *args):
            # stderr has the in-process API's log lines too.
            _, out, err = self.openstack(token, 'pcloud', *args)
            return out, err.splitlines()

        def warning(old_name, new_name):
            return ('"openstack pcloud %s" is deprecated: use "openstack '
                    'pcloud %s".' % (old_name, new_name))

        self.call('admin', 'POST', '/pcloud-host-flavors',
                  {'id': 'big', 'units': 1}, expect=201)
        out, err = old('admin', 'host', 'flavor', 'host', 'add', 'big',
                       'cn1', '-f', 'json')
        self.assertIn(warning('host flavor host add', 'host flavor add host'),
                      err)
        self.assertEqual({'host': 'cn1', 'pcloud_id': None}, json.loads(out))

        self.make_pcloud()
        out, err = old('alice-member', 'host', 'allocate', 'mine', 'h1',
                       '--flavor', 'big', '-f', 'json')
        self.assertIn(warning('host allocate', 'add host'), err)
        self.assertEqual('h1', json.loads(out)['name'])
        out, err = old('alice-member', 'tenant', 'add', 'mine', BOB)
        self.assertIn(warning('tenant add', 'add project'), err)
        out, err = old('alice-reader', 'tenant', 'list', 'mine', '-f',
                       'json')
        self.assertIn(warning('tenant list', 'project list'), err)
        self.assertEqual(sorted([ALICE, BOB]),
                         sorted(t['Tenant ID'] for t in json.loads(out)))
        out, err = old('alice-member', 'tenant', 'remove', 'mine', BOB)
        self.assertIn(warning('tenant remove', 'remove project'), err)
        self.assertEqual([ALICE], self.json('alice-reader', 'pcloud', 'show',
                                            'mine')['tenants'])
        # Not looked up by the command, as before; the service resolves a
        # name: bob's id is stored.
        old('alice-member', 'tenant', 'add', 'mine', 'bob')
        self.assertEqual(sorted([ALICE, BOB]), self.json(
            'alice-reader', 'pcloud', 'show', 'mine')['tenants'])

        out, err = old('alice-member', 'allocation', 'ratio', 'set', 'mine',
                       '--cpu', '4', '--ram', '1.5')
        self.assertIn(warning('allocation ratio set', 'set'), err)
        out, err = old('alice-reader', 'allocation', 'ratio', 'show', 'mine',
                       '-f', 'json')
        self.assertIn(warning('allocation ratio show', 'show'), err)
        self.assertEqual(
            {'cpu_allocation_ratio': 4.0, 'ram_allocation_ratio': 1.5},
            json.loads(out))

        self.openstack('alice-member', 'pcloud', 'host', 'set', 'mine', 'h1',
                       '--disable')
        out, err = old('alice-member', 'host', 'release', 'mine', 'h1')
        self.assertIn(warning('host release', 'remove host'), err)
        out, err = old('admin', 'host', 'flavor', 'host', 'remove', 'big',
                       'cn1')
        self.assertIn(warning('host flavor host remove',
                              'host flavor remove host'), err)
        self.assertEqual([], self.json('admin', 'pcloud', 'host', 'flavor',
                                       'host', 'list', 'big'))

        # Out of the help listing.
        _, listing, _ = self.openstack('admin', 'help')
        self.assertIn('pcloud add project', listing)
        self.assertNotIn('pcloud tenant add', listing)

    def test_delete_tries_every_one_then_says_how_many_failed(self):
        first = self.make_pcloud(name='first')
        self.make_pcloud(name='second')
        _, _, err = self.openstack('alice-member', 'pcloud', 'delete',
                                   'first', 'nope', 'second', expect=1)
        self.assertIn('No pcloud with a name or id of nope', err)
        self.assertEqual('1 of 3 pclouds failed to delete.',
                         err.splitlines()[-1])
        self.assertEqual([], self.json('alice-member', 'pcloud', 'list'))
        self.call('alice-member', 'GET', '/pclouds/' + first, expect=404)

        self.make_pool(hosts=('cn1',))
        self.call('admin', 'POST', '/pcloud-host-flavors',
                  {'id': 'small', 'units': 1}, expect=201)
        _, _, err = self.openstack('admin', 'pcloud', 'host', 'flavor',
                                   'delete', 'big', 'small', expect=1)
        self.assertIn('HTTP 409', err)
        self.assertEqual('1 of 2 host flavors failed to delete.',
                         err.splitlines()[-1])
        self.assertEqual(['big'], [f['ID'] for f in self.json(
            'admin', 'pcloud', 'host', 'flavor', 'list')])

    def test_projects_by_name_or_id(self):
        self.make_pcloud()

        def projects():
            return self.json('alice-reader', 'pcloud', 'show',
                             'mine')['tenants']

        self.openstack('alice-member', 'pcloud', 'add', 'project', 'mine',
                       'bob')
        self.assertEqual(sorted([ALICE, BOB]), projects())
        self.openstack('alice-member', 'pcloud', 'remove', 'project', 'mine',
                       'bob')
        self.assertEqual([ALICE], projects())
        _, _, err = self.openstack('alice-member', 'pcloud', 'add',
                                   'project', 'mine', 'dave', expect=1)
        self.assertIn("No project with a name or ID of 'dave' exists", err)
        # Two carols: the domain tells them apart.
        _, _, err = self.openstack('alice-member', 'pcloud', 'add',
                                   'project', 'mine', 'carol', expect=1)
        self.assertIn("More than one project exists with the name 'carol'",
                      err)
        self.openstack('alice-member', 'pcloud', 'add', 'project', 'mine',
                       'carol', '--project-domain', 'second')
        self.assertEqual(sorted([ALICE, CAROL_IN_D2]), projects())

        # Keystone refuses the caller the lookup (a member's): sent as
        # given, the service resolves it; what it stores is the id.
        self.identity.projects.forbidden = True
        self.openstack('alice-member', 'pcloud', 'add', 'project', 'mine',
                       'bob')
        self.assertEqual(sorted([ALICE, BOB, CAROL_IN_D2]), projects())
        self.openstack('alice-member', 'pcloud', 'remove', 'project', 'mine',
                       CAROL_IN_D2)
        self.assertEqual(sorted([ALICE, BOB]), projects())
        self.openstack('alice-member', 'pcloud', 'remove', 'project', 'mine',
                       'bob')
        self.assertEqual([ALICE], projects())
        _, _, err = self.openstack('alice-member', 'pcloud', 'add',
                                   'project', 'mine', 'garbage', expect=1)
        self.assertIn('HTTP 404', err)
        self.assertIn('Keystone has no project with the id or name '
                      '"garbage"', err)
        # Its domain is not sent: a name of two domains wants the id.
        _, _, err = self.openstack('alice-member', 'pcloud', 'add',
                                   'project', 'mine', 'carol', expect=1)
        self.assertIn('HTTP 409', err)
        self.assertIn('give the id', err)
        self.assertEqual([ALICE], projects())

    def test_an_authorized_project_lists_and_shows_it(self):
        self.scoped_logins()
        self.make_pool(hosts=('cn1',))
        mine = self.make_pcloud()
        self.allocate(mine)
        self.identity.projects.forbidden = True
        self.openstack('alice-member', 'pcloud', 'add', 'project', 'mine',
                       'bob')
        listed = self.json('bob-member', 'pcloud', 'list', '--long')
        self.assertEqual(
            [{'ID': mine, 'Name': 'mine', 'Owner': ALICE, 'Hosts': [],
              'Projects': [BOB], 'CPU Allocation Ratio': None,
              'RAM Allocation Ratio': None}], listed)
        shown = self.json('bob-member', 'pcloud', 'show', 'mine')
        self.assertEqual((mine, False, []),
                         (shown['id'], shown['own'], shown['hosts']))
        _, _, err = self.openstack('bob-member', 'pcloud', 'host', 'list',
                                   'mine', expect=1)
        self.assertIn('HTTP 403', err)

    def test_set_and_unset_allocation_ratios(self):
        self.make_pool(hosts=('cn1',))
        self.allocate(self.make_pcloud())
        node = 'cn1.example.com'
        own = self.placement.ratios(node)

        self.openstack('alice-member', 'pcloud', 'set', 'mine',
                       '--cpu-allocation-ratio', '4',
                       '--ram-allocation-ratio', '0.5')
        shown = self.json('alice-reader', 'pcloud', 'show', 'mine')
        self.assertEqual((4.0, 0.5), (shown['cpu_allocation_ratio'],
                                      shown['ram_allocation_ratio']))
        self.assertEqual({'VCPU': 4.0, 'MEMORY_MB': 0.5},
                         self.placement.ratios(node))

        self.openstack('alice-member', 'pcloud', 'unset', 'mine',
                       '--cpu-allocation-ratio')
        shown = self.json('alice-reader', 'pcloud', 'show', 'mine')
        self.assertEqual((None, 0.5), (shown['cpu_allocation_ratio'],
                                       shown['ram_allocation_ratio']))
        self.assertEqual(dict(own, MEMORY_MB=0.5),
                         self.placement.ratios(node))
        self.openstack('alice-member', 'pcloud', 'unset', 'mine',
                       '--ram-allocation-ratio')
        self.assertEqual(own, self.placement.ratios(node))
        _, _, err = self.openstack('alice-reader', 'pcloud', 'unset', 'mine',
                                   '--ram-allocation-ratio', expect=1)
        self.assertIn('HTTP 403', err)

    def test_list_own_project_by_default_all_projects_and_long(self):
        self.scoped_logins()
        mine = self.make_pcloud()
        bobs = self.make_pcloud('bob-member', 'bobs')
        self.call('alice-member', 'PUT', '/pclouds/%s/allocation-ratios'
                  % mine, {'cpu_allocation_ratio': 2.0}, expect=200)

        def ids(token, *args):
            return sorted(p['ID'] for p in self.json(
                token, 'pcloud', 'list', *args))

        self.assertEqual([], ids('admin'))
        self.assertEqual(sorted([mine, bobs]),
                         ids('admin', '--all-projects'))
        self.assertEqual([bobs], ids('admin', '--project', 'bob'))
        self.assertEqual([mine], ids('alice-reader'))
        self.assertEqual([mine], ids('alice-reader', '--all-projects'))
        self.assertEqual(
            [{'ID': mine, 'Name': 'mine', 'Owner': ALICE, 'Hosts': [],
              'Projects': [ALICE], 'CPU Allocation Ratio': 2.0,
              'RAM Allocation Ratio': None}],
            self.json('alice-reader', 'pcloud', 'list', '--long'))

    def mock_leases(self, *reservations):
        """Blazar's manager, answering for one lease with these

        reservations (and its database, which Blazar's policy reads the
        lease's project from, and our lease lock its events: none due);
        the mock of its update_lease.
        """
        lease = {'id': LEASE, 'name': 'my-hosts', 'project_id': ALICE,
                 'user_id': 'u-alice-member', 'status': 'PENDING',
                 'reservations': list(reservations)}
        self.useFixture(fixtures.MockPatch('blazar.db.api.lease_get',
                                           return_value=lease))
        self.useFixture(fixtures.MockPatch(
            'blazar.db.api.event_get_all_sorted_by_filters',
            return_value=[]))
        mocks = {name: self.useFixture(fixtures.MockPatchObject(
            lease_rpcapi.ManagerRPCAPI, name, return_value=answer)).mock
            for name, answer in (('get_lease', lease),
                                 ('list_leases', [lease]),
                                 ('update_lease', lease))}
        return mocks['update_lease']

    def test_lease_set_sends_the_reservation_its_own_keys(self):
        pcloud = self.make_pcloud()
        update = self.mock_leases(
            {'id': OTHER_RESERVATION, 'resource_type': 'virtual:instance'},
            {'id': HOST_RESERVATION, 'resource_type': 'pcloud:host'})

        self.openstack('alice-member', 'pcloud', 'lease', 'set', 'my-hosts',
                       '--end-date', '2031-01-01 12:00', '--amount', '2',
                       '--type', 'BEST-EFFORT', '--timeout', '30',
                       '--pcloud', 'mine', '--no-availability-zone',
                       '--required-traits', 'HW_CPU_X86_AVX2,!CUSTOM_SLOW')
        update.assert_called_once_with(LEASE, {
            'end_date': '2031-01-01 12:00',
            'reservations': [{
                'id': HOST_RESERVATION, 'amount': 2,
                'lease_type': 'BEST-EFFORT', 'timeout': 30,
                'pcloud_id': pcloud, 'availability_zone': None,
                'required_traits': 'HW_CPU_X86_AVX2,!CUSTOM_SLOW'}]})

        update.reset_mock()
        self.openstack('alice-member', 'pcloud', 'lease', 'set', LEASE,
                       '--name', 'renamed', '--start-date', 'now')
        update.assert_called_once_with(LEASE, {'name': 'renamed',
                                               'start_date': 'now'})
        update.reset_mock()
        self.openstack('alice-member', 'pcloud', 'lease', 'set', LEASE)
        update.assert_not_called()

    def test_lease_set_picks_the_reservation_and_shows_refusals(self):
        update = self.mock_leases(
            {'id': HOST_RESERVATION, 'resource_type': 'pcloud:host'},
            {'id': OTHER_RESERVATION, 'resource_type': 'pcloud:host'})
        _, _, err = self.openstack('alice-member', 'pcloud', 'lease', 'set',
                                   'my-hosts', '--amount', '2', expect=1)
        self.assertIn('has 2 pcloud:host reservations: give --reservation',
                      err)
        _, _, err = self.openstack('alice-member', 'pcloud', 'lease', 'set',
                                   'my-hosts', '--amount', '2',
                                   '--reservation', 'r-1', expect=1)
        self.assertIn('has no pcloud:host reservation r-1', err)
        update.assert_not_called()

        self.openstack('alice-member', 'pcloud', 'lease', 'set', 'my-hosts',
                       '--amount', '3', '--reservation', OTHER_RESERVATION)
        update.assert_called_once_with(LEASE, {'reservations': [
            {'id': OTHER_RESERVATION, 'amount': 3}]})

        update.side_effect = mgr_exc.CantUpdateParameter(
            param='amount of active host reservation %s' % OTHER_RESERVATION)
        _, _, err = self.openstack('alice-member', 'pcloud', 'lease', 'set',
                                   'my-hosts', '--amount', '4',
                                   '--reservation', OTHER_RESERVATION,
                                   expect=1)
        self.assertIn('amount of active host reservation %s'
                      % OTHER_RESERVATION, err)
        self.assertIn('HTTP 409', err)
        _, _, err = self.openstack('alice-member', 'pcloud', 'lease', 'set',
                                   'nope', '--amount', '4', expect=1)
        self.assertIn('No lease with a name or id of nope', err)
