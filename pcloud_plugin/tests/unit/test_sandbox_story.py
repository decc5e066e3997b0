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

import io

from pcloud_plugin.sandbox.demo import steps
from pcloud_plugin.tests import base


class StoryTests(base.TestCase):

    def test_stops_at_first_broken_step_and_names_it(self):
        out = io.StringIO()
        story = steps.Story(out)
        story.step('fine', lambda: 'yes')
        e = self.assertRaises(steps.DemoFailed, story.step, 'broken',
                              lambda: 1 / 0)
        self.assertIn('step 2, broken', str(e))
        self.assertIn('[ ok ] 1. fine: yes', out.getvalue())
        self.assertIn('[FAIL] 2. broken: ZeroDivisionError', out.getvalue())

    def test_refusal_that_does_not_happen_fails(self):
        story = steps.Story(io.StringIO())
        self.assertRaises(steps.DemoFailed, story.refused, 'x',
                          ValueError, lambda: None)
