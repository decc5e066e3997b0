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

"""Hosts handed over empty: other projects' instances on a lease's hosts.

Instances outlive the leases they were booted in (seeds/001), so a
pcloud:host reservation's hosts may run other projects' instances when
it starts. A BEST-EFFORT one with [pcloud_host] live_migrate_others
moves them away (seeds/001's scavenger hunt: refused at once when even
the eligible hosts running the least could not be emptied; IN-PROGRESS,
holding its hosts, until the migrations recorded in the ledger have
finished; TIMEDOUT past its deadline); any other takes empty free hosts
in place of occupied ones at its start.

A mixin of the pcloud:host plugin, which provides what it calls on the
cloud and the lease: ``nova()``, ``pools()``, ``_ctx()``, ``_admit()``,
``_notify()`` and ``_mark_reservation()`` (what the lease's reservation
shows). It raises exception.CapacityRefused, which the plugin answers
as Blazar does.
"""

import datetime

import os_traits
from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_requests as asked

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# The trait Nova sets on a disabled compute's provider: no move lands.
COMPUTE_DISABLED = os_traits.COMPUTE_STATUS_DISABLED
# Nova's task_state of a server under live migration, and its host.
MIGRATING = 'migrating'
SERVER_HOST = 'OS-EXT-SRV-ATTR:host'
# The status of each migration a reservation records.
MOVED = 'moved'
FAILED = 'failed'


def _size(server):
    flavor = getattr(server, 'flavor', None) or {}
    return {'VCPU': flavor.get('vcpus', 0),
            'MEMORY_MB': flavor.get('ram', 0),
            'DISK_GB': flavor.get('disk', 0)}


def _migrating(server):
    return getattr(server, 'OS-EXT-STS:task_state', None) == MIGRATING


class Occupants:
    """The instances of projects that are not a pcloud's tenants on

    hosts, as Nova lists them (each host asked once).
    """

    def __init__(self, nova, tenants):
        self._nova = nova
        self._tenants = tenants
        self._found = {}

    def on(self, hosts):
        """Those on ``hosts`` (records with 'service_host')."""
        found = []
        for host in hosts:
            name = host['service_host']
            if name not in self._found:
                self._found[name] = [
                    s for s in self._nova.servers.list(search_opts={
                        'all_tenants': True, 'host': name})
                    if getattr(s, 'tenant_id', None) not in self._tenants]
            found.extend(self._found[name])
        return found

    def load(self, host):
        """What would have to move off ``host``, as a sort key."""
        servers = self.on([host])
        return sum(_size(s)['MEMORY_MB'] for s in servers), len(servers)


