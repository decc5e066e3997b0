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
"""A reservation's start or end as Blazar's manager sees it: the domain's

EventFailed is Blazar's EventError, anything else passes unchanged.
"""

from blazar.manager import exceptions as mgr_exc

from pcloud_plugin.blazar import hosts_view
from pcloud_plugin import exception
from pcloud_plugin.tests import base


class _Lifecycle(object):
    """What the reservation domain's lifecycles give the plugins."""

    def __init__(self, error):
        self.error = error
        self.calls = []

    def start_reservation(self, resource_id):
        self.calls.append(('start', resource_id))
        if self.error:
            raise self.error

    def end_reservation(self, resource_id):
        self.calls.append(('end', resource_id))
        if self.error:
            raise self.error


class EventTests(base.TestCase):

    EVENTS = (('start', hosts_view.LedgerHostsPlugin.on_start),
              ('end', hosts_view.LedgerHostsPlugin.on_end))

    def test_a_failed_start_or_end_is_blazars_event_error(self):
        for name, event in self.EVENTS:
            lifecycle = _Lifecycle(exception.EventFailed(
                error='Nova failed while starting r1'))
            e = self.assertRaises(mgr_exc.EventError, event, lifecycle, 'r1')
            self.assertIn('Nova failed while starting r1', str(e))
            self.assertEqual([(name, 'r1')], lifecycle.calls)

    def test_other_errors_and_successes_pass_unchanged(self):
        for name, event in self.EVENTS:
            lifecycle = _Lifecycle(exception.CapacityRefused(reason='full'))
            self.assertRaises(exception.CapacityRefused, event, lifecycle,
                              'r1')
            lifecycle = _Lifecycle(None)
            self.assertIsNone(event(lifecycle, 'r2'))
            self.assertEqual([(name, 'r2')], lifecycle.calls)
