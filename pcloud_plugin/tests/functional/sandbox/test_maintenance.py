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

"""A maintenance window in the sandbox (issue 36), through blazar-api,

blazar-manager and Nova's real API: the reservations of two tenants
that hold the hosts an operator takes for a window move off them ahead
of time, a maintenance that would strand a reservation pinned to its
host is refused with nothing moved, the moved ones' lessees boot on
their new hosts, and the hosts are disabled in Nova for the window and
given back at its end. The in-process tests
(functional/blazar/test_maintenance.py) cover the rest.
"""

import json

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


class Maintenance(test_capacity_truth._Capacity):

    def _services(self, hosts):
        """{host: (status, disabled_reason)} of their nova-compute."""
        found = {}
        for host in hosts:
            (service,) = self.nova.services.list(host=host,
                                                 binary='nova-compute')
            found[host] = (service.status, service.disabled_reason)
        return found

    def _until_state(self, maintenance, state):
        self._until('maintenance %s %s' % (maintenance['id'], state),
                    lambda: self.admin.show_maintenance(
                        maintenance['id'])['state'] == state,
                    180)

    def _forget(self, maintenance_id):
        """Cancel (its hosts given back) and forget it."""
        try:
            self.admin.delete_maintenance(maintenance_id)
        except Exception as e:
            if getattr(e, 'code', None) != 404:
                raise

    def test_bookings_move_off_ahead_of_time_and_the_hosts_come_back(self):
        # Leases from the minute after next, so the maintenance is booked
        # before they start; it takes their hosts from then for a minute.
        start, end = _minute(minutes=2), _minute(hours=1)
        until = _minute(minutes=3)
        leases = {user: self._lease(client, self._slot(512), start=start,
                                    end=end)
                  for client, user in ((self.demo, common.DEMO_USER),
                                       (self.alt, common.ALT_USER))}
        rids = {user: fixture.reservation_of(self.sandbox, lease['id'])
                for user, lease in leases.items()}
        taken = sorted({host for lease in leases.values()
                        for host in self._slot_hosts(lease)})
        spare = [c for c in self.computes if c not in taken]
        self.assertGreaterEqual(len(spare), 2, (taken, self.computes))

        # A reservation pinned to another compute cannot move: with that
        # compute in it, the maintenance is refused, nothing moved.
        pinned = self._lease(self.demo, dict(
            self._slot(512), resource_properties=json.dumps(
                ['=', '$hypervisor_hostname', spare[0]])),
            start=start, end=end)
        pinned_rid = fixture.reservation_of(self.sandbox, pinned['id'])
        said = self._refused(self.admin.create_maintenance,
                             taken + [spare[0]], start, until)
        self.assertIn(pinned_rid, said)
        for rid in rids.values():
            self.assertNotIn(rid, said)
        self.assertEqual(taken, sorted({
            host for lease in leases.values()
            for host in self._slot_hosts(lease)}))
        self.assertEqual([], self.admin.list_maintenances())

        # On the two's hosts only: both move off, the pinned one stays.
        maintenance = self.admin.create_maintenance(taken, start, until,
                                                    reason='new disks')
        self.addCleanup(self._forget, maintenance['id'])
        self.assertEqual(sorted(rids.values()), sorted(maintenance['moved']))
        self.assertEqual([], maintenance['unmovable'])
        moved_to = {}
        for user, lease in leases.items():
            (host,) = self._slot_hosts(lease)
            self.assertNotIn(host, taken)
            moved_to[user] = host
        self.assertEqual([spare[0]], self._slot_hosts(pinned))

        # Its start: Nova schedules nothing on the hosts, saying why.
        self._until_state(maintenance, 'ACTIVE')
        for host, (status, reason) in self._services(taken).items():
            self.assertEqual('disabled', status, host)
            self.assertIn(maintenance['id'], reason)
        commands.boot_fails(
            self.cli, 'onto-maintenance', 'm1.tiny', 'admin',
            '--os-compute-api-version', '2.74', '--host', taken[0])
        # The moved ones' lessees boot into them, on their new hosts.
        for user, lease in leases.items():
            self._settled(lease, user, 'ACTIVE')
            server = fixture.boot(self, self.cli, 'maintained-%s' % user,
                                  rids[user], user)
            self.assertEqual(moved_to[user], server['OS-EXT-SRV-ATTR:host'])

        # Its end: the hosts are given back.
        self._until_state(maintenance, 'DONE')
        self.assertEqual({host: ('enabled', None) for host in taken},
                         self._services(taken))
