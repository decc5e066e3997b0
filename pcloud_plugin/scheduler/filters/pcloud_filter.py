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

"""The PcloudFilter of seeds/000, for nova-scheduler.

Enable it in nova.conf as etc/nova/nova.conf.pcloud-snippet shows: its
class path in [filter_scheduler] available_filters, PcloudFilter in
enabled_filters.

Each host passes by these rules:

* no ``pcloud`` scheduler hint: only if it is in neither a pcloud nor a
  host flavor pool;
* ``pcloud=<uuid>``: only if it is in that pcloud, enabled there, and the
  request's project is one of its authorized tenants;
* in all other cases (e.g. several ``pcloud`` hints) it fails.

A move of an existing instance (live or cold migration, resize,
evacuation, unshelve) keeps the hint it was booted with, though the
pcloud may no longer hold the host it runs on: a lease that ended left
it there (seeds/001), and a BEST-EFFORT lease moves it away. Such a move
goes to its pcloud's hosts by the rule above or, when none passes, to
hosts outside every pool and pcloud, which any boot may take: it opens
no pcloud and no pool to anyone. Nova marks a move by restricting its
request to the instance's cell (``requested_destination.cell``), which a
boot's request never carries.

A host in a pcloud:host lease's aggregate (``filter_lease_id``) passes
only while that lease holds it: the request names the lease's pcloud and
the time (UTC) is within the window written there. So a lease's end
stops new boots even before Blazar's end event has run (it may be late,
or its manager down), and a host that a failed clean-up left in a lease
aggregate takes none.

The rule itself is pcloud.boot_rule's, which the Pcloud API's boot check
also asks to tell a tenant why a boot was refused. It reads nothing but
HostState.aggregates, the scheduler's in-memory copy of Nova's
aggregates, and the clock: no API or database call, no config of ours.
The request is looked at once; each host costs a look at its own few
aggregates and two dict lookups, and a lease aggregate's window is read
once per request.
"""

from nova.scheduler import filters
from nova.scheduler import utils as scheduler_utils

from pcloud_plugin.pcloud import boot_rule

HINT = 'pcloud'


def _rule(spec_obj):
    """passes(host_state), by boot_rule for this request."""
    refusal = boot_rule.refusal(spec_obj.get_scheduler_hint(HINT),
                                spec_obj.project_id)

    def passes(host_state):
        return refusal(host_state.aggregates, host_state.nodename) is None
    return passes


def _outside_pclouds(host_state):
    return boot_rule.refusal(None, None)(host_state.aggregates,
                                         host_state.nodename) is None


def _is_move(spec_obj):
    destination = (spec_obj.requested_destination
                   if 'requested_destination' in spec_obj else None)
    return bool(destination and 'cell' in destination and destination.cell)


class PcloudFilter(filters.BaseHostFilter):
    """Keep pcloud hosts for their pcloud's tenants, and pool hosts idle."""

    # Aggregates, hints and project do not change within a request.
    run_filter_once_per_request = True
    # A rebuild stays on its host, which was allowed when it was chosen.
    RUN_ON_REBUILD = False

    def filter_all(self, filter_obj_list, spec_obj):
        if scheduler_utils.request_is_rebuild(spec_obj):
            return filter_obj_list
        passes = _rule(spec_obj)
        hosts = [host for host in filter_obj_list if passes(host)]
        if hosts or not _is_move(spec_obj):
            return hosts
        return [host for host in filter_obj_list if _outside_pclouds(host)]

    def host_passes(self, host_state, spec_obj):
        # Nova calls filter_all; alone, a host cannot know whether the
        # pcloud has others, so a move may take an ordinary one here.
        return _rule(spec_obj)(host_state) or (
            _is_move(spec_obj) and _outside_pclouds(host_state))
