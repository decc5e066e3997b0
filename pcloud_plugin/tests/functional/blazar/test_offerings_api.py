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
"""Offerings and allocations through the Pcloud API, over the manager,

both plugins, Placement and the ledger of test_host_plugin (see there
for the hosts): cn1, cn2 and cn4 may be leased whole, cn5 alone takes
instance slots.
"""

import datetime

from keystoneauth1 import fixture as ks_fixture
from keystonemiddleware import fixture as ksm_fixture
from oslo_utils import timeutils

from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin as hosts

ADMIN_TOKEN = 'pcloud-test-admin-token'
READER_TOKEN = 'pcloud-test-reader-token'
ADMIN_PROJECT = 'ad000000000000000000000000000001'


class OfferingsAPITestCase(hosts.HostLeaseTestCase, base.BlazarAPITestCase):

    def setUp(self):
        super().setUp()
        # The member of the base, a cloud admin and a reader only.
        auth = self.useFixture(ksm_fixture.AuthTokenFixture())
        for token_id, project, roles in (
                (base.TOKEN, base.PROJECT, ('member', 'reader')),
                (ADMIN_TOKEN, ADMIN_PROJECT, ('admin', 'member', 'reader')),
                (READER_TOKEN, base.PROJECT, ('reader',))):
            token = ks_fixture.V3Token(user_id=base.USER, project_id=project)
            for role in roles:
                token.add_role(name=role)
            token.add_service('identity').add_standard_endpoints(
                public=base.KEYSTONE, internal=base.KEYSTONE,
                admin=base.KEYSTONE, region='RegionOne')
            auth.add_token(token, token_id=token_id)

    def get(self, path, token=base.TOKEN, expect=200, **params):
        session, url = self.api
        # Not the session's own token: the one given.
        resp = session.request(url + path, 'GET', params=params,
                               headers={'X-Auth-Token': token},
                               authenticated=False, raise_exc=False)
        self.assertEqual(expect, resp.status_code, resp.text)
        return resp.json()

    def at(self, minutes):
        """The moment n minutes from now (to the minute), as answered."""
        moment = timeutils.utcnow().replace(second=0, microsecond=0) + \
            datetime.timedelta(minutes=minutes)
        return moment.strftime('%Y-%m-%dT%H:%M:%S.000000')

    @staticmethod
    def windows(answer):
        return [(w['start'], w['end'], w['amount'])
                for w in answer['offerings']]


class OfferingsTests(OfferingsAPITestCase):

    def test_whole_hosts(self):
        self.create_lease(self.hosts_res(2), start=60, end=120)
        found = self.get('/pcloud-offerings/hosts', host_flavor='big',
                         amount=3, duration=60, count=3,
                         start=self.minutes(0))
        # Three free now for an hour, then only from the lease's end.
        self.assertEqual([(self.at(0), self.at(60), 3),
                          (self.at(120), self.at(180), 3)],
                         self.windows(found))
        found = self.get('/pcloud-offerings/hosts', host_flavor='big',
                         amount=3, duration=90, count=1,
                         start=self.minutes(0))
        self.assertEqual([(self.at(120), self.at(210), 3)],
                         self.windows(found))
        # The answer is what admission takes.
        self.create_lease(self.hosts_res(3), start=120, end=210)
        # cn1, the one host with the trait, is held from 60 to 210.
        found = self.get('/pcloud-offerings/hosts', host_flavor='big',
                         amount=1, duration=60,
                         required_traits=hosts.AVX2, start=self.minutes(0))
        self.assertEqual([(self.at(0), self.at(60), 1),
                          (self.at(210), self.at(270), 1)],
                         self.windows(found))
        # More than the pool could ever give: no window.
        self.assertEqual([], self.get(
            '/pcloud-offerings/hosts', host_flavor='big', amount=4,
            duration=60)['offerings'])

    def test_instance_slots(self):
        # cn5 alone takes slots: 16 VCPU, taken whole for the first hour.
        self.create_lease(self.reservation(8), start=0, end=60)
        found = self.get('/pcloud-offerings/instances', vcpus=2,
                         memory_mb=1024, disk_gb=10, amount=2, duration=30,
                         count=2, start=self.minutes(0))
        self.assertEqual([(self.at(60), self.at(90), 2)],
                         self.windows(found))
        self.create_lease(self.reservation(8), start=60, end=90)
        self.assertEqual([], self.get(
            '/pcloud-offerings/instances', vcpus=2, memory_mb=1024,
            disk_gb=10, amount=1, duration=30, count=1,
            start=self.minutes(60))['offerings'][:0])
        found = self.get('/pcloud-offerings/instances', vcpus=2,
                         memory_mb=1024, disk_gb=10, amount=1, duration=30,
                         count=1, affinity='true', start=self.minutes(0))
        self.assertEqual([(self.at(90), self.at(120), 1)],
                         self.windows(found))

    def test_bad_input_is_400_naming_the_field(self):
        good = {'host_flavor': 'big', 'amount': '1', 'duration': '60'}
        for field, value in (('amount', '0'), ('amount', 'two'),
                             ('duration', '0'), ('duration', '-5'),
                             ('count', '21'), ('count', '0'),
                             ('start', 'tomorrow'),
                             ('required_traits', '!!'),
                             ('host_flavor', None), ('color', 'red')):
            params = dict(good)
            if value is None:
                del params[field]
            else:
                params[field] = value
            error = self.get('/pcloud-offerings/hosts', expect=400,
                             **params)
            self.assertIn('field %s' % field, error['error_message'])
        slot = {'vcpus': '1', 'memory_mb': '512', 'disk_gb': '0',
                'amount': '1', 'duration': '60'}
        for field, value in (('vcpus', '0'), ('affinity', 'maybe'),
                             ('resource_properties', '["=", "x"]'),
                             ('memory_mb', None)):
            params = dict(slot)
            if value is None:
                del params[field]
            else:
                params[field] = value
            error = self.get('/pcloud-offerings/instances', expect=400,
                             **params)
            self.assertIn('field %s' % field, error['error_message'])

    def test_unknown_host_flavor_is_404(self):
        error = self.get('/pcloud-offerings/hosts', expect=404,
                         host_flavor='tiny', amount=1, duration=60)
        self.assertEqual('HostFlavorNotFound', error['error_name'])

    def test_any_member_may_ask_a_reader_may_not(self):
        for path, params in (
                ('/pcloud-offerings/hosts',
                 {'host_flavor': 'big', 'amount': 1, 'duration': 60}),
                ('/pcloud-offerings/instances',
                 {'vcpus': 1, 'memory_mb': 512, 'disk_gb': 0, 'amount': 1,
                  'duration': 60})):
            self.get(path, token=READER_TOKEN, expect=403, **params)
            for token in (base.TOKEN, ADMIN_TOKEN):
                self.get(path, token=token, **params)


