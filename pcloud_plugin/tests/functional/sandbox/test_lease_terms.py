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

of the type has is refused naming it, an availability zone takes only
its hosts (and one the cloud lacks is refused), and seeds/003's request
body is admitted as printed.
"""

import time

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
                (dict(self._slot(64), region='nowhere'),
                 'reservations.0.region'),
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

    def test_an_availability_zone_places_and_boots_only_on_its_hosts(self):
        zone_host = self.computes[0]
        agg = self.nova.aggregates.create('terms-zone', 'terms-az')
        self.addCleanup(self.nova.aggregates.delete, agg.id)
        self.nova.aggregates.add_host(agg.id, zone_host)
        self.addCleanup(self.nova.aggregates.remove_host, agg.id, zone_host)
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.alt._request, 'POST', '/leases',
            {'name': 'terms-nowhere', 'start_date': 'now', 'events': [],
             'end_date': _minute(hours=1),
             'reservations': [dict(self._slot(64),
                                   availability_zone='nowhere')]})
        self.assertEqual(400, refused.code, refused)
        self.assertIn("no availability zone 'nowhere'", str(refused))
        self.assertIn('terms-az', str(refused))
        # Nova writes the host's aggregate into Placement; blazar-manager's
        # mirror reads it on its next pass: until then no host is in the
        # zone as the ledger knows it (409).
        deadline = time.monotonic() + 60
        while True:
            try:
                lease = self._lease(self.alt, dict(
                    self._slot(64), amount=2, availability_zone='terms-az'))
                break
            except pcloud_client.PcloudError as e:
                self.assertEqual(409, e.code, e)
                self.assertLess(time.monotonic(), deadline,
                                'the zone never had room: %s' % e)
                time.sleep(2)
        self.assertEqual([zone_host], self._slot_hosts(lease))
        self._settled(lease, common.ALT_USER, 'ACTIVE')
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        for n in range(2):
            server = fixture.boot(self, self.cli, 'terms-zone-%d' % n, rid,
                                  common.ALT_USER)
            self.assertEqual(zone_host, server['OS-EXT-SRV-ATTR:host'])
