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
"""Plan, claim, and plan again on a lost race: the one loop of every

admission, update, heal and resize of both reservation kinds.

A plan is made from a read of the ledger; the claim that follows checks it
again under the providers' generation compare-and-swap. When a concurrent
claim (another API worker or manager), or the Placement mirror, moved that
capacity in between, the claim raises one of LOST_RACE and the plan is
made again from a fresh read; a refusal of the plan itself (no capacity)
is not retried.
"""

from oslo_log import log as logging
import tenacity

from pcloud_plugin import exception

LOG = logging.getLogger(__name__)

# What a claim raises when the capacity its plan was made on moved
# meanwhile (exception.PLAN_OUTDATED), or a host it picked was taken.
LOST_RACE = exception.PLAN_OUTDATED + (exception.HostBusy,)


class Races:
    """The attempts of one plan-and-claim loop::

        races = admission.Races(attempts, what)
        for race in races:
            plan = ...                 # a refusal here is final
            with race:
                claim(plan)            # LOST_RACE: the next attempt
                return plan
        raise refused(races.last)      # every attempt lost

    An attempt left without a claim (``continue``: a plan made on a
    stale read) counts too.

    :param attempts: how many plans at most
    :param what: names the claimer in the log
    :param lost_on: the errors that mean "plan again" (LOST_RACE and,
        for a claimer whose claim may also be refused after the ledger's,
        its own)
    """

    def __init__(self, attempts, what, lost_on=LOST_RACE):
        self.attempts = attempts
        self.what = what
        self.lost_on = lost_on
        self.last = None  # the last race lost

    def __iter__(self):
        # tenacity counts the attempts. Only attempts to make again come
        # back to it: a claim's other errors leave the loop at once from
        # __exit__ (not at the next attempt, after the code that follows
        # the claim), and a win returns or breaks out of it.
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            retry=tenacity.retry_always,
            retry_error_callback=lambda _state: None,  # the caller refuses
            sleep=lambda _seconds: None)  # plan again at once
        for attempt in retrying:
            yield self
            attempt.retry_state.set_result(None)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, _traceback):
        if kind is None or not issubclass(kind, self.lost_on):
            return False
        LOG.debug('Claim of %s lost a race: %s', self.what, error)
        self.last = error
        return True
