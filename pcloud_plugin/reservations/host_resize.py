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
"""Resizing an active pcloud:host reservation: hosts join, or leave.

``openstack reservation lease set --reservation id=<id>,amount=<n>``
on an ACTIVE pcloud:host lease (issue 18's updates):

Growing picks the hosts to add as admission picks them (eligible for the
reservation's terms, free in the ledger from now to its end, and empty
of other projects' instances, as its start hands hosts over) and claims
them with the hosts it holds, whole, all or nothing, with the ledger's
generation compare-and-swap; a claim that lost a host to a concurrent
lease picks again. Then they join the pcloud as at the lease's start.
Refused (409, saying why) when too few are free; the quota is checked
first (403).

Shrinking lets go of hosts the lessee has emptied: Nova is asked which
of its hosts run an instance; too few empty ones is a 409 naming the
hosts still in use. The leaving hosts are disabled in the pcloud first
and Nova asked again (nothing is booted on a host as it leaves), then
they leave the pcloud and the lease's aggregate, and their claims go.

Either way the ledger claim of what is held from now starts now, so
that the usage record of what it held until now closes here and the
next one starts here (notifications.usage.host_reservation_changed).
The amount and the end change in separate updates.

Each resize is an intent (db.intents) from before its first change to
after its last, with what it needs to finish or undo it. The plugin's
reconcile() hands the interrupted ones to recover(): one whose process
died is finished once the ledger holds what it changed to (a grow whose
claim was made, a shrink whose hosts left), else undone; one that raised
(its own undo failed: the user was told it changed nothing) is undone.

A resize refused raises exception.UpdateRefused or CapacityRefused, which
the plugin answers as Blazar's CantUpdateParameter (409).
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.capacity import host_windows
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage_records
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import admission
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.reservations import host_vacate

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# The intents (db.intents) of resizes, and their fault steps.
GROW = 'host-lease-grow'
SHRINK = 'host-lease-shrink'
OPERATIONS = (GROW, SHRINK)


def _now():
    return timeutils.utcnow().replace(microsecond=0)


def _moment(value):
    return value.isoformat() if value is not None else None


def _parse(value):
    return datetime.datetime.fromisoformat(value) if value else None


def _uuids(hosts):
    return [h['host_uuid'] for h in hosts]


def resize(plugin, row, params, end):
    """Change the amount of an ACTIVE reservation (``row``) to

    params['amount'], its other terms and its end as they are.
    """
    rid = row['reservation_id']
    if end != row['end_time']:
        raise exception.UpdateRefused(
            'The amount and the end of active host reservation %s change '
            'in separate updates.' % rid)
    now = _now()
    if now >= row['end_time']:
        raise exception.UpdateRefused(
            'Host reservation %s ends now: its amount cannot change.' % rid)
    if params['amount'] > row['amount']:
        _grow(plugin, row, params['amount'], now)
    else:
        _shrink(plugin, row, params['amount'], now)


def _claim(plugin, rid, hosts, start, end):
    host_db.claim_hosts(plugin._ctx(), rid, _uuids(hosts), start, end,
                        replace=True)


def _notify(plugin, before, details):
    """The record of what ``before`` held, closed where the resize

    happened, and what is held from there.
    """
    after = host_db.get(plugin._ctx(), before['reservation_id'])
    plugin.notifier.host_reservation_changed(
        before, after, _parse(details['held_from']), _parse(details['at']))


def _details(plugin, row, amount, at, **more):
    """What recover() needs of a resize: when, from what, to what."""
    held = db_claims.get_claims(plugin._ctx(), row['reservation_id'])
    details = {
        'lease_id': row['lease_id'], 'at': _moment(at),
        'held_from': _moment(usage_records.held_since(
            held, row['start_time'], at)),
        'held_start': _moment(held['start'] if held else row['start_time']),
        'end': _moment(row['end_time']),
        'amount_before': row['amount'], 'amount': amount,
        'kept': _uuids(row['hosts'])}
    details.update(more)
    return details


# --- growing ---------------------------------------------------------------

def _pick_more(plugin, row, extra, start):
    """``extra`` hosts to add, as admission picks them: eligible for the

    reservation's terms, free in the ledger in [start, its end), not its
    own, and running no instance of projects outside the pcloud (the
    lessee never sees theirs). Raises CapacityRefused saying why not.
    """
    ctx = plugin._ctx()
    pools = plugin.pools()
    params = asked.params_of(row)
    mine = set(_uuids(row['hosts']))
    eligible = [h for h in asked.eligible_hosts(
        db_snapshots.load_forest(ctx), pools, params,
        host_db.joined_service_hosts(ctx)) if h['host_uuid'] not in mine]
    refused = ('Cannot grow the amount of reservation %s from %d to %d '
               '(%s)' % (row['reservation_id'], row['amount'],
                         row['amount'] + extra, asked.describe(
                             dict(params, amount=row['amount'] + extra))))
    if len(eligible) < extra:
        raise exception.CapacityRefused(
            '%s: only %d other host(s) could ever serve it.'
            % (refused, len(eligible)))
    end = row['end_time']
    busy = host_db.busy_intervals(ctx, _uuids(eligible), start, before=end)
    free = [h for h in eligible
            if host_windows.is_free(busy[h['host_uuid']], start, end)]
    pcloud = pools.pclouds.get(row['pcloud_id'])
    tenants = codec.Pcloud(pcloud.metadata).tenants if pcloud else ()
    occupants = host_vacate.Occupants(plugin.nova(), tenants)
    picked, occupied = [], 0
    for host in free:
        if len(picked) == extra:
            break
        if occupants.on([host]):
            occupied += 1
        else:
            picked.append(host)
    if len(picked) == extra:
        return picked
    why = ('%s: %d of the %d other eligible host(s) are free from %s to %s'
           % (refused, len(free), len(eligible), start, end))
    if occupied:
        why += (', and %d of those run instances of other projects'
                % occupied)
    raise exception.CapacityRefused(why + '; %d more needed.' % extra)


def _names(row, count):
    """``count`` names for new hosts in the pcloud, unused by the others."""
    used = {h['name'] for h in row['hosts']}
    prefix = 'lease-%s-' % row['reservation_id'][:8]
    names, n = [], 0
    while len(names) < count:
        n += 1
        if prefix + str(n) not in used:
            names.append(prefix + str(n))
    return names


def _grow(plugin, row, amount, now):
    rid = row['reservation_id']
    ctx = plugin._ctx()
    extra = amount - row['amount']
    if plugin.pools().pclouds.get(row['pcloud_id']) is None:
        raise exception.UpdateRefused(
            'Pcloud %s of reservation %s is gone.' % (row['pcloud_id'], rid))
    plugin._check_quota(row['project_id'],
                        dict(asked.params_of(row), amount=amount), now,
                        row['end_time'], exclude=rid)
    fresh = None
    races = admission.Races(CONF.pcloud_host.admission_retries + 2, rid)
    for race in races:
        added = _pick_more(plugin, row, extra, now)
        if fresh is None:
            # As admission: what Placement changed on them is read first.
            fresh = not plugin.mirror().refresh(ctx, _uuids(added))
            if not fresh:
                continue
        for host, name in zip(added, _names(row, extra)):
            host.update(name=name, joined=False)
        details = _details(plugin, row, amount, now, added=added)
        intent = intents.begin(ctx, GROW, rid, details)
        with race:
            try:
                faults.step(GROW, 'claim')
                _claim(plugin, rid, row['hosts'] + added, now,
                       row['end_time'])
            except Exception:
                intents.finish(ctx, intent)  # nothing was claimed
                raise
            break
    else:
        LOG.info('Growing reservation %s lost every race; last: %s', rid,
                 races.last)
        raise exception.CapacityRefused(
            'Cannot grow reservation %s: concurrent leases kept taking the '
            'hosts picked.' % rid)
    try:
        _finish_grow(plugin, row, details)
    except Exception as e:
        raise _undone(plugin, ctx, intent, rid, details, _undo_grow,
                      'growing', e)
    intents.finish(ctx, intent)
    LOG.info('Reservation %s grew from %d to %d host(s)', rid, row['amount'],
             amount)


def _finish_grow(plugin, before, details):
    """Record the added hosts (claimed) and join them into the pcloud as

    the lease's start does; then the usage record. Safe to run again.
    """
    ctx = plugin._ctx()
    rid = before['reservation_id']
    current = host_db.get(ctx, rid)
    known = set(_uuids(current['hosts']))
    hosts = current['hosts'] + [h for h in details['added']
                                if h['host_uuid'] not in known]
    faults.step(GROW, 'record')
    host_db.update(ctx, rid, hosts=hosts, amount=details['amount'])
    faults.step(GROW, 'join')
    plugin._join(host_db.get(ctx, rid))
    faults.step(GROW, 'notify')
    _notify(plugin, before, details)


def _take_out(plugin, row, hosts):
    """Take ``hosts`` of a reservation out of its lease aggregate and the

    pcloud (disabled first, as at the end); each recorded as it leaves.
    True when all is done.
    """
    done = True
    for host in hosts:
        if row['aggregate_id']:
            try:
                plugin.nova().aggregates.remove_host(row['aggregate_id'],
                                                     host['service_host'])
            except nova_client.NotFound:
                pass  # not (or no longer) a member
        # Its lease aggregate stays: only this host leaves the pcloud.
        done = plugin._leave(dict(row, hosts=[host], aggregate_id=None)) \
            and done
    return done


def _undone(plugin, ctx, intent, rid, details, undo, doing, error):
    """The refusal of a resize Nova failed midway, once undo (_undo_grow

    or _undo_shrink) has put it back; if the undo fails too, the intent
    is marked failed and the reconciler undoes it.
    """
    LOG.exception('%s reservation %s failed in Nova; undoing it',
                  doing.capitalize(), rid)
    try:
        undo(plugin, rid, details)
    except Exception:
        LOG.exception('Could not undo the %s of reservation %s; the '
                      'reconciler does', doing, rid)
        intents.fail(ctx, intent)
    else:
        intents.finish(ctx, intent)
    return exception.UpdateRefused(
        'Nova failed while %s reservation %s, which stays as it was; try '
        'again: %s' % (doing, rid, error))


def _undo_grow(plugin, rid, details):
    """The reservation as before the grow: the added hosts out of Nova,

    the claim and the record back on the hosts kept.
    """
    ctx = plugin._ctx()
    row = host_db.get(ctx, rid)
    added = {h['host_uuid'] for h in details['added']}
    leaving = [h for h in row['hosts'] if h['host_uuid'] in added]
    if not _take_out(plugin, row, leaving):
        raise exception.NovaError(
            reason='hosts added to reservation %s are still in pcloud %s'
            % (rid, row['pcloud_id']))
    kept = [h for h in row['hosts'] if h['host_uuid'] not in added]
    held = db_claims.get_claims(ctx, rid)
    if held and added & set(_claimed_roots(ctx, held)):
        _claim(plugin, rid, kept, _parse(details['held_start']),
               _parse(details['end']))
    host_db.update(ctx, rid, hosts=kept, amount=details['amount_before'])


def _claimed_roots(ctx, held):
    """Root provider uuids of the hosts a claim is on."""
    providers = db_snapshots.load_forest(ctx).providers
    return {providers[uuid].root_uuid for uuid in held['amounts']
            if uuid in providers}


# --- shrinking -------------------------------------------------------------

def _in_use(plugin, hosts):
    """{host name in the pcloud: instances on it}, as Nova lists them."""
    found = {}
    for host in hosts:
        servers = plugin.nova().servers.list(search_opts={
            'all_tenants': True, 'host': host['service_host']})
        if servers:
            found[host['name']] = len(servers)
    return found


def _busy_refusal(row, amount, busy):
    return exception.UpdateRefused(
        'Cannot shrink reservation %s from %d to %d host(s): only %d of its '
        'hosts are empty. Still in use: %s. Delete or move their instances '
        'first.' % (row['reservation_id'], row['amount'], amount,
                    row['amount'] - len(busy),
                    ', '.join('%s (%d instance(s))' % (name, busy[name])
                              for name in sorted(busy))))


def _set_state(plugin, row, hosts, state):
    pcloud = plugin.pools().pclouds.get(row['pcloud_id'])
    if pcloud is not None and hosts:
        plugin.nova().aggregates.set_metadata(pcloud.id, {
            codec.host_state_key(h['host_name']): state for h in hosts})


def _shrink(plugin, row, amount, now):
    rid = row['reservation_id']
    ctx = plugin._ctx()
    fewer = row['amount'] - amount
    busy = _in_use(plugin, row['hosts'])
    empty = [h for h in row['hosts'] if h['name'] not in busy]
    if len(empty) < fewer:
        raise _busy_refusal(row, amount, busy)
    # The last named leave first: the names left stay low.
    leaving = sorted(empty, key=lambda h: (len(h['name']), h['name']),
                     reverse=True)[:fewer]
    details = _details(plugin, row, amount, now, leaving=leaving)
    intent = intents.begin(ctx, SHRINK, rid, details)
    try:
        # Nothing new lands on them from here; then look again for what
        # was booted meanwhile.
        faults.step(SHRINK, 'disable')
        _set_state(plugin, row, leaving, codec.DISABLED)
        booted = _in_use(plugin, leaving)
        if booted:
            _set_state(plugin, row, leaving, codec.ENABLED)
            intents.finish(ctx, intent)
            busy.update(booted)
            raise _busy_refusal(row, amount, busy)
        _leave_pcloud(plugin, rid, details)
    except exception.UpdateRefused:
        raise
    except Exception as e:
        raise _undone(plugin, ctx, intent, rid, details, _undo_shrink,
                      'shrinking', e)
    # Out of Nova: from here it only goes on (recover() finishes it).
    _release(plugin, row, details)
    intents.finish(ctx, intent)
    LOG.info('Reservation %s shrank from %d to %d host(s)', rid,
             row['amount'], amount)


def _leave_pcloud(plugin, rid, details):
    """The leaving hosts out of the lease's aggregate and the pcloud."""
    row = host_db.get(plugin._ctx(), rid)
    gone = {h['host_uuid'] for h in details['leaving']}
    faults.step(SHRINK, 'leave')
    if not _take_out(plugin, row, [h for h in row['hosts']
                                   if h['host_uuid'] in gone]):
        raise exception.NovaError(
            reason='hosts of reservation %s did not leave pcloud %s'
            % (rid, row['pcloud_id']))


