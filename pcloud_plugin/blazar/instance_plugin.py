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
"""virtual:instance reservations on the capacity ledger (seeds/003).

Enabled in blazar.conf in place of Blazar's own plugin::

    [manager]
    plugins = pcloud.virtual.instance

Admission: the slots are laid out by blazar.slots over the
allocation-candidates engine's answer for the lease's window, then claimed
in the ledger in one all-or-nothing claim whose consumer is the
reservation id. The claim's generation compare-and-swap is what keeps
leases created at once by several API workers and managers from sharing a
slot; a plan that lost such a race is made again from a fresh read.

At start the reservation's Nova and Placement objects are made
(blazar.resources); at end they are removed and the claim released.
Instances booted into the reservation keep running (seeds/001).

Blazar's own instance_reservations row is kept as the display record, so
that the lease API shows vcpus, memory_mb, disk_gb, amount, affinity and
the flavor, aggregate and server group ids as seeds/003 gives them.
"""

import collections
import threading

from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
from blazar.utils.openstack import nova as blazar_nova
from oslo_log import log as logging
from oslo_utils import strutils
from oslo_utils import timeutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import hosts_view
from pcloud_plugin.blazar import monitor
from pcloud_plugin.blazar import promises
from pcloud_plugin.blazar import reconcile
from pcloud_plugin.blazar import resources
from pcloud_plugin.blazar import slots as slots_mod
from pcloud_plugin.blazar import terms
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import intents
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage

LOG = logging.getLogger(__name__)
CONF = conf.CONF

RESOURCE_TYPE = 'virtual:instance'
PARAMS = ('vcpus', 'memory_mb', 'disk_gb', 'amount', 'affinity',
          'resource_properties')
_NONE = ('none', 'null', '')
# The extra spec (and aggregate key) naming a reservation's server group,
# as Blazar's own plugin writes it.
AFFINITY_KEY = 'affinity_id'
# What a claim raises when the capacity its plan was made on moved: a
# concurrent lease took it first, or the Placement mirror changed the
# provider's inventory (its max_unit, a class) or dropped the provider.
_LOST_RACE = (exception.CapacityExceeded, exception.ConcurrentUpdateDetected,
              exception.UnitRuleViolation, exception.InventoryNotFound,
              exception.ResourceProviderNotFound)


def _validate_int(values, name, minimum):
    try:
        return strutils.validate_integer(values[name], name, minimum,
                                         2 ** 31 - 1)
    except ValueError as e:
        raise mgr_exc.MalformedParameter(param='%s (%s)' % (name, e))


def parse_params(values, current=None):
    """The reservation parameters of values, validated; those missing

    from values come from ``current`` (an update) or are an error.
    """
    missing = [p for p in PARAMS if p not in values
               and (current is None or p not in current)]
    if missing:
        raise mgr_exc.MissingParameter(param=','.join(missing))
    merged = dict(current or {})
    merged.update((p, values[p]) for p in PARAMS if p in values)
    params = {'vcpus': _validate_int(merged, 'vcpus', 1),
              'memory_mb': _validate_int(merged, 'memory_mb', 1),
              'disk_gb': _validate_int(merged, 'disk_gb', 0),
              'amount': _validate_int(merged, 'amount', 1)}
    affinity = merged['affinity']
    if affinity is None or str(affinity).lower() in _NONE:
        params['affinity'] = None
    elif strutils.is_valid_boolstr(affinity):
        params['affinity'] = strutils.bool_from_string(affinity)
    else:
        raise mgr_exc.MalformedParameter(
            param='affinity (true, false or none, got %r)' % (affinity,))
    props = merged['resource_properties'] or ''
    try:
        slots_mod.parse_properties(props)
    except exception.Invalid as e:
        raise mgr_exc.MalformedRequirements(rqrms=e.message)
    params['resource_properties'] = props
    return params


def _is_admin():
    """Whether the caller (Blazar's request context) is a cloud admin."""
    try:
        ctx = blazar_context.current()
    except RuntimeError:  # no request: an event of the manager's own
        return False
    return bool(ctx.is_admin or 'admin' in (ctx.roles or ()))


def _per_slot(params):
    return {'VCPU': params['vcpus'], 'MEMORY_MB': params['memory_mb'],
            'DISK_GB': params['disk_gb']}


