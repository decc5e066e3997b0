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
"""Waiting out a Nova or Placement that restarts or fails for a moment,

for up to ``[pcloud] unreachable_patience`` seconds: a lease start that
meets one waits rather than sending the lease to ERROR.
"""

import time

from oslo_log import log as logging
import tenacity

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin import exception
from pcloud_plugin.pcloud import cloud as cloud_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# The wait between tries (the tests' hook).
_sleep = time.sleep


def _status(error):
    """The HTTP status Nova or Placement answered ``error`` with, if any."""
    if isinstance(error, nova_client.ClientException):
        return error.code
    if isinstance(error, placement_client.PlacementFailure):
        return error.kwargs.get('status')
    if isinstance(error, exception.NovaError):
        return _status(error.kwargs.get('reason'))
    return getattr(error, 'http_status', None)  # keystoneauth's


def passing(error):
    """Whether ``error`` may pass if tried again: Nova or Placement out of

    reach (restarting), or answering 5xx, as Nova's "Unexpected API Error"
    while its database is locked or fails over. A 4xx is a refusal.
    """
    status = _status(error)
    return cloud_mod.unreachable(error) or (
        isinstance(status, int) and 500 <= status < 600)


def patiently(what, func, *args):
    """``func(*args)``, tried again while Nova or Placement cannot be

    reached or fails (passing), after 1, 2, 4, 8, then every 10 seconds,
    until ``[pcloud] unreachable_patience`` seconds have gone by; then
    the last error is raised. ``func`` must be safe to run again after a
    failure midway (each step records what it made); ``what`` names it
    in the log.
    """
    def said(state):
        LOG.warning('%s: %s; trying again in %ds', what,
                    state.outcome.exception(), state.next_action.sleep)

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception(passing),
        stop=tenacity.stop_after_delay(CONF.pcloud.unreachable_patience),
        wait=tenacity.wait_exponential(multiplier=1, max=10),
        sleep=lambda seconds: _sleep(seconds),  # a test patches _sleep
        before_sleep=said, reraise=True)(func, *args)
