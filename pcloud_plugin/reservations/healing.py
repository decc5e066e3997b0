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
"""Healing: reservations that hold a compute that failed are moved.

A compute has failed, for healing, while Nova's os-services says its
nova-compute service is down or an operator disabled it. Each pass
(monitor.PollingMonitor, every ``[pcloud] healing_interval`` seconds)
looks at every reservation of its plugin that holds such a host and ends
after now:

* one that has not started is placed again for its window on free
  capacity, through the same engine and ledger claims as admission, the
  failed hosts (every failed compute, in fact) avoided; its slots or hosts
  elsewhere stay where they are;
* one that has started is moved the same way from now on, but only off
  the failed hosts where none of the lessee's instances run: those are
  never left behind (seeds/001). A move of a started one changes what
  its project holds: a usage update event closes what it held until now.

What cannot be placed again keeps its claim on the failed host: it
overbooks nothing, and it is whole again the moment the host comes back.
It is degraded: ``missing_resources`` on Blazar's reservation and
``degraded`` on its lease, as Blazar's own resource monitor sets them,
and one ``pcloud.healing.degraded`` event each time it becomes so.
Later passes try it again; once its hosts are all up and enabled again
(the operator's enable, or a move) the flag is cleared. A started one
that was moved has ``resources_changed`` set, as Blazar's monitor does.

Our own records keep their state (not started, active): degraded is
the lease's flag over them, and the failure Nova reports. What a lease
shows is read and marked through the plugin's ``lease_flags``
(blazar.lease_flags), so this module imports nothing of Blazar.
"""

import collections
import re

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.capacity import host_windows
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.cloud import promises
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import admission
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.reservations import registry
from pcloud_plugin.reservations import slots as slots_mod

LOG = logging.getLogger(__name__)
CONF = conf.CONF

MISSING = 'missing_resources'
CHANGED = 'resources_changed'


class JoinFailed(Exception):
    """A started reservation moved, but Nova failed it midway."""


def _now():
    return timeutils.utcnow().replace(microsecond=0)


# The reason a maintenance (reservations.maintenance) gives Nova when it
# disables a compute service: until when, so that a reservation that
# starts after it is not moved.
_MAINTENANCE = 'pcloud maintenance %s until %s'
_MAINTENANCE_RE = re.compile(r'^pcloud maintenance (\S+) until (\S+)')


def maintenance_reason(maintenance_id, end, reason=None):
    """The disabled_reason of a service a maintenance disabled."""
    text = _MAINTENANCE % (maintenance_id, end.isoformat())
    # Nova takes 255 characters at most.
    return ('%s (%s)' % (text, reason) if reason else text)[:255]


def maintenance_of(reason):
    """(maintenance id, end) of a disabled_reason maintenance_reason

    made, or None.
    """
    found = _MAINTENANCE_RE.match(reason or '')
    if found is None:
        return None
    try:
        return found.group(1), timeutils.parse_isotime(
            found.group(2)).replace(tzinfo=None)
    except ValueError:
        return None


class Failures:
    """The computes that failed, from one read of Nova's os-services.

    ``nova``: a python-novaclient Client (2.53 or later). Compute node
    providers (named after hypervisors) are matched to their service host
    through the hypervisors list, read only when something failed. A
    compute a maintenance disabled has failed until the maintenance ends.
    """

    def __init__(self, nova):
        self._nova = nova
        self.services = {}
        self._until = {}
        for service in nova.services.list(binary='nova-compute'):
            if service.state == 'down' or getattr(service, 'forced_down',
                                                  False):
                self.services[service.host] = 'its nova-compute is down'
            elif service.status == 'disabled':
                reason = getattr(service, 'disabled_reason', None)
                self.services[service.host] = (
                    'its nova-compute is disabled' +
                    (' (%s)' % reason if reason else ''))
                maintenance = maintenance_of(reason)
                if maintenance is not None:
                    self._until[service.host] = maintenance[1]
        self._nodes = None

    def why(self, host_uuid, host_name, service_host=None, from_=None):
        """Why a host (compute node provider) failed, or None; for a

        reservation starting at ``from_`` if given.
        """
        if not self.services:
            return None
        if service_host is None:
            if self._nodes is None:
                self._nodes = {
                    str(hv.id): (getattr(hv, 'service', None) or {}).get(
                        'host') for hv in self._nova.hypervisors.list()}
            service_host = self._nodes.get(host_uuid) or host_name
        until = self._until.get(service_host)
        if until is not None and from_ is not None and from_ >= until:
            return None
        return self.services.get(service_host)


