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
BEST-EFFORT reservations may move away first (blazar.host_vacate).
Parameters and eligibility are in blazar.host_requests.

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
them.

The state of each reservation is in the ledger's pcloud_host_reservations
table (INACTIVE, IN-PROGRESS, ACTIVE, TIMEDOUT, ENDED) and in Blazar's
reservation: pending before start, active after, with missing_resources
set while it waits for hosts, and error once TIMEDOUT. Each state entered
is a usage notification ``pcloud.host_reservation.<state>``.
"""

import collections
import datetime

from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
from novaclient import exceptions as nova_exc
from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import timeutils

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import host_requests as asked
from pcloud_plugin.blazar import host_vacate
from pcloud_plugin.blazar import hosts_view
from pcloud_plugin.blazar import monitor
from pcloud_plugin.blazar import reconcile
from pcloud_plugin.blazar import resources
from pcloud_plugin.blazar import terms
from pcloud_plugin.capacity import host_windows
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin import exception
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import service as pcloud_service

LOG = logging.getLogger(__name__)
CONF = conf.CONF

RESOURCE_TYPE = 'pcloud:host'

AGGREGATE_PREFIX = 'pcloud-lease:'
# The fault-injection step name (pcloud_plugin.faults) of admissions.
ADMISSION = 'admission'
FILTER_KEY = 'filter_lease_id'
RESERVATION_KEY = 'pcloud:reservation_id'

PUBLISHER = 'pcloud.host-reservation'
EVENT_PREFIX = 'pcloud.host_reservation.'
_LOST_RACE = (exception.HostBusy, exception.ConcurrentUpdateDetected)


def event_type(state):
    """pcloud.host_reservation.<state>, e.g. ...in_progress."""
    return EVENT_PREFIX + state.lower().replace('-', '_')


def _moment(value):
    return value.isoformat() if value is not None else None


def payload(row, previous=None):
    """The event body of a reservation record (host_reservations.get).

    Hosts are given by their names in the pcloud only (seeds/000: users
    never learn the real host names).
    """
    return {
        'reservation_id': row['reservation_id'],
        'lease_id': row['lease_id'],
        'project_id': row['project_id'],
        'resource_type': RESOURCE_TYPE,
        'pcloud_id': row['pcloud_id'],
        'host_flavor': row['host_flavor'],
        'amount': row['amount'],
        'lease_type': row['lease_type'],
        'state': row['state'],
        'previous_state': previous,
        'start': _moment(row['start_time']),
        'end': _moment(row['end_time']),
        'deadline': _moment(row['deadline']),
        'at': timeutils.utcnow().isoformat(),
        'hosts': [h['name'] for h in row['hosts']],
    }


class HostUsageNotifier(usage.UsageNotifier):
    """Usage events of pcloud:host reservations, one per state entered."""

    def __init__(self, conf_, **kwargs):
        kwargs.setdefault('publisher_id', PUBLISHER)
        super().__init__(conf_, **kwargs)

    def state_entered(self, row, previous=None):
        self._send({'project_id': row['project_id']},
                   event_type(row['state']), payload(row, previous))


class PcloudHostPlugin(host_vacate.Vacating, hosts_view.LedgerHostsPlugin):
    """Whole hosts of a host flavor leased into a pcloud."""

    resource_type = RESOURCE_TYPE
    title = 'pcloud host plugin'
    description = ('Whole hosts of a host flavor leased into a pcloud: '
                   'IMMEDIATE, SCHEDULE or BEST-EFFORT (seeds/001), '
                   'booked on the pcloud capacity ledger.')

    def __init__(self):
        super().__init__()
        # Waiting reservations and interrupted clean-ups, every interval.
        self.monitor = monitor.PollingMonitor(
            (self.poll, lambda: CONF.pcloud_host.retry_interval),
            (lambda: self.mirror_placement(),
             lambda: CONF.pcloud.placement_mirror_interval))
        self.notifier = HostUsageNotifier(CONF)
        self._nova = None
        self._pclouds = None

    # --- helpers ---------------------------------------------------------

    def nova(self):
        if self._nova is None:
            self._nova = nova_client.get_client()
        return self._nova

    @staticmethod
    def _ctx():
        return context_mod.get_admin_context()

    def _exclusions(self):
        return resources.NovaObjects(self.nova()).pcloud_exclusions()

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

    @staticmethod
    def _check_pcloud(pools, pcloud_id, project_id):
        agg = pools.pclouds.get(pcloud_id)
        # Others' pclouds do not exist, as far as a user can tell.
        if agg is None or codec.Pcloud(agg.metadata).owner != project_id:
            raise asked.malformed('pcloud_id', 'no pcloud %s of project %s'
                                  % (pcloud_id, project_id))
        return agg

    @staticmethod
    def _check_type(params, start, now=None):
        if params['lease_type'] == asked.IMMEDIATE:
            now = now or timeutils.utcnow()
            latest = now + datetime.timedelta(
                seconds=CONF.pcloud_host.immediate_tolerance)
            if start > latest:
                raise asked.malformed(
                    'lease_type', 'an IMMEDIATE lease starts now, not at '
                    '%s: use SCHEDULE' % start)

    def _check_quota(self, project_id, params, start, end, exclude=None):
        """Leased hosts count against the project's units quota while

        held (QuotaRefused, 403, if they would take it over).
        """
        try:
            self.pclouds().check_lease_quota(
                project_id, params['host_flavor'], params['amount'], start,
                end, exclude=exclude)
        except exception.QuotaExceeded as e:
            raise errors.QuotaRefused(reason='Cannot reserve %s from %s to '
                                      '%s: %s' % (asked.describe(params),
                                                  start, end, e.message))

    def _blazar_status(self, reservation_id, **values):
        try:
            blazar_db.reservation_update(reservation_id, values)
        except Exception:
            LOG.exception('Could not record %s on Blazar reservation %s',
                          values, reservation_id)

    def _notify(self, reservation_id, previous):
        row = host_db.get(self._ctx(), reservation_id)
        self.notifier.state_entered(row, previous)
        return row

    # --- admission -------------------------------------------------------

    def _pick(self, params, start, end, exclude=None, occupants=None):
        """(hosts, None) free for the window, or (None, why not); with

        ``occupants``, those running the least of other projects first.
        Raises PoolTooSmall when fewer hosts are eligible than asked for.
        """
        ctx = self._ctx()
        pools = self.pools()
        forest = db_api.load_forest(ctx)
        hosts = asked.eligible_hosts(forest, pools, params,
                                     host_db.joined_service_hosts(ctx))
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
            raise errors.PoolTooSmall(
                'Cannot reserve %s: only %d host(s) could ever serve it.'
                % (asked.describe(params), len(hosts)))
        why = ('Cannot reserve %s from %s to %s: %d of the %d eligible '
               'hosts are free then.'
               % (asked.describe(params), start, end, len(free), len(hosts)))
        later = host_windows.earliest_window(
            host_db.busy_intervals(ctx, roots, start,
                                   exclude_consumer=exclude),
            params['amount'], end - start, start, order=roots)
        if later:
            why += (' The earliest window of this length with %d free '
                    'starts at %s.' % (params['amount'], later[0]))
        return None, why

    def _admit(self, reservation_id, params, start, end, replace=False,
               occupants=None):
        """Pick hosts (see _pick) and claim them whole; their records,

        named. A claim that lost the hosts to a concurrent lease picks
        again from a fresh read. Raises NotEnoughHostsAvailable.
        """
        last, fresh = None, None
        for _attempt in range(CONF.pcloud_host.admission_retries + 2):
            hosts, why = self._pick(params, start, end,
                                    exclude=reservation_id,
                                    occupants=occupants)
            if hosts is None:
                raise errors.CapacityRefused(why)
            if fresh is None:
                # Freshness: what Placement changed on these hosts since
                # the mirror last read them is in the ledger now.
                fresh = not self.mirror().refresh(
                    self._ctx(), [h['host_uuid'] for h in hosts])
                if not fresh:
                    continue
            try:
                host_db.claim_hosts(self._ctx(), reservation_id,
                                    [h['host_uuid'] for h in hosts],
                                    start, end, replace=replace)
            except _LOST_RACE as e:
                LOG.debug('Claim of %s lost a race: %s', reservation_id, e)
                last = e
                continue
            for n, host in enumerate(hosts, 1):
                host['name'] = 'lease-%s-%d' % (reservation_id[:8], n)
            return hosts
        LOG.info('Reservation %s lost every race; last: %s',
                 reservation_id, last)
        raise errors.CapacityRefused(
            'Cannot reserve %s from %s to %s: concurrent leases kept taking '
            'the hosts picked.' % (asked.describe(params), start, end))

    def allocation_candidates(self, values):
        """The hosts (root provider uuids) the reservation would take.

        A BEST-EFFORT one that cannot be met now answers what is free.
        """
        with errors.unreachable_refused():
            return self._candidates(values)

    def _candidates(self, values):
        reservation_id = values.get('id')
        if reservation_id:
            try:
                row = host_db.get(self._ctx(), reservation_id)
            except host_db.HostReservationNotFound:
                pass
            else:
                return [h['host_uuid'] for h in row['hosts']]
        params = asked.parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        self._check_type(params, start)
        self._check_pcloud(self.pools(), params['pcloud_id'],
                           self._project_id(values))
        hosts, why = self._pick(params, start, end)
        if hosts is None:
            if params['lease_type'] != asked.BEST_EFFORT:
                raise errors.CapacityRefused(why)
            return []
        return [h['host_uuid'] for h in hosts]

    def reserve_resource(self, reservation_id, values):
        with reconcile.creation_of(self._ctx(), values.get('lease_id')), \
                errors.unreachable_refused():
            faults.step(ADMISSION, 'reserve')
            return self._reserve(reservation_id, values)

    def _reserve(self, reservation_id, values):
        params = asked.parse_params(values)
        start, end = terms.lease_window(values['start_date'],
                                        values['end_date'])
        now = timeutils.utcnow().replace(microsecond=0)
        self._check_type(params, start, now)
        project_id = self._project_id(values)
        pools = self.pools()
        self._check_pcloud(pools, params['pcloud_id'], project_id)
        self._check_quota(project_id, params, start, end)
        occupants = self._occupants(params, pools)
        try:
            hosts = self._admit(reservation_id, params, start, end,
                                occupants=occupants)
            state = host_db.INACTIVE
        except mgr_exc.NotEnoughHostsAvailable as e:
            if (params['lease_type'] != asked.BEST_EFFORT
                    or isinstance(e, errors.PoolTooSmall)):
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
        except Exception:
            db_api.release(self._ctx(), reservation_id)
            raise
        if state == host_db.IN_PROGRESS:
            self._blazar_status(reservation_id, missing_resources=True)
        self._notify(reservation_id, None)
        return reservation_id

    # --- waiting (BEST-EFFORT) -------------------------------------------

    def _timed_out(self, row, now):
        """Past its deadline: its hosts given back (out of the pcloud if a

        join was cut short, claim released), the reservation TIMEDOUT.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        given_back = self._leave(row) if row['hosts'] else True
        db_api.release(ctx, rid)
        # Hosts still joined stay recorded, for sweep() to take out.
        host_db.update(ctx, rid, state=host_db.TIMEDOUT,
                       **({'hosts': []} if given_back else {}))
        LOG.info('BEST-EFFORT reservation %s timed out at %s', rid,
                 row['deadline'])
        if now >= row['start_time']:
            self._blazar_status(rid, status=status.reservation.ERROR)
        self._notify(rid, row['state'])

    def _try_waiting(self, row, started):
        """Take the hosts of a waiting reservation if they are free now;

        go on with one that holds its hosts (other projects' instances
        moving off them, or a join cut short). Returns its new state.
        """
        ctx = self._ctx()
        rid = row['reservation_id']
        now = timeutils.utcnow().replace(microsecond=0)
        if row['deadline'] is not None and now >= row['deadline']:
            self._timed_out(row, now)
            return host_db.TIMEDOUT
        if row['hosts']:
            # Only a start (on_start) sets it going.
            return (self._activate(row, previous=row['state']) if started
                    else row['state'])
        start = max(row['start_time'], now)
        if start >= row['end_time']:
            return row['state']
        params = asked.params_of(row)
        try:
            hosts = self._admit(rid, params, start, row['end_time'],
                                occupants=self._occupants(row))
        except mgr_exc.NotEnoughHostsAvailable as e:
            LOG.debug('Reservation %s still waits: %s', rid, e)
            return row['state']
        if started:
            # IN-PROGRESS until its hosts have joined: whatever stops
            # this midway, the next check goes on from the ledger.
            host_db.update(ctx, rid, hosts=hosts, migrations=[])
            return self._activate(host_db.get(ctx, rid),
                                  previous=row['state'])
        host_db.update(ctx, rid, hosts=hosts, state=host_db.INACTIVE)
        self._blazar_status(rid, missing_resources=False)
        self._notify(rid, row['state'])
        return host_db.INACTIVE

    def retry_waiting(self, skip=None):
        """Give the waiting (IN-PROGRESS) reservations, oldest first, the

        hosts that are free now, and check the migrations of those
        emptying theirs; time out those past their deadline. Returns
        {reservation id: new state} of those checked.
        """
        result = {}
        for row in host_db.list_reservations(
                self._ctx(), states=[host_db.IN_PROGRESS]):
            rid = row['reservation_id']
            if rid == skip:
                continue
            try:
                started = (blazar_db.reservation_get(rid)['status'] ==
                           status.reservation.ACTIVE)
                result[rid] = self._try_waiting(row, started)
            except Exception:
                LOG.exception('Could not check waiting reservation %s', rid)
        return result

    # --- lifecycle -------------------------------------------------------

    def _lease_aggregate(self, row):
        if row['aggregate_id']:
            return row['aggregate_id']
        faults.step(reconcile.LEASE_START, 'aggregate')
        nova_objects = resources.NovaObjects(self.nova())
        # The window too: the PcloudFilter lets boots in only within it.
        metadata = codec.lease_window_metadata(
            row['pcloud_id'], row['start_time'], row['end_time'])
        metadata.update({FILTER_KEY: row['lease_id'],
                         RESERVATION_KEY: row['reservation_id']})
        aggregate_id = nova_objects.create_aggregate(
            AGGREGATE_PREFIX + row['reservation_id'], metadata)
        host_db.update(self._ctx(), row['reservation_id'],
                       aggregate_id=aggregate_id)
        row['aggregate_id'] = aggregate_id
        return aggregate_id

    def _join(self, row):
        """Put the hosts in the pcloud (named, enabled) and the lease's

        aggregate; each host is recorded as it joins.
        """
        nova = self.nova()
        pcloud = self.pools().pclouds.get(row['pcloud_id'])
        if pcloud is None:
            raise exception.PcloudNotFound(pcloud_id=row['pcloud_id'])
        lease_agg = self._lease_aggregate(row)
        for host in row['hosts']:
            if not host['joined']:
                # The names first, so the pcloud knows the host as it
                # joins; forgotten again if it cannot join.
                names = {codec.host_key(host['name']): host['host_name'],
                         codec.host_state_key(host['host_name']):
                             codec.ENABLED}
                faults.step(reconcile.LEASE_START, 'name')
                nova.aggregates.set_metadata(pcloud.id, names)
                try:
                    faults.step(reconcile.LEASE_START, 'add')
                    self._add_host(pcloud.id, host['service_host'])
                except Exception:
                    try:
                        nova.aggregates.set_metadata(
                            pcloud.id, dict.fromkeys(names))
                    except Exception:
                        LOG.exception('Could not forget host %s in pcloud '
                                      '%s', host['name'], row['pcloud_id'])
                    raise
                faults.step(reconcile.LEASE_START, 'joined')
                host_db.set_joined(self._ctx(), row['reservation_id'],
                                   host['host_uuid'], True)
                host['joined'] = True
            # The pcloud's allocation ratios while it is in it (again
            # after a crash: it is safe to).
            self.pclouds().lend_ratios(pcloud, host['host_name'])
            faults.step(reconcile.LEASE_START, 'lease-aggregate')
            self._add_host(lease_agg, host['service_host'])

    def _add_host(self, aggregate_id, host):
        try:
            self.nova().aggregates.add_host(aggregate_id, host)
        except nova_exc.Conflict:
            pass  # already a member

    def _leave(self, row):
        """Disable the hosts, take them out of the pcloud and delete the

        lease's aggregate. True when all is done; what failed is retried
        by sweep(). Their instances keep running.
        """
        nova = self.nova()
        done = True
        pcloud = self.pools().pclouds.get(row['pcloud_id'])
        for host in row['hosts']:
            if not host['joined']:
                if pcloud is not None and not self._forget_unjoined(
                        pcloud, host):
                    done = False
                continue
            try:
                if pcloud is not None:
                    faults.step(reconcile.LEASE_END, 'disable')
                    nova.aggregates.set_metadata(pcloud.id, {
                        codec.host_state_key(host['host_name']):
                            codec.DISABLED})
                    self.pclouds().restore_ratios(pcloud,
                                                  host['host_name'])
                    faults.step(reconcile.LEASE_END, 'remove')
                    try:
                        nova.aggregates.remove_host(pcloud.id,
                                                    host['service_host'])
                    except nova_exc.NotFound:
                        pass
                    faults.step(reconcile.LEASE_END, 'forget')
                    nova.aggregates.set_metadata(pcloud.id, {
                        codec.host_key(host['name']): None,
                        codec.host_state_key(host['host_name']): None})
                faults.step(reconcile.LEASE_END, 'left')
                host_db.set_joined(self._ctx(), row['reservation_id'],
                                   host['host_uuid'], False)
                host['joined'] = False
            except Exception:
                LOG.exception('Could not take host %s of reservation %s out '
                              'of pcloud %s', host['name'],
                              row['reservation_id'], row['pcloud_id'])
                done = False
        if row['aggregate_id']:
            try:
                faults.step(reconcile.LEASE_END, 'aggregate')
                resources.NovaObjects(nova).delete_aggregate(
                    row['aggregate_id'])
                host_db.update(self._ctx(), row['reservation_id'],
                               aggregate_id=None)
            except Exception:
                LOG.exception('Could not delete aggregate %s of reservation '
                              '%s', row['aggregate_id'],
                              row['reservation_id'])
                done = False
        return done

    def _forget_unjoined(self, pcloud, host):
        """Forget the names a join that failed wrote for a host that is

        not in the pcloud (its own rollback may have failed too).
        """
        key = codec.host_key(host['name'])
        if (pcloud.metadata.get(key) != host['host_name']
                or host['service_host'] in (pcloud.hosts or ())):
            return True
        try:
            self.pclouds().restore_ratios(pcloud, host['host_name'])
            self.nova().aggregates.set_metadata(pcloud.id, {
                key: None, codec.host_state_key(host['host_name']): None})
        except Exception:
            LOG.exception('Could not forget host %s in pcloud %s',
                          host['name'], pcloud.id)
            return False
        return True

    def _activate(self, row, previous=None):
        """Put the hosts in the pcloud, once a BEST-EFFORT reservation's

        are empty of other projects' instances; returns the new state.
        """
        rid = row['reservation_id']
        ctx = self._ctx()
        waiting = self._vacate(row, previous or row['state'])
        if waiting:
            return waiting
        if self._occupants(row) is None:
            row = self._empty_hosts(row)
            if row is None:
                # BEST-EFFORT: other hosts may come free before its end.
                return self._wait_for_hosts(rid, previous or host_db.INACTIVE)
        try:
            self._join(row)
        except Exception as e:
            LOG.exception('Starting reservation %s failed; undoing it', rid)
            self._leave(host_db.get(ctx, rid))
            raise mgr_exc.EventError(
                error='Nova failed while starting host reservation %s: %s'
                      % (rid, e))
        faults.step(reconcile.LEASE_START, 'active')
        host_db.update(ctx, rid, state=host_db.ACTIVE)
        self._blazar_status(rid, missing_resources=False)
        self._notify(rid, previous or row['state'])
        return host_db.ACTIVE

    def _row(self, resource_id):
        try:
            return host_db.get(self._ctx(), resource_id)
        except host_db.HostReservationNotFound as e:
            raise mgr_exc.EventError(error=e.message)

    def _record(self, operation, row):
        reconcile.record_event(self._ctx(), operation, row['reservation_id'],
                               row['lease_id'], RESOURCE_TYPE)

    def on_start(self, resource_id):
        row = self._row(resource_id)
        self._record(reconcile.LEASE_START, row)
        if row['state'] == host_db.INACTIVE:
            self._activate(row)
        elif row['state'] == host_db.ACTIVE:
            # Run again after a crash left Blazar's side unfinished.
            self._join(row)
        elif row['state'] == host_db.IN_PROGRESS:
            if self._try_waiting(row, True) == host_db.TIMEDOUT:
                raise mgr_exc.EventError(
                    error='BEST-EFFORT reservation %s timed out'
                    % resource_id)
        else:
            raise mgr_exc.EventError(
                error='Host reservation %s cannot start from %s'
                % (resource_id, row['state']))

    def on_end(self, resource_id):
        ctx = self._ctx()
        try:
            row = host_db.get(ctx, resource_id)
        except host_db.HostReservationNotFound:
            LOG.info('Host reservation %s is already gone', resource_id)
            return
        if row['state'] == host_db.ENDED:
            return
        self._record(reconcile.LEASE_END, row)
        self._leave(row)
        faults.step(reconcile.LEASE_END, 'release')
        db_api.release(ctx, resource_id)
        faults.step(reconcile.LEASE_END, 'ended')
        host_db.update(ctx, resource_id, state=host_db.ENDED)
        self._notify(resource_id, row['state'])
        # Hosts may have come free for those waiting.
        self.retry_waiting()

    def poll(self):
        self.reconcile()
        self.retry_waiting()
        self.sweep()

    # --- after crashes ---------------------------------------------------

    def pclouds(self):
        if self._pclouds is None:
            self._pclouds = pcloud_service.PcloudService(self.nova())
        return self._pclouds

    def reconcile(self):
        """Finish or undo what crashes and unreachable services

        interrupted (db.intents): lease starts and ends, host allocations
        and releases. Runs at manager start and every retry_interval.
        """
        ctx = self._ctx()
        older_than = intents.since(CONF.pcloud.operation_timeout)
        done = reconcile.recover_events(ctx, RESOURCE_TYPE,
                                        self._undo_failed_start,
                                        self.notifier, older_than)
        done.update(reconcile.recover(
            ctx, intents.interrupted(
                ctx, (pcloud_service.ALLOCATE, pcloud_service.RELEASE),
                older_than),
            self.pclouds().recover, self.notifier, take=True))
        return done

    def _undo_failed_start(self, intent):
        """What a failed start left in Nova leaves; the lease is ERROR."""
        try:
            row = host_db.get(self._ctx(), intent['subject'])
        except host_db.HostReservationNotFound:
            return None
        if row['state'] == host_db.ACTIVE or not (
                row['aggregate_id'] or any(h['joined']
                                           for h in row['hosts'])):
            return None
        if not self._leave(row):
            return reconcile.KEEP
        return 'its hosts left pcloud %s after it failed' % row['pcloud_id']

    def sweep(self):
        """Retry taking out of pclouds the hosts of ended (or timed out)

        reservations; end those whose Blazar reservation is gone, and
        release claims nothing holds (see reconcile).
        """
        ctx = self._ctx()
        rows = host_db.list_reservations(ctx)
        for row in reconcile.orphan_rows(
                [r for r in rows if r['state'] != host_db.ENDED]):
            rid = row['reservation_id']
            LOG.warning('Host reservation %s is gone from Blazar; ending '
                        'it', rid)
            db_api.release(ctx, rid)
            if self._leave(row):
                host_db.delete(ctx, rid)
            else:
                host_db.update(ctx, rid, state=host_db.ENDED)
        for row in rows:
            if row['state'] in (host_db.ENDED, host_db.TIMEDOUT) and (
                    any(h['joined'] for h in row['hosts']) or
                    row['aggregate_id']):
                self._leave(row)
        reconcile.release_orphan_claims(ctx)

    # --- updates ---------------------------------------------------------

    def update_reservation(self, reservation_id, values):
        with errors.update_refusals():
            faults.step(ADMISSION, 'update')
            return self._update(reservation_id, values)

    def _update(self, reservation_id, values):
        """Before start anything may change and the hosts are picked

        again (a refused change changes nothing); once active only the
        end may move, on the same hosts.
        """
        ctx = self._ctx()
        row = host_db.get(ctx, reservation_id)
        params = asked.parse_params(values, asked.params_of(row))
        start, end = terms.lease_window(
            values.get('start_date', row['start_time']),
            values.get('end_date', row['end_time']))
        changed = sorted(p for p in asked.PARAMS if params[p] != row[p])
        if not changed and (start, end) == (row['start_time'],
                                            row['end_time']):
            return
        state = row['state']
        if state in (host_db.TIMEDOUT, host_db.ENDED):
            raise mgr_exc.CantUpdateParameter(
                param='Host reservation %s (%s)' % (reservation_id, state))
        if state == host_db.ACTIVE:
            if changed or start != row['start_time']:
                raise mgr_exc.CantUpdateParameter(
                    param='%s of active host reservation %s' % (
                        ', '.join(changed) or 'start_date', reservation_id))
            if end > row['end_time']:
                self._check_quota(row['project_id'], params, start, end,
                                  exclude=reservation_id)

            def claim(until):
                try:
                    host_db.claim_hosts(
                        ctx, reservation_id,
                        [h['host_uuid'] for h in row['hosts']],
                        row['start_time'], until, replace=True)
                except _LOST_RACE as e:
                    LOG.info('Reservation %s cannot end at %s: %s',
                             reservation_id, until, e)
                    # Not e's message: it names a real host (seeds/000).
                    raise errors.CapacityRefused(
                        'Cannot move the end of reservation %s to %s: '
                        'another reservation holds one of its hosts before '
                        'then.' % (reservation_id, until))

            def window(until):
                # The end the PcloudFilter lets boots in until.
                if not row['aggregate_id']:
                    return
                try:
                    self.nova().aggregates.set_metadata(
                        row['aggregate_id'], codec.lease_window_metadata(
                            row['pcloud_id'], row['start_time'], until))
                except Exception as e:
                    LOG.exception('Could not end reservation %s at %s in '
                                  'Nova', reservation_id, until)
                    raise mgr_exc.CantUpdateParameter(
                        'Nova failed while moving the end of reservation '
                        '%s; try again: %s' % (reservation_id, e))

            # The filter's end must never pass the claim's: a later end is
            # claimed before Nova has it, an earlier one goes to Nova
            # first. The first step is undone if the second fails: a
            # refused update (409) leaves the lease as it was.
            first, then = ((claim, window) if end > row['end_time']
                           else (window, claim))
            first(end)
            try:
                then(end)
            except Exception:
                with excutils.save_and_reraise_exception():
                    try:
                        first(row['end_time'])
                    except Exception:
                        LOG.exception('Could not undo the new end of '
                                      'reservation %s', reservation_id)
            host_db.update(ctx, reservation_id, end_time=end)
            return
        now = timeutils.utcnow().replace(microsecond=0)
        self._check_type(params, start, now)
        if 'pcloud_id' in changed:
            self._check_pcloud(self.pools(), params['pcloud_id'],
                               row['project_id'])
        self._check_quota(row['project_id'], params, start, end,
                          exclude=reservation_id)
        fields = dict(params, start_time=start, end_time=end,
                      deadline=asked.deadline(params, start))
        if state == host_db.INACTIVE:
            hosts = self._admit(reservation_id, params, start, end,
                                replace=True,
                                occupants=self._occupants(params))
            host_db.update(ctx, reservation_id, hosts=hosts, **fields)
            return
        if row['hosts']:
            # Other projects' instances are moving off the hosts it holds.
            raise mgr_exc.CantUpdateParameter(
                param='Host reservation %s (IN-PROGRESS: other projects\' '
                      'instances are moving off its hosts; try again once it '
                      'is ACTIVE)' % reservation_id)
        # IN-PROGRESS: record the new terms and look again.
        host_db.update(ctx, reservation_id, **fields)
        started = (blazar_db.reservation_get(reservation_id)['status'] ==
                   status.reservation.ACTIVE)
        self._try_waiting(host_db.get(ctx, reservation_id), started)

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
            ctx, db_api.load_forest(ctx), self.pools(), params, duration,
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
