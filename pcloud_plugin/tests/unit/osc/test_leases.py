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
"""openstack pcloud slot lease create and lease create: the lease bodies

they send (through the real client, its HTTP adapter mocked) and what
they refuse before sending anything.
"""

from unittest import mock

from keystoneauth1 import adapter
from osc_lib import exceptions

from pcloud_plugin.osc import client as client_mod
from pcloud_plugin.osc import leases
from pcloud_plugin.tests import base

PCLOUD_ID = '2f1b7c8e-5a44-4d1e-9a3b-0c6f9e1d2a77'
# What the API answers, fields the commands do not show included.
CREATED = {'id': 'l1', 'name': 'mine', 'status': 'PENDING',
           'start_date': '2031-01-01T08:00:00.000000',
           'end_date': '2031-01-01T10:00:00.000000',
           'project_id': 'p', 'reservations': [{'id': 'r1', 'amount': 1}]}
SHAPE = ['--vcpus', '2', '--memory-mb', '1024', '--disk-gb', '10',
         '--amount', '3']


def _response(body):
    return mock.Mock(status_code=201, content=b'x',
                     json=mock.Mock(return_value=body))


class _CommandTest(base.TestCase):

    command = None

    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(adapter.Adapter, 'request',
                                    return_value=_response({
                                        'lease': CREATED}))
        self.request = patcher.start()
        self.addCleanup(patcher.stop)
        app = mock.Mock()
        app.client_manager.pcloud = client_mod.Client(
            mock.Mock(), endpoint='http://cloud/reservation')
        self.cmd = self.command(app, None)

    def run_cmd(self, *argv):
        """The command's (columns, values) for argv."""
        parser = self.cmd.get_parser('openstack pcloud')
        return self.cmd.take_action(parser.parse_args(list(argv)))

    def sent(self):
        """The body of the one lease creation sent."""
        self.request.assert_called_once_with(
            '/leases', 'POST', raise_exc=False, json=mock.ANY)
        return self.request.call_args.kwargs['json']

    def refused(self, *argv):
        """The CommandError's message for argv; nothing was sent."""
        error = self.assertRaises(exceptions.CommandError, self.run_cmd,
                                  *argv)
        self.request.assert_not_called()
        return str(error)


