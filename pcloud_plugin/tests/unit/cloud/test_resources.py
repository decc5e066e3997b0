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

"""How Placement's answers to a write of several allocations are read."""

import json
from unittest import mock

import requests

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import resources
from pcloud_plugin.tests import base

WRITES = {'c1': (None, {'rp': {'VCPU': 1}}, 'p')}


def _answer(status, body):
    response = requests.Response()
    response.status_code = status
    response._content = body.encode()
    return response


class WriteAllocationsTests(base.TestCase):

    def write(self, status, body):
        adapter = mock.Mock()
        adapter.request.return_value = _answer(status, body)
        return resources.PlacementSlots(adapter).write_allocations(WRITES)

    def test_written(self):
        self.assertTrue(self.write(204, ''))

    def test_a_concurrent_writer_is_read_again(self):
        self.assertFalse(self.write(409, json.dumps({'errors': [{
            'code': resources.CONCURRENT_UPDATE}]})))

    def test_a_consumer_removed_meanwhile_is_read_again(self):
        # Written under the generation read, it has no allocation left
        # since: Placement knows it no more. Seen in the soak as a 500.
        self.assertFalse(self.write(404, json.dumps({'errors': [{
            'detail': 'No such consumer(s): c1.'}]})))

    def test_no_room_is_refused(self):
        self.assertRaises(placement_client.PlacementFailure, self.write, 409,
                          json.dumps({'errors': [{
                              'code': 'placement.undefined_code'}]}))

    def test_an_answer_cut_short_is_read_again(self):
        # Placement stopping as it answered: not JSON. Seen under the
        # soak's kills; it was a 500 to the tenant.
        self.assertFalse(self.write(409, ''))
        self.assertFalse(self.write(409, '{"errors": [{"st'))


class EmptyConsumerTests(base.TestCase):
    """A consumer Placement kept without allocations, written as new."""

    KEPT = json.dumps({'errors': [{
        'code': resources.CONCURRENT_UPDATE,
        'detail': 'consumer generation conflict - expected 0 but got None'}]})
    NOT_NEW = json.dumps({'errors': [{
        'code': resources.CONCURRENT_UPDATE,
        'detail': 'consumer generation conflict - expected null but got 0'}]})

    def write(self, writes, *answers):
        self.bodies = []
        answers = list(answers)

        def request(url, method, json=None, **_kwargs):
            self.bodies.append(json)
            return _answer(*answers.pop(0))
        adapter = mock.Mock()
        adapter.request.side_effect = request
        return resources.PlacementSlots(adapter).write_allocations(writes)

    def test_written_under_the_generation_placement_keeps(self):
        writes = {'known': (5, {'rp': {'VCPU': 1}}, 'p'),
                  'a-new': (None, {'rp': {'VCPU': 2}}, 'p'),
                  'kept': (None, {'rp': {'VCPU': 3}}, 'p')}
        self.assertTrue(self.write(writes, (409, self.KEPT),
                                   (409, self.NOT_NEW), (204, ''),
                                   (204, '')))
        # The probes: empty writes under generation 0, one consumer each.
        self.assertEqual([{'a-new': mock.ANY}, {'kept': mock.ANY}],
                         self.bodies[1:3])
        self.assertEqual(({}, 0), (
            self.bodies[2]['kept']['allocations'],
            self.bodies[2]['kept']['consumer_generation']))
        written = self.bodies[3]
        self.assertEqual((0, None, 5), tuple(
            written[c]['consumer_generation']
            for c in ('kept', 'a-new', 'known')))
        self.assertEqual({'rp': {'resources': {'VCPU': 3}}},
                         written['kept']['allocations'])

    def test_another_writers_conflict_is_read_again(self):
        # No consumer written as new is the one Placement keeps: a
        # concurrent writer made it; read again.
        self.assertFalse(self.write(WRITES, (409, self.KEPT),
                                    (409, self.NOT_NEW)))
        self.assertFalse(self.write(
            {'known': (5, {'rp': {'VCPU': 1}}, 'p')}, (409, self.KEPT)))
        self.assertEqual(1, len(self.bodies))

    def test_a_consumer_with_allocations_is_never_probed(self):
        # Generation 2: it has allocations (written by another meanwhile);
        # an empty write under it would remove them. Read again.
        self.assertFalse(self.write(WRITES, (409, json.dumps({'errors': [{
            'code': resources.CONCURRENT_UPDATE,
            'detail': 'consumer generation conflict - expected 2 but got '
                      'None'}]}))))
        self.assertEqual(1, len(self.bodies))


class SlotsTests(base.TestCase):
    """Inventory writes on a host's child provider meeting other writers."""

    def slots(self, *answers):
        """PlacementSlots whose Placement gives ``answers`` in turn,

        (status, body) to each call.
        """
        self.calls = []
        answers = list(answers)

        def request(url, method, **_kwargs):
            self.calls.append(method)
            status, body = answers.pop(0)
            return _answer(status, json.dumps(body))
        adapter = mock.Mock()
        adapter.request.side_effect = request
        return resources.PlacementSlots(adapter)

    READ = (200, {'resource_provider_generation': 1, 'inventories': {}})

    def test_a_moved_generation_writes_again_at_once(self):
        slots = self.slots(self.READ, (409, {}), self.READ, (200, {}))
        with mock.patch('time.sleep') as sleep:
            slots.set_slots('h1', 'cn1', 'CUSTOM_R', 2)
        self.assertEqual(['GET', 'PUT', 'GET', 'PUT'], self.calls)
        sleep.assert_not_called()

    def test_a_generation_moving_every_time_is_given_up(self):
        slots = self.slots(*[self.READ, (409, {})] * resources._RETRIES)
        e = self.assertRaises(placement_client.PlacementFailure,
                              slots.set_slots, 'h1', 'cn1', 'CUSTOM_R', 2)
        self.assertIn('gave up after 10 generation conflicts', str(e))
        self.assertEqual(['GET', 'PUT'] * resources._RETRIES, self.calls)

    def test_removal_tells_a_race_from_units_in_use(self):
        free = self.slots((409, {}), (200, {'usages': {}}), (204, {}))
        self.assertTrue(free.remove_slots('h1', 'CUSTOM_R'))
        self.assertEqual(['DELETE', 'GET', 'DELETE'], self.calls)
        used = self.slots((409, {}), (200, {'usages': {'CUSTOM_R': 1}}),
                          (200, {'total': 2, 'reserved': 0}), (200, {}))
        self.assertFalse(used.remove_slots('h1', 'CUSTOM_R'))
        self.assertEqual(['DELETE', 'GET', 'GET', 'PUT'], self.calls)

    def test_removal_racing_every_time_says_try_later(self):
        slots = self.slots(
            *[(409, {}), (200, {'usages': {}})] * resources._RETRIES)
        self.assertFalse(slots.remove_slots('h1', 'CUSTOM_R'))
        self.assertEqual(2 * resources._RETRIES, len(self.calls))
