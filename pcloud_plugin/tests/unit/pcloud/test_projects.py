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

"""Projects authorized on a pcloud by id or name, resolved in Keystone

(clients.keystone against a fake Keystone, then the service's
authorize_project and deauthorize_project).
"""

from keystoneauth1 import exceptions as ks_exc

from pcloud_plugin.clients import keystone as keystone_client
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import service as service_mod
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.pcloud import fake_keystone
from pcloud_plugin.tests.unit.pcloud import test_service

ALT_ID = 'a17000000000000000000000000000a1'
CAROL_1 = 'ca000000000000000000000000000001'
CAROL_2 = 'ca000000000000000000000000000002'
PROJECTS = ((ALT_ID, 'alt'), (CAROL_1, 'carol'), (CAROL_2, 'carol', 'd2'),
            # A project whose name is another's id: the id wins.
            ('b0b00000000000000000000000000001', ALT_ID),
            ('d0000000000000000000000000000005', 'ünïcode name'))


class ResolveTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.keystone = fake_keystone.FakeKeystone(PROJECTS)

    def resolve(self, value):
        return keystone_client.resolve_project(self.keystone, value)

    def test_an_id_is_itself(self):
        self.assertEqual(ALT_ID, self.resolve(ALT_ID))
        self.assertEqual(['/projects/%s' % ALT_ID], self.keystone.calls)

    def test_a_unique_name_is_its_projects_id(self):
        self.assertEqual(ALT_ID, self.resolve('alt'))
        self.assertEqual('d0000000000000000000000000000005',
                         self.resolve('ünïcode name'))

    def test_unknown_is_404_naming_it(self):
        for value in ('garbage', 'no such project', 'a/../b', '..', 'Alt'):
            e = self.assertRaises(exception.ProjectNotFound, self.resolve,
                                  value)
            self.assertEqual(404, e.code)
            self.assertIn('"%s"' % value, e.message)

    def test_a_name_of_several_domains_is_409_asking_for_the_id(self):
        e = self.assertRaises(exception.ProjectNameAmbiguous, self.resolve,
                              'carol')
        self.assertEqual(409, e.code)
        self.assertIn('2 projects are named "carol"', e.message)
        self.assertIn('give the id', e.message)
        self.assertEqual(CAROL_2, self.resolve(CAROL_2))

    def test_a_domain_is_no_project(self):
        self.keystone.add_project('d2', 'second', is_domain=True)
        self.assertRaises(exception.ProjectNotFound, self.resolve, 'd2')

    def test_what_cannot_be_an_id_is_only_looked_up_as_a_name(self):
        self.assertRaises(exception.ProjectNotFound, self.resolve, '..')
        self.assertEqual(['/projects?name=..'], self.keystone.calls)

    def test_keystone_failures(self):
        self.keystone.fail_next(ks_exc.ConnectFailure('down'))
        e = self.assertRaises(exception.KeystoneUnreachable, self.resolve,
                              'alt')
        self.assertEqual(503, e.code)
        self.keystone.fail_next(503)
        self.assertRaises(exception.KeystoneUnreachable, self.resolve,
                          'alt')
        for failure in (403, 500, ks_exc.EndpointNotFound('no identity')):
            self.keystone.fail_next(failure)
            e = self.assertRaises(exception.KeystoneError, self.resolve,
                                  'alt')
            self.assertNotIsInstance(e, exception.KeystoneUnreachable)
            self.assertEqual(502, e.code)

    def test_adapter_from_pcloud_novas_options(self):
        adapter = keystone_client.get_adapter(self.conf)
        self.assertEqual('identity', adapter.service_type)
        self.assertIsNone(adapter.endpoint_override)
        self.assertEqual('3.0', adapter.min_version)


