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
our plugins use that to finish clean-ups that failed midway and to retry
waiting reservations, never for Nova notifications or healing.
"""

from blazar.plugins import base


class PollingMonitor(base.BaseMonitorPlugin):
    """Calls ``poll()`` every ``interval()`` seconds."""

    def __init__(self, poll, interval):
        self._poll = poll
        self._interval = interval

    def is_notification_enabled(self):
        return False

    def get_notification_event_types(self):
        return []

    def get_notification_topics(self):
        return []

    def notification_callback(self, event_type, payload):
        return {}

    def is_polling_enabled(self):
        return True

    def get_polling_interval(self):
        return self._interval()

    def poll(self):
        self._poll()
        return {}

    def get_healing_interval(self):
        return 0

    def heal(self):
        return {}
