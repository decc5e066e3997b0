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
"""The moments an offerings query names (blazar.api.handlers)."""

import datetime

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin import exception
from pcloud_plugin.tests import base


class MomentTest(base.TestCase):

    def _moment(self, text):
        return handlers._moment({'not_before': text}, 'not_before', None)

    def test_iso_8601_and_date_with_minutes_are_naive_utc(self):
        nine = datetime.datetime(2031, 1, 1, 9)
        for text in ('2031-01-01T09:00:00Z', '2031-01-01T10:00+01:00',
                     '2031-01-01 09:00', '2031-01-01 9:00'):
            self.assertEqual(nine, self._moment(text), text)
        self.assertIsNone(
            handlers._moment({}, 'not_before', None))

    def test_anything_else_is_a_400_naming_the_field(self):
        e = self.assertRaises(exception.SchemaViolation, self._moment,
                              'soon')
        self.assertEqual(400, e.code)
        self.assertIn('not_before', str(e))
        self.assertIn('a date like "2031-01-01 12:00" or ISO 8601', str(e))