def _release(plugin, before, details):
    """Once the leaving hosts are out of Nova: the rest claimed from the

    resize on (their claims go), the record, the usage record. Safe to
    run again.
    """
    ctx = plugin._ctx()
    rid = before['reservation_id']
    gone = {h['host_uuid'] for h in details['leaving']}
    kept = [h for h in host_db.get(ctx, rid)['hosts']
            if h['host_uuid'] not in gone]
    faults.step(SHRINK, 'release')
    _claim(plugin, rid, kept, _parse(details['at']), _parse(details['end']))
    faults.step(SHRINK, 'record')
    host_db.update(ctx, rid, hosts=kept, amount=details['amount'])
    faults.step(SHRINK, 'notify')
    _notify(plugin, before, details)


def _undo_shrink(plugin, rid, details):
    """The leaving hosts back in the pcloud, enabled (their claims were

    never released: the claim changes after Nova).
    """
    ctx = plugin._ctx()
    row = host_db.get(ctx, rid)
    leaving = {h['host_uuid'] for h in details['leaving']}
    plugin._join(row)
    _set_state(plugin, row, [h for h in row['hosts']
                             if h['host_uuid'] in leaving], codec.ENABLED)


# --- after crashes ---------------------------------------------------------

def recover(plugin, ctx, older_than):
    """Finish or undo the resizes a crash or a failed undo interrupted

    (see the module's docstring); {intent id: what was done}.
    """
    return intents.recover(
        ctx, intents.interrupted(ctx, OPERATIONS, older_than),
        lambda intent: _recover(plugin, intent), plugin.notifier,
        take_first=True)


