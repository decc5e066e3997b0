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

"""A polling-only monitor for our Blazar plugins.

Blazar's manager calls a plugin's ``monitor`` every interval it gives;
our plugins use that to finish clean-ups that failed midway, to retry
waiting reservations and to heal (blazar.healing), never for Nova
notifications.

Healing is one of the polling tasks, every ``[pcloud] healing_interval``
seconds, rather than Blazar's healing timer (whose interval is in
minutes): get_healing_interval() is 0 so that Blazar does not run the
same pass again, and heal() runs one pass at once, answering what it
changed as Blazar's contract asks, {reservation id: flags}. The flags
are already on Blazar's reservations when it answers (a pass also clears
them, which the contract cannot say).

With several blazar-managers, only the leader (cloud.coordination) runs
the tasks; the others skip them until they lead.
"""

import time

from blazar.plugins import base
from oslo_log import log as logging

from pcloud_plugin.blazar import errors
from pcloud_plugin.cloud import coordination
from pcloud_plugin import conf

LOG = logging.getLogger(__name__)
CONF = conf.CONF


class PollingMonitor(base.BaseMonitorPlugin):
    """Calls each task's callable every ``interval()`` seconds (tasks

    with interval 0 never): Blazar polls at the shortest interval and
    each task runs when it is due. ``healer``: the plugin's healing pass
    (a callable answering {reservation id: flags}), a task of its own.
    ``leader``: whose ``is_leader()`` says whether to run them (by
    default the process's, cloud.coordination). ``on_start``: what to
    start once, leader or not (the plugins follow Nova's events).
    """

    def __init__(self, *tasks, healer=None, leader=None, on_start=None):
        self._healer = healer
        self._leader = leader
        # Called at the first poll, in every manager: Blazar polls only
        # in blazar-manager, and from its start.
        self._on_start = on_start
        if healer is not None:
            tasks += ((self.heal,
                       lambda: CONF.pcloud.healing_interval),)
        self._tasks = tasks
        self._last = {}

    def is_notification_enabled(self):
        return False

    def get_notification_event_types(self):
        return []

    def get_notification_topics(self):
        return []

    def notification_callback(self, event_type, payload):
        return {}

    def is_polling_enabled(self):
        return self.get_polling_interval() > 0

    def get_polling_interval(self):
        return min((interval() for _poll, interval in self._tasks
                    if interval()), default=0)

    def poll(self):
        if self._on_start is not None:
            on_start, self._on_start = self._on_start, None
            try:
                on_start()
            except Exception:
                LOG.exception('Starting %s failed', on_start)
        leader = self._leader or coordination.process_leader()
        # A pass run by every manager is only wasted work: skipped ones
        # stay due, so a new leader runs them at its first poll.
        if not leader.is_leader():
            return {}
        now = time.monotonic()
        for n, (task, interval) in enumerate(self._tasks):
            every = interval()
            # A little early is due: polls come every shortest interval.
            if every and now - self._last.get(n, -every) >= every * 0.9:
                self._last[n] = now
                try:
                    task()
                except errors.UNREACHABLE_ERRORS as e:
                    # Usual while Nova starts or restarts: the next
                    # poll tries again; no traceback to alarm anyone.
                    LOG.warning('Periodic task %s: %s', task, e)
                except Exception:
                    LOG.exception('Periodic task %s failed', task)
        return {}

    def get_healing_interval(self):
        # Minutes, for Blazar's timer: healing runs among the tasks.
        return 0

    def heal(self):
        """One healing pass now: {reservation id: flags it set}."""
        if self._healer is None:
            return {}
        return self._healer()
