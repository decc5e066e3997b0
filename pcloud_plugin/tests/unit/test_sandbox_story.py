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
from unittest import mock

from pcloud_plugin.sandbox.demo import commands
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


class CliWaitTests(base.TestCase):

    def _wait(self, tries_until_done, timeout=600):
        outputs = [{'status': 'PENDING'}] * (tries_until_done - 1) + [
            {'status': 'ACTIVE'}]
        cli = commands.Cli(sandbox=None)
        with mock.patch.object(cli, 'json', side_effect=outputs) as json, \
                mock.patch.object(commands.time, 'sleep') as sleep:
            found = cli.wait('lease', ('openstack', 'x'),
                             lambda out: out['status'] == 'ACTIVE',
                             timeout=timeout)
        self.assertEqual({'status': 'ACTIVE'}, found)
        self.assertEqual(tries_until_done, json.call_count)
        return [call.args[0] for call in sleep.call_args_list]

    def test_pauses_grow_from_half_a_second_to_the_most(self):
        pauses = self._wait(12)
        self.assertEqual([0.5, 0.75, 1.125], pauses[:3])
        self.assertEqual(sorted(pauses), pauses)
        self.assertEqual(commands.Cli.MAX_PAUSE, pauses[-1])
        self.assertEqual(5, pauses.count(commands.Cli.MAX_PAUSE))

    def test_done_at_once_waits_not_at_all(self):
        self.assertEqual([], self._wait(1))
