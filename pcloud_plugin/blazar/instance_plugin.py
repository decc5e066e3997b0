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

Admission: the slots are laid out by reservations.slots over the
allocation-candidates engine's answer for the lease's window, then claimed
in the ledger in one all-or-nothing claim whose consumer is the
reservation id. The claim's generation compare-and-swap is what keeps
leases created at once by several API workers and managers from sharing a
slot; a plan that lost such a race is made again from a fresh read
(reservations.instance_claims). Changes are reservations.instance_updates'.

At start the reservation's Nova and Placement objects are made
(cloud.resources); at end they are removed and the claim released.
Instances booted into the reservation keep running (seeds/001). That
life after admission is reservations.instance_lifecycle's.

Blazar's own instance_reservations row is kept as the display record, so
that the lease API shows vcpus, memory_mb, disk_gb, amount, affinity and
the flavor, aggregate and server group ids as seeds/003 gives them.
"""

import collections
import threading

from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar.db.sqlalchemy import models as blazar_models
from blazar.manager import exceptions as mgr_exc
from blazar.utils.openstack import nova as blazar_nova
from oslo_log import log as logging
from oslo_utils import strutils
from oslo_utils import timeutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import hosts_view
from pcloud_plugin.blazar import reconcile
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import backfill as backfill_mod
from pcloud_plugin.cloud import promises
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin.notifications import usage
from pcloud_plugin import quota
from pcloud_plugin.reservations import instance_claims
from pcloud_plugin.reservations import instance_lifecycle
from pcloud_plugin.reservations import instance_updates
from pcloud_plugin.reservations import slots as slots_mod
from pcloud_plugin.reservations import terms

LOG = logging.getLogger(__name__)
CONF = conf.CONF

RESOURCE_TYPE = 'virtual:instance'
PARAMS = slots_mod.PARAMS
_NONE = ('none', 'null', '')
# Nova's availability zone names (aggregate metadata values).
_ZONE_LENGTH = 255
# What Blazar's instance_reservations table shows of a reservation: the
# rest of its terms (availability_zone) are ours only.
_BLAZAR_COLUMNS = frozenset(
    c.name for c in blazar_models.InstanceReservations.__table__.columns)


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
               and p not in slots_mod.OPTIONAL
               and (current is None or p not in current)]
    if missing:
        raise mgr_exc.MissingParameter(param=','.join(missing))
    merged = dict(slots_mod.OPTIONAL, **(current or {}))
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
        raise mgr_exc.MalformedRequirements(
            rqrms=e.kwargs.get('param', e.message))
    zone = merged['availability_zone']
    if zone is not None and not (isinstance(zone, str)
                                 and len(zone) <= _ZONE_LENGTH):
        raise mgr_exc.MalformedParameter(
            param='availability_zone (a zone name of at most %d '
                  'characters, got %r)' % (_ZONE_LENGTH, zone))
    # Whether the zone exists is for placing to say (InvalidTerm).
    params['availability_zone'] = None if zone in (None, '') else zone
    params['resource_properties'] = props
    return params


def _shown_by_blazar(values):
    return {k: v for k, v in values.items() if k in _BLAZAR_COLUMNS}


def _is_admin():
    """Whether the caller (Blazar's request context) is a cloud admin."""
    try:
        ctx = blazar_context.current()
    except RuntimeError:  # no request: an event of the manager's own
        return False
    return bool(ctx.is_admin or 'admin' in (ctx.roles or ()))


def _expand(hosts):
    """Host uuids, one per slot, as Blazar's own plugin lists them."""
    return [h for h, n in sorted(hosts.items()) for _ in range(n)]


class VirtualInstancePlugin(instance_updates.Updates,
                            instance_lifecycle.Lifecycle,
                            hosts_view.LedgerHostsPlugin):
    """Instance slots of a flavor, booked on the capacity ledger."""

    resource_type = RESOURCE_TYPE
    # What a reservation of the type may carry (api.lease_guard).
    request_terms = PARAMS
    title = 'pcloud virtual instance plugin'
    description = ('Instance slots (amount x flavor, affinity true, false '
                   'or none) booked on the pcloud capacity ledger.')

    def __init__(self):
        super().__init__(
            (self.sweep, lambda: CONF.pcloud_instance.cleanup_interval),
            (self.backfill, lambda: CONF.pcloud.backfill_interval))
        self.notifier = usage.UsageNotifier(CONF)
        self._plans = threading.local()
        self._nova = None
        self._placement = None
        self._backfill = None

    def backfill(self):
        """One backfill pass (cloud.backfill)."""
        if self._backfill is None:
            self._backfill = backfill_mod.Backfill(
                self._ctx(), self.placement(), self.novaclient(),
                self.notifier)
        return self._backfill.run()

    # --- clients ---------------------------------------------------------

    def nova(self):
        if self._nova is None:
            self._nova = resources.NovaObjects(self.novaclient())
        return self._nova

    def placement(self):
        if self._placement is None:
            self._placement = resources.PlacementSlots(
                placement_client.get_adapter())
        return self._placement

    @staticmethod
    def lessee_nova():
        """Nova as the lease's project: Blazar runs a lease's events in a

        context made from its trust, whose token this client uses.
        """
        return resources.NovaObjects(blazar_nova.BlazarNovaClient(
            ctx=blazar_context.current()).nova)

    def promises(self):
        return promises.Promises(self.placement(), self._ctx())

    def slot_claims(self):
        """Where this request's instance slots go (reservations.

        instance_claims), with the plugin's clients.
        """
        return instance_claims.SlotClaims(
            self._ctx(), self.promises(), self.mirror(),
            self.nova().pcloud_exclusions, explain_usage=_is_admin(),
            aggregate_zones=self.nova().aggregate_zones)

    # --- admission -------------------------------------------------------

    def _cached_plan(self, key):
        """What allocation_candidates placed for the same parameters.

        (request, plan), or None.
        """
        cached = getattr(self._plans, 'last', None)
        self._plans.last = None
        if cached and cached[0] == key:
            return cached[1]
        return None

    @staticmethod
    def _plan_key(params, start, end):
        return tuple(params[p] for p in PARAMS) + (start, end)

    def _hosts_held(self, reservation_id):
        try:
            current = res_db.get(self._ctx(), reservation_id)
        except res_db.ReservationNotFound:
            return None
        return _expand({s['host_uuid']: s['slots']
                        for s in current['slots']})

    def _candidates(self, values):
        """Hosts the slots would go to, one uuid per slot.

        The manager asks this before creating a lease (for its usage
        enforcement), then calls reserve_resource: the plan is kept for
        that call, which claims it or, if it went stale, places again.
        """
        params = parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        # A quota refusal before any placing: it is the reason to give.
        project_id = blazar_context.current().project_id
        if project_id:
            self._check_nova_quota(project_id, params)
        slot_claims = self.slot_claims()
        request = slot_claims.request(params)
        plan = slot_claims.place(request, start, end)
        self._plans.last = (self._plan_key(params, start, end),
                            (request, plan))
        return _expand(plan.hosts)

    def reserve_resource(self, reservation_id, values):
        with reconcile.creation_of(self._ctx(), values.get('lease_id')), \
                errors.admission_refusals():
            return self._reserve(reservation_id, values)

    def _reserve(self, reservation_id, values):
        params = parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        # The manager reserves in the lease owner's (trust) context.
        project_id = blazar_context.current().project_id or \
            blazar_db.lease_get(values['lease_id'])['project_id']
        with quota.serialized(project_id, quota.INSTANCE_RESOURCES):
            return self._admit(reservation_id, values, params, start, end,
                               project_id)

    def _admit(self, reservation_id, values, params, start, end,
               project_id):
        cached = self._cached_plan(self._plan_key(params, start, end))
        if cached is None:  # else _candidates checked it
            self._check_nova_quota(project_id, params)
        quota.check_instance_reservation(project_id, params, start, end)
        slot_claims = self.slot_claims()
        request, first = cached or (slot_claims.request(params), None)
        plan = slot_claims.claim(reservation_id, request, start, end,
                                 first=first)
        try:
            display = blazar_db.instance_reservation_create(
                _shown_by_blazar(dict(params, reservation_id=reservation_id)))
            res_db.create(self._ctx(), reservation_id, dict(
                params, lease_id=values['lease_id'],
                project_id=project_id, resource_id=display['id'],
                start_time=start, end_time=end,
                resource_class=resources.resource_class(reservation_id)),
                plan.slots())
            # Another admission of the project may have passed the check
            # above before this one committed: look again at what is
            # committed now, so the one that finds the project over the
            # limit undoes itself and the limit holds on every backend.
            quota.check_instance_reservation(project_id, params, start, end,
                                             exclude=reservation_id)
        except Exception:
            res_db.delete(self._ctx(), reservation_id)
            db_claims.release(self._ctx(), reservation_id)
            raise
        LOG.info('Reserved %s for %s on %s', request.describe(),
                 reservation_id, plan.hosts)
        return display['id']

    # --- updates ---------------------------------------------------------

    def update_reservation(self, reservation_id, values):
        project_id = errors.record_to_update(
            res_db.get, self._ctx(), reservation_id,
            res_db.ReservationNotFound)['project_id']
        with errors.update_refusals(), quota.serialized(
                project_id, quota.INSTANCE_RESOURCES):
            return self._update(reservation_id, values)

    def _update(self, reservation_id, values):
        row = res_db.get(self._ctx(), reservation_id)
        params = parse_params(values, {p: row[p] for p in PARAMS})
        start, end = terms.lease_window(
            values.get('start_date', row['start_time']),
            values.get('end_date', row['end_time']))
        self.change(row, params, start, end)

    def _nova_quota(self, project_id):
        return self.nova().instance_quota(project_id)

    def _check_nova_quota(self, project_id, params):
        quota.check_nova_quota(project_id, self._nova_quota(project_id),
                               params)

    # --- what Blazar shows -----------------------------------------------

    def _show(self, resource_id, values):
        blazar_db.instance_reservation_update(resource_id,
                                              _shown_by_blazar(values))

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
