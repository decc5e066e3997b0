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
"""GET /v1/pcloud-availability/hosts through the Pcloud API, over the

manager, the plugins, Placement and the ledger of test_host_plugin (see
there for the hosts): cn1, cn2 and cn4 may be leased whole; cn1 alone
has the trait, cn4 alone is in az2.
"""

from oslo_utils import timeutils

from pcloud_plugin.osc import client as client_mod
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin as hosts
from pcloud_plugin.tests.functional.blazar import test_offerings_api

PATH = '/pcloud-availability/hosts'


class AvailabilityTests(test_offerings_api.OfferingsAPITestCase):

    def free(self, expect=200, **params):
        return self.get(PATH, expect=expect, **params)['availability']

    def test_free_hosts_each_hour(self):
        first = self.create_lease(self.hosts_res(1), start=60, end=120)
        self.assertEqual(['cn1'], self.leased(first))
        found = self.free(host_flavor='big', hours=4, start=self.minutes(0))
        self.assertEqual({'host_flavor': 'big', 'start': self.at(0),
                          'step_minutes': 60, 'hosts': 3,
                          'free': [3, 2, 3, 3]}, found)
        # Half an hour into the second and third hours: neither is free;
        # the first lease's end, on the hour, leaves the third alone.
        second = self.create_lease(self.hosts_res(1), start=90, end=150)
        self.assertEqual(['cn2'], self.leased(second))
        self.assertEqual([3, 1, 2, 3], self.free(
            host_flavor='big', hours=4, start=self.minutes(0))['free'])
        # Hours from a minute on: [1, 61) and [61, 121) meet both leases,
        # [121, 181) the second's last half hour.
        self.assertEqual([2, 1, 2, 3], self.free(
            host_flavor='big', hours=4, start=self.minutes(1))['free'])
        # cn1 alone has the trait; cn4 alone is in az2.
        self.assertEqual({'hosts': 1, 'free': [1, 0, 1, 1]}, self.counts(
            host_flavor='big', hours=4, start=self.minutes(0),
            required_traits=hosts.AVX2))
        self.assertEqual({'hosts': 1, 'free': [1, 1, 1, 1]}, self.counts(
            host_flavor='big', hours=4, start=self.minutes(0),
            availability_zone='az2'))
        self.assertEqual({'hosts': 0, 'free': [0, 0]}, self.counts(
            host_flavor='big', hours=2, availability_zone='az9'))
        # Counts only: nothing of which hosts, or whose leases.
        text = str(self.free(host_flavor='big'))
        for secret in ('cn1', 'cn2', 'cn4', base.PROJECT, first['id']):
            self.assertNotIn(secret, text)

    def counts(self, **params):
        found = self.free(**params)
        return {'hosts': found['hosts'], 'free': found['free']}

    def test_defaults_two_weeks_from_now(self):
        # Now, rounded up to the minute, as offerings take a start.
        found = self.free(host_flavor='big')
        self.assertEqual(self.at(0 if timeutils.utcnow().second == 0
                                 else 1), found['start'])
        self.assertEqual([3] * 336, found['free'])
        # A start in the past: this minute, as offerings take it.
        self.assertEqual(self.at(0), self.free(
            host_flavor='big', hours=1, start='2001-01-01 00:00')['start'])
        self.assertEqual(2160, len(self.free(host_flavor='big',
                                             hours='2160')['free']))

    def test_osc_client(self):
        self.create_lease(self.hosts_res(3), start=0, end=60)
        session, url = self.api
        client = client_mod.Client(session, endpoint=url)
        found = client.show_host_availability(
            {'host_flavor': 'big', 'hours': 2, 'start': self.minutes(0)})
        self.assertEqual((3, [0, 3]), (found['hosts'], found['free']))

    def test_unknown_host_flavor_is_404(self):
        error = self.get(PATH, expect=404, host_flavor='tiny')
        self.assertEqual('HostFlavorNotFound', error['error_name'])

    def test_bad_input_is_400_naming_the_field(self):
        for field, value in (('hours', '0'), ('hours', '2161'),
                             ('hours', 'two'), ('hours', '-1'),
                             ('hours', ''), ('start', 'tomorrow'),
                             ('start', '0001-01-01T00:00:00+01:00'),
                             ('start', '9999-12-31T23:59:59-01:00'),
                             # Its hours would run past the end of time.
                             ('start', '9999-12-30 00:00'),
                             ('required_traits', '!!'),
                             ('host_flavor', None), ('host_flavor', 'a b'),
                             ('step', '30')):
            params = {'host_flavor': 'big'}
            if value is None:
                del params[field]
            else:
                params[field] = value
            error = self.get(PATH, expect=400, **params)
            self.assertIn('field %s' % field, error['error_message'],
                          (field, value))
        # The last hours before the end of time are fine.
        self.assertEqual(24, len(self.free(
            host_flavor='big', hours=24, start='9999-12-30 00:00')['free']))

    def test_any_member_may_ask_a_reader_may_not(self):
        error = self.get(PATH, token=test_offerings_api.READER_TOKEN,
                         expect=403, host_flavor='big')
        self.assertEqual('PolicyNotAuthorized', error['error_name'])
        for token in (base.TOKEN, test_offerings_api.ADMIN_TOKEN):
            self.assertEqual(3, self.free(host_flavor='big', hours=1,
                                          token=token)['hosts'])


