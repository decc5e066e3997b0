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
"""seeds/001's host terms of a pcloud:host lease (CPU cores, RAM, disk,

Blazar's hypervisor and resource properties, Nova's capabilities extra
specs scoped or not, its aggregate extra specs) through Blazar's real v1
API and manager, with Placement's facts and Nova's aggregates: honoured
on admission, on updates and when the lease grows, shown to the lessee,
and refused naming the term when bad or when no host has them, never
ignored.

Hosts as test_host_plugin's, but: cn4 has 64 VCPUs; cn1 and cn4 are
x86_64 and cn2 aarch64 (Placement's HW_ARCH_* traits, as Nova writes
them); cn3 is another pcloud's for good.
"""

import datetime

from blazar.db import api as blazar_db
from oslo_utils import timeutils

from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.tests.functional.blazar import test_host_plugin as hosts
from pcloud_plugin.tests.functional.blazar import test_lease_guard

X86 = 'HW_ARCH_X86_64'
ARM = 'HW_ARCH_AARCH64'


class HostTermsTestCase(test_lease_guard.LeaseGuardTestCase):

    def _build_hosts(self):
        found = super()._build_hosts()
        p = self.placement
        p.set_inventories(found['cn4'], {
            'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 32768},
            'DISK_GB': {'total': 500}})
        p.set_traits(found['cn1'], [hosts.AVX2, X86])
        p.set_traits(found['cn4'], [X86])
        p.set_traits(found['cn2'], [ARM])
        return found

    def post(self, reservation, start=60, end=120):
        return self.call('POST', '/leases', {
            'name': 'terms-%d' % start, 'start_date': self.minutes(start),
            'end_date': self.minutes(end), 'reservations': [reservation],
            'events': []})

    def put(self, lease, **values):
        rid = hosts._reservation_of(lease)['id']
        return self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [dict(values, id=rid)]})

    def message(self, response):
        return response.json()['error_message']

    def assert_nothing_held(self):
        self.assertEqual([], blazar_db.lease_get_all())
        self.assertEqual([], db_claims.list_consumers(self.context))


class AdmissionTests(HostTermsTestCase):

    def test_a_minimum_no_host_has_is_refused_naming_it(self):
        response = self.post(self.hosts_res(1, vcpus=128))
        self.assert_refused(response, 409, 'vcpus at least 128')
        self.assertIn('No host of host flavor big meets its host terms '
                      '(vcpus at least 128), whatever the window: 3 '
                      'host(s) would be eligible without them.',
                      self.message(response))
        # Two asked, one has them: the count says the terms are why.
        response = self.post(self.hosts_res(2, vcpus=64))
        self.assert_refused(response, 409, 'vcpus at least 64')
        self.assertIn('leave 1 of the 3 host(s)', self.message(response))
        self.assert_nothing_held()

    def test_only_hosts_meeting_the_terms_are_leased(self):
        for n, (terms, amount, leased) in enumerate((
                ({'vcpus': 32}, 1, ['cn4']),
                ({'memory_mb': 32768, 'disk_gb': 500, 'vcpus': '16'}, 3,
                 ['cn1', 'cn2', 'cn4']),
                ({'hypervisor_properties':
                  '["=", "$hypervisor_hostname", "cn2"]'}, 1, ['cn2']),
                ({'resource_properties': '["and", [">=", "$vcpus", 16], '
                  '["!=", "$cpu_arch", "aarch64"]]'}, 2, ['cn1', 'cn4']),
                ({'capabilities:cpu_arch': 'x86_64'}, 2, ['cn1', 'cn4']),
                ({'cpu_arch': 's!= x86_64'}, 1, ['cn2']),
                ({'hypervisor_hostname': '<or> cn4 <or> cn9',
                  'capabilities:vcpus': '= 64'}, 1, ['cn4']),
                ({'hypervisor_properties': '[">=", "$vcpus", 64]',
                  'cpu_arch': 'x86_64',
                  'resource_properties': '["=", "$HW_CPU_X86_AVX2", '
                  '"true"]'}, 1, None))):
            # Each in a window of its own: only the terms choose.
            start = 60 + 120 * n
            response = self.post(self.hosts_res(amount, **terms),
                                 start=start, end=start + 60)
            if leased is None:
                # Both properties hold: no host has all of them.
                self.assert_refused(response, 409, 'hypervisor_properties')
                self.assertIn('resource_properties', self.message(response))
                continue
            self.assertEqual(201, response.status_code, response.text)
            self.assertEqual(leased, self.leased(response.json()['lease']),
                             terms)

    def test_an_update_takes_new_terms_and_picks_again(self):
        lease = self.post_lease(self.hosts_res(1))
        self.assertEqual(['cn1'], self.leased(lease))
        response = self.put(lease, vcpus=32)
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(['cn4'], self.leased(lease))
        # The stored terms stay through a change of others.
        response = self.put(lease, **{'capabilities:cpu_arch': 'x86_64',
                                      'amount': 1})
        self.assertEqual(200, response.status_code, response.text)
        row = self.row(lease)
        self.assertEqual((32, {'cpu_arch': 'x86_64'}, ['cn4']),
                         (row['vcpus'], row['capabilities'],
                          self.leased(lease)))
        # Terms no host meets: refused, the lease as it was.
        response = self.put(lease, cpu_arch='aarch64')
        self.assert_refused(response, 409, 'cpu_arch')
        self.assertEqual((32, {'cpu_arch': 'x86_64'}, ['cn4']),
                         (self.row(lease)['vcpus'],
                          self.row(lease)['capabilities'],
                          self.leased(lease)))


