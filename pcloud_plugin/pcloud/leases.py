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
"""Which pcloud:host leases hold a pcloud and its hosts.

Read from the ledger's record of host reservations, which the pcloud:host
plugin keeps: a lease that is waiting, scheduled or active targets its
pcloud, and an active one holds the hosts it put in it. The Pcloud API
refuses what would take them from under the lease.
"""

from pcloud_plugin import context as context_mod
from pcloud_plugin.db import host_reservations as host_db

# The states in which a reservation still counts on its pcloud.
LIVE = (host_db.INACTIVE, host_db.IN_PROGRESS, host_db.ACTIVE)


class LeaseHolds(object):
    """The live host reservations of a pcloud, from the ledger."""

    def live(self, pcloud_id):
        """[reservation dicts] targeting the pcloud, oldest first."""
        return host_db.list_reservations(
            context_mod.get_admin_context(), pcloud_id=pcloud_id,
            states=LIVE)

    def holding_host(self, pcloud_id, name):
        """The reservation whose lease put the host named ``name`` in the

        pcloud and still holds it, or None.
        """
        for row in self.live(pcloud_id):
            if any(h['name'] == name and h['joined'] for h in row['hosts']):
                return row
        return None


class NoLeases(object):
    """For a service without pcloud:host leases (and its unit tests)."""

    def live(self, pcloud_id):
        return []

    def holding_host(self, pcloud_id, name):
        return None
