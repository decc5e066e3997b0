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
