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
"""Which whole hosts a pcloud:host reservation takes, and its claim.

A host is eligible as reservations.host_requests says; it is free for a
window when no claim of the ledger overlaps it there. The picked hosts
are claimed whole (every class of every provider of their trees) in one
compare-and-swap; hosts lost to a concurrent lease are picked again from
a fresh read (reservations.admission).
"""

from oslo_log import log as logging

from pcloud_plugin.capacity import host_windows
from pcloud_plugin import conf
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import admission
from pcloud_plugin.reservations import host_requests as asked

LOG = logging.getLogger(__name__)
CONF = conf.CONF


def pick(ctx, pools, params, start, end, exclude=None, occupants=None):
    """(hosts, None) free for the window, or (None, why not).

    :param pools: the host flavors' pools (host_requests.Pools)
    :param exclude: a reservation whose own claim does not count
    :param occupants: with it, the hosts running the least of other
        projects come first (host_vacate's Occupants)
    Raises PoolTooSmall when fewer hosts are eligible than asked for.
    """
    forest = db_snapshots.load_forest(ctx)
    leased = host_db.joined_service_hosts(ctx)
    hosts = asked.eligible_hosts(forest, pools, params, leased)
    roots = [h['host_uuid'] for h in hosts]
    busy = host_db.busy_intervals(ctx, roots, start, before=end,
                                  exclude_consumer=exclude)
    free = [h for h in hosts
            if host_windows.is_free(busy[h['host_uuid']], start, end)]
    if occupants is not None and len(free) > params['amount']:
        free.sort(key=occupants.load)
    if len(free) >= params['amount']:
        return free[:params['amount']], None
    if len(hosts) < params['amount']:
        raise exception.PoolTooSmall(
            'Cannot reserve %s: only %d host(s) could ever serve it.%s'
            % (asked.describe(params), len(hosts),
               asked.left_out(forest, pools, params, leased, hosts)))
    why = ('Cannot reserve %s from %s to %s: %d of the %d eligible '
           'hosts are free then.'
           % (asked.describe(params), start, end, len(free), len(hosts)))
    later = host_windows.earliest_window(
        host_db.busy_intervals(ctx, roots, start, exclude_consumer=exclude),
        params['amount'], end - start, start, order=roots)
    if later:
        why += (' The earliest window of this length with %d free '
                'starts at %s.' % (params['amount'], later[0]))
    return None, why


def claim(ctx, mirror, read_pools, reservation_id, params, start, end,
          replace=False, occupants=None):
    """Pick hosts (see pick) and claim them whole; their records, named.

    :param mirror: the Placement mirror (cloud.mirror), asked whether
        Placement moved under the first pick
    :param read_pools: () -> host_requests.Pools, read for every pick
    :param replace: the reservation's claim is replaced (a change)
    Raises exception.CapacityRefused.
    """
    fresh = None
    races = admission.Races(CONF.pcloud_host.admission_retries + 2,
                            reservation_id)
    for race in races:
        hosts, why = pick(ctx, read_pools(), params, start, end,
                          exclude=reservation_id, occupants=occupants)
        if hosts is None:
            raise exception.CapacityRefused(why)
        if fresh is None:
            # Freshness: what Placement changed on these hosts since the
            # mirror last read them is in the ledger now.
            fresh = not mirror.refresh(ctx,
                                       [h['host_uuid'] for h in hosts])
            if not fresh:
                continue
        with race:
            host_db.claim_hosts(ctx, reservation_id,
                                [h['host_uuid'] for h in hosts],
                                start, end, replace=replace)
            for n, host in enumerate(hosts, 1):
                host['name'] = 'lease-%s-%d' % (reservation_id[:8], n)
            return hosts
    LOG.info('Reservation %s lost every race; last: %s',
             reservation_id, races.last)
    raise exception.CapacityRefused(
        'Cannot reserve %s from %s to %s: concurrent leases kept taking '
        'the hosts picked.' % (asked.describe(params), start, end))
