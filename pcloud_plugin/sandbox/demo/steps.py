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

"""The demo's numbered steps: each prints what it shows, and the first

that does not hold stops the story (DemoFailed, which pcloud-sandbox
reports and exits non-zero on).
"""

import sys
import time


class DemoFailed(Exception):
    pass


class Story:
    """Numbered steps that print what they show and stop at the first

    one that does not hold.
    """

    def __init__(self, out=sys.stdout):
        self.out = out
        self.number = 0

    def step(self, title, check):
        self.number += 1
        started = time.monotonic()
        try:
            detail = check()
        except Exception as e:
            self.out.write('[FAIL] %d. %s: %s: %s\n'
                           % (self.number, title, type(e).__name__, e))
            self.out.flush()
            raise DemoFailed('step %d, %s' % (self.number, title))
        self.out.write('[ ok ] %d. %s%s (%.1fs)\n'
                       % (self.number, title,
                          ': %s' % detail if detail else '',
                          time.monotonic() - started))
        self.out.flush()

    def refused(self, title, error, call):
        """A step whose point is that ``call`` is refused with ``error``."""
        def check():
            try:
                call()
            except error as e:
                return 'refused: %s' % e.message
            raise AssertionError('was not refused')
        self.step(title, check)
