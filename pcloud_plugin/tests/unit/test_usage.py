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
"""The usage records of notifications (usage_records, and the bodies

usage sends), event by event, and those the pcloud service sends for the
hosts pclouds hold for good.
"""

import datetime
import fnmatch
import os

from oslo_utils import timeutils
import yaml

from pcloud_plugin import exception
from pcloud_plugin.notifications import usage
from pcloud_plugin.notifications import usage_records
from pcloud_plugin.pcloud import leases as leases_mod
from pcloud_plugin.pcloud import service as service_mod
from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.pcloud import test_service

T = datetime.datetime(2031, 1, 1, 10)


def _at(minutes):
    return T + datetime.timedelta(minutes=minutes)


def _reservation(amount=3, **values):
    row = {'reservation_id': 'r1', 'lease_id': 'l1', 'project_id': 'p1',
           'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10, 'amount': amount,
           'affinity': None, 'flavor_id': 'r1', 'resource_class': 'CUSTOM_R',
           'start_time': _at(0), 'end_time': _at(120),
           'slots': [{'host_name': 'cn1', 'host_uuid': 'u1', 'slots': 2},
                     {'host_name': 'cn2', 'host_uuid': 'u2',
                      'slots': amount - 2}]}
    row.update(values)
    return row


def _host_row(state='ACTIVE'):
    return {'reservation_id': 'h1', 'lease_id': 'l2', 'project_id': 'p1',
            'pcloud_id': 'pc', 'host_flavor': 'big', 'amount': 2,
            'lease_type': 'SCHEDULE', 'state': state, 'start_time': _at(0),
            'end_time': _at(120), 'deadline': None,
            'hosts': [{'name': 'lease-h1-1', 'host_name': 'cn1'},
                      {'name': 'lease-h1-2', 'host_name': 'cn2'}]}


class _Captured:
    def __init__(self):
        self.sent = []

    def info(self, ctxt, event_type, payload):
        self.sent.append((ctxt, event_type, payload))


def _notifier(cls=usage.UsageNotifier, **kwargs):
    notifier = cls(None, **kwargs)
    notifier._notifier = _Captured()
    return notifier, notifier._notifier.sent


class RecordTests(base.TestCase):

    def test_an_open_record_bills_nothing_yet(self):
        body = usage_records.record(
            'virtual:instance', 'r1', 'p1',
            [{'host': 'cn1', 'slots': 2, 'vcpus': 4}], _at(0))
        self.assertEqual(
            (False, None, 0, 0.0, 0.0, 0.0, {'slots': 2, 'vcpus': 4},
             'r1@2031-01-01T10:00:00'),
            (body['closed'], body['held_to'], body['seconds'],
             body['hours'], body['slot_hours'], body['host_hours'],
             body['totals'], body['record_id']))

    def test_a_closed_record_is_amount_times_time(self):
        body = usage_records.record(
            'virtual:instance', 'r1', 'p1',
            [{'host': 'cn1', 'slots': 2, 'vcpus': 4},
             {'host': 'cn2', 'slots': 1, 'vcpus': 2}], _at(0), _at(90))
        self.assertEqual(
            (True, 5400, 1.5, 4.5, 9.0, 0.0, 'r1@2031-01-01T10:00:00'),
            (body['closed'], body['seconds'], body['hours'],
             body['slot_hours'], body['vcpu_hours'], body['host_hours'],
             body['record_id']))

    def test_nothing_held_has_no_record_id(self):
        body = usage_records.record('pcloud:host', 'h1', 'p1', [], None)
        self.assertEqual((None, False, {}),
                         (body['record_id'], body['closed'],
                          body['totals']))

    def test_where_an_interval_starts_and_ends(self):
        now = _at(60)
        claims = {'start': _at(0), 'end': _at(120)}
        self.assertEqual(_at(0),
                         usage_records.held_since(claims, _at(5), now))
        # No claim: the fallback; never in the future.
        self.assertEqual(_at(5),
                         usage_records.held_since(None, _at(5), now))
        self.assertEqual(now, usage_records.held_since(
            {'start': _at(90), 'end': None}, None, now))
        # Ended early: now; an end event that ran late: the claim's end.
        self.assertEqual(now, usage_records.held_until(claims, now))
        self.assertEqual(_at(120),
                         usage_records.held_until(claims, _at(130)))
        self.assertEqual(now, usage_records.held_until(None, now))


