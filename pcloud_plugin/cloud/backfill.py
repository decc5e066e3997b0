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
"""Backfill: boots that use, until a known time, capacity promised to

instance reservations that have not started (issue 36).

What the ledger promised to reservations not started yet is fenced in
Placement by each host's *promise* (cloud.promises): idle until the
first of them starts. The leading manager offers it, every ``[pcloud]
backfill_interval`` seconds, as three classes on the host's child
provider (cloud.resources): CUSTOM_PCLOUD_BACKFILL_VCPU, _MEMORY_MB and
_DISK_GB, as many units as the promise on the host (its root provider)
holds of VCPU, MEMORY_MB and DISK_GB. A backfill flavor (one the
operator makes, with access for the projects that opt in) asks for
those classes and a ticket (``resources:VCPU=0``,
``resources:MEMORY_MB=1``, ``resources:DISK_GB=0``), as a reserved
flavor does: its boots land only where a promise is idle, and take
nothing any holder or on-demand boot could have (a host whose disk is
on a sharing provider offers no disk). The promise keeps holding the
capacity, so a holder's boot is never refused because of backfill.

Each backfill server may run until the next claim on its host starts:
the pass sets that time on the server (metadata ``pcloud_backfill_until``)
the first time it sees it, tells its project ``[pcloud]
backfill_warning`` seconds before (``pcloud.backfill.warning``, metadata
``pcloud_backfill_warned``), and at that time shelves it (offloaded: its
host's capacity is free again) and sends its usage record
(``pcloud.backfill.end``). Where the promise shrank below what backfill
uses (a reservation deleted or moved), the newest backfill servers there
are shelved at once.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import promises
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin.db import reservations as res_db

LOG = logging.getLogger(__name__)
CONF = conf.CONF

VCPU = 'CUSTOM_PCLOUD_BACKFILL_VCPU'
MEMORY_MB = 'CUSTOM_PCLOUD_BACKFILL_MEMORY_MB'
DISK_GB = 'CUSTOM_PCLOUD_BACKFILL_DISK_GB'
# Each backfill class, and the class of the promise its units stand for.
CLASSES = {VCPU: 'VCPU', MEMORY_MB: 'MEMORY_MB', DISK_GB: 'DISK_GB'}
UNTIL = 'pcloud_backfill_until'
WARNED = 'pcloud_backfill_warned'
_SHELVED = ('SHELVED', 'SHELVED_OFFLOADED')


def _now():
    return timeutils.utcnow().replace(microsecond=0)


def _moment(text):
    return timeutils.parse_isotime(text).replace(tzinfo=None)


def offered(placed, host_uuid):
    """{backfill class: units}: what the host's promise holds now, of

    ``placed`` ({consumer: {class: n}} on the host).
    """
    promised = {}
    for consumer in promises.pieces_there(host_uuid, placed):
        for rc, n in placed[consumer].items():
            promised[rc] = promised.get(rc, 0) + n
    return {ours: promised.get(theirs, 0) for ours, theirs in CLASSES.items()}


def inventory(offer, used):
    """Placement's inventory of one backfill class: ``offer`` units open,

    never below what servers hold (the rest reserved), None for none.
    """
    total = max(offer, used)
    if not total:
        return None
    return {'total': total, 'reserved': total - offer, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}


def over(servers, offer):
    """The servers to stop at once so that what the rest hold fits

    ``offer``: the newest first. ``servers``: [(created, id, {class:
    n})].
    """
    held = {rc: sum(a.get(rc, 0) for _c, _s, a in servers) for rc in offer}
    stopped = []
    for created, server_id, amounts in sorted(servers, reverse=True):
        if all(held[rc] <= offer[rc] for rc in offer):
            break
        stopped.append(server_id)
        for rc in offer:
            held[rc] -= amounts.get(rc, 0)
    return stopped


class Backfill:
    """One pass over the hosts of instance reservations (and those it

    offered backfill on before, in this process).

    :param placement: cloud.resources.PlacementSlots
    :param nova: python-novaclient Client (an admin's)
    :param notifier: notifications.usage.UsageNotifier
    """

    def __init__(self, context, placement, nova, notifier):
        self.context = context
        self.placement = placement
        self.nova = nova
        self.notifier = notifier
        self._offered = {}
        self._classes = False

    def hosts(self, now):
        """{host uuid: host name} to look at."""
        found = dict(self._offered)
        for row in res_db.list_reservations(self.context, ending_after=now):
            found.update((s['host_uuid'], s['host_name'])
                         for s in row['slots'])
        return found

    def run(self, now=None):
        """{server id: what was done to it}."""
        now = now or _now()
        done = {}
        if not self._classes:
            for rc in CLASSES:
                self.placement.ensure_class(rc)
            self._classes = True
        for host_uuid, host_name in sorted(self.hosts(now).items()):
            try:
                done.update(self._host(host_uuid, host_name, now))
            except Exception:
                LOG.exception('Backfill on %s failed; next pass again',
                              host_name)
        return done

    def _host(self, host_uuid, host_name, now):
        offer = offered(self.placement.consumers_on(host_uuid), host_uuid)
        until = res_db.next_start(self.context, [host_uuid], now)
        if until is None:
            offer = dict.fromkeys(offer, 0)
        running = {}
        try:
            on_child = self.placement.consumers_on(
                resources.child_uuid(host_uuid))
        except placement_client.PlacementFailure as e:
            if e.kwargs.get('status') != 404:
                raise
            on_child = {}  # no child provider yet
        for consumer, amounts in on_child.items():
            if any(rc in amounts for rc in CLASSES):
                running[consumer] = amounts
        for rc in CLASSES:
            used = sum(a.get(rc, 0) for a in running.values())
            wanted = inventory(offer[rc], used)
            if wanted is not None:
                self.placement.set_inventory(host_uuid, host_name, rc,
                                             wanted, if_changed=True)
            else:
                self.placement.remove_slots(host_uuid, rc)
        if any(offer.values()) or running:
            self._offered[host_uuid] = host_name
        else:
            self._offered.pop(host_uuid, None)
        servers = {}
        for sid in running:
            try:
                servers[sid] = self.nova.servers.get(sid)
            except nova_client.NotFound:
                # Deleted as we looked: its allocation goes with it.
                running[sid] = {}
        now_stopped = set(over(
            [(server.created, sid, running[sid])
             for sid, server in servers.items()], offer))
        done = {}
        for sid, server in servers.items():
            try:
                what = self._server(server, until, now, sid in now_stopped)
            except Exception:
                LOG.exception('Backfill server %s: next pass again', sid)
                continue
            if what:
                done[sid] = what
        return done

    def _server(self, server, until, now, over_offer):
        """Give a backfill server its time, warn it, or shelve it."""
        meta = dict(getattr(server, 'metadata', None) or {})
        if UNTIL in meta:
            deadline = _moment(meta[UNTIL])
        elif until is not None:
            deadline = until
            self.nova.servers.set_meta(server, {UNTIL: until.isoformat()})
        else:
            deadline = now
        if over_offer or deadline <= now:
            return self._shelve(server, deadline, now)
        warning = deadline - datetime.timedelta(
            seconds=CONF.pcloud.backfill_warning)
        if now >= warning and WARNED not in meta:
            self.notifier.backfill_warning(server, deadline)
            self.nova.servers.set_meta(server, {WARNED: now.isoformat()})
            return 'warned'
        return None if UNTIL in meta else 'given its time'

    def _shelve(self, server, deadline, now):
        if server.status == 'SHELVED':
            self.nova.servers.shelve_offload(server)
            return 'offloaded'
        if server.status in _SHELVED:
            return None
        LOG.info('Backfill server %s shelved: its time (%s) is up',
                 server.id, deadline)
        self.nova.servers.shelve(server)
        self.notifier.backfill_ended(server, deadline, now)
        return 'shelved'