# --- what the lease shows ------------------------------------------------

def _flag(plugin, reservation_id, flag, flags):
    """Set a flag on the reservation's lease (plugin.lease_flags); False

    if it was set already.
    """
    if not plugin.lease_flags.set_flag(reservation_id, flag):
        return False
    flags.setdefault(reservation_id, {})[flag] = True
    return True


def degrade(plugin, row, hosts, why, flags):
    """Flag a reservation that could not be healed; its event once.

    ``hosts``: {name the lessee knows: why that compute failed}.
    """
    rid = row['reservation_id']
    why = '%s: %s' % ('; '.join('%s %s' % (name, failed) for name, failed
                                in sorted(hosts.items())), why)
    if _flag(plugin, rid, MISSING, flags):
        LOG.warning('%s reservation %s is degraded: %s',
                    plugin.resource_type, rid, why)
        plugin.notifier.reservation_degraded(plugin.resource_type, row,
                                             list(hosts), why)


def restore(plugin, whole, flags):
    """Clear missing_resources where ``whole(reservation id)`` is True

    (see lease_flags.clear_missing).
    """
    for rid in plugin.lease_flags.clear_missing(plugin.resource_type,
                                                whole):
        flags.setdefault(rid, {})[MISSING] = False
        LOG.info('Reservation %s is whole again', rid)


# --- virtual:instance --------------------------------------------------------

def kept_amounts(amounts, forest, leaving, slots, moving, per_slot):
    """What a claim keeps when ``moving`` slots leave the hosts (roots)

    ``leaving``: all it has on their trees, and what they took from
    sharing providers (per slot, less what their trees gave), taken
    from sharing providers in name order.
    """
    kept, from_trees = {}, collections.Counter()
    for rp, res in amounts.items():
        root = forest[rp].root_uuid if rp in forest.providers else None
        if root in leaving:
            from_trees.update(res)
        else:
            kept[rp] = dict(res)
    short = {rc: max(0, n * moving - from_trees[rc])
             for rc, n in per_slot.items()}
    own = {s['host_uuid'] for s in slots}
    for rp in sorted(kept, key=lambda u: forest[u].name
                     if u in forest.providers else u):
        root = forest[rp].root_uuid if rp in forest.providers else rp
        if root in own:
            continue
        for rc in kept[rp]:
            taken = min(short.get(rc, 0), kept[rp][rc])
            kept[rp][rc] -= taken
            short[rc] = short.get(rc, 0) - taken
    return {rp: {rc: n for rc, n in res.items() if n}
            for rp, res in kept.items() if any(res.values())}


def heal_instances(plugin):
    """One pass for the virtual:instance plugin: {rid: flags set}."""
    ctx = plugin._ctx()
    failures = Failures(plugin.nova().nova)
    flags = {}
    for row in res_db.list_reservations(ctx, ending_after=_now()):
        if row['state'] == res_db.ENDING:
            continue
        bad = {s['host_uuid']: why for s in row['slots']
               for why in [failures.why(s['host_uuid'], s['host_name'],
                                        from_=row['start_time'])]
               if why}
        if not bad or not plugin.lease_flags.settled(row['lease_id']):
            continue
        try:
            _heal_instance(plugin, row, bad, failures, flags)
        except Exception:
            LOG.exception('Could not heal reservation %s',
                          row['reservation_id'])

    def whole(rid):
        try:
            row = res_db.get(ctx, rid)
        except res_db.ReservationNotFound:
            return None
        return not any(failures.why(s['host_uuid'], s['host_name'],
                                    from_=row['start_time'])
                       for s in row['slots'])

    restore(plugin, whole, flags)
    return flags