class ServiceTest(test_service.ServiceTestCase):

    def setUp(self):
        super().setUp()
        self.keystone = fake_keystone.FakeKeystone(PROJECTS)
        self.service = service_mod.PcloudService(
            self.nova, self.placement, self.conf,
            leases=self.service.leases, keystone=self.keystone)
        self.pcloud = self._pcloud()

    def tenants(self):
        return self.service.show_pcloud(test_service.ALICE,
                                        self.pcloud)['tenants']

    def test_authorize_by_name_stores_the_id(self):
        self.assertEqual(sorted(['alice', ALT_ID]),
                         self.service.authorize_project(
                             test_service.ALICE, self.pcloud, 'alt'))
        self.assertEqual(sorted(['alice', ALT_ID]), self.tenants())
        # Its id, by its id: the same one.
        self.service.authorize_project(test_service.ALICE, self.pcloud,
                                       ALT_ID)
        self.assertEqual(sorted(['alice', ALT_ID]), self.tenants())

    def test_unknown_and_ambiguous_are_refused_and_nothing_stored(self):
        for value, error in (('garbage', exception.ProjectNotFound),
                             ('carol', exception.ProjectNameAmbiguous)):
            self.assertRaises(error, self.service.authorize_project,
                              test_service.ALICE, self.pcloud, value)
        self.assertEqual(['alice'], self.tenants())

    def test_bad_values_name_the_field(self):
        for value in ('', 'x' * 65, 'pc \U0001F600', 7, None):
            e = self.assertRaises(exception.InvalidField,
                                  self.service.authorize_project,
                                  test_service.ALICE, self.pcloud, value)
            self.assertEqual('tenant_id', e.kwargs['field'])
        self.assertEqual([], self.keystone.calls)

    def test_deauthorize_by_name_or_id(self):
        self.service.authorize_project(test_service.ALICE, self.pcloud,
                                       ALT_ID)
        self.service.deauthorize_project(test_service.ALICE, self.pcloud,
                                         'alt')
        self.assertEqual(['alice'], self.tenants())
        # Not authorized: nothing to do, no error.
        self.service.deauthorize_project(test_service.ALICE, self.pcloud,
                                         ALT_ID)
        self.assertRaises(exception.ProjectNotFound,
                          self.service.deauthorize_project,
                          test_service.ALICE, self.pcloud, 'garbage')

    def _store(self, literal):
        """As an older release stored a project: as it came."""
        agg = [a for a in self.nova.aggregates.list()
               if a.metadata.get(codec.ID) == self.pcloud][0]
        self.nova.aggregates.set_metadata(
            agg, {codec.tenant_key(literal): codec.TENANT})

    def test_deauthorize_what_keystone_cannot_name_but_is_stored(self):
        # "alice" (the fake's owner) and "carol" as older releases stored
        # them: Keystone has no project alice, and two named carol.
        self._store('carol')
        self.service.deauthorize_project(test_service.ALICE, self.pcloud,
                                         'carol')
        self.service.deauthorize_project(test_service.ALICE, self.pcloud,
                                         'alice')
        self.assertEqual([], self.tenants())

    def test_deauthorize_a_name_stored_beside_its_id_removes_both(self):
        self._store('alt')
        self.service.authorize_project(test_service.ALICE, self.pcloud,
                                       'alt')
        self.assertEqual(sorted(['alice', 'alt', ALT_ID]), self.tenants())
        self.assertEqual(['alice'], self.service.deauthorize_project(
            test_service.ALICE, self.pcloud, 'alt'))
        self.assertEqual(['alice'], self.tenants())

    def test_only_who_may_manage_the_pcloud(self):
        self.assertRaises(exception.PcloudNotFound,
                          self.service.authorize_project, test_service.BOB,
                          self.pcloud, 'alt')

    def test_own_says_whose_it_is(self):
        self.assertTrue(self.service.show_pcloud(test_service.ALICE,
                                                 self.pcloud)['own'])
        self.assertEqual([False], [p['own'] for p in self.service
                                   .list_pclouds(test_service.ADMIN)])
