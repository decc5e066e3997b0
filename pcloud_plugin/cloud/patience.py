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
"""Waiting out a Nova or Placement that restarts, for up to

``[pcloud] unreachable_patience`` seconds: a lease start that meets one
waits rather than sending the lease to ERROR.
"""

import time

from oslo_log import log as logging

from pcloud_plugin import conf
from pcloud_plugin.pcloud import cloud as cloud_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# The wait between tries (the tests' hook).
_sleep = time.sleep


def patiently(what, func, *args):
    """``func(*args)``, tried again while Nova or Placement cannot be

    reached. ``func`` must be safe to run again after a failure midway
    (each step records what it made); ``what`` names it in the log.
    """
    deadline = time.monotonic() + CONF.pcloud.unreachable_patience
    delay = 1
    while True:
        try:
            return func(*args)
        except Exception as e:
            if (not cloud_mod.unreachable(e)
                    or time.monotonic() + delay > deadline):
                raise
            LOG.warning('%s: %s; trying again in %ds', what, e, delay)
            _sleep(delay)
            delay = min(delay * 2, 10)
