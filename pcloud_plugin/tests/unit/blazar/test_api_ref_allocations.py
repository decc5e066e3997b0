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
"""The api-ref's GET /v1/pcloud-allocations sample is what the code answers.

The ledger records behind the sample are fed to the handler's
reservations.allocations.host_allocations, and its answer, serialized
as the API does (oslo jsonutils), must be the sample exactly; every
field of the response is in the section's parameter table.
"""

import datetime
import json
import os
import re
from unittest import mock

from oslo_serialization import jsonutils
import yaml

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.reservations import allocations
from pcloud_plugin.tests import base

API_REF = os.path.abspath(os.path.join(
    os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir,
    'api-ref', 'source'))
SAMPLE = os.path.join(API_REF, 'samples', 'allocations-list-resp.json')
SECTION = os.path.join(API_REF, 'allocations.inc')
PARAMETERS = os.path.join(API_REF, 'parameters.yaml')


def _moment(text):
    return (None if text is None else
            datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S.%f'))


class AllocationsSampleTest(base.TestCase):

    def setUp(self):
        super().setUp()
        with open(SAMPLE) as f:
            self.sample = json.load(f)

    def _records(self):
        """The ledger's records from which the code answers the sample."""
        providers, leases, slots, consumers, claims, pclouds = (
            [], [], [], [], {}, {})
        for host in self.sample['allocations']:
            uuid = host['host_uuid']
            providers.append({'uuid': uuid, 'name': host['host'],
                              'root_provider_uuid': uuid})
            for held in host['allocations']:
                start, end = _moment(held['start']), _moment(held['end'])
                if held['type'] == allocations.HOST_LEASE:
                    leases.append({
                        'reservation_id': held['id'],
                        'lease_id': held['lease_id'],
                        'project_id': held['project_id'],
                        'pcloud_id': held['pcloud_id'],
                        'state': held['state'], 'start_time': start,
                        'end_time': end, 'hosts': [{'host_uuid': uuid}]})
                elif held['type'] == allocations.INSTANCE:
                    slots.append({
                        'reservation_id': held['id'],
                        'lease_id': held['lease_id'],
                        'project_id': held['project_id'],
                        'state': held['state'], 'start_time': start,
                        'end_time': end,
                        'slots': [{'host_uuid': uuid,
                                   'slots': held['slots']}]})
                else:
                    consumer = 'pcloud-host:' + uuid
                    consumers.append(consumer)
                    claims[consumer] = {
                        'start': start, 'end': end or window_mod.FOREVER}
                    pclouds[host['host']] = (held['id'], held['project_id'],
                                             held['name'])
        return providers, leases, slots, consumers, claims, pclouds

    def _window(self):
        """The window the sample was captured for: from the first start

        to the last end.
        """
        held = [h for host in self.sample['allocations']
                for h in host['allocations']]
        return (min(_moment(h['start']) for h in held),
                max(_moment(h['end']) for h in held if h['end']))

    def test_the_sample_is_what_the_code_answers(self):
        providers, leases, slots, consumers, claims, pclouds = (
            self._records())
        self.assertEqual(
            {allocations.HOST_LEASE, allocations.INSTANCE,
             allocations.PCLOUD},
            {held['type'] for host in self.sample['allocations']
             for held in host['allocations']})
        module = 'pcloud_plugin.reservations.allocations.'
        with mock.patch(module + 'db_providers.list_providers',
                        return_value=providers), \
                mock.patch(module + 'host_db.list_reservations',
                           return_value=leases), \
                mock.patch(module + 'res_db.list_reservations',
                           return_value=slots), \
                mock.patch(module + 'db_claims.list_consumers',
                           return_value=consumers + ['placement:x']), \
                mock.patch(module + 'db_claims.get_claims',
                           side_effect=lambda ctx, c: claims[c]), \
                mock.patch(module + '_pclouds_by_node',
                           return_value=pclouds):
            answer = {'allocations': allocations.host_allocations(
                mock.sentinel.context, [], *self._window())}
        self.assertEqual(self.sample, json.loads(jsonutils.dumps(answer)))

    def test_every_field_is_in_the_parameter_table(self):
        with open(SECTION) as f:
            section = f.read()
        with open(PARAMETERS) as f:
            parameters = yaml.safe_load(f)
        table = section.split('.. rest_parameters:: parameters.yaml')[-1]
        listed = dict(re.findall(r'^   - (\w+): (\w+)$', table, re.M))
        fields = {'allocations'}
        for host in self.sample['allocations']:
            fields.update(host)
            for held in host['allocations']:
                fields.update(held)
        self.assertEqual(sorted(fields), sorted(listed))
        for name in listed.values():
            self.assertIn(name, parameters)
            self.assertEqual('body', parameters[name]['in'])
        self.assertIn('samples/allocations-list-resp.json', section)
