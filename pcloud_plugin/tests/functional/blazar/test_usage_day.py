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
"""A day of leases, billed from its usage events, against the ledger.

Blazar's manager runs both of our plugins in-process (test_host_plugin's
set-up: Placement served and mirrored into the ledger, the recording fake
Nova), the clock is scripted minute by minute, and every event goes to
oslo.messaging's test driver. The bill is what the closed usage records
say; the truth is what the ledger said, read after every step: which
consumer's claims covered which part of the day, for whom (our rows say
whose a reservation is, the pcloud whose a host held for good is), and
how much (the claims' amounts; the rows' slot and host counts). Neither
side reads the other's code.
"""

import collections
import datetime

from blazar import context as blazar_context
from blazar.db import api as blazar_db
import fixtures
from oslo_messaging.notify import _impl_test
from oslo_utils import timeutils

from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import intents
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import faults
from pcloud_plugin.notifications import usage
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin as hosts

OTHER = hosts.OTHER_PROJECT
PERMANENT = 'pcloud-host:'
INSTANCE, HOST_LEASE, FOR_GOOD = ('virtual:instance', 'pcloud:host',
                                  'pcloud:permanent_host')
# What the ledger's claims say of an instance reservation, by class.
CLASSES = {'VCPU': 'vcpus', 'MEMORY_MB': 'memory_mb', 'DISK_GB': 'disk_gb'}


def _reservation_of(lease):
    (reservation,) = lease['reservations']
    return reservation


def _capture_usage(test):
    """Both plugins' usage records sent to the test driver (read from

    _impl_test.NOTIFICATIONS, emptied now and after the test); the
    transport, for other notifiers.
    """
    _impl_test.reset()
    test.addCleanup(_impl_test.reset)
    transport = test.host_plugin.notifier._transport
    test.plugin.notifier = usage.UsageNotifier(
        test.conf, transport=transport, driver='test')
    test.host_plugin.notifier = usage.HostUsageNotifier(
        test.conf, transport=transport, driver='test')
    return transport


