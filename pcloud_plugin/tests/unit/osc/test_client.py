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
"""The OSC plugin's client and hooks, without a server.

(tests/functional/blazar/test_pcloud_osc.py runs the commands for real.)
"""

import argparse
from unittest import mock

from keystoneauth1 import adapter
from osc_lib import exceptions

from pcloud_plugin.osc import client as client_mod
from pcloud_plugin.osc import plugin
from pcloud_plugin.tests import base


def _response(status, body=None, text=''):
    resp = mock.Mock(status_code=status, text=text,
                     content=b'x' if body is not None else b'')
    resp.json.side_effect = ((lambda: body) if body is not None
                             else ValueError('no JSON'))
    return resp


class ClientTest(base.TestCase):

    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(adapter.Adapter, 'request')
        self.request = patcher.start()
        self.addCleanup(patcher.stop)
        self.client = client_mod.Client(mock.Mock(),
                                        endpoint='http://cloud:1234/')

    def test_endpoint_gets_v1(self):
        self.assertEqual('http://cloud:1234/v1', self.client.endpoint)
        self.assertEqual('http://cloud/reservation/v1', client_mod.Client(
            mock.Mock(), endpoint='http://cloud/reservation/v1/').endpoint)

    def test_endpoint_from_catalog(self):
        session = mock.Mock()
        session.get_endpoint.return_value = 'http://cloud/reservation'
        made = client_mod.Client(session, region_name='R',
                                 interface='internal')
        self.assertEqual('http://cloud/reservation/v1', made.endpoint)
        session.get_endpoint.assert_called_once_with(
            service_type='reservation', region_name='R',
            interface='internal')
        session.get_endpoint.return_value = None
        self.assertRaises(exceptions.EndpointNotFound, client_mod.Client,
                          session)

    def test_paths_are_quoted(self):
        self.request.return_value = _response(200, {'host': {}})
        self.client.show_host('p', 'a/b c')
        self.request.assert_called_once_with(
            '/pclouds/p/hosts/a%2Fb%20c', 'GET', raise_exc=False)

    def test_host_lease_is_a_blazar_lease_of_pcloud_host(self):
        self.request.return_value = _response(201, {'lease': {'id': 'l'}})
        self.assertEqual({'id': 'l'}, self.client.create_host_lease(
            'mine', 'now', '2031-01-01 10:00',
            {'pcloud_id': 'p', 'host_flavor': 'big', 'amount': 2}))
        self.request.assert_called_once_with(
            '/leases', 'POST', raise_exc=False,
            json={'name': 'mine', 'start_date': 'now',
                  'end_date': '2031-01-01 10:00', 'events': [],
                  'reservations': [{
                      'resource_type': 'pcloud:host', 'pcloud_id': 'p',
                      'host_flavor': 'big', 'amount': 2}]})

    def test_a_host_lease_with_a_duration_is_a_flexible_lease(self):
        self.request.return_value = _response(201, {'lease': {'id': 'l'}})
        self.client.create_host_lease(
            'mine', 'now', None, {'pcloud_id': 'p', 'host_flavor': 'big',
                                  'amount': 2}, duration=90)
        self.request.assert_called_once_with(
            '/leases', 'POST', raise_exc=False,
            json={'name': 'mine', 'duration': 90, 'earliest_start': 'now',
                  'events': [], 'reservations': [{
                      'resource_type': 'pcloud:host', 'pcloud_id': 'p',
                      'host_flavor': 'big', 'amount': 2}]})
        self.request.reset_mock()
        self.client.create_host_lease(
            'mine', '2031-01-01 08:00', '2031-01-05 18:00',
            {'pcloud_id': 'p', 'host_flavor': 'big', 'amount': 2},
            duration=360)
        body = self.request.call_args.kwargs['json']
        self.assertEqual(('2031-01-01 08:00', '2031-01-05 18:00', 360),
                         (body['earliest_start'], body['latest_end'],
                          body['duration']))
        self.assertNotIn('start_date', body)

    def test_unset_ratios_are_sent_as_null(self):
        self.request.return_value = _response(200, {'allocation_ratios': {}})
        self.client.set_allocation_ratios('p', ram=2.0, unset=('cpu', 'ram'))
        self.request.assert_called_once_with(
            '/pclouds/p/allocation-ratios', 'PUT', raise_exc=False,
            json={'cpu_allocation_ratio': None, 'ram_allocation_ratio': 2.0})

    def test_lease_update_and_find(self):
        self.request.return_value = _response(200, {'lease': {'id': 'l'}})
        body = {'reservations': [{'id': 'r', 'timeout': 30}]}
        self.assertEqual({'id': 'l'}, self.client.update_lease('l', body))
        self.request.assert_called_once_with('/leases/l', 'PUT',
                                             raise_exc=False, json=body)
        uuid = '2f1b7c8e-5a44-4d1e-9a3b-0c6f9e1d2a77'
        self.assertEqual(uuid, self.client.find_lease(uuid))
        self.request.return_value = _response(200, {'leases': [
            {'id': 'id-1', 'name': 'a'}, {'id': 'id-2', 'name': 'b'},
            {'id': 'id-3', 'name': 'b'}]})
        self.assertEqual('id-1', self.client.find_lease('a'))
        self.assertRaises(exceptions.CommandError, self.client.find_lease,
                          'b')
        self.assertRaises(exceptions.CommandError, self.client.find_lease,
                          'c')

    def test_bodies_and_queries(self):
        self.request.return_value = _response(201, {'host': {'name': 'h'}})
        self.assertEqual({'name': 'h'}, self.client.allocate_host(
            'p', 'h', 'big', availability_zone='az1'))
        self.request.assert_called_with(
            '/pclouds/p/hosts', 'POST', raise_exc=False,
            json={'name': 'h', 'flavor_id': 'big',
                  'availability_zone': 'az1'})
        self.request.return_value = _response(200, {'pclouds': []})
        self.client.list_pclouds('proj')
        self.request.assert_called_with('/pclouds', 'GET', raise_exc=False,
                                        params={'project_id': 'proj'})
        self.request.return_value = _response(204)
        self.assertIsNone(self.client.delete_pcloud('p'))

    def test_maintenance_bodies(self):
        self.request.return_value = _response(201, {'maintenance': {
            'id': 'm'}})
        self.assertEqual({'id': 'm'}, self.client.create_maintenance(
            ['cn1', 'cn2'], 'now', '2031-01-01 12:00'))
        self.request.assert_called_with(
            '/pcloud-maintenances', 'POST', raise_exc=False,
            json={'hosts': ['cn1', 'cn2'], 'start_date': 'now',
                  'end_date': '2031-01-01 12:00'})
        self.client.create_maintenance(['cn1'], 'now', '2031-01-01 12:00',
                                       reason='disks', accept_unmovable=True)
        self.request.assert_called_with(
            '/pcloud-maintenances', 'POST', raise_exc=False,
            json={'hosts': ['cn1'], 'start_date': 'now',
                  'end_date': '2031-01-01 12:00', 'reason': 'disks',
                  'accept_unmovable': True})
        self.request.return_value = _response(204)
        self.assertIsNone(self.client.delete_maintenance('m'))
        self.request.assert_called_with('/pcloud-maintenances/m', 'DELETE',
                                        raise_exc=False)

    def test_errors(self):
        self.request.return_value = _response(
            409, {'error_code': 409, 'error_message': 'busy'})
        error = self.assertRaises(client_mod.PcloudError,
                                  self.client.release_host, 'p', 'h')
        self.assertEqual(409, error.code)
        self.assertEqual('busy (HTTP 409)', str(error))
        self.request.return_value = _response(502, text='Bad gateway')
        error = self.assertRaises(client_mod.PcloudError,
                                  self.client.list_host_flavors)
        self.assertEqual('Bad gateway (HTTP 502)', str(error))

    def test_find_pcloud(self):
        uuid = '2f1b7c8e-5a44-4d1e-9a3b-0c6f9e1d2a77'
        self.assertEqual(uuid, self.client.find_pcloud(uuid))
        self.request.return_value = _response(200, {'pclouds': [
            {'id': 'id-1', 'name': 'a'}, {'id': 'id-2', 'name': 'b'},
            {'id': 'id-3', 'name': 'b'}]})
        self.assertEqual('id-1', self.client.find_pcloud('a'))
        self.assertRaises(exceptions.CommandError, self.client.find_pcloud,
                          'b')
        self.assertRaises(exceptions.CommandError, self.client.find_pcloud,
                          'c')


class PluginTest(base.TestCase):

    def test_option(self):
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        self.assertEqual('1', parser.parse_args([]).os_pcloud_api_version)

    def test_make_client(self):
        instance = mock.Mock(region_name='R', interface='public',
                             _api_version={'pcloud': '1'})
        instance.get_endpoint_for_service_type.return_value = 'http://c/v1'
        made = plugin.make_client(instance)
        self.assertIsInstance(made, client_mod.Client)
        self.assertEqual('http://c/v1', made.endpoint)
        instance.get_endpoint_for_service_type.assert_called_once_with(
            'reservation', region_name='R', interface='public')
