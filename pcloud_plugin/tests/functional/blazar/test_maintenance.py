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

"""Maintenance windows (reservations.maintenance) with Blazar's own

manager and our plugins, a real Placement and the ledger: the
reservations that hold the hosts then move off ahead of time, or the
maintenance is refused with nothing kept; its start disables the hosts'
services and its end gives them back. Nova's os-services as
test_healing's recording fake answers it, with disable and enable.
"""

import datetime

from blazar import exceptions as blazar_exc
from oslo_utils import timeutils

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import maintenances as maint_db
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception
from pcloud_plugin.notifications import usage
from pcloud_plugin.reservations import healing
from pcloud_plugin.reservations import maintenance
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import fake_nova
from pcloud_plugin.tests.functional.blazar import test_healing
from pcloud_plugin.tests.functional.blazar import test_host_plugin
from pcloud_plugin.tests.functional.blazar import test_lease_guard


class Services(test_healing.Services):
    """test_healing's os-services, which a maintenance also disables

    (with its reason) and enables.
    """

    def __init__(self, nova):
        super().__init__(nova)
        self.reasons = {}
        nova.services._methods.update(
            disable_log_reason=self._disable_log_reason,
            enable=self._enable)

    def _list(self, host=None, binary=None):
        return [fake_nova._Obj(host=name, id='svc-' + name,
                               binary='nova-compute', state=state,
                               status=enabled, forced_down=False,
                               disabled_reason=self.reasons.get(name))
                for name, (state, enabled) in sorted(self.state.items())
                if host in (None, name)]

    def _disable_log_reason(self, service_id, reason):
        host = service_id[len('svc-'):]
        self.disable(host)
        self.reasons[host] = reason

    def _enable(self, service_id):
        host = service_id[len('svc-'):]
        self.enable(host)
        self.reasons.pop(host, None)


def _rid(lease):
    (reservation,) = lease['reservations']
    return reservation['id']


class _Maintenance:

    def setUp(self):
        # A moment read again later must not have passed a second and
        # miss what a booking stored.
        self.useFixture(base.StillTime())
        super().setUp()
        self.services = Services(self.nova)

    def at(self, minutes):
        return timeutils.utcnow() + datetime.timedelta(minutes=minutes)

    def book(self, hosts, start, end, accept=False):
        return maintenance.book(
            self.context, self.plugins(), resources.NovaObjects(self.nova),
            hosts, self.at(start), self.at(end), reason='new disks',
            accept_unmovable=accept)

    def held_by(self, maintenance_id):
        """The roots of the hosts a maintenance's hold is on."""
        claims = db_claims.get_claims(self.context, maintenance_id)
        if claims is None:
            return set()
        names = {uuid: name for name, uuid in self.hosts.items()}
        return {names[rp].split('-')[0] for rp in claims['amounts']}

    def moved_events(self):
        return {p['reservation_id']: p
                for p in self.notifications.of(usage.MOVED)}