def _heal_instance(plugin, row, bad, failures, flags):
    rid = row['reservation_id']
    names = {s['host_uuid']: s['host_name'] for s in row['slots']}
    stuck = set()
    if row['state'] == res_db.ACTIVE:
        placement = plugin.placement()
        stuck = {s['host_uuid'] for s in row['slots']
                 if s['host_uuid'] in bad and s['placed'] and
                 placement.slots_in_use(s['host_uuid'],
                                        row['resource_class'])}
    movable = set(bad) - stuck
    if movable:
        try:
            _move_slots(plugin, row, movable,
                        set(bad) | _failed_roots(plugin, failures))
        except (exception.CapacityRefused, promises.NoRoomInPlacement) as e:
            degrade(plugin, row,
                    {names[h]: bad[h] for h in bad},
                    'no free capacity to move it to: %s' % e, flags)
            return
        LOG.warning('Reservation %s moved off %s: %s', rid,
                    ', '.join(sorted(names[h] for h in movable)),
                    '; '.join(sorted(set(bad[h] for h in movable))))
        if row['state'] == res_db.ACTIVE:
            _flag(plugin, rid, CHANGED, flags)
    if stuck:
        degrade(plugin, row,
                {names[h]: bad[h] for h in stuck},
                'instances booted into it run there', flags)


def _failed_roots(plugin, failures):
    """Root providers of every failed compute the ledger knows."""
    if not failures.services:
        return set()
    forest = db_snapshots.load_forest(plugin._ctx())
    return {p.uuid for p in forest if p.parent_uuid is None and
            failures.why(p.uuid, p.name)}


def _move_slots(plugin, row, movable, avoid):
    """Place again the slots on ``movable`` hosts and move the claim

    there (avoiding ``avoid``); the others stay. For a started one, its
    Placement inventory and aggregate follow, from now on.
    """
    ctx = plugin._ctx()
    rid = row['reservation_id']
    active = row['state'] == res_db.ACTIVE
    held = db_claims.get_claims(ctx, rid)
    params = {p: row[p] for p in slots_mod.PARAMS}
    moving = sum(s['slots'] for s in row['slots']
                 if s['host_uuid'] in movable)
    staying = [s for s in row['slots'] if s['host_uuid'] not in movable]
    kept = kept_amounts(held['amounts'], db_snapshots.load_forest(ctx),
                        movable, row['slots'], moving,
                        slots_mod.per_slot(params))
    start = max(held['start'], _now()) if active else held['start']
    end = row['end_time']
    hosts = {s['host_uuid'] for s in staying}
    where = {'avoid_hosts': set(avoid)}
    if params['affinity'] is False:
        where['avoid_hosts'] |= hosts
    elif params['affinity'] is True and hosts:
        where = {'only_hosts': hosts - set(avoid)}
    else:
        where['preferred'] = sorted(hosts)
    slot_claims = plugin.slot_claims()
    plan = slot_claims.claim_beside(
        rid, slot_claims.request(params, amount=moving), start, end, held,
        kept, where)
    slots = slots_mod.grown(staying, plan)

    if not active:
        try:
            plugin.promises().sync(set(held['amounts']) | set(
                plan.amounts))
        except Exception:
            put_slots_back(plugin, row, held, sync=False)
            raise
        res_db.update(ctx, rid, slots=slots)
        return
    res_db.update(ctx, rid, slots=slots)
    try:
        plugin._place_slots(res_db.get(ctx, rid))
    except Exception as e:
        LOG.exception('Could not move reservation %s in Nova or '
                      'Placement; undoing it', rid)
        put_slots_back(plugin, row, held, sync=False)
        plugin._shrink_back(row, slots)
        raise exception.CapacityRefused('Nova or Placement failed: %s' % e)
    _leave_hosts(plugin, row, movable)
    plugin.promises().sync(set(held['amounts']))
    plugin._notify_change(row, held, start)