class UsageDayTests(hosts.HostLeaseTestCase):

    def setUp(self):
        super().setUp()
        # Whole minutes, as lease dates are.
        self.t0 = (timeutils.utcnow() + datetime.timedelta(minutes=1)
                   ).replace(second=0)
        timeutils.set_time_override(self.t0)
        self.acting = base.PROJECT
        transport = _capture_usage(self)
        self.pclouds = self.host_plugin.pclouds()
        self.pclouds.usage = usage.UsageNotifier(
            self.conf, transport=transport, driver='test',
            publisher_id=usage.PCLOUD_PUBLISHER)
        self.snapshots = []

    def blazar_context(self, **kwargs):
        # Leases of the project acting now (the trust's, in production).
        return blazar_context.BlazarContext(
            user_id=base.USER, project_id=self.acting,
            service_catalog=base.CATALOG, **kwargs)

    # --- the clock and the ledger's record -----------------------------

    def at(self, minute):
        moment = self.t0 + datetime.timedelta(minutes=minute)
        self.assertGreaterEqual(moment, timeutils.utcnow())
        timeutils.set_time_override(moment)

    def lease(self, project, reservation, start, end):
        self.acting = project
        try:
            return self.create_lease(reservation, start=start, end=end)
        finally:
            self.acting = base.PROJECT

    def minutes(self, n):
        # From the start of the day, not from now.
        moment = self.t0 + datetime.timedelta(minutes=n)
        return moment.strftime('%Y-%m-%d %H:%M')

    def snapshot(self):
        """Who holds what in the ledger now: [(project, resource type,

        {quantity: amount}, claim start, claim end)], from the claims and
        our rows alone.
        """
        ctx = self.context
        forest = db_snapshots.load_forest(ctx)
        held = []
        for row in res_db.list_reservations(ctx):
            claims = db_claims.get_claims(ctx, row['reservation_id'])
            if claims is None:
                continue
            amounts = collections.Counter()
            for per_class in claims['amounts'].values():
                amounts.update({CLASSES[rc]: n
                                for rc, n in per_class.items()})
            amounts['slots'] = sum(s['slots'] for s in row['slots'])
            held.append((row['project_id'], INSTANCE, dict(amounts),
                         claims['start'], claims['end']))
        for row in host_db.list_reservations(ctx):
            claims = db_claims.get_claims(ctx, row['reservation_id'])
            if claims is None:
                continue
            roots = {forest[rp].root_uuid for rp in claims['amounts']}
            held.append((row['project_id'], HOST_LEASE,
                         {'hosts': len(roots)}, claims['start'],
                         claims['end']))
        for consumer in db_claims.list_consumers(ctx):
            if consumer.startswith(PERMANENT):
                claims = db_claims.get_claims(ctx, consumer)
                # Every pcloud of this day is the project's.
                held.append((base.PROJECT, FOR_GOOD, {'hosts': 1},
                             claims['start'], claims['end']))
        self.snapshots.append((timeutils.utcnow(), held))

    def ledger_truth(self, day_end):
        """{(project, resource type, quantity): amount x seconds} of the

        whole day, each snapshot standing until the next one.
        """
        truth = collections.Counter()
        ends = [t for t, _held in self.snapshots[1:]] + [day_end]
        for (taken, held), until in zip(self.snapshots, ends):
            for project, kind, amounts, start, end in held:
                begin = max(taken, start)
                stop = until if end is None else min(until, end)
                seconds = (stop - begin).total_seconds()
                if seconds > 0:
                    for quantity, n in amounts.items():
                        truth[project, kind, quantity] += n * seconds
        return +truth

    def slots(self, amount):
        # cn5 takes 16 of them: room for the day on the one host pclouds
        # never take.
        return self.reservation(amount, vcpus=1, memory_mb=2048,
                                disk_gb=20)

    # --- the events ----------------------------------------------------

    @staticmethod
    def events(prefix='pcloud.'):
        return [(m['event_type'], m['payload'])
                for _ctx, m, _p, _r in _impl_test.NOTIFICATIONS
                if m['event_type'].startswith(prefix)]

    def bill(self):
        """{(project, resource type, quantity): amount x seconds} of the

        closed records, each record_id once.
        """
        bill, seen = collections.Counter(), set()
        for _type, body in self.events():
            if not body.get('closed') or body['record_id'] in seen:
                continue
            seen.add(body['record_id'])
            for quantity, n in body['totals'].items():
                bill[body['project_id'], body['resource_type'],
                     quantity] += n * body['seconds']
        return +bill

    # --- the day -------------------------------------------------------

    def run_day(self):
        """The scripted day; returns {name: reservation id}."""
        ids = {}
        self.at(0)
        self.pclouds.allocate_host(self.context, hosts.PCLOUD, 'mine-1',
                                   'big')
        self.snapshot()
        leases = {
            'H': self.lease(base.PROJECT, self.hosts_res(1), 60, 240),
            'A': self.lease(base.PROJECT, self.slots(2), 30, 150),
            'B': self.lease(OTHER, self.slots(3), 60, 180),
            'C': self.lease(OTHER, self.slots(2), 90, 300),
            'D': self.lease(base.PROJECT, self.slots(1), 200, 260)}
        ids.update((k, _reservation_of(v)['id']) for k, v in leases.items())
        self.snapshot()

        def step(minute, action, *args, **kwargs):
            self.at(minute)
            action(*args, **kwargs)
            self.snapshot()

        step(30, self.start, leases['A']['id'])
        step(60, self.start, leases['H']['id'])
        step(60, self.start, leases['B']['id'])
        # Grown from 2 to 6 while active.
        step(75, self.update_lease, leases['A']['id'],
             reservations=[{'id': ids['A'], 'amount': 6}])
        step(90, self.start, leases['C']['id'])
        # Its end moved while active.
        step(100, self.update_lease, leases['B']['id'],
             end_date=self.minutes(210))
        # Deleted 3 hours early.
        step(120, self.delete_lease, leases['C']['id'])
        step(130, self.update_lease, leases['H']['id'],
             end_date=self.minutes(250))
        step(150, self.end, leases['A']['id'])
        # Deleted before it started: never held.
        step(160, self.delete_lease, leases['D']['id'])
        step(170, self.pclouds.release_host, self.context, hosts.PCLOUD,
             'mine-1')
        step(210, self.end, leases['B']['id'])
        step(250, self.end, leases['H']['id'])
        self.at(300)
        return ids

    def test_the_events_bill_what_the_ledger_held(self):
        ids = self.run_day()
        truth = self.ledger_truth(timeutils.utcnow())
        self.assertEqual(truth, self.bill())
        # Worked out by hand: A 2 slots 30-75 and 6 slots 75-150, B 3
        # slots 60-210, C 2 slots 90-120; H 1 host 60-250; mine-1 0-170.
        mine, theirs = (2 * 45 + 6 * 75) * 60, (3 * 150 + 2 * 30) * 60
        self.assertEqual({
            (base.PROJECT, INSTANCE, 'slots'): mine,
            (base.PROJECT, INSTANCE, 'vcpus'): mine,
            (base.PROJECT, INSTANCE, 'memory_mb'): mine * 2048,
            (base.PROJECT, INSTANCE, 'disk_gb'): mine * 20,
            (OTHER, INSTANCE, 'slots'): theirs,
            (OTHER, INSTANCE, 'vcpus'): theirs,
            (OTHER, INSTANCE, 'memory_mb'): theirs * 2048,
            (OTHER, INSTANCE, 'disk_gb'): theirs * 20,
            (base.PROJECT, HOST_LEASE, 'hosts'): 190 * 60,
            (base.PROJECT, FOR_GOOD, 'hosts'): 170 * 60,
        }, truth)
        # Nothing of D, which never started.
        self.assertEqual([], [b for _t, b in self.events()
                              if b.get('reservation_id') == ids['D']])

    def test_each_change_is_one_event(self):
        ids = self.run_day()
        kinds = collections.defaultdict(list)
        for event_type, body in self.events():
            kinds[body.get('reservation_id') or body.get('resource_id')
                  ].append(event_type)
        self.assertEqual([usage.START, usage.UPDATE, usage.END],
                         kinds[ids['A']])
        self.assertEqual([usage.START, usage.UPDATE, usage.END],
                         kinds[ids['B']])
        self.assertEqual([usage.START, usage.END], kinds[ids['C']])
        self.assertEqual(['pcloud.host_reservation.inactive',
                          'pcloud.host_reservation.active',
                          usage.HOST_UPDATE,
                          'pcloud.host_reservation.ended'], kinds[ids['H']])
        self.assertEqual([usage.HOST_ALLOCATED, usage.HOST_RELEASED],
                         kinds['%s/mine-1' % hosts.PCLOUD])

        def at(minute):
            return (self.t0 + datetime.timedelta(minutes=minute)).isoformat()

        (grown,) = [b for t, b in self.events(usage.UPDATE)
                    if b['reservation_id'] == ids['A']]
        self.assertEqual(
            (2, 6, at(30), at(75), True, 2, 2 * 2048, at(75), 6),
            (grown['previous_amount'], grown['amount'], grown['held_from'],
             grown['held_to'], grown['closed'], grown['totals']['slots'],
             grown['totals']['memory_mb'], grown['next']['held_from'],
             grown['next']['totals']['slots']))
        (ended,) = [b for t, b in self.events(usage.END)
                    if b['reservation_id'] == ids['C']]
        self.assertEqual((OTHER, at(90), at(120), True, at(300), 1800),
                         (ended['project_id'], ended['held_from'],
                          ended['held_to'], ended['ended_early'],
                          ended['end'], ended['seconds']))
        self.assertEqual((2 * 0.5, 2 * 20 * 0.5),
                         (ended['slot_hours'], ended['disk_gb_hours']))
        (released,) = [b for t, b in self.events(usage.HOST_RELEASED)]
        self.assertEqual(
            (base.PROJECT, hosts.PCLOUD, 'mine-1', 'big', at(0), at(170),
             170 / 60.0, [{'host': 'mine-1', 'host_flavor': 'big',
                           'hosts': 1}]),
            (released['project_id'], released['pcloud_id'],
             released['host'], released['host_flavor'],
             released['held_from'], released['held_to'],
             released['host_hours'], released['per_host']))
        # An opening record and its closing one share the record_id.
        (opened,) = [b for t, b in self.events('pcloud.host_reservation.a')
                     if b['reservation_id'] == ids['H']]
        (closed,) = [b for t, b in self.events('pcloud.host_reservation.e')
                     if b['reservation_id'] == ids['H']]
        self.assertEqual((False, None, opened['record_id'], at(250)),
                         (opened['closed'], opened['held_to'],
                          closed['record_id'], closed['held_to']))
        # Real host names stay with the admins (seeds/000).
        self.assertEqual([h['host'] for h in closed['per_host']],
                         closed['hosts'])
        self.assertFalse(any(h['host'].startswith('cn')
                             for h in closed['per_host']))


