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
"""The rules of backfill (cloud.backfill) apart from the cloud."""

import datetime

from pcloud_plugin.cloud import backfill
from pcloud_plugin.cloud import promises
from pcloud_plugin.tests import base

T0 = datetime.datetime(2031, 1, 1, 12, 0)


def _at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


class RulesTests(base.TestCase):

    def test_offered_is_what_the_host_s_promise_pieces_hold(self):
        placed = {promises.promise_consumer('h'): {'VCPU': 4,
                                                   'MEMORY_MB': 2048},
                  promises.promise_consumer('h', 1): {'VCPU': 2},
                  # Another provider's promise, a hold, an instance.
                  promises.promise_consumer('g'): {'VCPU': 8},
                  'reservation': {'VCPU': 16}, 'server': {'VCPU': 1}}
        self.assertEqual({backfill.VCPU: 6, backfill.MEMORY_MB: 2048,
                          backfill.DISK_GB: 0},
                         backfill.offered(placed, 'h'))

    def test_inventory_never_below_what_servers_hold(self):
        self.assertEqual((8, 0, 8), self._inv(backfill.inventory(8, 3)))
        # Held beyond the offer: the rest reserved, none open.
        self.assertEqual((5, 3, 5), self._inv(backfill.inventory(2, 5)))
        self.assertIsNone(backfill.inventory(0, 0))

    @staticmethod
    def _inv(found):
        return found['total'], found['reserved'], found['max_unit']

    def test_over_stops_the_newest_until_the_rest_fits(self):
        offer = {backfill.VCPU: 3, backfill.MEMORY_MB: 1024}
        servers = [('2031-01-01', 'old', {backfill.VCPU: 2,
                                          backfill.MEMORY_MB: 512}),
                   ('2031-01-03', 'newest', {backfill.VCPU: 1,
                                             backfill.MEMORY_MB: 256}),
                   ('2031-01-02', 'middle', {backfill.VCPU: 1,
                                             backfill.MEMORY_MB: 512})]
        self.assertEqual(['newest'], backfill.over(servers, offer))
        self.assertEqual(['newest', 'middle'], backfill.over(
            servers, dict(offer, **{backfill.MEMORY_MB: 600})))
        self.assertEqual([], backfill.over(
            servers, {backfill.VCPU: 9, backfill.MEMORY_MB: 9999}))
