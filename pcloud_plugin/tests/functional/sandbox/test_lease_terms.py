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

"""Lease terms mean what they say, in the sandbox: a term no reservation

of the type has is refused naming it (through Blazar's own client, as a
tenant writes it), and seeds/003's request body is admitted as printed.
"""

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


class LeaseTerms(test_capacity_truth._Capacity):

    def test_a_term_the_type_does_not_have_is_refused_naming_it(self):
        # As a REST client sends them: Blazar's own client parses only the
        # terms it knows of virtual:instance, and a pcloud:host string
        # value not at all (osc.leases).
        for reservation, field in (
                (dict(self._slot(64), availability_zone='nowhere'),
                 'reservations.0.availability_zone'),
                ({'resource_type': 'pcloud:host', 'amount': 1,
                  'host_flavor': 'any', 'pcloud_id': 'any', 'vcpus': 64},
                 'reservations.0.vcpus')):
            refused = self.assertRaises(
                pcloud_client.PcloudError, self.alt._request, 'POST',
                '/leases', {'name': 'terms-refused', 'events': [],
                            'start_date': _minute(hours=2),
                            'end_date': _minute(hours=3),
                            'reservations': [reservation]})
            self.assertEqual(400, refused.code, refused)
            self.assertIn(field, str(refused))
            self.assertIn('its terms are', str(refused))
        self.assertNotIn('terms-refused', [
            lease['name'] for lease in self.cli.json(
                'openstack', 'reservation', 'lease', 'list',
                user=common.ALT_USER)])

    def test_seeds_003_request_body_as_printed_is_admitted(self):
        # The seed's body but for its dates (past now) and its amount: 5
        # slots on distinct hosts need more free computes than this cloud
        # has beside the other tests'.
        start, end = _minute(hours=2), _minute(hours=3)
        lease = self.alt._request('POST', '/leases', {
            'name': 'instance-reservation-1',
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 4, 'memory_mb': 4096, 'disk_gb': 10,
                              'amount': 1, 'affinity': False}],
            'start': start, 'end': end,
            'events': []})['lease']
        self.addCleanup(fixture.delete_lease, self.alt, lease['id'])
        (reservation,) = lease['reservations']
        self.assertEqual((4, 4096, 10, 1, False, ''), tuple(
            reservation[k] for k in ('vcpus', 'memory_mb', 'disk_gb',
                                     'amount', 'affinity',
                                     'resource_properties')))
        self.assertEqual((start, end), tuple(
            lease[k][:16].replace('T', ' ') for k in ('start_date',
                                                      'end_date')))
        # Admitted, not started: INACTIVE as seeds/001 names it.
        shown = self.cli.json('openstack', 'pcloud', 'lease', 'show',
                              lease['name'], user=common.ALT_USER)
        self.assertEqual(('INACTIVE', 'PENDING', 'instance-reservation-1'),
                         (shown['state'], shown['blazar_status'],
                          shown['name']))
        self.assertEqual([(4, 1, 'INACTIVE')], [
            (r['vcpus'], r['amount'], r['state'])
            for r in shown['reservations']])
