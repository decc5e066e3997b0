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

"""The names and keys of seeds/000, and input validation."""

import datetime

import testtools

from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec

UUID = '6f1f0c2e-1111-4a6b-9c1d-0123456789ab'


class NamesAndKeysTests(testtools.TestCase):

    def test_exact_names_and_keys_of_seeds_000(self):
        self.assertEqual('Pcloud:host_flavor:big', codec.pool_name('big'))
        self.assertEqual('Pcloud:' + UUID, codec.pcloud_name(UUID))
        self.assertEqual('pcloud:host:web1', codec.host_key('web1'))
        self.assertEqual('pcloud:host_state:cn7.example.com',
                         codec.host_state_key('cn7.example.com'))
        self.assertEqual('pcloud:abc', codec.tenant_key('abc'))

    def test_pool_metadata(self):
        flavor = codec.HostFlavor('big', '2x32 cores, 512 GiB', 4)
        md = codec.pool_metadata(flavor)
        self.assertEqual({'pcloud:type': 'host_flavor_pool',
                          'pcloud:flavor_id': 'big',
                          'pcloud:description': '2x32 cores, 512 GiB',
                          'pcloud:units': '4'}, md)
        self.assertTrue(codec.is_pool(md))
        self.assertFalse(codec.is_pcloud(md))
        self.assertEqual(flavor, codec.host_flavor(md))

    def test_pcloud_metadata_authorizes_its_owner(self):
        md = codec.pcloud_metadata(UUID, 'my cloud', 'p1')
        self.assertEqual({'pcloud:type': 'pcloud', 'pcloud:id': UUID,
                          'pcloud:name': 'my cloud', 'pcloud:owner': 'p1',
                          'pcloud:p1': 'pcloud-tenant'}, md)
        view = codec.Pcloud(md)
        self.assertEqual((UUID, 'my cloud', 'p1', frozenset(['p1'])),
                         (view.id, view.name, view.owner, view.tenants))

    def test_view_reads_hosts_states_tenants_ratios(self):
        md = codec.pcloud_metadata(UUID, 'c', 'p1')
        md.update({'pcloud:host:a': 'cn1', 'pcloud:host:b': 'cn2',
                   'pcloud:host_state:cn1': 'enabled',
                   'pcloud:host_state:cn2': 'disabled',
                   'pcloud:p2': 'pcloud-tenant',
                   'pcloud:cpu_allocation_ratio': '2.5',
                   'pcloud:saved_ratios:cn1': codec.format_ratios(16.0, 1.5)})
        view = codec.Pcloud(md)
        self.assertEqual({'a': 'cn1', 'b': 'cn2'}, view.all_hosts)
        self.assertEqual({'a': 'cn1'}, view.hosts({'cn1', 'cn9'}))
        self.assertEqual('enabled', view.state('cn1'))
        self.assertEqual('disabled', view.state('cn-unknown'))
        self.assertEqual(frozenset(['p1', 'p2']), view.tenants)
        self.assertEqual(2.5, view.cpu_allocation_ratio)
        self.assertIsNone(view.ram_allocation_ratio)
        self.assertEqual({'cn1': (16.0, 1.5)}, view.saved_ratios)


class ValidationTests(testtools.TestCase):

    def _field(self, func, *args):
        e = self.assertRaises(exception.InvalidField, func, *args)
        self.assertEqual(400, e.code)
        return e.kwargs['field']

    def test_each_error_names_its_field(self):
        self.assertEqual('flavor_id', self._field(
            codec.validate_flavor_id, 'a b'))
        self.assertEqual('name', self._field(
            codec.validate_host_name, 'x:y'))
        self.assertEqual('name', self._field(
            codec.validate_host_name, ''))
        self.assertEqual('units', self._field(codec.validate_units, -1))
        self.assertEqual('units', self._field(codec.validate_units, 1.5))
        self.assertEqual('units', self._field(codec.validate_units, True))
        self.assertEqual('cpu_allocation_ratio', self._field(
            codec.validate_ratio, 'cpu_allocation_ratio', 0))
        self.assertEqual('ram_allocation_ratio', self._field(
            codec.validate_ratio, 'ram_allocation_ratio', 'lots'))
        self.assertEqual('ram_allocation_ratio', self._field(
            codec.validate_ratio, 'ram_allocation_ratio', float('nan')))
        self.assertEqual('description', self._field(
            codec.validate_text, 'description', 'x' * 256))
        self.assertEqual('host', self._field(
            codec.validate_hostname, 'cn1; drop'))
        self.assertEqual('pcloud_id', self._field(
            codec.validate_pcloud_id, 'not-a-uuid'))

    def test_tenant_ids_cannot_overwrite_pcloud_keys(self):
        for reserved in ('type', 'id', 'name', 'owner', 'units',
                         'cpu_allocation_ratio', 'host:x'):
            self.assertEqual('tenant_id', self._field(
                codec.validate_tenant_id, reserved))
        self.assertEqual('0123abcd', codec.validate_tenant_id('0123abcd'))

    def test_good_values_pass(self):
        self.assertEqual(3, codec.validate_units('3'))
        self.assertEqual(1.5, codec.validate_ratio('x', '1.5'))
        self.assertEqual('web-1.a_b', codec.validate_host_name('web-1.a_b'))
        self.assertEqual('trimmed', codec.validate_text('name', ' trimmed '))


class LeaseWindowTests(testtools.TestCase):

    def test_a_lease_holds_from_its_start_until_its_end(self):
        start = datetime.datetime(2031, 1, 1, 12)
        metadata = codec.lease_window_metadata(
            'p1', start, start + datetime.timedelta(hours=1))
        self.assertEqual(
            [False, True, True, False, False],
            [codec.lease_holds(metadata, pcloud, start + delta)
             for pcloud, delta in (
                 ('p1', datetime.timedelta(seconds=-1)),
                 ('p1', datetime.timedelta(0)),
                 ('p1', datetime.timedelta(minutes=59)),
                 ('p1', datetime.timedelta(hours=1)),
                 ('p2', datetime.timedelta(minutes=1)))])

    def test_a_garbled_window_holds_nothing(self):
        now = datetime.datetime(2031, 1, 1, 12)
        for start in (None, '', '2031-01-01', '2031-01-01 11:00',
                      '2031-01-01T11:00:00+00:00'):
            metadata = codec.lease_window_metadata(
                'p1', now, now + datetime.timedelta(hours=1))
            metadata[codec.LEASE_START] = start
            self.assertFalse(codec.lease_holds(metadata, 'p1', now), start)
