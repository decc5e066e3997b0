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
"""An active pcloud:host lease grows (hosts join) and shrinks (hosts the

lessee emptied leave) through Blazar's lease update (reservations.host_resize),
with the hosts of test_host_plugin: cn1, cn2 and cn4 may be leased, cn3
is another pcloud's for good.
"""

import datetime
from unittest import mock

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar import status
from blazarclient import exception as client_exc
import fixtures
from oslo_utils import timeutils

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin import faults
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_lifecycle
from pcloud_plugin.reservations import host_resize
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin as hosts

UPDATE = hosts.EVENTS + 'update'


class _Killed(BaseException):
    """The process dies here (nothing of ours catches it)."""


class ResizeTestCase(hosts.HostLeaseTestCase):

    def active_lease(self, amount, end=120):
        """An ACTIVE lease of ``amount`` hosts, 10 minutes into it."""
        lease = self.create_lease(self.hosts_res(amount), start=0, end=end)
        self.start(lease['id'])
        timeutils.advance_time_delta(datetime.timedelta(minutes=10))
        return lease, hosts._reservation_of(lease)['id']

    def resize(self, lease, rid, amount):
        return self.update_lease(lease['id'], reservations=[
            {'id': rid, 'amount': amount}])

    def lease_aggregate(self, rid):
        (agg,) = [a for a in self.nova.aggregate_objs.values()
                  if a.name == host_lifecycle.AGGREGATE_PREFIX + rid]
        return agg

    def claimed_hosts(self, rid):
        """Names of the hosts whose trees the reservation's claim holds."""
        held = set(self.claims(rid)['amounts'])
        return sorted(name for name in ('cn1', 'cn2', 'cn3', 'cn4')
                      if self.hosts[name] in held)

    def snapshot(self, lease, rid):
        """Everything a refused resize must leave as it was."""
        row = self.row(lease)
        return (self.claims(rid), row['amount'], row['hosts'],
                sorted(self.pcloud.hosts), self.pcloud_hosts(),
                sorted(self.lease_aggregate(rid).hosts),
                blazar_db.lease_get(lease['id'])['status'],
                self.resizing())

    def resizing(self):
        return intents.list_intents(self.context, host_resize.OPERATIONS)

    def assert_no_overbooking(self):
        """No two claims overlap in time on any host's tree."""
        for name in ('cn1', 'cn2', 'cn4'):
            busy = host_db.busy_intervals(
                self.context, [self.hosts[name]],
                timeutils.utcnow() - datetime.timedelta(days=1))
            spans = sorted(busy[self.hosts[name]])
            for (_s1, e1), (s2, _e2) in zip(spans, spans[1:]):
                self.assertLessEqual(e1, s2, 'host %s overbooked' % name)


