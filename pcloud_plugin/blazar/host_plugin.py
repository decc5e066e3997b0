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
"""pcloud:host reservations: whole hosts leased into a pcloud (seeds/001).

Enabled in blazar.conf (the same name enables the Pcloud API extension)::

    [manager]
    plugins = pcloud.host

A reservation asks for ``amount`` hosts of host flavor ``host_flavor``
(seeds/000) for the pcloud ``pcloud_id`` during the lease, optionally in
``availability_zone`` and with ``required_traits`` (Placement's syntax:
``HW_CPU_X86_AVX2,!CUSTOM_SLOW`` or ``in:CUSTOM_A,CUSTOM_B``; a list of
such strings is several ``required`` parameters). ``lease_type`` is one
of seeds/001's terms:

IMMEDIATE
    the lease starts now; admitted now or refused.
SCHEDULE (the default)
    admitted for its window or refused; INACTIVE until it starts.
BEST-EFFORT
    admitted if it can be; if not it waits IN-PROGRESS, its hosts taken
    as soon as they are free (checked whenever a pcloud:host reservation
    starts or ends, every [pcloud_host] retry_interval, and by
    retry_waiting()), until ``timeout`` minutes after the lease starts,
    when it is TIMEDOUT.

Hosts are handed over empty of other projects' instances, which
BEST-EFFORT reservations may move away first (reservations.host_vacate).
Parameters and eligibility are in reservations.host_requests, picking
and claiming hosts in reservations.host_claims, changes in
reservations.host_updates; this module maps Blazar's plugin contract
onto them.

A host is eligible when it is in the host flavor's pool, in no pcloud
except through a lease, in the availability zone, and has the traits on
some provider of its tree. Admission claims each picked host whole in the
ledger (every class of every provider of its tree, in full) with the
reservation id as consumer, so leases, instance reservations and anything
else claimed there never overlap a leased host.

At start the hosts join the pcloud's aggregate, named and enabled there as
seeds/000 names hosts, and a per-reservation aggregate
``pcloud-lease:<reservation id>`` with ``filter_lease_id=<lease id>``
(seeds/001). At end they are disabled, leave both and the claim is
released; their instances keep running, but nothing new is scheduled on
them (reservations.host_lifecycle, which also finishes what crashes left).

The state of each reservation is in the ledger's pcloud_host_reservations
table (INACTIVE, IN-PROGRESS, ACTIVE, TIMEDOUT, ENDED) and in Blazar's
reservation: pending before start, active after, with missing_resources
set while it waits for hosts, and error once TIMEDOUT. Each state entered
is a usage notification ``pcloud.host_reservation.<state>``.
"""

import collections

from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar import status
from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import hosts_view
from pcloud_plugin.blazar import reconcile
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage
from pcloud_plugin.pcloud import service as pcloud_service
from pcloud_plugin import quota
from pcloud_plugin.reservations import host_claims
from pcloud_plugin.reservations import host_lifecycle
from pcloud_plugin.reservations import host_requests as asked
from pcloud_plugin.reservations import host_updates
from pcloud_plugin.reservations import host_vacate
from pcloud_plugin.reservations import terms

LOG = logging.getLogger(__name__)
CONF = conf.CONF

RESOURCE_TYPE = 'pcloud:host'

# The fault-injection step name (pcloud_plugin.faults) of admissions.
ADMISSION = 'admission'