class CreateSlotLeaseTest(_CommandTest):

    command = leases.CreateSlotLease

    def test_fixed_body(self):
        columns, values = self.run_cmd('mine', *SHAPE, '--end-date',
                                       '2031-01-01 10:00')
        self.assertEqual({
            'name': 'mine', 'start_date': 'now',
            'end_date': '2031-01-01 10:00', 'events': [],
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': 3,
                'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10,
                'affinity': None, 'resource_properties': ''}]},
            self.sent())
        # Shown as lease create shows a lease: reservations by id.
        self.assertEqual(('end_date', 'id', 'name', 'reservations',
                          'start_date', 'status'), columns)
        self.assertEqual((CREATED['end_date'], 'l1', 'mine', ['r1'],
                          CREATED['start_date'], 'PENDING'), values)

    def test_optional_terms_are_sent_when_given(self):
        self.run_cmd('mine', *SHAPE, '--affinity', 'false',
                     '--resource-properties',
                     '["=", "$CUSTOM_SLOW", "false"]',
                     '--availability-zone', 'az1',
                     '--start-date', '2031-01-01 08:00',
                     '--end-date', '2031-01-01 10:00')
        body = self.sent()
        self.assertEqual(('2031-01-01 08:00', '2031-01-01 10:00'),
                         (body['start_date'], body['end_date']))
        (reservation,) = body['reservations']
        self.assertEqual({
            'resource_type': 'virtual:instance', 'amount': 3, 'vcpus': 2,
            'memory_mb': 1024, 'disk_gb': 10, 'affinity': False,
            'resource_properties': '["=", "$CUSTOM_SLOW", "false"]',
            'availability_zone': 'az1'}, reservation)

    def test_flexible_body(self):
        self.run_cmd('mine', *SHAPE, '--duration', '6h',
                     '--start-date', '2031-01-01 08:00',
                     '--end-date', '2031-01-05 18:00')
        self.assertEqual({
            'name': 'mine', 'duration': 360,
            'earliest_start': '2031-01-01 08:00',
            'latest_end': '2031-01-05 18:00', 'events': [],
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': 3,
                'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10,
                'affinity': None, 'resource_properties': ''}]},
            self.sent())

    def test_flexible_without_dates_is_from_now_on(self):
        self.run_cmd('mine', *SHAPE, '--duration', '90')
        body = self.sent()
        self.assertEqual((90, 'now'),
                         (body['duration'], body['earliest_start']))
        self.assertNotIn('latest_end', body)
        self.assertNotIn('start_date', body)
        self.assertNotIn('end_date', body)

    def test_affinity(self):
        for given, sent in (('true', True), ('True', True),
                            ('FALSE', False), ('false', False),
                            ('none', None), ('None', None)):
            self.request.reset_mock()
            self.run_cmd('mine', *SHAPE, '--end-date', '2031-01-01 10:00',
                         '--affinity', given)
            self.assertIs(sent, self.sent()['reservations'][0]['affinity'],
                          given)
        self.request.reset_mock()
        self.assertIn("not 'maybe'", self.refused(
            'mine', *SHAPE, '--end-date', '2031-01-01 10:00',
            '--affinity', 'maybe'))

    def test_bad_duration_refused(self):
        for bad in ('90s', 'soon', '1.5h', 'm'):
            self.assertIn('A duration is minutes', self.refused(
                'mine', *SHAPE, '--duration', bad))

    def test_end_date_required_without_duration(self):
        self.assertIn('--end-date is required', self.refused(
            'mine', *SHAPE, '--start-date', '2031-01-01 08:00'))

    def test_resource_properties_not_json_refused(self):
        self.assertIn('JSON expression', self.refused(
            'mine', *SHAPE, '--end-date', '2031-01-01 10:00',
            '--resource-properties', '[=, $CUSTOM_SLOW, false]'))

    def test_shape_is_required(self):
        parser = self.cmd.get_parser('openstack pcloud')
        for option in ('--vcpus', '--memory-mb', '--disk-gb', '--amount'):
            argv = list(SHAPE)
            del argv[argv.index(option):argv.index(option) + 2]
            with mock.patch('sys.stderr'):
                self.assertRaises(SystemExit, parser.parse_args,
                                  ['mine', '--duration', '1h'] + argv)


class CreateHostLeaseTest(_CommandTest):
    """Its bodies, through the helpers it shares with slot lease create."""

    command = leases.CreateHostLease
    HOSTS = ['--pcloud', PCLOUD_ID, '--host-flavor', 'c16', '--amount', '2']

    def test_fixed_body(self):
        columns, values = self.run_cmd('mine', *self.HOSTS, '--end-date',
                                       '2031-01-01 10:00')
        self.assertEqual({
            'name': 'mine', 'start_date': 'now',
            'end_date': '2031-01-01 10:00', 'events': [],
            'reservations': [{
                'resource_type': 'pcloud:host', 'pcloud_id': PCLOUD_ID,
                'host_flavor': 'c16', 'amount': 2,
                'lease_type': 'SCHEDULE'}]}, self.sent())
        self.assertEqual(('end_date', 'id', 'name', 'reservations',
                          'start_date', 'status'), columns)
        self.assertEqual(['r1'], values[3])

    def test_flexible_body(self):
        self.run_cmd('mine', *self.HOSTS, '--duration', '2d',
                     '--start-date', '2031-01-01 08:00', '--timeout', '30')
        self.assertEqual({
            'name': 'mine', 'duration': 2880,
            'earliest_start': '2031-01-01 08:00', 'events': [],
            'reservations': [{
                'resource_type': 'pcloud:host', 'pcloud_id': PCLOUD_ID,
                'host_flavor': 'c16', 'amount': 2, 'lease_type': 'SCHEDULE',
                'timeout': 30}]}, self.sent())

    def test_end_date_required_without_duration(self):
        self.assertIn('--end-date is required', self.refused(
            'mine', *self.HOSTS))
