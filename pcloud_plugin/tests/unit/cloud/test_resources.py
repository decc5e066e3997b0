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