class Vacating(object):
    """Emptying a reservation's hosts of other projects' instances."""

    def _occupants(self, terms, pools=None):
        """Occupants of hosts for the admission of a BEST-EFFORT

        reservation (``terms``: its parameters or record), which picks
        the hosts running the least of them; else None.
        """
        if terms['lease_type'] != asked.BEST_EFFORT:
            return None
        return self._movers(terms, pools)

    def _movers(self, terms, pools=None):
        """Occupants of a reservation's hosts that it moves away at its

        start, when [pcloud_host] live_migrate_others is on: a BEST-EFFORT
        one's, and the instances an earlier holder left on a hand-over's
        hosts. None: nothing is moved.
        """
        if not CONF.pcloud_host.live_migrate_others:
            return None
        pcloud = (pools or self.pools()).pclouds.get(terms['pcloud_id'])
        if pcloud is None:
            return None  # its start fails on that anyway
        return Occupants(self.nova(), codec.Pcloud(pcloud.metadata).tenants)

    def _check_candidates(self, reservation_id, params, hosts, occupants):
        """Refuse (409, its claim released) a BEST-EFFORT reservation

        that cannot have ``hosts`` (those admitted, if any) now, when even
        the eligible hosts running the least of other projects could not
        be emptied: seeds/001 asks for enough potential candidates before
        any migration starts.
        """
        if hosts and not occupants.on(hosts):
            return  # its hosts can be had now
        pools = self.pools()
        if hosts and not self._unmovable(pools, occupants.on(hosts)):
            return
        ctx = self._ctx()
        eligible = asked.eligible_hosts(
            db_snapshots.load_forest(ctx), pools, params,
            host_db.joined_service_hosts(ctx))
        least = sorted(eligible, key=occupants.load)[:params['amount']]
        others = occupants.on(least)
        stuck = self._unmovable(pools, others) if others else 0
        if not stuck:
            return
        db_claims.release(ctx, reservation_id)
        raise exception.CapacityRefused(
            'Cannot reserve %s: its hosts cannot be emptied. Even the %d '
            'eligible host(s) running the least of other projects\' '
            'instances run %d of them, and %d of these cannot move: the '
            'hosts outside every pool and pcloud that take new instances '
            'have no room for them.'
            % (asked.describe(params), len(least), len(others), stuck))

    def _vacate(self, row, occupants, previous):
        """Empty a starting reservation's hosts of other projects'

        instances (``occupants``: its _movers). (None, the record) when
        they are empty or, for a hand-over, other empty hosts took their
        place; else (IN-PROGRESS, None): migrating them, or waiting, when
        the first look finds no room elsewhere for them, for other hosts
        (a BEST-EFFORT one, these given back) or for them to go (a
        hand-over, until its deadline).
        """
        others = occupants.on(row['hosts'])
        ctx = self._ctx()
        rid = row['reservation_id']
        if not others:
            if any(m['status'] != MOVED for m in row['migrations']):
                host_db.update(ctx, rid, migrations=[
                    dict(m, status=MOVED) for m in row['migrations']])
            return None, row
        if not row['migrations'] and self._unmovable(self.pools(), others):
            LOG.info('Reservation %s: no room elsewhere for the %d '
                     'instance(s) of other projects on its hosts',
                     rid, len(others))
            if row['lease_type'] == asked.BEST_EFFORT:
                return self._wait_for_hosts(rid, previous), None
            try:
                return None, self._empty_hosts(row)
            except exception.CapacityRefused as e:
                LOG.info('Reservation %s waits for its hosts to be '
                         'emptied: %s', rid, e)
            self._hand_over_waits(row)
        else:
            self._migrate(row, others)
            self._hand_over_waits(row)
        self._mark_reservation(rid, missing_resources=True)
        if previous != host_db.IN_PROGRESS:
            self._notify(rid, previous)
        return host_db.IN_PROGRESS, None

    def _hand_over_waits(self, row):
        """A reservation other than BEST-EFFORT waits IN-PROGRESS for an

        earlier holder's instances to leave its hosts, at most
        [pcloud_host] hand_over_timeout minutes from now (its deadline,
        set once).
        """
        if row['lease_type'] == asked.BEST_EFFORT or row['deadline']:
            return
        row['deadline'] = timeutils.utcnow().replace(
            microsecond=0) + datetime.timedelta(
                minutes=CONF.pcloud_host.hand_over_timeout)
        host_db.update(self._ctx(), row['reservation_id'],
                       state=host_db.IN_PROGRESS, deadline=row['deadline'])

    def _move_ahead(self, ended):
        """Start moving what the ``ended`` reservation's lessee left on

        its hosts when another reservation has them next within
        [pcloud_host] hand_over_warning minutes, so that they are empty
        at its start (which waits for what is still moving then). Where
        no next holder waits, nothing moves (seeds/001's end), nor where
        they could not all find room. Nothing is recorded: the next start
        finds and finishes what this began.
        """
        if not CONF.pcloud_host.live_migrate_others:
            return
        ctx = self._ctx()
        soon = timeutils.utcnow() + datetime.timedelta(
            minutes=CONF.pcloud_host.hand_over_warning)
        left = {h['host_uuid'] for h in ended['hosts']}
        pools = None
        for row in host_db.list_reservations(ctx,
                                             states=[host_db.INACTIVE]):
            hosts = [h for h in row['hosts'] if h['host_uuid'] in left]
            if not hosts or row['start_time'] > soon:
                continue
            pools = pools or self.pools()
            occupants = self._movers(row, pools)
            others = occupants.on(hosts) if occupants else []
            if not others or self._unmovable(pools, others):
                continue
            for server in others:
                if _migrating(server):
                    continue
                LOG.info('Reservation %s has the hosts of %s next: '
                         'live-migrating instance %s', row['reservation_id'],
                         ended['reservation_id'], server.id)
                try:
                    self.nova().servers.live_migrate(server, None, 'auto')
                except nova_client.ClientException as e:
                    LOG.warning('Nova refused to live-migrate instance %s: '
                                '%s; the start of %s tries again', server.id,
                                e, row['reservation_id'])

    def _wait_for_hosts(self, rid, previous):
        """Give the hosts back; wait IN-PROGRESS for others to be free."""
        db_claims.release(self._ctx(), rid)
        host_db.update(self._ctx(), rid, hosts=[], migrations=[],
                       state=host_db.IN_PROGRESS)
        self._mark_reservation(rid, missing_resources=True)
        if previous != host_db.IN_PROGRESS:
            self._notify(rid, previous)
        return host_db.IN_PROGRESS

    def _migrate(self, row, others):
        """Record how each migration off the hosts stands, then start one

        for each of ``others`` (still on them) that is not migrating: its
        first, or again after a failed one (the server back where it was,
        or in ERROR, where Nova refuses: tried again at the next check).
        """
        rid = row['reservation_id']
        records = {m['server']: m for m in row['migrations']}
        left = {s.id for s in others}
        for record in records.values():
            if record['server'] not in left:
                record['status'] = MOVED  # or deleted: off the hosts
        to_start = []
        for server in others:
            record = records.setdefault(server.id, {
                'server': server.id, 'tries': 0,
                'host': getattr(server, SERVER_HOST, None)})
            if not _migrating(server):
                if record['tries']:
                    LOG.info('Reservation %s: the migration of instance %s '
                             'failed (%s); trying again', rid, server.id,
                             getattr(server, 'status', None))
                record['tries'] += 1
                to_start.append(server)
            record['status'] = MIGRATING
        # Recorded before Nova is asked: a check after a crash in between
        # finds them not migrating and starts them.
        host_db.update(self._ctx(), rid, state=host_db.IN_PROGRESS,
                       migrations=list(records.values()))
        refused = False
        for server in to_start:
            LOG.info('Reservation %s: live-migrating instance %s', rid,
                     server.id)
            try:
                self.nova().servers.live_migrate(server, None, 'auto')
            except nova_client.ClientException as e:
                LOG.warning('Reservation %s: Nova refused to live-migrate '
                            'instance %s: %s', rid, server.id, e)
                records[server.id]['status'] = FAILED
                refused = True
        if refused:
            host_db.update(self._ctx(), rid,
                           migrations=list(records.values()))

    def _unmovable(self, pools, servers):
        """How many of the instances find no room, first fit by size, on

        the hosts a move of theirs may always take (the PcloudFilter's
        fallback): outside every pool and pcloud, their compute service
        enabled, as the ledger sees their free capacity now. Their own
        pcloud's hosts, which a move tries first, are not counted: the
        answer errs on the side of refusing.
        """
        forest = db_snapshots.load_forest(self._ctx())
        excluded = set(pools.holders)
        for agg in pools.pools.values():
            excluded.update(getattr(agg, 'hosts', None) or ())
            excluded.update(codec.pool_nodes(agg.metadata).values())
        room = {}
        for provider in forest:
            if (provider.parent_uuid is None
                    and provider.name not in excluded
                    and COMPUTE_DISABLED not in provider.traits):
                room[provider.uuid] = {
                    rc: sum(forest[u].free(rc)
                            for u in forest.tree_of(provider.uuid))
                    for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB')}
        stuck = 0
        for server in sorted(servers, key=lambda s: -_size(s)['MEMORY_MB']):
            need = _size(server)
            for free in room.values():
                if all(free[rc] >= n for rc, n in need.items()):
                    for rc, n in need.items():
                        free[rc] -= n
                    break
            else:
                stuck += 1
        return stuck

    def _empty_hosts(self, row):
        """The record, with hosts that run no other project's instance:

        the lessee must never see another project's instances (instances
        outlive the leases they were booted in). Occupied hosts are
        picked again among the free ones for the rest of the window; when
        there are not enough empty, None for a BEST-EFFORT reservation (it
        waits), else CapacityRefused (the lease in ERROR).
        """
        pcloud = self.pools().pclouds.get(row['pcloud_id'])
        if pcloud is None:
            return row  # joining fails on that, saying so
        occupants = Occupants(self.nova(), codec.Pcloud(
            pcloud.metadata).tenants)
        if not occupants.on(row['hosts']):
            return row
        rid = row['reservation_id']
        now = timeutils.utcnow().replace(microsecond=0)
        why = 'too few are empty'
        try:
            hosts = self._admit(rid, asked.params_of(row), max(now, row[
                'start_time']), row['end_time'], replace=True,
                occupants=occupants)
        except exception.CapacityRefused as e:
            why = e
        else:
            # The claim is on these now, empty or not: so is the record.
            host_db.update(self._ctx(), rid, hosts=hosts)
            if not occupants.on(hosts):
                LOG.info('Reservation %s takes empty hosts in place of '
                         'occupied ones', rid)
                return host_db.get(self._ctx(), rid)
        if row['lease_type'] == asked.BEST_EFFORT:
            return None
        raise exception.CapacityRefused(
            'Host reservation %s cannot start: its hosts run instances of '
            'other projects, and %s' % (rid, why))