class InstanceTests(_Maintenance, base.BlazarTestCase):
    """Hosts of base.BlazarTestCase: 7 slots on cn1, 4 on cn2."""

    def plugins(self):
        return {maintenance.INSTANCES: self.plugin}

    def slots(self, rid):
        return {s['host_name']: s['slots']
                for s in res_db.get(self.context, rid)['slots']}

    def test_future_reservations_move_off_and_new_ones_keep_out(self):
        first = _rid(self.create_lease(self.reservation(2)))
        second = _rid(self.create_lease(self.reservation(2), start=150,
                                        end=200))
        after = _rid(self.create_lease(self.reservation(2), start=300,
                                       end=400))
        for rid in (first, second, after):
            self.assertEqual({'cn2': 2}, self.slots(rid))

        found = self.book(['cn2'], 30, 240)
        # Both in the window moved to cn1, each in its own window; the
        # one after it stays.
        self.assertEqual(maint_db.SCHEDULED, found['state'])
        self.assertEqual(sorted([first, second]),
                         sorted(found['report']['moved']))
        self.assertEqual([], found['report']['unmovable'])
        self.assertEqual({'cn1': 2}, self.slots(first))
        self.assertEqual({'cn1': 2}, self.slots(second))
        self.assertEqual({'cn2': 2}, self.slots(after))
        self.assertEqual({self.hosts['cn1']}, set(db_claims.get_claims(
            self.context, first)['amounts']))
        # Their lessees are told, with the maintenance's window.
        events = self.notifications.wait_for(usage.MOVED, count=2)
        self.assertEqual(
            {first, second}, {e['reservation_id'] for e in events})
        self.assertEqual({found['id']},
                         {e['maintenance_id'] for e in events})
        # The maintenance holds cn2's tree (not the disk it shares with
        # others); a new lease in the window goes to cn1 only.
        self.assertEqual({'cn2'}, self.held_by(found['id']))
        new = _rid(self.create_lease(self.reservation(3), start=60,
                                     end=120))
        self.assertEqual({'cn1': 3}, self.slots(new))
        # cn1 holds 5 of its 7 slots then: 3 more do not fit anywhere.
        self.assertRaises(blazar_exc.BlazarException, self.create_lease,
                          self.reservation(3), start=60, end=120)

    def test_one_that_cannot_move_refuses_it_and_nothing_is_kept(self):
        # cn1 is full from 60 to 120; a reservation of cn2 then cannot
        # move, one later (200-260) could.
        # Once the other moved, the maintenance holds all of cn2 but the
        # stuck one's slot: the other's way back is through the hold.
        self.create_lease(self.reservation(7, affinity=True), name='full')
        stuck = _rid(self.create_lease(self.reservation(1)))
        movable = _rid(self.create_lease(self.reservation(3), start=200,
                                         end=260))
        self.assertEqual({'cn2': 1}, self.slots(stuck))
        self.assertEqual({'cn2': 3}, self.slots(movable))
        before = {rid: db_claims.get_claims(self.context, rid)
                  for rid in (stuck, movable)}
        consumers = sorted(db_claims.list_consumers(self.context))

        e = self.assertRaises(exception.MaintenanceRefused, self.book,
                              ['cn2'], 30, 300)
        self.assertIn(stuck, str(e))
        self.assertIn('no free capacity', str(e))
        self.assertNotIn(movable, str(e))
        # Nothing kept: the one that moved is back, no hold, no record,
        # no event.
        self.assertEqual({'cn2': 3}, self.slots(movable))
        for rid, claims in before.items():
            self.assertEqual(claims['amounts'], db_claims.get_claims(
                self.context, rid)['amounts'])
        self.assertEqual([], maint_db.list_all(self.context))
        self.assertEqual(consumers,
                         sorted(db_claims.list_consumers(self.context)))
        self.assertEqual({}, self.moved_events())

        # Accepted: the other moves, the stuck one stays and is reported.
        found = self.book(['cn2'], 30, 300, accept=True)
        self.assertEqual([movable], found['report']['moved'])
        (left,) = found['report']['unmovable']
        self.assertEqual(stuck, left['reservation_id'])
        self.assertEqual({'cn2': 1}, self.slots(stuck))
        self.assertEqual({'cn1': 3}, self.slots(movable))
        # The hold takes what the stuck one leaves of cn2.
        self.assertEqual({'cn2'}, self.held_by(found['id']))

    def test_leases_racing_the_moves_are_moved_or_reported(self):
        # After each move, another tenant's lease takes what it freed on
        # cn2 (cn2's slots come first): each is moved in turn, and the
        # one after the last round is reported, not left unsaid.
        first = _rid(self.create_lease(self.reservation(1)))
        self.assertEqual({'cn2': 1}, self.slots(first))
        move = healing._move_slots
        racers = []

        def racing(*args, **kwargs):
            move(*args, **kwargs)
            racers.append(_rid(self.create_lease(
                self.reservation(1), name='racer-%d' % len(racers))))
            self.assertEqual({'cn2': 1}, self.slots(racers[-1]))

        self.patch(healing, '_move_slots', racing)
        found = self.book(['cn2'], 30, 150, accept=True)
        self.assertEqual([first] + racers[:-1], found['report']['moved'])
        (late,) = found['report']['unmovable']
        self.assertEqual(racers[-1], late['reservation_id'])
        self.assertIn('while the maintenance', late['why'])
        # Nothing holds cn2 in the window but the maintenance and what it
        # reports.
        on_cn2 = host_db.consumers_on(self.context, [self.hosts['cn2']],
                                      self.at(30), self.at(150))
        self.assertEqual({found['id'], racers[-1]}, set(on_cn2))

    def test_a_started_one_cannot_move_ahead_of_time(self):
        _lease, rid, _rc, host = self.started_on_one_host(1)
        e = self.assertRaises(exception.MaintenanceRefused, self.book,
                              [host], 0, 60)
        self.assertIn('has started', str(e))

    def test_one_starting_within_the_event_margin_is_left_to_healing(self):
        # Its start event may run while it moves (Blazar's manager takes
        # no lock): it is not moved.
        rid = _rid(self.create_lease(self.reservation(1)))
        self.conf.set_override('lease_event_margin', 3600, group='pcloud')
        e = self.assertRaises(exception.MaintenanceRefused, self.book,
                              ['cn2'], 30, 150)
        self.assertIn('%s (lease' % rid, str(e))
        self.assertIn('starts within 3600 seconds', str(e))
        self.assertEqual({'cn2': 1}, self.slots(rid))

    def test_start_disables_end_enables_and_later_ones_stay(self):
        later = _rid(self.create_lease(self.reservation(2), start=300,
                                       end=400))
        self.assertEqual({'cn2': 2}, self.slots(later))
        found = self.book(['cn2'], 10, 100)
        ctx = self.context
        self.assertEqual({}, maintenance.run_due(ctx, self.nova,
                                                 now=self.at(5)))
        self.assertEqual({found['id']: maint_db.ACTIVE},
                         maintenance.run_due(ctx, self.nova,
                                             now=self.at(10)))
        self.assertEqual(('up', 'disabled'), self.services.state['cn2'])
        self.assertEqual((found['id'], self.at(100)), healing.maintenance_of(
            self.services.reasons['cn2']))
        self.assertIn('new disks', self.services.reasons['cn2'])
        # Healing leaves the reservation after it where it is.
        self.assertEqual({}, self.plugin.heal())
        self.assertEqual({'cn2': 2}, self.slots(later))
        # Again (a crash before its state was written): nothing more.
        self.assertEqual({}, maintenance.run_due(ctx, self.nova,
                                                 now=self.at(20)))
        self.assertEqual({found['id']: maint_db.DONE},
                         maintenance.run_due(ctx, self.nova,
                                             now=self.at(100)))
        self.assertEqual(('up', 'enabled'), self.services.state['cn2'])
        self.assertIsNone(db_claims.get_claims(ctx, found['id']))
        self.assertEqual(maint_db.DONE, maint_db.get(ctx, found['id'])[
            'state'])

    def test_a_service_an_operator_disabled_stays_disabled(self):
        self.services.disable('cn2')
        self.services.reasons['cn2'] = 'broken fan'
        found = self.book(['cn2'], 10, 100)
        maintenance.run_due(self.context, self.nova, now=self.at(10))
        self.assertEqual([False], [h['disabled'] for h in maint_db.get(
            self.context, found['id'])['hosts']])
        maintenance.run_due(self.context, self.nova, now=self.at(100))
        self.assertEqual(('up', 'disabled'), self.services.state['cn2'])
        self.assertEqual('broken fan', self.services.reasons['cn2'])

    def test_a_booking_a_crash_interrupted_is_forgotten(self):
        ctx = self.context
        maint_db.create(ctx, 'crashed', [], self.at(10), self.at(100),
                        None)
        host_db.hold_free(ctx, 'crashed', [self.hosts['cn2']], self.at(10),
                          self.at(100))
        self.assertEqual({}, maintenance.run_due(ctx, self.nova,
                                                 now=self.at(9)))
        self.assertEqual({'crashed': None}, maintenance.run_due(
            ctx, self.nova, now=self.at(11)))
        self.assertEqual([], maint_db.list_all(ctx))
        self.assertIsNone(db_claims.get_claims(ctx, 'crashed'))

    def test_an_unknown_host_is_refused_naming_it(self):
        e = self.assertRaises(exception.SchemaViolation, self.book,
                              ['cn2', 'nowhere'], 10, 100)
        self.assertIn('nowhere', str(e))
        self.assertEqual([], maint_db.list_all(self.context))