SLOTS = '/pcloud-availability/instances'
SHAPE = {'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10}


class InstanceAvailabilityTests(test_offerings_api.OfferingsAPITestCase):
    """GET /v1/pcloud-availability/instances: cn5 alone takes slots (16

    VCPU: eight of 2).
    """

    def free(self, expect=200, **params):
        found = self.get(SLOTS, expect=expect, **dict(SHAPE, **params))
        return found['availability']

    def test_free_slots_each_hour(self):
        self.create_lease(self.reservation(8), start=0, end=60)
        found = self.free(hours=3, start=self.minutes(0))
        self.assertEqual({'start': self.at(0), 'step_minutes': 60,
                          'free': [0, 8, 8]}, found)
        # Half of cn5 for the second hour's first half.
        self.create_lease(self.reservation(4), start=60, end=90)
        self.assertEqual([0, 4, 8], self.free(
            hours=3, start=self.minutes(0))['free'])
        # One host: with affinity as many, against it one.
        self.assertEqual([0, 4, 8], self.free(
            hours=3, start=self.minutes(0), affinity='true')['free'])
        self.assertEqual([0, 1, 1], self.free(
            hours=3, start=self.minutes(0), affinity='false')['free'])
        # A bigger shape: two of 8 VCPU on cn5 when it is free.
        self.assertEqual([0, 1, 2], self.free(
            hours=3, start=self.minutes(0), vcpus=8)['free'])
        # The osc client asks the same.
        session, url = self.api
        client = client_mod.Client(session, endpoint=url)
        self.assertEqual([0, 4, 8], client.show_instance_availability(
            dict(SHAPE, hours=3, start=self.minutes(0)))['free'])

    def test_bad_input_is_400_naming_the_field(self):
        for field, value in (('vcpus', '0'), ('memory_mb', 'lots'),
                             ('disk_gb', None), ('affinity', 'maybe'),
                             ('resource_properties', '["=="]'),
                             ('hours', '0'), ('start', 'tomorrow')):
            params = dict(SHAPE)
            if value is None:
                del params[field]
            else:
                params[field] = value
            error = self.get(SLOTS, expect=400, **params)
            self.assertIn('field %s' % field, error['error_message'],
                          (field, value))

    def test_any_member_may_ask_a_reader_may_not(self):
        error = self.get(SLOTS, token=test_offerings_api.READER_TOKEN,
                         expect=403, **SHAPE)
        self.assertEqual('PolicyNotAuthorized', error['error_name'])
        for token in (base.TOKEN, test_offerings_api.ADMIN_TOKEN):
            self.assertEqual([8], self.free(hours=1, token=token)['free'])