class _Killed(Exception):
    """The process dies here."""


class CrashTests(hosts.HostLeaseTestCase):
    """What an end run again after a crash sends."""

    def setUp(self):
        super().setUp()
        _capture_usage(self)

    @staticmethod
    def closed():
        return [m['payload'] for _c, m, _p, _r in _impl_test.NOTIFICATIONS
                if m['payload'].get('closed')]

    def test_an_end_cut_short_after_its_event_sends_the_same_record(self):
        lease = self.create_lease(self.reservation(2), start=0, end=120)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        since = self.claims(rid)['start']
        timeutils.advance_time_delta(datetime.timedelta(minutes=30))
        row = res_db.get(self.context, rid)

        def die(operation, name):
            if (operation, name) == (intents.LEASE_END, 'release'):
                raise _Killed()
        # The process dies once the end is sent, before the release.
        with fixtures.MockPatchObject(faults, 'step', side_effect=die):
            self.assertRaises(_Killed, self.plugin._finish, row)
        self.assertIsNotNone(self.claims(rid))
        # Run again: the same interval, the same record_id.
        self.plugin._finish(res_db.get(self.context, rid))
        self.assertIsNone(self.claims(rid))
        first, again = self.closed()
        self.assertEqual(
            (rid, since.isoformat(), (timeutils.utcnow() - since).seconds),
            (first['reservation_id'], first['held_from'], first['seconds']))
        self.assertEqual(first['record_id'], again['record_id'])
        # Once ended, nothing more: a sweep sends no third.
        self.plugin.sweep()
        self.assertEqual(2, len(self.closed()))

    def test_a_host_lease_blazar_forgot_is_billed_until_then(self):
        lease = self.create_lease(self.hosts_res(1), start=0, end=120)
        rid = _reservation_of(lease)['id']
        self.start(lease['id'])
        since = self.claims(rid)['start']
        timeutils.advance_time_delta(datetime.timedelta(minutes=20))
        # Blazar forgets it without telling the plugin.
        blazar_db.lease_destroy(lease['id'])
        self.host_plugin.sweep()
        (ended,) = self.closed()
        self.assertEqual(
            (rid, 'ENDED', (timeutils.utcnow() - since).seconds, True),
            (ended['reservation_id'], ended['state'], ended['seconds'],
             ended['ended_early']))
        self.assertIsNone(self.claims(rid))