class InstanceEventTests(base.TestCase):

    def test_start_opens_at_the_claims_start(self):
        notifier, sent = _notifier()
        notifier.reservation_started({'project_id': 'p1'}, _reservation(),
                                     _at(0))
        ((ctxt, event_type, body),) = sent
        self.assertEqual((usage.START, usage.PUBLISHER), (
            event_type, notifier._publisher_id))
        self.assertEqual(
            ('virtual:instance', 'r1', 'p1', 'l1', _at(0).isoformat(),
             None, False),
            (body['resource_type'], body['resource_id'], body['project_id'],
             body['lease_id'], body['held_from'], body['held_to'],
             body['closed']))
        self.assertEqual(
            [{'host': 'cn1', 'host_uuid': 'u1', 'slots': 2, 'vcpus': 4,
              'memory_mb': 2048, 'disk_gb': 20},
             {'host': 'cn2', 'host_uuid': 'u2', 'slots': 1, 'vcpus': 2,
              'memory_mb': 1024, 'disk_gb': 10}], body['per_host'])
        self.assertEqual({'slots': 3, 'vcpus': 6, 'memory_mb': 3072,
                          'disk_gb': 30}, body['totals'])

    def test_a_growth_closes_what_was_held_before_it(self):
        notifier, sent = _notifier()
        before = _reservation(2, slots=[
            {'host_name': 'cn1', 'host_uuid': 'u1', 'slots': 2}])
        after = _reservation(6, end_time=_at(150), slots=[
            {'host_name': 'cn1', 'host_uuid': 'u1', 'slots': 2},
            {'host_name': 'cn2', 'host_uuid': 'u2', 'slots': 4}])
        notifier.reservation_changed({}, before, after, _at(0), _at(45))
        ((_c, event_type, body),) = sent
        self.assertEqual(usage.UPDATE, event_type)
        self.assertEqual(
            (True, _at(0).isoformat(), _at(45).isoformat(), 2, 1.5, 2, 6,
             _at(120).isoformat(), _at(150).isoformat()),
            (body['closed'], body['held_from'], body['held_to'],
             body['totals']['slots'], body['slot_hours'],
             body['previous_amount'], body['amount'], body['previous_end'],
             body['end']))
        self.assertEqual({'held_from': _at(45).isoformat(),
                          'end': _at(150).isoformat(),
                          'totals': {'slots': 6, 'vcpus': 12,
                                     'memory_mb': 6144, 'disk_gb': 60},
                          'per_host': body['next']['per_host']},
                         body['next'])
        self.assertEqual([2, 4], [h['slots']
                                  for h in body['next']['per_host']])

    def test_an_early_end_says_the_real_time(self):
        notifier, sent = _notifier()
        notifier.reservation_ended({}, _reservation(), _at(0), _at(30))
        notifier.reservation_ended({}, _reservation(), _at(0), _at(120))
        (early, on_time) = [body for _c, t, body in sent if t == usage.END]
        self.assertEqual((_at(30).isoformat(), True, 1800, 1.5),
                         (early['held_to'], early['ended_early'],
                          early['seconds'], early['slot_hours']))
        self.assertEqual((_at(120).isoformat(), False, 6.0),
                         (on_time['held_to'], on_time['ended_early'],
                          on_time['slot_hours']))
        # The same interval: the same record.
        self.assertEqual(early['record_id'], on_time['record_id'])
        # The scheduled window is still told, apart.
        self.assertEqual(_at(120).isoformat(), early['end'])

    def test_an_end_without_times_ends_now(self):
        notifier, sent = _notifier()
        timeutils.set_time_override(_at(10))
        self.addCleanup(timeutils.clear_time_override)
        notifier.reservation_ended({}, _reservation())
        ((_c, _t, body),) = sent
        self.assertEqual((_at(0).isoformat(), _at(10).isoformat()),
                         (body['held_from'], body['held_to']))