def put_slots_back(plugin, row, held, sync=True):
    """Undo a move of a reservation (its ``row`` and claims ``held``

    before it): its claim and slots as they were; with ``sync``, its
    promises follow.
    """
    ctx = plugin._ctx()
    rid = row['reservation_id']
    moved_to = set(db_claims.get_claims(ctx, rid)['amounts'])
    db_claims.change_claim(ctx, rid, amounts=held['amounts'],
                           start=held['start'], end=held['end'],
                           unit=slots_mod.per_slot(row))
    res_db.update(ctx, rid, slots=row['slots'])
    if sync:
        plugin.promises().sync(moved_to | set(held['amounts']))


def _leave_hosts(plugin, row, hosts):
    """A started reservation's slots gone from ``hosts``: its Placement

    inventory there and the hosts' membership of its aggregate (best
    effort: what is left is removed with the reservation).
    """
    nova = plugin.nova()
    for slot in row['slots']:
        if slot['host_uuid'] not in hosts:
            continue
        try:
            if slot['placed']:
                plugin.placement().remove_slots(slot['host_uuid'],
                                                row['resource_class'])
            if row['aggregate_id']:
                nova.nova.aggregates.remove_host(
                    row['aggregate_id'], nova.service_host(
                        slot['host_uuid'], slot['host_name']))
        except nova_client.NotFound:
            pass
        except Exception:
            LOG.exception('Could not take reservation %s off %s',
                          row['reservation_id'], slot['host_name'])


# --- pcloud:host -------------------------------------------------------------

def heal_hosts(plugin):
    """One pass for the pcloud:host plugin: {rid: flags set}."""
    ctx = plugin._ctx()
    failures = Failures(plugin.nova())
    flags = {}
    for row in host_db.list_reservations(
            ctx, states=[host_db.INACTIVE, host_db.ACTIVE],
            ending_after=_now()):
        bad = {h['host_uuid']: why for h in row['hosts']
               for why in [failures.why(h['host_uuid'], h['host_name'],
                                        h['service_host'],
                                        from_=row['start_time'])] if why}
        if (bad or not all(h['joined'] for h in row['hosts'])) and \
                not plugin.lease_flags.settled(row['lease_id']):
            continue
        try:
            if bad:
                _heal_host_lease(plugin, row, bad, failures, flags)
            elif not all(h['joined'] for h in row['hosts']) and (
                    row['state'] == host_db.ACTIVE and
                    plugin.lease_flags.is_set(row['reservation_id'], MISSING)):
                # Moved, but its new hosts did not all join.
                plugin._join(row)
        except Exception:
            LOG.exception('Could not heal host reservation %s',
                          row['reservation_id'])

    def whole(rid):
        try:
            row = host_db.get(ctx, rid)
        except host_db.HostReservationNotFound:
            return None
        if row['state'] not in (host_db.INACTIVE, host_db.ACTIVE):
            return None  # waiting (BEST-EFFORT) has the flag too
        return not any(failures.why(h['host_uuid'], h['host_name'],
                                    h['service_host'],
                                    from_=row['start_time'])
                       for h in row['hosts']) and (
            row['state'] == host_db.INACTIVE or
            all(h['joined'] for h in row['hosts']))

    restore(plugin, whole, flags)
    return flags


def _servers_on(plugin, host):
    return plugin.nova().servers.list(search_opts={
        'all_tenants': True, 'host': host['service_host']})


def _heal_host_lease(plugin, row, bad, failures, flags):
    rid = row['reservation_id']
    names = {h['host_uuid']: h['name'] for h in row['hosts']}
    active = row['state'] == host_db.ACTIVE
    # A leased host is handed over empty: what runs there is the
    # lessee's (or its pcloud's tenants'), as the registry says.
    running = (registry.hosts_running(plugin._ctx(), rid) if active
               else set())
    stuck = {h['host_uuid'] for h in row['hosts']
             if h['host_uuid'] in bad and h['host_uuid'] in running}
    movable = [h for h in row['hosts']
               if h['host_uuid'] in bad and h['host_uuid'] not in stuck]
    if movable:
        try:
            _replace_hosts(plugin, row, movable, failures)
        except exception.CapacityRefused as e:
            degrade(plugin, row,
                    {names[h]: bad[h] for h in bad},
                    'no free host to move it to: %s' % e, flags)
            return
        except JoinFailed as e:
            degrade(plugin, row,
                    {h['name']: bad[h['host_uuid']] for h in movable},
                    str(e), flags)
            return
        LOG.warning('Host reservation %s moved off %s', rid,
                    ', '.join(sorted(h['host_name'] for h in movable)))
        if active:
            _flag(plugin, rid, CHANGED, flags)
    if stuck:
        degrade(plugin, row,
                {names[h]: bad[h] for h in stuck},
                'instances of its pcloud run there', flags)