class HostTests(_Maintenance, test_host_plugin.HostLeaseTestCase):
    """Pool "big" of test_host_plugin: cn1, cn2, cn4 (cn3 another's)."""

    def plugins(self):
        return {maintenance.HOSTS: self.host_plugin}

    def test_a_future_host_lease_moves_to_another_host(self):
        lease = self.create_lease(self.hosts_res(1))
        rid = _rid(lease)
        (host,) = self.leased(lease)
        found = self.book([host], 30, 150)
        self.assertEqual([rid], found['report']['moved'])
        (new,) = self.leased(lease)
        self.assertNotEqual(host, new)
        # The claim is on the new host, none of it on the old.
        held = set(db_claims.get_claims(self.context, rid)['amounts'])
        self.assertIn(self.hosts[new], held)
        self.assertNotIn(self.hosts[host], held)
        (event,) = self.notifications.wait_for(usage.MOVED)
        self.assertEqual((rid, found['id']), (event['reservation_id'],
                                              event['maintenance_id']))
        # The maintenance holds the host whole: no lease gets it.
        self.assertEqual({host}, self.held_by(found['id']))
        busy = host_db.busy_intervals(self.context, [self.hosts[host]],
                                      self.at(0), exclude_consumer=rid)
        self.assertEqual([(self.at(30), self.at(150))],
                         busy[self.hosts[host]])