class HostLeaseEventTests(base.TestCase):

    def test_active_opens_and_ended_closes(self):
        notifier, sent = _notifier(usage.HostUsageNotifier)
        notifier.state_entered(_host_row(), 'INACTIVE', _at(0))
        notifier.state_entered(_host_row('ENDED'), 'ACTIVE', _at(0),
                               _at(90))
        (opened, closed) = [(t, b) for _c, t, b in sent]
        self.assertEqual('pcloud.host_reservation.active', opened[0])
        self.assertEqual('pcloud.host_reservation.ended', closed[0])
        self.assertEqual(usage.HOST_PUBLISHER, notifier._publisher_id)
        opened, closed = opened[1], closed[1]
        self.assertEqual((False, {'hosts': 2}, 0.0),
                         (opened['closed'], opened['totals'],
                          opened['host_hours']))
        self.assertEqual((True, 3.0, True, opened['record_id']),
                         (closed['closed'], closed['host_hours'],
                          closed['ended_early'], closed['record_id']))
        # By their names in the pcloud only.
        self.assertEqual([{'host': 'lease-h1-1', 'host_flavor': 'big',
                           'hosts': 1},
                          {'host': 'lease-h1-2', 'host_flavor': 'big',
                           'hosts': 1}], closed['per_host'])
        self.assertEqual(['lease-h1-1', 'lease-h1-2'], closed['hosts'])

    def test_a_state_that_holds_nothing_has_no_record(self):
        notifier, sent = _notifier(usage.HostUsageNotifier)
        notifier.state_entered(_host_row('INACTIVE'))
        ((_c, event_type, body),) = sent
        self.assertEqual(('pcloud.host_reservation.inactive', [], None,
                          False),
                         (event_type, body['per_host'], body['record_id'],
                          body['closed']))

    def test_a_window_change_keeps_the_interval_open(self):
        notifier, sent = _notifier(usage.HostUsageNotifier)
        notifier.host_reservation(_host_row(), 'ACTIVE', _at(0),
                                  event_type=usage.HOST_UPDATE)
        ((_c, event_type, body),) = sent
        self.assertEqual((usage.HOST_UPDATE, False, _at(0).isoformat()),
                         (event_type, body['closed'], body['held_from']))

    def test_hosts_that_join_close_what_was_held_before(self):
        notifier, sent = _notifier(usage.HostUsageNotifier)
        before = dict(_host_row(), amount=1,
                      hosts=_host_row()['hosts'][:1])
        notifier.host_reservation_changed(before, _host_row(), _at(0),
                                          _at(30))
        ((_c, event_type, body),) = sent
        self.assertEqual(
            (usage.HOST_UPDATE, True, {'hosts': 1}, 0.5, 1, 2,
             _at(30).isoformat(), {'hosts': 2}),
            (event_type, body['closed'], body['totals'], body['host_hours'],
             body['previous_amount'], body['amount'],
             body['next']['held_from'], body['next']['totals']))
        self.assertNotIn('ended_early', body)


class _Held(leases_mod.NoLeases):
    """Claims made at _at(0), of every host."""

    def held_since(self, node):
        return _at(0)


class PcloudHostEventTests(test_service.ServiceTestCase):

    def setUp(self):
        super().setUp()
        self._pool()
        self.pcloud = self._pcloud()
        self.notifier, self.sent = _notifier(
            publisher_id=usage.PCLOUD_PUBLISHER)
        self.service = service_mod.PcloudService(
            self.nova, self.placement, self.conf, leases=_Held(),
            usage=self.notifier)
        timeutils.set_time_override(_at(90))
        self.addCleanup(timeutils.clear_time_override)

    def test_allocated_then_released(self):
        self.service.allocate_host(test_service.ALICE, self.pcloud, 'web1',
                                   'big')
        self.service.release_host(test_service.ALICE, self.pcloud, 'web1')
        (allocated, released) = self.sent
        self.assertEqual(({'project_id': 'alice'}, usage.HOST_ALLOCATED),
                         allocated[:2])
        self.assertEqual(usage.HOST_RELEASED, released[1])
        allocated, released = allocated[2], released[2]
        self.assertEqual(
            ('pcloud:permanent_host', '%s/web1' % self.pcloud, 'alice',
             self.pcloud, 'web1', 'big', _at(0).isoformat(), None),
            (allocated['resource_type'], allocated['resource_id'],
             allocated['project_id'], allocated['pcloud_id'],
             allocated['host'], allocated['host_flavor'],
             allocated['held_from'], allocated['held_to']))
        self.assertEqual(
            (True, _at(90).isoformat(), 1.5, allocated['record_id']),
            (released['closed'], released['held_to'],
             released['host_hours'], released['record_id']))
        # No real host name in either.
        for host in self.HOSTS:
            self.assertNotIn(host, repr(self.sent))

    def test_a_refused_allocation_sends_nothing(self):
        for name in ('a', 'b', 'c'):
            self.service.allocate_host(test_service.ALICE, self.pcloud,
                                       name, 'big')
        del self.sent[:]
        self.assertRaises(exception.NoFreeHost, self.service.allocate_host,
                          test_service.ALICE, self.pcloud, 'd', 'big')
        self.assertEqual([], self.sent)

    def test_an_undone_allocation_is_no_release(self):
        self.service.allocate_host(test_service.ALICE, self.pcloud, 'web1',
                                   'big')
        agg = next(a for a in self.nova.aggregates.list()
                   if a.name == 'Pcloud:' + self.pcloud)
        (host,) = agg.hosts
        # The reconciler undoes an allocation a crash cut short.
        self.service.recover({
            'operation': service_mod.ALLOCATE, 'details': {
                'pcloud_id': self.pcloud, 'name': 'web1', 'host': host,
                'hostname': host + '.example.com'}})
        self.assertEqual([usage.HOST_ALLOCATED], [t for _c, t, _b in
                                                  self.sent])
        # One a crash cut short in a release is finished, and billed.
        self.service.allocate_host(test_service.ALICE, self.pcloud, 'web2',
                                   'big')
        agg = next(a for a in self.nova.aggregates.list()
                   if a.name == 'Pcloud:' + self.pcloud)
        (host,) = agg.hosts
        self.service.recover({
            'operation': service_mod.RELEASE, 'details': {
                'pcloud_id': self.pcloud, 'name': 'web2', 'host': host,
                'hostname': host + '.example.com'}})
        self.assertEqual(usage.HOST_RELEASED, self.sent[-1][1])
        self.assertEqual('%s/web2' % self.pcloud,
                         self.sent[-1][2]['resource_id'])


