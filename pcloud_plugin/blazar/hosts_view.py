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

"""What our two Blazar plugins share: their periodic work, Nova, the

Placement mirror, and what Blazar's API shows of their hosts and
allocations. Both plugins hold hosts by their root provider uuid in the
ledger; each says which of its reservations hold which hosts in
``_allocations``.
"""

import gc

from blazar.db import api as blazar_db
from blazar.plugins import base
from blazar import status
from oslo_log import log as logging

from pcloud_plugin.blazar import errors
from pcloud_plugin.blazar import lease_flags
from pcloud_plugin.blazar import monitor
from pcloud_plugin.blazar import reconcile
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.cloud import mirror as mirror_mod
from pcloud_plugin.cloud import nova_events
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.reservations import maintenance
from pcloud_plugin.reservations import registry

LOG = logging.getLogger(__name__)
CONF = conf.CONF
QUERY_TYPE_ALLOCATION = 'allocation'
_startup_heap_frozen = False


def freeze_startup_heap():
    """Leave what the process holds as Blazar loads its plugins (modules,

    classes, its services) out of the garbage collector's full passes,
    once per process. A full pass walks every object: at 10,000 hosts
    the first admission's read doubles them, and a pass over both cost
    150-200 ms of it. Garbage cycles are collected first, so that none
    is kept for good.
    """
    global _startup_heap_frozen
    if not _startup_heap_frozen:
        gc.collect()
        gc.freeze()
        _startup_heap_frozen = True


class LedgerHostsPlugin(base.BasePlugin):
    """A Blazar plugin whose resources are hosts of the ledger."""

    query_options = {QUERY_TYPE_ALLOCATION: ['lease_id', 'reservation_id']}
    # The ports the reservation domain reaches Blazar's records through:
    # what healing reads and marks on leases, and the repair of leases,
    # events and intents after crashes (reservations' lifecycles).
    lease_flags = lease_flags
    reconciler = reconcile

    def __init__(self, *periodic):
        """:param periodic: each (task, its interval in seconds), the

        plugin's own periodic work, which its monitor runs with the
        Placement mirror's passes and its ``heal``.
        """
        super().__init__()
        freeze_startup_heap()
        self.monitor = monitor.PollingMonitor(
            *periodic,
            (lambda: self.mirror_placement(),
             lambda: CONF.pcloud.placement_mirror_interval),
            (lambda: self.save_usage(),
             lambda: CONF.ledger.usage_snapshot_interval),
            (lambda: self.run_maintenances(),
             lambda: CONF.pcloud.maintenance_interval),
            healer=self.heal, on_start=self.listen)
        self._novaclient = None

    def on_start(self, resource_id):
        """Blazar's start of a reservation: the lifecycle's, whose

        failure is Blazar's EventError (the lease goes to ERROR).
        """
        with errors.event_failures():
            return self.start_reservation(resource_id)

    def on_end(self, resource_id):
        with errors.event_failures():
            return self.end_reservation(resource_id)

    def start_reservation(self, resource_id):
        """The domain's start (reservations' lifecycles)."""
        raise NotImplementedError()

    def end_reservation(self, resource_id):
        """The domain's end (reservations' lifecycles)."""
        raise NotImplementedError()

    # Blazar's state of a reservation, as the domain asks it.

    @staticmethod
    def _started(reservation_id):
        """Whether Blazar's reservation is active: its start has run."""
        return (blazar_db.reservation_get(reservation_id)['status'] ==
                status.reservation.ACTIVE)

    @staticmethod
    def _in_error(reservation_id):
        """Whether Blazar's reservation is in error."""
        return (blazar_db.reservation_get(reservation_id)['status'] ==
                status.reservation.ERROR)

    def novaclient(self):
        """python-novaclient as the plugin's admin ([pcloud_nova])."""
        if self._novaclient is None:
            self._novaclient = nova_client.get_client()
        return self._novaclient

    @staticmethod
    def _ctx():
        return context_mod.get_admin_context()

    def _exclusions(self):
        """(aggregate uuids, host names) of pclouds and host flavor pools."""
        return resources.NovaObjects(self.novaclient()).pcloud_exclusions()

    def mirror(self):
        """The process's Placement mirror (cloud.mirror)."""
        return mirror_mod.get_mirror(self._exclusions, self.notifier)

    def listen(self):
        """Follow Nova's notifications in this process (cloud.nova_events):

        a compute service changed heals at once; an instance is
        registered with the reservation it runs in.
        """
        nova_events.listen(self.mirror, self.novaclient, self.monitor.heal,
                           registry.follow_instance)

    def run_maintenances(self):
        """Start and end operators' maintenance windows when due

        (reservations.maintenance; both plugins run it, one wins each).
        """
        maintenance.run_due(context_mod.get_admin_context(),
                            self.novaclient())

    def mirror_placement(self):
        """One pass of the Placement mirror, every

        [pcloud] placement_mirror_interval.
        """
        context = context_mod.get_admin_context()
        report = self.mirror().run(context)
        registry.repair_from_cloud(context, self.mirror().adapter,
                                   self.novaclient())
        LOG.debug('Placement mirror: %d provider(s) read, usage written on '
                  '%d, %d request(s), %.3f s', len(report.read),
                  len(report.usage_written), report.requests, report.seconds)

    @staticmethod
    def save_usage():
        """The ledger's usage snapshots brought up to date, every

        [ledger] usage_snapshot_interval.
        """
        written = db_snapshots.save_usage(context_mod.get_admin_context())
        LOG.debug('Usage snapshots: %d written', written)

    def allocation_candidates(self, values):
        """Blazar's question before it creates or updates a reservation:

        the hosts it would take (one uuid per unit). For an update, the
        hosts it holds: the real check is update_reservation's.
        """
        with errors.admission_refusals():
            held = values.get('id') and self._hosts_held(values['id'])
            if held is not None:
                return held
            return self._candidates(values)

    def _hosts_held(self, reservation_id):
        """The hosts a reservation of ours holds; None if it is not one."""
        raise NotImplementedError()

    def _candidates(self, values):
        raise NotImplementedError()

    def _allocations(self, hosts=None, lease_id=None, reservation_id=None):
        """{host uuid: [allocation dicts]} of the reservations asked."""
        raise NotImplementedError()

    def get(self, resource_id):
        """A host (resource ids here are root provider uuids)."""
        try:
            provider = db_providers.get_provider(self._ctx(), resource_id)
        except exception.ResourceProviderNotFound:
            return None
        return {'id': provider['uuid'],
                'hypervisor_hostname': provider['name']}

    def list_allocations(self, query, detail=False):
        options = self.get_query_options(query or {}, QUERY_TYPE_ALLOCATION)
        return [{'resource_id': host, 'reservations': allocs}
                for host, allocs in sorted(
                    self._allocations(**options).items())]

    def query_allocations(self, resource_id_list, lease_id=None,
                          reservation_id=None):
        found = self._allocations(set(resource_id_list), lease_id,
                                  reservation_id)
        return {host: found.get(host, []) for host in resource_id_list}