class MomentTests(OfferingsAPITestCase):

    def test_moments_out_of_range_are_400_naming_the_field(self):
        """An offset that takes a moment before year 1 overflowed (500)."""
        for moment in ('0001-01-01T00:00:00+01:00',
                       '9999-12-31T23:59:59-01:00'):
            for path, params in (
                    ('/pcloud-offerings/hosts', dict(
                        host_flavor='big', amount=1, duration=60,
                        start=moment)),
                    ('/pcloud-offerings/instances', dict(
                        vcpus=1, memory_mb=512, disk_gb=1, amount=1,
                        duration=60, start=moment))):
                error = self.get(path, expect=400, **params)
                self.assertIn('start', error['error_message'])
            for field in ('start', 'end'):
                error = self.get('/pcloud-allocations', token=ADMIN_TOKEN,
                                 expect=400, **{field: moment})
                self.assertIn(field, error['error_message'])


class AllocationsTests(OfferingsAPITestCase):

    def test_who_holds_each_host_in_a_window(self):
        hosts_lease = self.create_lease(self.hosts_res(1), start=60,
                                        end=120)
        (host_res,) = hosts_lease['reservations']
        slots_lease = self.create_lease(self.reservation(2), start=0,
                                        end=60)
        (slot_res,) = slots_lease['reservations']
        session, url = self.api
        made = session.request(url + '/pclouds/%s/hosts' % hosts.PCLOUD,
                               'POST', json={'name': 'mine-1',
                                             'flavor_id': 'big'},
                               raise_exc=False)
        self.assertEqual(201, made.status_code, made.text)
        (permanent,) = self.pcloud.hosts
        leased = self.leased(hosts_lease)

        def held(**params):
            return {h['host']: sorted((a['type'], a['id'])
                                      for a in h['allocations'])
                    for h in self.get('/pcloud-allocations',
                                      token=ADMIN_TOKEN,
                                      **params)['allocations']}

        every = held(start=self.minutes(0), end=self.minutes(180))
        self.assertEqual({
            leased[0]: [('pcloud:host', host_res['id'])],
            'cn5': [('virtual:instance', slot_res['id'])],
            permanent: [('pcloud', hosts.PCLOUD)]}, every)
        # From 70 to 80 minutes: the slots have ended by then.
        self.assertEqual({
            leased[0]: [('pcloud:host', host_res['id'])],
            permanent: [('pcloud', hosts.PCLOUD)]},
            held(start=self.minutes(70), end=self.minutes(80)))
        # From 10 to 20 minutes: the whole-host lease has not started.
        self.assertEqual({
            'cn5': [('virtual:instance', slot_res['id'])],
            permanent: [('pcloud', hosts.PCLOUD)]},
            held(start=self.minutes(10), end=self.minutes(20)))
        # At one moment (no end), and one host only.
        self.assertEqual({'cn5': [('virtual:instance', slot_res['id'])]},
                         held(start=self.minutes(10), host='cn5'))
        (one,) = self.get('/pcloud-allocations', token=ADMIN_TOKEN,
                          host=leased[0], start=self.minutes(61),
                          end=self.minutes(62))['allocations']
        (lease_view,) = one['allocations']
        self.assertEqual((hosts_lease['id'], base.PROJECT, hosts.PCLOUD),
                         (lease_view['lease_id'], lease_view['project_id'],
                          lease_view['pcloud_id']))

    def test_admins_only(self):
        self.get('/pcloud-allocations', token=base.TOKEN, expect=403)
        self.get('/pcloud-allocations', token=READER_TOKEN, expect=403)
        self.assertEqual({'allocations': []}, self.get(
            '/pcloud-allocations', token=ADMIN_TOKEN))

    def test_bad_window_is_400(self):
        for params, field in (({'start': 'soon'}, 'start'),
                              ({'start': self.minutes(60),
                                'end': self.minutes(0)}, 'end'),
                              ({'host': 'a b'}, 'host')):
            error = self.get('/pcloud-allocations', token=ADMIN_TOKEN,
                             expect=400, **params)
            self.assertIn('field %s' % field, error['error_message'])