class PcloudHostPlugin(host_updates.Updates, host_lifecycle.Lifecycle,
                       host_vacate.Vacating, hosts_view.LedgerHostsPlugin):
    """Whole hosts of a host flavor leased into a pcloud."""

    resource_type = RESOURCE_TYPE
    # What a reservation of the type may carry (api.lease_guard).
    request_terms = asked.PARAMS
    title = 'pcloud host plugin'
    description = ('Whole hosts of a host flavor leased into a pcloud: '
                   'IMMEDIATE, SCHEDULE or BEST-EFFORT (seeds/001), '
                   'booked on the pcloud capacity ledger.')

    def __init__(self):
        # Waiting reservations and interrupted clean-ups, every interval.
        super().__init__(
            (self.poll, lambda: CONF.pcloud_host.retry_interval))
        self.notifier = usage.HostUsageNotifier(CONF)
        self._pclouds = None

    # --- helpers ---------------------------------------------------------

    def pclouds(self):
        if self._pclouds is None:
            self._pclouds = pcloud_service.PcloudService(self.nova())
        return self._pclouds

    def nova(self):
        return self.novaclient()

    def pools(self):
        return asked.Pools(self.nova().aggregates.list(),
                           CONF.pcloud.default_availability_zone)

    @staticmethod
    def _project_id(values):
        project_id = blazar_context.current().project_id
        if not project_id and values.get('lease_id'):
            project_id = blazar_db.lease_get(values['lease_id'])[
                'project_id']
        return project_id

    def _check_quota(self, project_id, params, start, end, exclude=None):
        """Leased hosts count against the project's units quota while

        held (QuotaRefused, 403, if they would take it over).
        """
        try:
            self.pclouds().check_lease_quota(
                project_id, params['host_flavor'], params['amount'], start,
                end, exclude=exclude)
        except exception.QuotaExceeded as e:
            raise exception.QuotaRefused(
                reason='Cannot reserve %s from %s to %s: %s'
                % (asked.describe(params), start, end, e.message))

    def _mark_reservation(self, reservation_id, **values):
        """Record ``values`` on Blazar's reservation (the domain's port to

        missing_resources and the like); a failure is logged, not raised.
        """
        try:
            blazar_db.reservation_update(reservation_id, values)
        except Exception:
            LOG.exception('Could not record %s on Blazar reservation %s',
                          values, reservation_id)

    def _mark_failed(self, reservation_id):
        """Blazar's reservation in error (a BEST-EFFORT one timed out)."""
        self._mark_reservation(reservation_id,
                               status=status.reservation.ERROR)

    # --- admission -------------------------------------------------------

    def _admit(self, reservation_id, params, start, end, replace=False,
               occupants=None):
        """Hosts picked and claimed whole (reservations.host_claims)."""
        return host_claims.claim(self._ctx(), self.mirror(), self.pools,
                                 reservation_id, params, start, end,
                                 replace=replace, occupants=occupants)

    def _hosts_held(self, reservation_id):
        try:
            row = host_db.get(self._ctx(), reservation_id)
        except host_db.HostReservationNotFound:
            return None
        return [h['host_uuid'] for h in row['hosts']]

    def _candidates(self, values):
        """The hosts (root provider uuids) the reservation would take.

        A BEST-EFFORT one that cannot be met now answers what is free.
        """
        params = asked.parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        asked.check_type(params, start)
        asked.check_pcloud(self.pools(), params['pcloud_id'],
                           self._project_id(values))
        hosts, why = host_claims.pick(self._ctx(), self.pools(), params,
                                      start, end)
        if hosts is None:
            if params['lease_type'] != asked.BEST_EFFORT:
                raise exception.CapacityRefused(why)
            return []
        return [h['host_uuid'] for h in hosts]

    def reserve_resource(self, reservation_id, values):
        with reconcile.creation_of(self._ctx(), values.get('lease_id')), \
                errors.admission_refusals():
            faults.step(ADMISSION, 'reserve')
            return self._reserve(reservation_id, values)

    def _reserve(self, reservation_id, values):
        params = asked.parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        now = timeutils.utcnow().replace(microsecond=0)
        asked.check_type(params, start, now)
        project_id = self._project_id(values)
        with quota.serialized(project_id, (quota.HOST_UNITS,)):
            return self._admit_new(reservation_id, values, params, start,
                                   end, project_id)

    def _admit_new(self, reservation_id, values, params, start, end,
                   project_id):
        pools = self.pools()
        asked.check_pcloud(pools, params['pcloud_id'], project_id)
        self._check_quota(project_id, params, start, end)
        occupants = self._occupants(params, pools)
        try:
            hosts = self._admit(reservation_id, params, start, end,
                                occupants=occupants)
            state = host_db.INACTIVE
        except exception.CapacityRefused as e:
            if (params['lease_type'] != asked.BEST_EFFORT
                    or isinstance(e, exception.PoolTooSmall)):
                raise
            LOG.info('BEST-EFFORT reservation %s waits: %s',
                     reservation_id, e)
            hosts, state = [], host_db.IN_PROGRESS
        if occupants is not None:
            self._check_candidates(reservation_id, params, hosts, occupants)
        try:
            host_db.create(self._ctx(), reservation_id, dict(
                params, lease_id=values['lease_id'], project_id=project_id,
                start_time=start, end_time=end, state=state,
                deadline=asked.deadline(params, start)), hosts)
            # As for instance reservations: a concurrent admission of the
            # project may have passed the check too; what is committed now
            # decides, and the one over the limit undoes itself.
            self._check_quota(project_id, params, start, end,
                              exclude=reservation_id)
        except Exception:
            host_db.delete(self._ctx(), reservation_id)
            db_claims.release(self._ctx(), reservation_id)
            raise
        if state == host_db.IN_PROGRESS:
            self._mark_reservation(reservation_id, missing_resources=True)
        self._notify(reservation_id, None)
        return reservation_id

    # --- updates ---------------------------------------------------------

    def update_reservation(self, reservation_id, values):
        project_id = errors.record_to_update(
            host_db.get, self._ctx(), reservation_id,
            host_db.HostReservationNotFound)['project_id']
        with errors.update_refusals(), quota.serialized(
                project_id, (quota.HOST_UNITS,)):
            faults.step(ADMISSION, 'update')
            return self._update(reservation_id, values)

    def _update(self, reservation_id, values):
        row = host_db.get(self._ctx(), reservation_id)
        params = asked.parse_params(values, asked.params_of(row))
        start, end = terms.lease_window(
            values.get('start_date', row['start_time']),
            values.get('end_date', row['end_time']))
        self.change(row, params, start, end)

    # --- queries ---------------------------------------------------------

    def earliest_window(self, host_flavor, amount, duration,
                        availability_zone=None, required_traits=None,
                        not_before=None, latest_start=None):
        """When could ``amount`` hosts of ``host_flavor`` be leased for

        ``duration`` (a timedelta) at the earliest? {'start', 'end',
        'amount'} of a SCHEDULE lease that would be accepted now, or None.
        """
        params = asked.parse_terms({
            'amount': amount, 'host_flavor': host_flavor,
            'availability_zone': availability_zone,
            'required_traits': required_traits})
        ctx = self._ctx()
        return asked.find_earliest_window(
            ctx, db_snapshots.load_forest(ctx), self.pools(), params, duration,
            not_before=not_before, latest_start=latest_start)

    def _allocations(self, hosts=None, lease_id=None, reservation_id=None):
        found = collections.defaultdict(list)
        for row in host_db.list_reservations(
                self._ctx(), lease_id=lease_id,
                reservation_id=reservation_id, states=host_db.HOLDING,
                ending_after=timeutils.utcnow()):
            for host in row['hosts']:
                if hosts is None or host['host_uuid'] in hosts:
                    found[host['host_uuid']].append({
                        'id': row['reservation_id'],
                        'lease_id': row['lease_id'],
                        'start_date': row['start_time'],
                        'end_date': row['end_time']})
        return found
