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

"""Healing across the sandbox's real services (issue 18): a compute

the operator disables, or forces down, through Nova's API, and a
reservation booked on it moves to another host within
blazar-manager's ``[pcloud] healing_interval`` (the sandbox sets it
short). The in-process tests (functional/blazar/test_healing.py) cover
the rest.
"""

from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth


class Healing(test_capacity_truth._Capacity):

    def _claimed_on(self, rid):
        return fixture.claimed_on(self.sandbox, rid)

    def _moves_off(self, take_out):
        """A reservation booked for later on one compute moves to another

        within a few healing passes once ``take_out(host)`` failed it.
        """
        lease = self._lease(self.demo, self._slot(512),
                            start=test_capacity_truth._minute(hours=2),
                            end=test_capacity_truth._minute(hours=3))
        self.assertEqual('PENDING', self._settled(lease, common.DEMO_USER,
                                                  'PENDING', 'ERROR'))
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        (host,) = self._slot_hosts(lease)
        self.assertEqual({host}, self._claimed_on(rid) & set(self.computes))

        take_out(host)
        interval = self._blazar_option('healing_interval', 60)
        self._until('reservation %s off %s' % (rid, host),
                    lambda: self._slot_hosts(lease) not in ([host], []),
                    3 * interval + 10)
        (moved,) = self._slot_hosts(lease)
        self.assertIn(moved, self.computes)
        self.assertNotEqual(host, moved)
        self.assertEqual({moved}, self._claimed_on(rid) & set(self.computes))
        # Placed again whole: not degraded.
        shown = self.cli.json('openstack', 'reservation', 'lease', 'show',
                              lease['id'], user=common.DEMO_USER)
        self.assertFalse(shown['degraded'])

    def test_a_future_reservation_leaves_a_disabled_compute(self):
        # What an operator does to take a compute out of service.
        self._moves_off(lambda host: fixture.out_of_service(
            self, self.nova, host))

    def _force_down(self, host):
        """What an operator (or a fencing agent) does once a compute has

        failed: Nova's forced_down (microversion 2.11 on), undone when
        the test ends. Nova says so at once, enabled as it is.
        """
        (service,) = self.nova.services.list(host=host,
                                             binary='nova-compute')
        self.nova.services.force_down(service.id, True)
        self.addCleanup(self.nova.services.force_down, service.id, False)
        (down,) = self.nova.services.list(host=host, binary='nova-compute')
        self.assertEqual(('down', 'enabled', True),
                         (down.state, down.status, down.forced_down))

    def test_a_future_reservation_leaves_a_forced_down_compute(self):
        self._moves_off(self._force_down)