class APITests(test_lease_guard.LeaseGuardTestCase):

    def setUp(self):
        super().setUp()
        self.services = Services(self.nova)
        plugins = {maintenance.INSTANCES: self.plugin,
                   maintenance.HOSTS: self.host_plugin}
        self.patch(handlers.API, '_maintenance_plugins',
                   lambda api: plugins)

    def admin(self):
        base.override_policy(self, {'pcloud:maintenance:%s' % action: ''
                                    for action in ('list', 'get', 'create',
                                                   'delete')})

    def body(self, **values):
        """A maintenance's body; a value None leaves its field out."""
        body = {'hosts': ['cn4'], 'start_date': self.minutes(30),
                'end_date': self.minutes(90)}
        body.update(values)
        return {k: v for k, v in body.items() if v is not None}

    def test_only_admins(self):
        for method, path, body in (
                ('GET', '/pcloud-maintenances', None),
                ('POST', '/pcloud-maintenances', self.body()),
                ('GET', '/pcloud-maintenances/x', None),
                ('DELETE', '/pcloud-maintenances/x', None)):
            self.assert_refused(self.call(method, path, body), 403)
        self.assertEqual([], maint_db.list_all(self.context))

    def test_bad_bodies_are_400_naming_the_field(self):
        self.admin()
        for body, field in (
                (self.body(hosts=[]), 'hosts'),
                (self.body(hosts=['nowhere']), 'hosts'),
                (self.body(start_date='soon'), 'start_date'),
                (self.body(end_date=self.minutes(10)), 'end_date'),
                (self.body(accept_unmovable='yes'), 'accept_unmovable'),
                (self.body(host_flavor='big'), 'hosts'),
                (dict(self.body(), hosts=None), 'hosts'),
                (self.body(hosts=None, host_flavor='small'), 'host_flavor'),
                (self.body(color='red'), 'color')):
            self.assert_refused(self.call('POST', '/pcloud-maintenances',
                                          body), 400, field)
        self.assertEqual([], maint_db.list_all(self.context))

    def test_a_host_flavor_s_pool(self):
        self.admin()
        response = self.call('POST', '/pcloud-maintenances', self.body(
            hosts=None, host_flavor='big'))
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual(['cn1', 'cn2', 'cn3', 'cn4'],
                         response.json()['maintenance']['hosts'])

    def test_book_show_list_refuse_and_cancel(self):
        self.admin()
        lease = self.post_lease(self.hosts_res(1), start=60, end=120)
        (host,) = self.leased(lease)
        response = self.call('POST', '/pcloud-maintenances',
                             self.body(hosts=[host], reason='firmware'))
        self.assertEqual(201, response.status_code, response.text)
        found = response.json()['maintenance']
        self.assertEqual(([host], 'SCHEDULED', [_rid(lease)], []),
                         (found['hosts'], found['state'], found['moved'],
                          found['unmovable']))
        self.assertEqual(found, self.call(
            'GET', '/pcloud-maintenances/' + found['id']).json()[
                'maintenance'])
        self.assertEqual([found['id']], [m['id'] for m in self.call(
            'GET', '/pcloud-maintenances').json()['maintenances']])
        # The same host again: held by the first, which cannot move.
        again = self.call('POST', '/pcloud-maintenances',
                          self.body(hosts=[host]))
        self.assert_refused(again, 409, 'another maintenance')
        self.assertEqual('MaintenanceRefused', again.json()['error_name'])
        # Cancelled: the host is free again.
        self.assertEqual(204, self.call(
            'DELETE', '/pcloud-maintenances/' + found['id']).status_code)
        self.assertIsNone(db_claims.get_claims(self.context, found['id']))
        self.assert_refused(self.call(
            'GET', '/pcloud-maintenances/' + found['id']), 404)