class GrowTests(ResizeTestCase):

    def test_a_grow_lands(self):
        lease, rid = self.active_lease(1)
        self.assertEqual(['cn1'], self.leased(lease))
        since = self.claims(rid)['start']
        self.resize(lease, rid, 3)
        now = timeutils.utcnow().replace(microsecond=0)
        row = self.row(lease)
        self.assertEqual((3, host_db.ACTIVE), (row['amount'], row['state']))
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.leased(lease))
        # The ledger: all three whole, from now (the record chains).
        self.assertEqual(['cn1', 'cn2', 'cn4'], self.claimed_hosts(rid))
        self.assertEqual({'VCPU': 8, 'MEMORY_MB': 16384},
                         self.claims(rid)['amounts'][self.hosts['cn2-numa0']])
        self.assertEqual((now, row['end_time']),
                         (self.claims(rid)['start'], self.claims(rid)['end']))
        # Nova: in the pcloud, named and enabled, and in the lease's
        # aggregate, as at a start.
        self.assertEqual(['cn1', 'cn2', 'cn4'], sorted(self.pcloud.hosts))
        self.assertEqual({h['name']: (h['host_name'], codec.ENABLED)
                          for h in row['hosts']}, self.pcloud_hosts())
        self.assertTrue(all(h['joined'] for h in row['hosts']))
        self.assertEqual(['cn1', 'cn2', 'cn4'],
                         sorted(self.lease_aggregate(rid).hosts))
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual([], self.resizing())
        # The usage record: 1 host for 10 minutes, closed; 3 from now.
        (event,) = self.notifications.wait_for(UPDATE)
        self.assertEqual(
            (1, 3, since.isoformat(), now.isoformat(),
             int((now - since).total_seconds()), True,
             now.isoformat(), 3),
            (event['previous_amount'], event['amount'], event['held_from'],
             event['held_to'], event['seconds'], event['closed'],
             event['next']['held_from'], event['next']['totals']['hosts']))
        # It ends as any lease: every host out, every claim gone.
        self.end(lease['id'])
        self.assertEqual([], self.pcloud.hosts)
        self.assertIsNone(self.claims(rid))

    def test_a_grow_with_no_free_host_is_refused_and_changes_nothing(self):
        lease, rid = self.active_lease(1)
        other = self.create_lease(self.hosts_res(1), start=0, end=60)
        # cn4 is free but runs another project's instance: never handed
        # to the lessee.
        self.nova.add_server('cn4', hosts.OTHER_PROJECT)
        self.assertEqual(['cn2'], self.leased(other))
        before = self.snapshot(lease, rid)
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 2)
        self.assertEqual(409, e.code)
        self.assertIn('Cannot grow the amount of reservation %s from 1 to '
                      '2 (2 host(s) of host flavor big): 1 of the 2 other '
                      'eligible host(s) are free' % rid, str(e))
        self.assertIn('1 of those run instances of other projects', str(e))
        self.assertEqual(before, self.snapshot(lease, rid))
        self.assertEqual([], self.notifications.of(UPDATE))
        # Past what could ever serve it: said so.
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 4)
        self.assertIn('only 2 other host(s) could ever serve it', str(e))
        self.assertEqual(before, self.snapshot(lease, rid))

    def test_a_grow_nova_cannot_take_is_undone(self):
        lease, rid = self.active_lease(1)
        before = self.snapshot(lease, rid)
        self.nova.fail('aggregates.add_host')
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 2)
        self.assertIn('Nova failed while growing', str(e))
        after = self.snapshot(lease, rid)
        # The same claim, rewritten: only its generation moved.
        self.assertEqual(dict(before[0], generation=None),
                         dict(after[0], generation=None))
        self.assertEqual(before[1:], after[1:])
        # cn2 is free again for others.
        self.assertEqual(['cn2'], self.leased(self.create_lease(
            self.hosts_res(1), start=0, end=60)))

    def admit_another_before_claiming(self, rid):
        """Once the grow of ``rid`` has picked its hosts and before it

        claims them, another one-host lease is admitted (on the first
        free host); the list returned then holds that lease.
        """
        real = host_db.claim_hosts
        racers = []

        def race(ctx, consumer, roots, *args, **kwargs):
            if consumer == rid and not racers:
                racers.append(self.create_lease(self.hosts_res(1), start=0,
                                                end=60))
            return real(ctx, consumer, roots, *args, **kwargs)
        self.useFixture(fixtures.MockPatchObject(host_db, 'claim_hosts',
                                                 side_effect=race))
        return racers

    def test_a_concurrent_admission_racing_the_grow_never_overbooks(self):
        lease, rid = self.active_lease(1)
        # Between the grow's pick (cn2, the first free) and its claim.
        racers = self.admit_another_before_claiming(rid)
        self.resize(lease, rid, 2)
        # The grow's claim lost cn2 and picked again: cn4.
        self.assertEqual(['cn2'], self.leased(racers[0]))
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))
        self.assertEqual(['cn1', 'cn4'], self.claimed_hosts(rid))
        self.assert_no_overbooking()

    def test_a_grow_whose_swap_loses_sees_the_winner_and_picks_again(self):
        # The interleaving a shared database allows: the grow has read
        # and checked, another admission commits on its host, the grow's
        # generation swap fails; the ledger runs the claim again, which
        # now sees the winner.
        lease, rid = self.active_lease(1)
        real_write = db_claims.write_claims
        lost, racers = [], []

        def write_claims(session, consumer, *args, **kwargs):
            if consumer == rid and not lost:
                lost.append(consumer)
                raise db_api.GenerationConflict(self.hosts['cn2'])
            return real_write(session, consumer, *args, **kwargs)

        def sleep(seconds):
            # Between the lost attempt and the next one.
            if lost and not racers:
                racers.append(self.create_lease(self.hosts_res(1), start=0,
                                                end=60))
        self.useFixture(fixtures.MockPatchObject(
            db_claims, 'write_claims', side_effect=write_claims))
        self.useFixture(fixtures.MockPatchObject(
            db_api, 'time', mock.Mock(sleep=sleep)))
        self.resize(lease, rid, 2)
        self.assertEqual([rid], lost)
        self.assertEqual(['cn2'], self.leased(racers[0]))
        self.assertEqual(['cn1', 'cn4'], self.leased(lease))
        self.assertEqual(['cn1', 'cn4'], self.claimed_hosts(rid))
        self.assert_no_overbooking()

    def test_a_grow_losing_its_only_host_to_a_race_is_refused(self):
        lease, rid = self.active_lease(1)
        taken = self.create_lease(self.hosts_res(1), start=0, end=60)
        self.assertEqual(['cn2'], self.leased(taken))
        before = self.snapshot(lease, rid)
        racers = self.admit_another_before_claiming(rid)
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 2)
        self.assertIn('0 of the 2 other eligible host(s) are free', str(e))
        self.assertEqual(['cn4'], self.leased(racers[0]))
        self.assertEqual(before[:-2], self.snapshot(lease, rid)[:-2])
        self.assert_no_overbooking()

    def test_a_grow_over_the_quota_is_refused(self):
        self.conf.set_override('units_quota', 8, group='pcloud')
        lease, rid = self.active_lease(1)
        before = self.snapshot(lease, rid)
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 3)
        self.assertIn('over its limit of 8', str(e))
        self.assertEqual(before, self.snapshot(lease, rid))
        self.resize(lease, rid, 2)
        self.assertEqual(2, self.row(lease)['amount'])

    def test_the_amount_and_the_end_change_separately(self):
        lease, rid = self.active_lease(1)
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.update_lease,
                              lease['id'], end_date=self.minutes(100),
                              reservations=[{'id': rid, 'amount': 2}])
        self.assertIn('in separate updates', str(e))
        self.assertEqual(1, self.row(lease)['amount'])

    def test_a_grow_cut_short_by_a_crash_is_finished_by_the_reconciler(self):
        lease, rid = self.active_lease(1)
        since = self.claims(rid)['start']
        now = timeutils.utcnow().replace(microsecond=0)

        def die(operation, name):
            if (operation, name) == (host_resize.GROW, 'join'):
                raise _Killed()
        with fixtures.MockPatchObject(faults, 'step', side_effect=die):
            self.assertRaises(_Killed, self.host_plugin.update_reservation,
                              rid, {'amount': 2})
        # Claimed and recorded, not in the pcloud yet.
        self.assertEqual(['cn1', 'cn2'], self.claimed_hosts(rid))
        self.assertEqual([True, False],
                         [h['joined'] for h in self.row(lease)['hosts']])
        self.assertEqual(['cn1'], self.pcloud.hosts)
        # Younger than operation_timeout and its process alive: left be.
        self.host_plugin.reconcile()
        self.assertEqual(['cn1'], self.pcloud.hosts)
        timeutils.advance_time_delta(datetime.timedelta(
            seconds=self.conf.pcloud.operation_timeout + 1))
        self.host_plugin.reconcile()
        self.assertEqual(['cn1', 'cn2'], sorted(self.pcloud.hosts))
        self.assertEqual(['cn1', 'cn2'],
                         sorted(self.lease_aggregate(rid).hosts))
        self.assertEqual([], self.resizing())
        # The record it would have sent, as if nothing had happened.
        (event,) = self.notifications.wait_for(UPDATE)
        self.assertEqual((since.isoformat(), now.isoformat(), 2),
                         (event['held_from'], event['held_to'],
                          event['amount']))