class GrowTests(HostTermsTestCase):

    def test_a_grow_keeps_to_the_terms(self):
        lease = self.post_lease(self.hosts_res(
            1, **{'capabilities:cpu_arch': 'x86_64'}), start=0)
        self.start(lease['id'])
        timeutils.advance_time_delta(datetime.timedelta(minutes=10))
        self.assertEqual(['cn1'], self.leased(lease))
        response = self.put(lease, amount=2)
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))
        # cn2 is free but aarch64: no third host is ever x86_64.
        response = self.put(lease, amount=3)
        self.assert_refused(response, 409, 'capabilities:cpu_arch "x86_64"')
        self.assertIn('only 0 other host(s) could ever serve it',
                      self.message(response))
        self.assertEqual((2, ['cn1', 'cn4']), (self.row(lease)['amount'],
                                               self.leased(lease)))


class ShownTests(HostTermsTestCase):

    def test_the_lessee_sees_the_terms(self):
        expr = '["=", "$hypervisor_hostname", "cn4"]'
        lease = self.post_lease(self.hosts_res(
            1, vcpus=32, hypervisor_properties=expr,
            **{'capabilities:cpu_arch': 's== x86_64',
               'local_gb': '>= 100'}))
        response = self.call('GET', '/pcloud-leases/%s' % lease['id'])
        self.assertEqual(200, response.status_code, response.text)
        (shown,) = response.json()['lease']['reservations']
        self.assertEqual(
            {'vcpus': 32, 'memory_mb': 0, 'disk_gb': 0,
             'hypervisor_properties': expr, 'resource_properties': '',
             'capabilities': {'cpu_arch': 's== x86_64',
                              'local_gb': '>= 100'}},
            {k: shown[k] for k in ('vcpus', 'memory_mb', 'disk_gb',
                                   'hypervisor_properties',
                                   'resource_properties', 'capabilities')})
        # Blazar's own lease answer shows them too.
        (blazars,) = self.call('GET', '/leases/%s' % lease['id']).json()[
            'lease']['reservations']
        self.assertEqual((32, expr), (blazars['vcpus'],
                                      blazars['hypervisor_properties']))


class RefusalTests(HostTermsTestCase):

    def test_bad_terms_are_400_naming_them(self):
        for terms, named, why in (
                ({'capabilities:cpu_arch': '<in> x86'},
                 'capabilities:cpu_arch', '<in> is no operator'),
                ({'cpu_arch': '<all-in> x86_64'}, 'cpu_arch',
                 'is no operator'),
                ({'capabilities:vcpus': '> 8'}, 'capabilities:vcpus',
                 '> is no operator'),
                ({'capabilities:cpu_info': 'x86_64'},
                 'capabilities:cpu_info', 'no host fact cpu_info'),
                ({'vcpus': -1}, 'vcpus', ''),
                ({'disk_gb': 'lots'}, 'disk_gb', ''),
                ({'hypervisor_properties': '["=", "$ram", "1"]'},
                 'hypervisor_properties', 'no host fact $ram'),
                ({'resource_properties': '[">", "$vcpus"]'},
                 'resource_properties', 'a comparison is')):
            response = self.post(self.hosts_res(1, **terms))
            self.assert_refused(response, 400, 'Malformed parameter %s ('
                                % named)
            self.assertIn(why, self.message(response))
        # What is supported, said.
        response = self.post(self.hosts_res(1, cpu_arch='<in> x86'))
        self.assertIn('= == != >= <= s== s!= <or>', self.message(response))
        self.assert_nothing_held()
        # An update too, the lease as it was.
        lease = self.post_lease(self.hosts_res(1, vcpus=16))
        response = self.put(lease, **{'capabilities:cpu_arch': '<in> x'})
        self.assert_refused(response, 400, 'capabilities:cpu_arch')
        self.assertEqual((16, {}), (self.row(lease)['vcpus'],
                                    self.row(lease)['capabilities']))

    def test_hints_describe_the_terms(self):
        response = self.call('GET', '/pcloud-hints')
        self.assertEqual(200, response.status_code, response.text)
        terms = response.json()['hints']['pcloud:host']['terms']
        for term in ('vcpus', 'memory_mb', 'disk_gb',
                     'hypervisor_properties', 'resource_properties',
                     'capabilities:*', 'cpu_arch', 'hypervisor_hostname',
                     'local_gb', 'aggregate_instance_extra_specs:*'):
            self.assertFalse(terms[term]['required'], term)
            self.assertTrue(terms[term]['takes'], term)


