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

"""Intents: whose operation still runs, and taking one over."""

import datetime
import socket
import subprocess
import sys

from oslo_utils import timeutils

from pcloud_plugin.db import intents
from pcloud_plugin.tests import base


class OwnerTests(base.TestCase):

    def test_this_process_runs(self):
        self.assertFalse(intents.owner_gone(intents.this_process()))

    def test_an_exited_process_is_gone(self):
        child = subprocess.Popen([sys.executable, '-c', 'pass'])
        child.wait()
        self.assertTrue(intents.owner_gone(
            '%s:%d:1' % (socket.gethostname(), child.pid)))

    def test_a_reused_pid_is_another_process(self):
        host, pid, _start = intents.this_process().rsplit(':', 2)
        self.assertTrue(intents.owner_gone('%s:%s:1' % (host, pid)))

    def test_another_machine_is_not_known_gone(self):
        self.assertFalse(intents.owner_gone('elsewhere.example:1:1'))


class IntentTests(base.LedgerTestCase):

    def test_recorded_is_deleted_on_return_and_failed_on_raise(self):
        with intents.recorded(self.context, 'release', 'p/h1', host='h'):
            (running,) = intents.list_intents(self.context)
        self.assertEqual(('release', 'p/h1', {'host': 'h'}, False),
                         (running['operation'], running['subject'],
                          running['details'], running['failed']))
        self.assertEqual([], intents.list_intents(self.context))

        def fails():
            with intents.recorded(self.context, 'release', 'p/h2'):
                raise ValueError('Nova went away')
        self.assertRaises(ValueError, fails)
        (failed,) = intents.interrupted(self.context, ['release'],
                                        timeutils.utcnow())
        self.assertTrue(failed['failed'])

    def test_only_running_young_intents_are_not_interrupted(self):
        intents.begin(self.context, 'allocate', 'p/h1', {})
        past = timeutils.utcnow() - datetime.timedelta(minutes=1)
        self.assertEqual([], intents.interrupted(self.context, ['allocate'],
                                                 past))
        later = timeutils.utcnow() + datetime.timedelta(minutes=1)
        self.assertEqual(1, len(intents.interrupted(
            self.context, ['allocate'], later)))
        self.assertEqual([], intents.interrupted(self.context, ['release'],
                                                 later))

    def test_one_reconciler_takes_an_intent(self):
        intents.begin(self.context, 'allocate', 'p/h1', {})
        (found,) = intents.list_intents(self.context)
        self.assertTrue(intents.take(self.context, found))
        # A second reconciler read it before the first took it: too late.
        self.assertFalse(intents.take(self.context, found))