def _recover(plugin, intent):
    ctx = plugin._ctx()
    rid = intent['subject']
    details = intent['details']
    try:
        row = host_db.get(ctx, rid)
    except host_db.HostReservationNotFound:
        return None  # gone with its lease: its end took it all out
    if row['state'] != host_db.ACTIVE:
        return None  # ended: the end took every host out
    held = db_claims.get_claims(ctx, rid)
    roots = _claimed_roots(ctx, held) if held else set()
    before = dict(row, amount=details['amount_before'])
    if intent['operation'] == GROW:
        added = {h['host_uuid'] for h in details['added']}
        if not added <= roots:
            # Never claimed: at most names the join wrote are left.
            if any(h['host_uuid'] in added for h in row['hosts']):
                _undo_grow(plugin, rid, details)
            return None
        if intent['failed']:
            _undo_grow(plugin, rid, details)
            return 'the hosts added to reservation %s left again' % rid
        before['hosts'] = [h for h in row['hosts']
                           if h['host_uuid'] not in added]
        _finish_grow(plugin, before, details)
        return 'reservation %s grew to %d host(s)' % (rid, details['amount'])
    leaving = [h for h in row['hosts']
               if h['host_uuid'] in {g['host_uuid']
                                     for g in details['leaving']}]
    if {h['host_uuid'] for h in leaving} & roots:
        # Still claimed: not out of Nova yet. Undone if the user was told
        # so, or if the lessee booted on a host meanwhile.
        if intent['failed'] or _in_use(plugin, leaving):
            _undo_shrink(plugin, rid, details)
            return 'the hosts leaving reservation %s are back' % rid
        _set_state(plugin, row, leaving, codec.DISABLED)
        if _in_use(plugin, leaving):
            _undo_shrink(plugin, rid, details)
            return 'the hosts leaving reservation %s are back' % rid
        _leave_pcloud(plugin, rid, details)
    before['hosts'] = row['hosts'] + [
        h for h in details['leaving']
        if h['host_uuid'] not in set(_uuids(row['hosts']))]
    _release(plugin, before, details)
    return 'reservation %s shrank to %d host(s)' % (rid, details['amount'])