METADATA = 'aggregate_instance_extra_specs:'


class AggregateMetadataTests(HostTermsTestCase):
    """Nova aggregates with metadata: cn1 in two (disk ssd, rack r1; disk

    hdd), cn4 in one (disk "nvme, ssd": two values, as Nova reads them),
    cn2 in none.
    """

    def _build_pools(self):
        super()._build_pools()
        for name, metadata, host in (
                ('rack-1', {'disk': 'ssd', 'rack': 'r1'}, 'cn1'),
                ('spinning', {'disk': 'hdd'}, 'cn1'),
                ('flash', {'disk': 'nvme, ssd'}, 'cn4')):
            agg = self.nova.aggregates.create(name, None)
            self.nova.aggregates.set_metadata(agg.id, metadata)
            self.nova.aggregates.add_host(agg.id, host)
        self.nova.calls.clear()

    def test_metadata_no_host_has_is_refused_naming_it(self):
        response = self.post(self.hosts_res(1, **{METADATA + 'rack': 'r9'}))
        self.assert_refused(response, 409,
                            'aggregate_instance_extra_specs:rack "r9"')
        self.assertIn('No host of host flavor big meets its host terms',
                      self.message(response))
        # A host without the key meets no spec of it.
        response = self.post(self.hosts_res(
            1, **{METADATA + 'rack': 's!= r1'}))
        self.assert_refused(response, 409, METADATA + 'rack')
        self.assert_nothing_held()

    def test_only_hosts_whose_aggregates_meet_it_are_leased(self):
        for n, (specs, amount, leased) in enumerate((
                ({'rack': 'r1'}, 1, ['cn1']),
                ({'disk': 'nvme'}, 1, ['cn4']),
                ({'disk': 'hdd'}, 1, ['cn1']),
                ({'disk': '<or> ssd <or> sas'}, 2, ['cn1', 'cn4']),
                ({'disk': 's!= hdd', 'rack': None}, 2, ['cn1', 'cn4']))):
            start = 60 + 120 * n
            response = self.post(self.hosts_res(amount, **{
                METADATA + key: spec for key, spec in specs.items()}),
                start=start, end=start + 60)
            self.assertEqual(201, response.status_code, response.text)
            self.assertEqual(leased, self.leased(response.json()['lease']),
                             specs)

    def test_an_update_changes_or_drops_it(self):
        lease = self.post_lease(self.hosts_res(
            1, **{METADATA + 'disk': 'nvme'}))
        self.assertEqual(['cn4'], self.leased(lease))
        response = self.put(lease, **{METADATA + 'disk': 'hdd'})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(({'disk': 'hdd'}, ['cn1']), (
            self.row(lease)['aggregate_metadata'], self.leased(lease)))
        # Metadata no host has: refused naming it, the lease as it was.
        response = self.put(lease, **{METADATA + 'disk': 's== sas'})
        self.assert_refused(response, 409, METADATA + 'disk "s== sas"')
        response = self.put(lease, **{METADATA + 'disk': '<in> ss'})
        self.assert_refused(response, 400, 'Malformed parameter %sdisk ('
                            % METADATA)
        self.assertEqual(({'disk': 'hdd'}, ['cn1']), (
            self.row(lease)['aggregate_metadata'], self.leased(lease)))
        response = self.put(lease, **{METADATA + 'disk': None, 'vcpus': 32})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(({}, ['cn4']), (
            self.row(lease)['aggregate_metadata'], self.leased(lease)))

    def test_only_a_host_reservation_takes_it_scoped(self):
        for reservation, field in (
                (self.hosts_res(1, disk='ssd'), 'reservations.0.disk'),
                (self.hosts_res(1, **{METADATA: 'ssd'}),
                 'reservations.0.' + METADATA),
                (dict(self.reservation(1), **{METADATA + 'disk': 'ssd'}),
                 'reservations.0.' + METADATA + 'disk')):
            response = self.post(reservation)
            self.assert_refused(response, 400, field)
            self.assertIn('its terms are', self.message(response))
        response = self.post(self.hosts_res(1, **{
            METADATA + 'pcloud:hypervisor:cn1': 'cn1'}))
        self.assert_refused(response, 400, 'Malformed parameter %s'
                            'pcloud:hypervisor:cn1 (' % METADATA)
        self.assert_nothing_held()

    def test_the_lessee_sees_it(self):
        lease = self.post_lease(self.hosts_res(
            1, **{METADATA + 'rack': 's== r1'}))
        response = self.call('GET', '/pcloud-leases/%s' % lease['id'])
        self.assertEqual(200, response.status_code, response.text)
        (shown,) = response.json()['lease']['reservations']
        self.assertEqual({'rack': 's== r1'}, shown['aggregate_metadata'])
        self.assertNotIn('cn1', response.text)