def _replace_hosts(plugin, row, movable, failures):
    """Pick free hosts in place of ``movable`` as admission picks them

    (eligible, free in the window, no failed compute; a started one's
    empty too) and claim the reservation's hosts whole again; a started
    one's new hosts join its pcloud under the names of those they
    replace, which leave it.
    """
    ctx = plugin._ctx()
    rid = row['reservation_id']
    active = row['state'] == host_db.ACTIVE
    held_from = plugin._held_since(row) if active else None
    params = asked.params_of(row)
    start = max(row['start_time'], _now()) if active else row['start_time']
    end = row['end_time']
    leaving = {h['host_uuid'] for h in movable}
    taken = {h['host_uuid'] for h in row['hosts']}
    races = admission.Races(CONF.pcloud_host.admission_retries + 1, rid)
    for race in races:
        eligible = [h for h in asked.eligible_hosts(
            db_snapshots.load_forest(ctx), plugin.pools(), params,
            host_db.joined_service_hosts(ctx))
            if h['host_uuid'] not in taken and not failures.why(
                h['host_uuid'], h['host_name'], h['service_host'])]
        busy = host_db.busy_intervals(
            ctx, [h['host_uuid'] for h in eligible], start, before=end,
            exclude_consumer=rid)
        free = []
        for host in eligible:
            if len(free) == len(movable):
                break
            # A started one's must be empty too: asked only of those free.
            if host_windows.is_free(busy[host['host_uuid']], start, end) \
                    and not (active and _servers_on(plugin, host)):
                free.append(host)
        if len(free) < len(movable):
            raise exception.CapacityRefused(
                'Cannot place again %d host(s) of reservation %s from %s '
                'to %s: %d of the eligible hosts are free, up and empty.'
                % (len(movable), rid, start, end, len(free)))
        new = []
        for old, host in zip(movable, free):
            new.append(dict(host, name=old['name'], joined=False))
        hosts = [h for h in row['hosts']
                 if h['host_uuid'] not in leaving] + new
        with race:
            host_db.claim_hosts(ctx, rid, [h['host_uuid'] for h in hosts],
                                start, end, replace=True)
            break
    else:
        raise exception.CapacityRefused(
            'Cannot place again reservation %s: concurrent leases kept '
            'taking the hosts picked (%s).' % (rid, races.last))
    if not active:
        host_db.update(ctx, rid, hosts=hosts)
        return
    gone = dict(row, hosts=[dict(h) for h in movable], aggregate_id=None)
    if not plugin._leave(gone):
        # Still in the pcloud: it keeps them, and its old claim.
        host_db.claim_hosts(ctx, rid,
                            [h['host_uuid'] for h in row['hosts']],
                            row['start_time'], end, replace=True)
        raise exception.CapacityRefused(
            'Nova failed while taking the failed hosts out of its pcloud.')
    for host in movable:
        try:
            plugin.nova().aggregates.remove_host(row['aggregate_id'],
                                                 host['service_host'])
        except nova_client.NotFound:
            pass
        except Exception:
            LOG.exception('Could not take %s out of the aggregate of '
                          'reservation %s', host['host_name'], rid)
    host_db.update(ctx, rid, hosts=hosts)
    plugin.notifier.host_reservation_changed(
        row, host_db.get(ctx, rid), held_from, start)
    try:
        plugin._join(host_db.get(ctx, rid))
    except Exception as e:
        # Degraded until a later pass has them join.
        LOG.exception('Could not put the new hosts of reservation %s in '
                      'its pcloud', rid)
        raise JoinFailed('its new hosts could not join its pcloud: %s' % e)
