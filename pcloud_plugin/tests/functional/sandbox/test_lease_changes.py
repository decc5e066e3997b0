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

"""Whole-host leases as they change, across the sandbox's real services

(issue 18), with the real ``openstack`` commands: an active lease grows
and shrinks through Blazar's lease update (reservations.host_resize), and an
admin sees which leases hold each host (reservations.allocations). The
in-process tests (functional/blazar/test_host_lease_resize.py and the
allocation ones) cover the rest.
"""

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


def _said(failed):
    """What a command that failed wrote, without the command line."""
    return str(failed).split(' exited ', 1)[1]


class HostLeaseChanges(test_capacity_truth._Capacity):

    def _held(self, flavor, pcloud):
        """The pool's hosts that ``pcloud`` has now."""
        return {host for host, holder in self._holders(flavor).items()
                if holder == pcloud}

    def _claimed_on(self, rid):
        return fixture.claimed_on(self.sandbox, rid)

    def _resize(self, lease, rid, amount):
        """The lessee's update of the reservation's amount."""
        self.cli.run('openstack', 'reservation', 'lease', 'set',
                     lease['id'], '--reservation',
                     'id=%s,amount=%d' % (rid, amount),
                     user=common.DEMO_USER)

    def _state(self, lease, rid, flavor, pcloud):
        """What a resize changes: the lease's status, the hosts the

        pcloud has, those the ledger claim is on, and the hosts (name,
        state) the lessee lists in its pcloud.
        """
        listed = self.cli.json('openstack', 'pcloud', 'host', 'list', pcloud,
                               user=common.DEMO_USER)
        return (self._settled(lease, common.DEMO_USER, 'ACTIVE', 'ERROR'),
                self._held(flavor, pcloud), self._claimed_on(rid),
                sorted((h['Name'], h['State']) for h in listed))

    def test_an_active_host_lease_grows_and_shrinks(self):
        flavor = self._pool(*self.computes[-3:])
        pcloud = self._pcloud(self.demo)
        # Another project books one of the three from half an hour on:
        # it is not free for the rest of the demo's lease.
        booked = self._host_lease(self.alt, self._pcloud(self.alt), flavor,
                                  start=_minute(minutes=30),
                                  end=_minute(hours=2))
        self.assertEqual('PENDING', self._settled(booked, common.ALT_USER,
                                                  'PENDING', 'ERROR'))
        lease = self._host_lease(self.demo, pcloud, flavor)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        (first,) = self._held(flavor, pcloud)
        status, held, claimed, ((name, state),) = self._state(
            lease, rid, flavor, pcloud)
        self.assertEqual(('ACTIVE', {first}, {first}, 'enabled'),
                         (status, held, claimed, state))

        # Grown by one: the one host still free joins, enabled, and the
        # claim is on both.
        self._resize(lease, rid, 2)
        status, held, claimed, listed = self._state(lease, rid, flavor,
                                                    pcloud)
        self.assertEqual('ACTIVE', status)
        self.assertEqual(2, len(held), held)
        self.assertIn(first, held)
        self.assertEqual(held, claimed)
        self.assertEqual(2, len(listed), listed)
        self.assertIn((name, 'enabled'), listed)
        self.assertEqual({'enabled'}, {state for _n, state in listed})
        grown = (status, held, claimed, listed)

        # The third is booked from before the lease's end: refused,
        # saying why, and nothing changes.
        refused = _said(self.assertRaises(commands.CommandFailed, self._resize,
                                          lease, rid, 3))
        self.assertIn('Cannot grow the amount of reservation %s from 2 to 3'
                      % rid, refused)
        self.assertIn('0 of the 1 other eligible host(s) are free', refused)
        # The client prints no status: the same through the API is a 409.
        self.assertIn('0 of the 1 other eligible host(s) are free',
                      self._refused(self.demo.update_lease, lease['id'], {
                          'reservations': [{'id': rid, 'amount': 3}]}))
        self.assertEqual(grown, self._state(lease, rid, flavor, pcloud))

        # Both hosts are empty: back to one, the one that joined leaves
        # the pcloud and the claim.
        self._resize(lease, rid, 1)
        self.assertEqual(('ACTIVE', {first}, {first}, [(name, 'enabled')]),
                         self._state(lease, rid, flavor, pcloud))
        self.assertEqual({first: pcloud, (held - {first}).pop(): None},
                         {h: p for h, p in self._holders(flavor).items()
                          if h in held})

    def test_admins_see_which_host_leases_hold_each_host(self):
        flavor = self._pool(*self.computes[-2:])
        pcloud = self._pcloud(self.demo)
        lease = self._host_lease(self.demo, pcloud, flavor)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        later = self._host_lease(self.demo, pcloud, flavor,
                                 start=_minute(hours=2), end=_minute(hours=3))
        self.assertEqual('PENDING', self._settled(later, common.DEMO_USER,
                                                  'PENDING', 'ERROR'))
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        later_rid = fixture.reservation_of(self.sandbox, later['id'])
        (host,) = self._held(flavor, pcloud)

        def listed(*args):
            """{(host, reservation): (lease, project)} of these leases."""
            return {(row['Host'], row['ID']): (row['Lease ID'],
                                               row['Project ID'])
                    for row in self.cli.json('openstack', 'pcloud',
                                             'allocation', 'list', *args)
                    if row['Type'] == 'pcloud:host'
                    and row['ID'] in (rid, later_rid)}

        now = _minute()
        self.assertEqual(
            {(host, rid): (lease['id'], lease['project_id'])},
            listed('--start', now, '--end', _minute(hours=1)))
        # A window that reaches the later one's start shows it too, on
        # whichever host it was given.
        found = listed('--start', now, '--end', _minute(hours=3))
        self.assertEqual({rid, later_rid}, {r for _h, r in found})
        self.assertEqual((later['id'], later['project_id']), [
            held for (_h, r), held in found.items() if r == later_rid][0])
        # The later one alone once the first has ended.
        self.assertEqual({later_rid}, {r for _h, r in listed(
            '--start', _minute(hours=2, minutes=30))})

        # A window that ends before it starts: 400, naming the field.
        bad = _said(self.assertRaises(
            commands.CommandFailed, self.cli.run, 'openstack', 'pcloud',
            'allocation', 'list', '--start', _minute(hours=1), '--end', now))
        self.assertIn('end', bad)
        self.assertIn('must not be before start', bad)
        self.assertIn('400', bad)

        # Not the lessee's to see: 403, and nothing printed.
        refused = _said(self.assertRaises(
            commands.CommandFailed, self.cli.run, 'openstack', 'pcloud',
            'allocation', 'list', '--start', now, '--end', _minute(hours=1),
            user=common.DEMO_USER))
        self.assertIn('403', refused)
        self.assertNotIn(rid, refused)