ETC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                   'ceilometer')


def _resolve(body, path):
    """A ``payload.a.b`` (or ``$.payload.a.b``) of one event, or KeyError."""
    found = {'payload': body}
    for part in path.lstrip('$.').split('.'):
        found = found[part]
    return found


class CeilometerDefinitionsTests(base.TestCase):
    """etc/ceilometer reads fields the events have."""

    def _events(self):
        """{event type: a body of it}, as the notifier sends them."""
        notifier, sent = _notifier()
        notifier.reservation_started({}, _reservation(), _at(0))
        notifier.reservation_changed({}, _reservation(2, slots=[
            {'host_name': 'cn1', 'host_uuid': 'u1', 'slots': 2}]),
            _reservation(), _at(0), _at(30))
        notifier.reservation_ended({}, _reservation(), _at(30), _at(60))
        notifier.host_reservation(_host_row(), 'INACTIVE', _at(0))
        notifier.host_reservation(_host_row(), 'ACTIVE', _at(0),
                                  event_type=usage.HOST_UPDATE)
        notifier.host_reservation(_host_row('ENDED'), 'ACTIVE', _at(0),
                                  _at(60))
        notifier.pcloud_host_allocated('p1', 'pc', 'web1', 'big', _at(0))
        notifier.pcloud_host_released('p1', 'pc', 'web1', 'big', _at(0),
                                      _at(60))
        return {event_type: body for _c, event_type, body in sent}

    def test_every_meter_reads_a_number_of_each_of_its_events(self):
        with open(os.path.join(ETC, 'meters.yaml')) as f:
            meters = yaml.safe_load(f)['metric']
        events = self._events()
        self.assertEqual(5, len(meters))
        for meter in meters:
            for event_type in meter['event_type']:
                body = events[event_type]
                volume = _resolve(body, meter['volume'])
                self.assertIsInstance(volume, float, meter['name'])
                for field in ('resource_id', 'project_id'):
                    self.assertTrue(_resolve(body, meter[field]))
                self.assertIsNotNone(_resolve(body, meter['timestamp']))
                for path in meter['metadata'].values():
                    if path.endswith('ended_early'):
                        continue  # an end's only
                    _resolve(body, path)

    def test_closed_records_sum_to_the_meters_volumes(self):
        events = self._events()
        # The growth closed 2 slots x 0.5 h, the end 3 x 0.5 h.
        self.assertEqual(
            (1.0, 1.5, 2.0, 1.0),
            (events[usage.UPDATE]['slot_hours'],
             events[usage.END]['slot_hours'],
             events['pcloud.host_reservation.ended']['host_hours'],
             events[usage.HOST_RELEASED]['host_hours']))

    def test_every_trait_is_a_field_of_some_event(self):
        with open(os.path.join(ETC, 'event_definitions.yaml')) as f:
            (definition,) = yaml.safe_load(f)
        events = self._events()
        for event_type in events:
            self.assertTrue(any(fnmatch.fnmatch(event_type, pattern)
                                for pattern in definition['event_type']),
                            event_type)
        for name, trait in definition['traits'].items():
            found = []
            for body in events.values():
                try:
                    found.append(_resolve(body, trait['fields']))
                except (KeyError, TypeError):
                    pass
            self.assertTrue(found, name)