class ShrinkTests(ResizeTestCase):

    def test_a_shrink_releases_emptied_hosts(self):
        lease, rid = self.active_lease(3)
        names = {h['host_name']: h['name'] for h in self.row(lease)['hosts']}
        self.assertEqual(['cn1', 'cn2', 'cn4'], sorted(names))
        # The lessee still runs an instance on cn4 only (the last named,
        # which would leave first were it empty).
        self.assertEqual(max(names.values()), names['cn4'])
        self.nova.add_server('cn4', base.PROJECT)
        since = self.claims(rid)['start']
        self.resize(lease, rid, 1)
        now = timeutils.utcnow().replace(microsecond=0)
        row = self.row(lease)
        self.assertEqual((1, ['cn4']), (row['amount'], self.leased(lease)))
        self.assertEqual(['cn4'], self.claimed_hosts(rid))
        self.assertEqual(now, self.claims(rid)['start'])
        self.assertEqual(['cn4'], self.pcloud.hosts)
        self.assertEqual({names['cn4']: ('cn4', codec.ENABLED)},
                         self.pcloud_hosts())
        self.assertEqual(['cn4'], self.lease_aggregate(rid).hosts)
        self.assertEqual([], self.resizing())
        (event,) = self.notifications.wait_for(UPDATE)
        self.assertEqual(
            (3, 1, since.isoformat(), now.isoformat(), 3, 1),
            (event['previous_amount'], event['amount'], event['held_from'],
             event['held_to'], event['totals']['hosts'],
             event['next']['totals']['hosts']))
        # What left is free for others at once.
        self.assertEqual(['cn1', 'cn2'], self.leased(self.create_lease(
            self.hosts_res(2), start=0, end=60)))
        self.assert_no_overbooking()

    def test_a_shrink_past_the_empty_hosts_is_refused_naming_them(self):
        lease, rid = self.active_lease(2)
        names = {h['host_name']: h['name'] for h in self.row(lease)['hosts']}
        self.nova.add_server('cn1', base.PROJECT)
        self.nova.add_server('cn2', base.PROJECT)
        self.nova.add_server('cn2', base.PROJECT)
        before = self.snapshot(lease, rid)
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 1)
        self.assertEqual(409, e.code)
        self.assertIn('only 0 of its hosts are empty. Still in use: '
                      '%s (1 instance(s)), %s (2 instance(s))'
                      % (names['cn1'], names['cn2']), str(e))
        # Never the real host names (seeds/000).
        self.assertNotIn('cn1', str(e).replace(names['cn1'], ''))
        self.assertEqual(before, self.snapshot(lease, rid))
        self.assertEqual([], self.notifications.of(UPDATE))

    def test_an_instance_booted_as_the_host_leaves_keeps_it(self):
        lease, rid = self.active_lease(2)
        before = self.snapshot(lease, rid)
        real = host_resize._set_state

        def boot_meanwhile(plugin, row, leaving, state):
            # The lessee boots on the host just before it is disabled.
            if state == codec.DISABLED:
                self.nova.add_server(leaving[0]['host_name'], base.PROJECT)
            return real(plugin, row, leaving, state)
        self.useFixture(fixtures.MockPatchObject(
            host_resize, '_set_state', side_effect=boot_meanwhile))
        e = self.assertRaises(mgr_exc.CantUpdateParameter, self.resize,
                              lease, rid, 1)
        self.assertIn('Still in use', str(e))
        # Enabled again, still held.
        self.assertEqual(before, self.snapshot(lease, rid))

    def test_a_shrink_cut_short_by_a_crash_is_finished_by_the_reconciler(
            self):
        lease, rid = self.active_lease(2)
        since = self.claims(rid)['start']

        def die(operation, name):
            if (operation, name) == (host_resize.SHRINK, 'release'):
                raise _Killed()
        with fixtures.MockPatchObject(faults, 'step', side_effect=die):
            self.assertRaises(_Killed, self.host_plugin.update_reservation,
                              rid, {'amount': 1})
        # Out of Nova, still claimed and recorded.
        self.assertEqual(['cn1'], self.pcloud.hosts)
        self.assertEqual(['cn1', 'cn2'], self.claimed_hosts(rid))
        self.assertEqual(2, self.row(lease)['amount'])
        timeutils.advance_time_delta(datetime.timedelta(
            seconds=self.conf.pcloud.operation_timeout + 1))
        self.host_plugin.reconcile()
        self.assertEqual(['cn1'], self.claimed_hosts(rid))
        self.assertEqual((1, ['cn1']),
                         (self.row(lease)['amount'], self.leased(lease)))
        self.assertEqual([], self.resizing())
        (event,) = self.notifications.wait_for(UPDATE)
        self.assertEqual((2, 1, since.isoformat()),
                         (event['previous_amount'], event['amount'],
                          event['held_from']))


