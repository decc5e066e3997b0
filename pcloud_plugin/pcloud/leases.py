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
"""The ledger's side of pclouds: who holds a pcloud and its hosts.

Leases: from the ledger's record of host reservations, which the
pcloud:host plugin keeps, a lease that is waiting, scheduled or active
targets its pcloud, and an active one holds the hosts it put in it. The
Pcloud API refuses what would take them from under the lease.

Permanent allocations: a host allocated to a pcloud is claimed whole in
the ledger from then on, open-ended, under the consumer
``pcloud-host:<root provider uuid>``, so that leases and instance
reservations see it taken, and an allocation sees what they booked.
"""

import contextlib
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)
PERMANENT = res_db.WHOLE_HOST
# Longer than any allocation takes between its claim and Nova.
STALE_CLAIM = datetime.timedelta(minutes=5)

# The states in which a reservation still counts on its pcloud.
LIVE = (host_db.INACTIVE, host_db.IN_PROGRESS, host_db.ACTIVE)


class LeaseHolds(object):
    """The live host reservations of a pcloud, from the ledger."""

    def live(self, pcloud_id):
        """[reservation dicts] targeting the pcloud, oldest first."""
        return host_db.list_reservations(
            context_mod.get_admin_context(), pcloud_id=pcloud_id,
            states=LIVE)

    def leased_hosts(self):
        """Service hosts in a pcloud through a lease, now."""
        return host_db.joined_service_hosts(context_mod.get_admin_context())

    def units_peak(self, project_id, units_of, start, end, exclude=None):
        """The most quota units the project's live host leases hold at

        once within [start, end) (``units_of``: a host flavor's units per
        host), but reservation ``exclude``'s.
        """
        spans = [(max(row['start_time'], start), row['end_time'],
                  row['amount'] * units_of(row['host_flavor']))
                 for row in host_db.list_reservations(
                     context_mod.get_admin_context(), states=LIVE)
                 if row['project_id'] == project_id
                 and row['reservation_id'] != exclude
                 and row['end_time'] > start and row['start_time'] < end]
        return window_mod.max_in_sweep(spans, start, end)[0] if spans else 0

    def holding_host(self, pcloud_id, name):
        """The reservation whose lease put the host named ``name`` in the

        pcloud and still holds it, or None.
        """
        for row in self.live(pcloud_id):
            if any(h['name'] == name and h['joined'] for h in row['hosts']):
                return row
        return None

    @staticmethod
    def _consumer(node):
        uuid = db_providers.provider_uuid_named(
            context_mod.get_admin_context(), node)
        return None if uuid is None else (PERMANENT + uuid, uuid)

    def claim_host(self, node):
        """Claim the host of hypervisor ``node`` whole from now on, for a

        permanent allocation. None when claimed (or the ledger does not
        know the host: then nothing can book it either); else why not.
        """
        consumer = self._consumer(node)
        if consumer is None:
            LOG.warning('Host %s is not in the ledger: allocated without '
                        'a claim (is the Placement mirror running?)', node)
            return None
        ctx = context_mod.get_admin_context()
        try:
            try:
                host_db.claim_hosts(ctx, consumer[0], [consumer[1]])
            except exception.ConsumerExists:
                # Free in Nova but claimed for good: an allocation under
                # way, or, past STALE_CLAIM, one that died before Nova.
                held = db_claims.get_claims(ctx, consumer[0])
                if held is not None and held['start'] > (
                        timeutils.utcnow() - STALE_CLAIM):
                    return 'one is being allocated by another request'
                LOG.warning('Taking over the claim %s, left by an '
                            'allocation that did not finish', consumer[0])
                host_db.claim_hosts(ctx, consumer[0], [consumer[1]],
                                    replace=True)
        except exception.HostBusy as e:
            return 'one is booked from %s to %s' % (e.kwargs['start'],
                                                    e.kwargs['end'])
        return None

    def release_host(self, node):
        """Drop the permanent claim on the host of hypervisor ``node``."""
        consumer = self._consumer(node)
        if consumer is not None:
            db_claims.release(context_mod.get_admin_context(), consumer[0])

    def held_since(self, node):
        """When the permanent claim on the host of ``node`` began (None:

        there is none): where its usage record starts.
        """
        consumer = self._consumer(node)
        claims = consumer and db_claims.get_claims(
            context_mod.get_admin_context(), consumer[0])
        return claims['start'] if claims else None

    @staticmethod
    def begin(operation, subject, **details):
        """Record an allocation or release about to change Nova (see

        db.intents); returns what end() takes.
        """
        return intents.begin(context_mod.get_admin_context(), operation,
                             subject, details)

    @staticmethod
    def end(intent_id, failed=False):
        """It returned (forget it), or raised (leave it to the reconciler)."""
        ctx = context_mod.get_admin_context()
        if failed:
            intents.fail(ctx, intent_id)
        else:
            intents.finish(ctx, intent_id)

    @staticmethod
    def recorded(operation, subject, **details):
        """begin() and end() around a block (db.intents.recorded)."""
        return intents.recorded(context_mod.get_admin_context(), operation,
                                subject, **details)


class NoLeases(object):
    """For a service without pcloud:host leases (and its unit tests)."""

    def live(self, pcloud_id):
        return []

    def leased_hosts(self):
        return set()

    def units_peak(self, project_id, units_of, start, end, exclude=None):
        return 0

    def holding_host(self, pcloud_id, name):
        return None

    def claim_host(self, node):
        return None

    def release_host(self, node):
        pass

    def held_since(self, node):
        return None

    def begin(self, operation, subject, **details):
        return None

    def end(self, intent_id, failed=False):
        pass

    def recorded(self, operation, subject, **details):
        return contextlib.nullcontext()
