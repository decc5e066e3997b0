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
"""GET /v1/pcloud-hints in Blazar's real API: what a lease may ask for.

Its terms are the ones the lease guard lets through, and what it offers
(host flavors and their zones, pclouds, traits, limits) is what this
cloud has: the test cloud of test_host_plugin.
"""

from pcloud_plugin.blazar.api import lease_guard
from pcloud_plugin import quota
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin
from pcloud_plugin.tests.functional.blazar import test_lease_guard


class LeaseHintsTests(test_lease_guard.LeaseGuardTestCase):

    def hints(self):
        response = self.call('GET', '/pcloud-hints')
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['hints']

    def test_the_terms_are_those_a_lease_may_carry(self):
        found = self.hints()
        accepted = lease_guard.resource_types()
        for kind in ('pcloud:host', 'virtual:instance'):
            self.assertEqual(sorted(accepted[kind]),
                             sorted(found[kind]['terms']))
        host_terms = found['pcloud:host']['terms']
        self.assertEqual((True, False, 'SCHEDULE'), (
            host_terms['host_flavor']['required'],
            host_terms['lease_type']['required'],
            host_terms['lease_type']['default']))
        self.assertFalse(
            found['virtual:instance']['terms']['resource_properties'][
                'required'])
        self.assertEqual(['IMMEDIATE', 'SCHEDULE', 'BEST-EFFORT'],
                         found['pcloud:host']['lease_types'])
        self.assertEqual(['end_date', 'start_date'], sorted(found['lease']))

    def test_what_this_cloud_offers_and_the_projects_limits(self):
        self.nova.quota_sets[base.PROJECT] = {'instances': 10, 'cores': 20}
        self.conf.set_override('reserved_vcpus_quota', 64, group='pcloud')
        found = self.hints()
        (big,) = found['pcloud:host']['host_flavors']
        self.assertEqual(('big', 4, ['az2', 'nova']), (
            big['id'], big['hosts'], big['availability_zones']))
        self.assertEqual(['az2', 'nova'], found['availability_zones'])
        self.assertIn(test_host_plugin.AVX2, found['traits'])
        self.assertIn(test_host_plugin.PCLOUD, [
            p['id'] for p in found['pcloud:host']['pclouds']])
        self.assertEqual((10, 20, 64), (
            found['limits']['nova_instances'], found['limits']['nova_cores'],
            found['limits'][quota.RESERVED_VCPUS]))
        self.assertNotIn('virtual:instance max_amount', found['limits'])
        # The operator's limits on a reservation's amount.
        self.conf.set_override('max_amount', 5, group='pcloud_instance')
        self.assertEqual(5, self.hints()['limits'][
            'virtual:instance max_amount'])