class ResizeAPITests(ResizeTestCase, base.BlazarAPITestCase):
    """Through Blazar's v1 API and python-blazarclient."""

    def api_resize(self, lease, rid, amount):
        return self.client.lease.update(
            lease['id'], reservations=[{'id': rid, 'amount': amount}])

    def test_resizes_and_their_refusals(self):
        lease, rid = self.active_lease(1)
        self.api_resize(lease, rid, 2)
        self.assertEqual(['cn1', 'cn2'], self.leased(lease))
        # Refusals are 409 with the reason, the lease still ACTIVE.
        e = self.assertRaises(client_exc.BlazarClientException,
                              self.api_resize, lease, rid, 4)
        self.assertEqual(409, e.kwargs['code'])
        self.assertIn('only 1 other host(s) could ever serve it', str(e))
        self.nova.add_server('cn1', base.PROJECT)
        self.nova.add_server('cn2', base.PROJECT)
        e = self.assertRaises(client_exc.BlazarClientException,
                              self.api_resize, lease, rid, 1)
        self.assertEqual(409, e.kwargs['code'])
        self.assertIn('Still in use', str(e))
        self.assertEqual('ACTIVE', self.client.lease.get(lease['id'])[
            'status'])
        e = self.assertRaises(client_exc.BlazarClientException,
                              self.api_resize, lease, rid, 0)
        self.assertEqual(400, e.kwargs['code'])
        self.assertIn('amount', str(e))
        for server in list(self.nova.server_objs):
            if getattr(self.nova.server_objs[server],
                       'OS-EXT-SRV-ATTR:host') == 'cn2':
                del self.nova.server_objs[server]
        self.api_resize(lease, rid, 1)
        self.assertEqual(['cn1'], self.leased(lease))