def _merge(*amounts):
    merged = collections.defaultdict(collections.Counter)
    for each in amounts:
        for rp, res in each.items():
            merged[rp].update(res)
    return {rp: dict(res) for rp, res in merged.items()}


def _grown_slots(slots, extra, forest):
    """Slot rows with extra ({host: n}) added; placed counts are kept."""
    grown = {s['host_uuid']: dict(s) for s in slots}
    for host, n in extra.items():
        slot = grown.setdefault(host, {'host_uuid': host, 'slots': 0,
                                       'host_name': forest[host].name,
                                       'placed': 0})
        slot['slots'] += n
    return [grown[h] for h in sorted(grown)]


def _left_over(claims, slots, running, forest):
    """What of a claim the instances still running use: per provider, its

    share for the slots of its host that still run one (shared providers:
    of all slots), rounded up. {} when none runs.
    """
    if not claims or not running:
        return {}
    count = {s['host_uuid']: s['slots'] for s in slots}
    everywhere = (sum(running.values()), sum(count.values()))
    left = {}
    for rp, amounts in claims['amounts'].items():
        root = forest[rp].root_uuid if rp in forest.providers else None
        used, of = ((running.get(root, 0), count[root]) if root in count
                    else everywhere)
        if used:
            left[rp] = {rc: -(-n * used // of) for rc, n in amounts.items()}
    return left


def _expand(hosts):
    """Host uuids, one per slot, as Blazar's own plugin lists them."""
    return [h for h, n in sorted(hosts.items()) for _ in range(n)]


class VirtualInstancePlugin(hosts_view.LedgerHostsPlugin):
    """Instance slots of a flavor, booked on the capacity ledger."""

    resource_type = RESOURCE_TYPE
    title = 'pcloud virtual instance plugin'
    description = ('Instance slots (amount x flavor, affinity true, false '
                   'or none) booked on the pcloud capacity ledger.')

    def __init__(self):
        super().__init__()
        self.monitor = monitor.PollingMonitor(
            (self.sweep, lambda: CONF.pcloud_instance.cleanup_interval),
            (lambda: self.mirror_placement(),
             lambda: CONF.pcloud.placement_mirror_interval))
        self.notifier = usage.UsageNotifier(CONF)
        self._plans = threading.local()
        self._nova = None
        self._placement = None

    # --- clients ---------------------------------------------------------

    def nova(self):
        if self._nova is None:
            self._nova = resources.NovaObjects(nova_client.get_client())
        return self._nova

    def placement(self):
        if self._placement is None:
            self._placement = resources.PlacementSlots(
                placement_client.get_adapter())
        return self._placement

    def _exclusions(self):
        return self.nova().pcloud_exclusions()

    @staticmethod
    def lessee_nova():
        """Nova as the lease's project: Blazar runs a lease's events in a

        context made from its trust, whose token this client uses.
        """
        return resources.NovaObjects(blazar_nova.BlazarNovaClient(
            ctx=blazar_context.current()).nova)

    def promises(self):
        return promises.Promises(self.placement(), self._ctx())

    @staticmethod
    def _ctx():
        return context_mod.get_admin_context()

    # --- admission -------------------------------------------------------

    def _slot_request(self, params, amount=None):
        required, forbidden = slots_mod.parse_properties(
            params['resource_properties'])
        aggregates, hosts = self.nova().pcloud_exclusions()
        return slots_mod.SlotRequest(
            _per_slot(params), amount or params['amount'],
            affinity=params['affinity'], required=required,
            forbidden=forbidden, forbidden_aggregates=aggregates,
            excluded_hosts=hosts)

    def _place(self, request, start, end, discounted=None, consumer=None,
               **kwargs):
        """(plan, forest) for the window, or a refusal that explains.

        discounted: the claims of consumer, taken out of the usage.
        """
        forest = db_api.load_forest(self._ctx(), start, end)
        if discounted:
            forest = slots_mod.discount(forest, discounted)
        try:
            plan = slots_mod.place(
                forest, request,
                max_candidates=CONF.pcloud_instance.max_candidates, **kwargs)
        except slots_mod.SlotsUnavailable as e:
            raise errors.CapacityRefused(self._refusal(
                forest, request, start, end, e.message, consumer))
        return plan, forest

    def _refusal(self, forest, request, start, end, why, consumer):
        """Say what was short, and in which part of the window."""
        rc, free, needed, providers = slots_mod.shortage(forest, request)
        message = ('Cannot reserve %s from %s to %s: %s Most short: %s, '
                   '%d free on the hosts this reservation may use, %d '
                   'needed.' % (request.describe(), start, end, why, rc,
                                free, needed))
        if not _is_admin():
            # What other projects hold, and when, is for admins to see.
            return message
        steps = res_db.usage_steps(self._ctx(), rc, start, end, providers,
                                   exclude_consumer=consumer)
        peak = max(used for _at, used in steps)
        if peak:
            bounds = [moment for moment, _u in steps[1:]] + [end]
            busiest = [(moment, bounds[i])
                       for i, (moment, used) in enumerate(steps)
                       if used == peak]
            message += (' Busiest from %s to %s, when other reservations '
                        'hold %d of it.' % (busiest[0] + (peak,)))
        return message

    def _refused(self, request, start, end, error):
        # The ledger's refusal names a provider and its usage: the log's.
        LOG.info('Reserving %s from %s to %s lost every race; last: %s',
                 request.describe(), start, end, error.message)
        return errors.CapacityRefused(
            'Cannot reserve %s from %s to %s: concurrent leases kept taking '
            'the capacity it was placed on.'
            % (request.describe(), start, end))

    def _cached_plan(self, key):
        """What allocation_candidates placed for the same parameters.

        (request, (plan, forest)), or None.
        """
        cached = getattr(self._plans, 'last', None)
        self._plans.last = None
        if cached and cached[0] == key:
            return cached[1]
        return None

    @staticmethod
    def _plan_key(params, start, end):
        return tuple(params[p] for p in PARAMS) + (start, end)

    def allocation_candidates(self, values):
        """Hosts the slots would go to, one uuid per slot.

        The manager asks this before creating a lease (for its usage
        enforcement), then calls reserve_resource: the plan is kept for
        that call, which claims it or, if it went stale, places again.
        """
        with errors.unreachable_refused():
            return self._candidates(values)

    def _candidates(self, values):
        reservation_id = values.get('id')
        if reservation_id:
            try:
                current = res_db.get(self._ctx(), reservation_id)
            except res_db.ReservationNotFound:
                pass
            else:
                # An update: the real check is update_reservation's.
                return _expand({s['host_uuid']: s['slots']
                                for s in current['slots']})
        params = parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        request = self._slot_request(params)
        placed = self._place(request, start, end)
        self._plans.last = (self._plan_key(params, start, end),
                            (request, placed))
        return _expand(placed[0].hosts)

    def _claim(self, consumer, request, start, end, first=None):
        """Place and claim, again from a fresh read while concurrent

        leases win the race for the capacity a plan was made on.
        """
        last, avoid, fresh = None, set(), None
        for _attempt in range(CONF.pcloud_instance.admission_retries + 1):
            try:
                plan, forest = first or self._place(request, start, end,
                                                    avoid_hosts=avoid)
            except errors.CapacityRefused as e:
                if isinstance(last, promises.NoRoomInPlacement):
                    # The ledger's answer without the hosts Placement
                    # refused, and why Placement did.
                    raise errors.CapacityRefused('%s %s' % (e, last.message))
                raise
            first = None
            if fresh is None:
                # Freshness: what Placement changed on these providers
                # since the mirror last read them is in the ledger now.
                fresh = not self.mirror().refresh(self._ctx(), plan.amounts)
                if not fresh:
                    plan, forest = self._place(request, start, end,
                                               avoid_hosts=avoid)
            try:
                db_api.claim(self._ctx(), consumer, plan.amounts, start, end)
            except _LOST_RACE as e:
                LOG.debug('Claim of %s lost a race: %s', consumer, e)
                last = e
                continue
            try:
                # Placement holds it from now on, unless instances that
                # run outside reservations took it: then elsewhere.
                self.promises().sync(plan.amounts)
                return plan, forest
            except promises.NoRoomInPlacement as e:
                db_api.release(self._ctx(), consumer)
                LOG.info('Placement has no room for %s: %s', consumer,
                         e.message)
                avoid.update(forest[rp].root_uuid for rp in e.kwargs['uuids']
                             if rp in forest.providers)
                last = e
        if isinstance(last, promises.NoRoomInPlacement):
            raise errors.CapacityRefused(
                'Cannot reserve %s from %s to %s: %s'
                % (request.describe(), start, end, last.message))
        raise self._refused(request, start, end, last)

    def reserve_resource(self, reservation_id, values):
        with reconcile.creation_of(self._ctx(), values.get('lease_id')), \
                errors.unreachable_refused():
            return self._reserve(reservation_id, values)

    def _reserve(self, reservation_id, values):
        params = parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        cached = self._cached_plan(self._plan_key(params, start, end))
        request, first = cached or (self._slot_request(params), None)
        plan, forest = self._claim(reservation_id, request, start, end,
                                   first=first)
        # The manager reserves in the lease owner's (trust) context.
        project_id = blazar_context.current().project_id or \
            blazar_db.lease_get(values['lease_id'])['project_id']
        try:
            display = blazar_db.instance_reservation_create(dict(
                params, reservation_id=reservation_id))
            res_db.create(self._ctx(), reservation_id, dict(
                params, lease_id=values['lease_id'],
                project_id=project_id, resource_id=display['id'],
                start_time=start, end_time=end,
                resource_class=resources.resource_class(reservation_id)),
                plan.slots(forest))
        except Exception:
            db_api.release(self._ctx(), reservation_id)
            raise
        LOG.info('Reserved %s for %s on %s', request.describe(),
                 reservation_id, plan.hosts)
        return display['id']

    # --- updates ---------------------------------------------------------

    def update_reservation(self, reservation_id, values):
        with errors.update_refusals():
            return self._update(reservation_id, values)

    def _update(self, reservation_id, values):
        """Move or resize the window, change the amount or the flavor.

        Before start everything may change and the slots are placed
        again. Once active only the amount may grow (new slots beside the
        ones in use) and the end move; the engine and the ledger check
        each change, and a refused one changes nothing.
        """
        row = res_db.get(self._ctx(), reservation_id)
        current = {p: row[p] for p in PARAMS}
        params = parse_params(values, current)
        start, end = terms.lease_window(
            values.get('start_date', row['start_time']),
            values.get('end_date', row['end_time']))
        changed = sorted(p for p in PARAMS if params[p] != current[p])
        if not changed and (start, end) == (row['start_time'],
                                            row['end_time']):
            return
        state = blazar_db.reservation_get(reservation_id)['status']
        if state == status.reservation.ERROR:
            raise mgr_exc.CantUpdateParameter(
                'Reservation %s is in error and cannot be updated.'
                % reservation_id)
        if state == status.reservation.ACTIVE:
            self._update_active(row, params, changed, start, end)
        else:
            self._update_pending(row, params, changed, start, end)
        blazar_db.instance_reservation_update(
            row['resource_id'], {p: params[p] for p in PARAMS})

    def _update_pending(self, row, params, changed, start, end):
        rid = row['reservation_id']
        ctx = self._ctx()
        held = db_api.get_claims(ctx, rid)
        slots = self._claim_again(row, params, changed, start, end, held)
        try:
            self.promises().sync(set(held['amounts']) | set(
                db_api.get_claims(ctx, rid)['amounts']))
        except promises.NoRoomInPlacement as e:
            db_api.change_claim(ctx, rid, amounts=held['amounts'],
                                start=held['start'], end=held['end'])
            raise errors.CapacityRefused(
                'Cannot change reservation %s: %s' % (rid, e.message))
        res_db.update(ctx, rid, slots=slots, start_time=start,
                      end_time=end, **params)

    def _claim_again(self, row, params, changed, start, end, held):
        """Change the claim of a reservation not started yet; its new

        slots (None: the same).
        """
        rid = row['reservation_id']
        ctx = self._ctx()
        if not changed:
            try:
                db_api.change_claim(ctx, rid, start=start, end=end)
                return None
            except _LOST_RACE:
                pass  # the slots' hosts are busy then: place them anew
        overlaps = held['start'] < end and (
            held['end'] is None or start < held['end'])
        request = self._slot_request(params)
        preferred = [s['host_uuid'] for s in row['slots']]
        avoid, last = set(), None
        for _attempt in range(CONF.pcloud_instance.admission_retries + 1):
            plan, forest = self._place(
                request, start, end,
                discounted=held['amounts'] if overlaps else None,
                consumer=rid, preferred=preferred, avoid_hosts=avoid)
            try:
                db_api.change_claim(ctx, rid, amounts=plan.amounts,
                                    start=start, end=end)
                return plan.slots(forest)
            except _LOST_RACE as e:
                last = e
                # Taking our own claim out of the peaks was optimistic
                # there: look elsewhere.
                short = e.kwargs.get('provider')
                if short in forest.providers:
                    avoid.add(forest[short].root_uuid)
        raise self._refused(request, start, end, last)

    def _update_active(self, row, params, changed, start, end):
        rid = row['reservation_id']
        ctx = self._ctx()
        if set(changed) - {'amount'}:
            raise mgr_exc.CantUpdateParameter(
                'Only the amount of an active instance reservation can '
                'change, not %s.' % ', '.join(
                    c for c in changed if c != 'amount'))
        extra = params['amount'] - row['amount']
        if extra < 0:
            raise mgr_exc.CantUpdateParameter(
                'The amount of an active instance reservation can only '
                'grow (%d slots may be in use).' % row['amount'])
        held = db_api.get_claims(ctx, rid)
        # The past is over: slots added now need room from now on only.
        start = max(start, timeutils.utcnow().replace(microsecond=0))
        if not extra:
            try:
                db_api.change_claim(ctx, rid, start=start, end=end)
            except _LOST_RACE as e:
                raise errors.CapacityRefused(
                    'Cannot move reservation %s to end at %s: %s'
                    % (rid, end, e.message))
            try:
                self._hold(dict(row, end_time=end))
            except promises.NoRoomInPlacement as e:
                db_api.change_claim(ctx, rid, start=held['start'],
                                    end=held['end'])
                raise errors.CapacityRefused(
                    'Cannot move reservation %s to end at %s: %s'
                    % (rid, end, e.message))
            res_db.update(ctx, rid, end_time=end)
            return
        hosts = {s['host_uuid'] for s in row['slots']}
        where = {True: {'only_hosts': hosts},
                 False: {'avoid_hosts': hosts},
                 None: {'preferred': sorted(hosts)}}[params['affinity']]
        request = self._slot_request(params, amount=extra)
        last = None
        for _attempt in range(CONF.pcloud_instance.admission_retries + 1):
            plan, forest = self._place(
                request, start, end, discounted=held['amounts'],
                consumer=rid, held=held['amounts'], **where)
            try:
                db_api.change_claim(
                    ctx, rid, amounts=_merge(held['amounts'], plan.amounts),
                    start=start, end=end)
                break
            except _LOST_RACE as e:
                last = e
        else:
            raise self._refused(request, start, end, last)
        grown = _grown_slots(row['slots'], plan.hosts, forest)
        res_db.update(ctx, rid, slots=grown, end_time=end,
                      amount=params['amount'])
        try:
            self._place_slots(res_db.get(ctx, rid))
        except Exception as e:
            LOG.exception('Could not grow reservation %s in Nova or '
                          'Placement; undoing it', rid)
            db_api.change_claim(ctx, rid, amounts=held['amounts'],
                                start=held['start'], end=held['end'])
            res_db.update(ctx, rid, slots=row['slots'],
                          end_time=row['end_time'], amount=row['amount'])
            self._shrink_back(row, grown)
            raise mgr_exc.CantUpdateParameter(
                'Growing reservation %s failed in Nova or Placement and '
                'was undone: %s' % (rid, e))

    # --- lifecycle -------------------------------------------------------

    def _place_slots(self, row):
        """Placement inventory of the reservation's class, and aggregate

        membership once there is an aggregate, for every host whose slots
        are not all there yet.
        """
        ctx = self._ctx()
        rc = row['resource_class']
        placement = self.placement()
        # The hosts' own capacity first: refused if boots took it already.
        self._hold(row)
        placement.ensure_class(rc)
        for slot in row['slots']:
            if slot['placed'] == slot['slots']:
                continue
            placement.set_slots(slot['host_uuid'], slot['host_name'], rc,
                                slot['slots'])
            res_db.set_placed(ctx, row['reservation_id'], slot['host_uuid'],
                              slot['slots'])
            if row['aggregate_id']:
                self._join(row['aggregate_id'], slot)

    def _hold(self, row, amounts=None, end=None):
        """Hold in Placement what the ledger claimed for the reservation

        (its hosts' capacity, shared storage included; ``amounts``, e.g.
        what instances use after the end, open-ended) and write the
        promises of those providers with it (blazar.promises).
        """
        if amounts is None:
            amounts = db_api.get_claims(self._ctx(),
                                        row['reservation_id'])['amounts']
            end = row['end_time']
        amounts = {uuid: dict(held) for uuid, held in amounts.items()}
        for slot in row['slots']:
            # Less one ticket per slot, which its boot takes (see resources).
            memory = amounts.get(slot['host_uuid'], {})
            if memory.get('MEMORY_MB'):
                memory['MEMORY_MB'] -= slot['slots'] * resources.TICKET_MB
        self.promises().sync((), holds={row['reservation_id']: (
            amounts, end)}, project_id=row['project_id'])

    def _drop_hold(self, row, providers=()):
        """No hold any more; the promises of its providers written again

        (a claim still in the ledger is promised again).
        """
        self.promises().sync(providers, holds={
            row['reservation_id']: ({}, None)})

    def _join(self, aggregate_id, slot):
        nova = self.nova()
        nova.add_host(aggregate_id, nova.service_host(slot['host_uuid'],
                                                      slot['host_name']))

    def _shrink_back(self, row, grown):
        """Best effort after a failed growth: Placement as row says.

        Whatever is left over is removed with the reservation at its end.
        """
        before = {s['host_uuid']: s for s in row['slots']}
        placement = self.placement()
        try:
            self._hold(row)
        except Exception:
            LOG.exception('Could not put back what reservation %s holds',
                          row['reservation_id'])
        for slot in grown:
            old = before.get(slot['host_uuid'])
            try:
                if old is None:
                    placement.remove_slots(slot['host_uuid'],
                                           row['resource_class'])
                elif old['placed']:
                    placement.set_slots(slot['host_uuid'],
                                        slot['host_name'],
                                        row['resource_class'], old['slots'])
            except Exception:
                LOG.exception('Could not put back the slots of %s on %s',
                              row['reservation_id'], slot['host_name'])

    def _make_objects(self, row):
        """Every object of an active reservation.

        Each is recorded as it is made, so a failure midway can be undone.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        nova = self.nova()
        faults.step(reconcile.LEASE_START, 'slots')
        self._place_slots(row)
        if not row['aggregate_id']:
            faults.step(reconcile.LEASE_START, 'aggregate')
            metadata = {resources.RESERVATION_KEY: rid}
            row['aggregate_id'] = nova.create_aggregate(
                resources.flavor_name(rid), metadata)
            res_db.update(ctx, rid, aggregate_id=row['aggregate_id'])
        for slot in row['slots']:
            self._join(row['aggregate_id'], slot)
        if row['affinity'] is not None and not row['server_group_id']:
            faults.step(reconcile.LEASE_START, 'server-group')
            # In the lessee's project: Nova shows a server group (and takes
            # it as a boot's hint) only to its own project.
            row['server_group_id'] = self.lessee_nova().create_server_group(
                resources.flavor_name(rid), row['affinity'])
            res_db.update(ctx, rid, server_group_id=row['server_group_id'])
        if row['server_group_id']:
            # The flavor asks for it (affinity_id): so must the aggregate,
            # for AggregateInstanceExtraSpecsFilter.
            nova.set_aggregate_metadata(row['aggregate_id'], {
                AFFINITY_KEY: row['server_group_id']})
        extra_specs = {'resources:%s' % row['resource_class']: '1',
                       resources.FLAVOR_EXTRA_SPEC: rid}
        # The reservation's hold has the capacity: a boot takes a slot,
        # and the ticket on its host (Nova schedules to the host a boot
        # takes something from).
        extra_specs.update(('resources:%s' % rc, '0')
                           for rc in resources.SLOT_CLASSES)
        extra_specs['resources:MEMORY_MB'] = str(resources.TICKET_MB)
        required, forbidden = slots_mod.parse_properties(
            row['resource_properties'])
        extra_specs.update(('trait:%s' % t, 'required') for t in required)
        extra_specs.update(('trait:%s' % t, 'forbidden') for t in forbidden)
        if row['server_group_id']:
            extra_specs[AFFINITY_KEY] = row['server_group_id']
        # Last, so the flavor shows up only once all it relies on exists.
        faults.step(reconcile.LEASE_START, 'flavor')
        res_db.update(ctx, rid, flavor_id=rid)
        nova.create_flavor(rid, resources.flavor_name(rid), row['vcpus'],
                           row['memory_mb'], row['disk_gb'], extra_specs,
                           row['project_id'])

    def _remove_objects(self, row):
        """Remove what a reservation made; True when nothing is left.

        Every removal is tried even if another failed; the failed ones
        are tried again by sweep(). The reservation's class stays (closed)
        on hosts where instances booted into it still run: those are never
        killed (seeds/001).
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        nova = self.nova()
        placement = self.placement()
        steps = []
        if row['flavor_id']:
            steps.append((lambda: nova.delete_flavor(row['flavor_id'],
                                                     row['project_id']),
                          {'flavor_id': None}))
        if row['aggregate_id']:
            steps.append((lambda: nova.delete_aggregate(row['aggregate_id']),
                          {'aggregate_id': None}))
        if row['server_group_id']:
            steps.append((lambda: nova.delete_server_group(
                row['server_group_id']), {'server_group_id': None}))
        gone = True
        for step, done in steps:
            try:
                step()
                res_db.update(ctx, rid, **done)
            except Exception:
                LOG.exception('Could not remove %s of reservation %s',
                              ', '.join(done), rid)
                gone = False
        for slot in row['slots']:
            if not slot['placed']:
                continue
            try:
                if placement.remove_slots(slot['host_uuid'],
                                          row['resource_class']):
                    res_db.set_placed(ctx, rid, slot['host_uuid'], 0)
                else:
                    gone = False
            except Exception:
                LOG.exception('Could not remove the slots of reservation '
                              '%s on %s', rid, slot['host_name'])
                gone = False
        return gone and placement.remove_class(row['resource_class'])

    def on_start(self, resource_id):
        self.sweep()
        ctx = self._ctx()
        try:
            row = res_db.get_by_resource_id(ctx, resource_id)
        except res_db.ReservationNotFound as e:
            raise mgr_exc.EventError(error=e.message)
        rid = row['reservation_id']
        reconcile.record_event(ctx, reconcile.LEASE_START, rid,
                               row['lease_id'], RESOURCE_TYPE)
        try:
            self._make_objects(row)
        except Exception as e:
            LOG.exception('Starting reservation %s failed; undoing it', rid)
            try:
                self._drop_hold(row, db_api.get_claims(ctx, rid)['amounts'])
                self._remove_objects(res_db.get(ctx, rid))
            except Exception:
                LOG.exception('Could not undo reservation %s; its end or '
                              'deletion will retry', rid)
            raise mgr_exc.EventError(
                error='Nova or Placement failed while starting reservation '
                      '%s: %s' % (rid, e))
        faults.step(reconcile.LEASE_START, 'active')
        res_db.update(ctx, rid, state=res_db.ACTIVE)
        blazar_db.instance_reservation_update(resource_id, {
            'flavor_id': rid, 'aggregate_id': row['aggregate_id'],
            'server_group_id': row['server_group_id']})
        row = res_db.get(ctx, rid)
        self.notifier.reservation_started(self._notify_ctx(row), row)

    def on_end(self, resource_id):
        ctx = self._ctx()
        try:
            row = res_db.get_by_resource_id(ctx, resource_id)
        except res_db.ReservationNotFound:
            LOG.info('Reservation with resource %s already ended',
                     resource_id)
            return
        reconcile.record_event(ctx, reconcile.LEASE_END,
                               row['reservation_id'], row['lease_id'],
                               RESOURCE_TYPE)
        self._finish(row)
        if row['state'] == res_db.ACTIVE:
            self.notifier.reservation_ended(self._notify_ctx(row), row)
        self.sweep()

    def _finish(self, row):
        """Release the capacity and remove the objects; what cannot be

        removed yet is left for sweep() to retry. Instances booted into
        the reservation keep running (seeds/001): what they use stays
        claimed, open-ended, and held in Placement until they are gone.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        faults.step(reconcile.LEASE_END, 'release')
        try:
            gone, still = self._keep_what_runs(row)
        except Exception:
            # Placement unreachable: the claim ends as booked and the hold
            # stays, until sweep() can count what still runs.
            LOG.exception('Could not count what still runs of reservation '
                          '%s; it will be retried', rid)
            gone, still = False, None
        try:
            faults.step(reconcile.LEASE_END, 'remove')
            gone = self._remove_objects(row) and gone
        except Exception:
            LOG.exception('Clean-up of reservation %s failed; it will be '
                          'retried', rid)
            gone = False
        faults.step(reconcile.LEASE_END, 'ended')
        if gone:
            res_db.delete(ctx, rid)
        else:
            res_db.update(ctx, rid, state=res_db.ENDING,
                          slots=still['slots'] if still else None)
        return gone

    def _keep_what_runs(self, row):
        """Shrink the claim and the hold to what the instances still

        running use (none: released, dropped). (Nothing left, the row as
        its slots are now if something is.)
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        claims = db_api.get_claims(ctx, rid)
        providers = set(claims['amounts']) if claims else set()
        running = self._running(row)
        left = _left_over(claims, row['slots'], running,
                          db_api.load_forest(ctx) if running else None)
        if not left:
            db_api.release(ctx, rid)
            self._drop_hold(row, providers)
            return True, None
        still = dict(row, slots=[dict(s, slots=running[s['host_uuid']])
                                 for s in row['slots']
                                 if running.get(s['host_uuid'])])
        try:
            db_api.change_claim(ctx, rid, amounts=left,
                                start=timeutils.utcnow().replace(
                                    microsecond=0), open_end=True)
        except _LOST_RACE as e:
            # Booked for someone else after the end: Placement's hold
            # still keeps the host from being overcommitted.
            LOG.warning('Instances of ended reservation %s still use '
                        'capacity promised to other reservations: %s',
                        rid, e.message)
            db_api.release(ctx, rid)
        self._hold(still, left)
        return False, still

    def _running(self, row):
        """{host uuid: instances booted into the reservation running

        there}, from Placement's usage of its class.
        """
        placement = self.placement()
        running = {}
        for slot in row['slots']:
            if slot['placed']:
                n = placement.slots_in_use(slot['host_uuid'],
                                           row['resource_class'])
                if n:
                    running[slot['host_uuid']] = n
        return running

    def sweep(self):
        """Retry the clean-up of ended reservations that left objects;

        end those whose Blazar reservation is gone, and release claims
        nothing holds (see reconcile).
        """
        ctx = self._ctx()
        reconcile.recover_events(
            ctx, RESOURCE_TYPE, self._undo_failed_start, self.notifier,
            intents.since(CONF.pcloud.operation_timeout))
        live = [row for row in res_db.list_reservations(ctx)
                if row['state'] != res_db.ENDING]
        for row in reconcile.orphan_rows(live):
            LOG.warning('Reservation %s is gone from Blazar; ending it',
                        row['reservation_id'])
            self._finish(row)
        reconcile.release_orphan_claims(ctx)
        for row in res_db.list_reservations(ctx, state=res_db.ENDING):
            try:
                if self._finish(row):
                    LOG.info('Finished cleaning up reservation %s',
                             row['reservation_id'])
            except Exception:
                LOG.exception('Clean-up of reservation %s failed again',
                              row['reservation_id'])

    def _undo_failed_start(self, intent):
        """What a failed start left in Nova and Placement goes; the lease

        is ERROR.
        """
        try:
            row = res_db.get(self._ctx(), intent['subject'])
        except res_db.ReservationNotFound:
            return None
        if row['state'] == res_db.ACTIVE:
            return None
        claims = db_api.get_claims(self._ctx(), row['reservation_id'])
        self._drop_hold(row, claims['amounts'] if claims else ())
        if not self._remove_objects(row):
            return reconcile.KEEP
        return 'its flavor, aggregate and slots are gone after it failed'

    @staticmethod
    def _notify_ctx(row):
        return {'project_id': row['project_id']}

    # --- what Blazar shows -----------------------------------------------

    def _allocations(self, hosts=None, lease_id=None, reservation_id=None):
        found = collections.defaultdict(list)
        for row in res_db.list_reservations(
                self._ctx(), lease_id=lease_id,
                reservation_id=reservation_id,
                ending_after=timeutils.utcnow()):
            if row['state'] == res_db.ENDING:
                continue
            for slot in row['slots']:
                if hosts is None or slot['host_uuid'] in hosts:
                    found[slot['host_uuid']].append({
                        'id': row['reservation_id'],
                        'lease_id': row['lease_id'],
                        'start_date': row['start_time'],
                        'end_date': row['end_time'],
                        'slots': slot['slots']})
        return found
