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
"""clients.placement: writes that meet other writers read again."""

from unittest import mock

import requests

from pcloud_plugin.clients import placement
from pcloud_plugin import exception
from pcloud_plugin.tests import base


class _Adapter:
    """Placement with one provider, whose PUTs get ``answers`` in turn."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.puts = 0

    def request(self, url, method, json=None, **_kwargs):
        if method == 'PUT':
            self.puts += 1
            return mock.Mock(status_code=self.answers.pop(0), text='')
        if url.startswith('/resource_providers?name='):
            body = {'resource_providers': [{'uuid': 'rp1'}]}
        else:
            body = {'resource_provider_generation': 1, 'inventories': {
                'VCPU': {'allocation_ratio': 16.0}}}
        return mock.Mock(status_code=200, json=lambda: body)


class CallTest(base.TestCase):

    def _answer(self, status, content):
        response = requests.Response()
        response.status_code, response._content = status, content
        adapter = mock.Mock()
        adapter.request.return_value = response
        return adapter

    def test_an_answer_broken_off_is_placement_unreachable(self):
        for status, content in ((200, b''), (200, b'{"resource_prov'),
                                (201, b'<html>')):
            e = self.assertRaises(
                exception.PlacementUnreachable, placement.call,
                self._answer(status, content), 'GET', '/resource_providers')
            self.assertIn('GET /resource_providers', str(e))

    def test_whole_answers_are_read_once(self):
        response = placement.call(self._answer(200, b'{"a": 1}'), 'GET',
                                  '/x')
        self.assertEqual({'a': 1}, response.json())
        self.assertIs(response.json(), response.json())
        # 201 without a body (a provider made at 1.19), 204.
        for status in (201, 204):
            self.assertEqual(status, placement.call(
                self._answer(status, b''), 'POST', '/x').status_code)


class SetAllocationRatiosTest(base.TestCase):

    def test_a_conflict_reads_again_at_once(self):
        adapter = _Adapter(409, 409, 200)
        with mock.patch('time.sleep') as sleep:
            previous = placement.set_allocation_ratios(
                adapter, 'node1', {'VCPU': 2.0}, retries=2)
        self.assertEqual(({'VCPU': 16.0}, 3), (previous, adapter.puts))
        sleep.assert_not_called()

    def test_conflicts_past_the_retries_are_a_concurrent_update(self):
        adapter = _Adapter(409, 409, 409, 200)
        e = self.assertRaises(exception.ConcurrentUpdateDetected,
                              placement.set_allocation_ratios, adapter,
                              'node1', {'VCPU': 2.0}, retries=2)
        self.assertEqual(3, adapter.puts)
        self.assertIn('Gave up after 3 attempts', str(e))

    def test_a_missing_class_is_not_retried(self):
        adapter = _Adapter()
        self.assertRaises(exception.InventoryNotFound,
                          placement.set_allocation_ratios, adapter,
                          'node1', {'DISK_GB': 2.0})
