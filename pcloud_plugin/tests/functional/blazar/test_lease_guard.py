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
"""A lease survives its users: Blazar's real v1 API and manager with both

of our plugins. Requests Blazar mishandles are refused before it sees
them (api.lease_guard), a change that meets the lease's own event waits
for it (api.lease_lock), and what a dead process or an old bug left is
repaired by the reconciler (reconcile.repair_leases), so that the
manager's event loop runs for every lease again.
"""

import datetime
import operator

from blazar.db import api as blazar_db
from blazar import status
import fixtures
from oslo_utils import timeutils

from pcloud_plugin.blazar.api import lease_lock
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import locks
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin


class LeaseGuardTestCase(test_host_plugin.HostLeaseTestCase,
                         base.BlazarAPITestCase):

    def call(self, method, path, body=None, **kwargs):
        session, url = self.api
        if body is not None:
            kwargs['json'] = body
        return session.request(url + path, method, raise_exc=False,
                               **kwargs)

    def post_lease(self, *reservations, start=60, end=120, name='guarded'):
        response = self.call('POST', '/leases', {
            'name': name, 'start_date': self.minutes(start),
            'end_date': self.minutes(end),
            'reservations': list(reservations), 'events': []})
        self.assertEqual(201, response.status_code, response.text)
        return response.json()['lease']

    def assert_refused(self, response, code, field=None):
        self.assertEqual(code, response.status_code, response.text)
        if field is not None:
            self.assertIn(field, response.json()['error_message'])

    def row_of(self, lease):
        """Our record of the lease's (first) instance reservation."""
        return res_db.get(self.context, lease['reservations'][0]['id'])

    def later(self, seconds):
        timeutils.advance_time_delta(datetime.timedelta(seconds=seconds))


class BodyTests(LeaseGuardTestCase):

    def test_an_update_giving_events_is_400_and_the_lease_keeps_them(self):
        lease = self.post_lease(self.reservation(1))
        before = blazar_db.event_get_all_sorted_by_filters(
            'time', 'asc', {'lease_id': lease['id']})
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'events': []})
        self.assert_refused(response, 400, 'events')
        self.assertEqual(
            [e['id'] for e in before],
            [e['id'] for e in blazar_db.event_get_all_sorted_by_filters(
                'time', 'asc', {'lease_id': lease['id']})])
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(
            204, self.call('DELETE', '/leases/%s' % lease['id']).status_code)

    def test_a_creation_giving_events_is_400(self):
        response = self.call('POST', '/leases', {
            'name': 'x', 'start_date': self.minutes(60),
            'end_date': self.minutes(120),
            'reservations': [self.reservation(1)],
            'events': [{'event_type': 'start_lease', 'time': 'soon'}]})
        self.assert_refused(response, 400, 'events')
        self.assertEqual([], blazar_db.lease_get_all())

    def test_an_update_writing_other_lease_fields_is_400(self):
        lease = self.post_lease(self.reservation(1))
        for field, value in (('status', 'ACTIVE'),
                             ('project_id', 'someone-else'),
                             ('trust_id', 'x')):
            response = self.call('PUT', '/leases/%s' % lease['id'],
                                 {field: value})
            self.assert_refused(response, 400, field)
        row = blazar_db.lease_get(lease['id'])
        self.assertEqual(status.lease.PENDING, row['status'])
        self.assertEqual(base.PROJECT, row['project_id'])

    def test_unknown_or_malformed_resource_types_are_400(self):
        for kind in ('nope', 5, None, ['virtual:instance'], {}):
            reservation = dict(self.reservation(1), resource_type=kind)
            response = self.call('POST', '/leases', {
                'name': 'x', 'start_date': self.minutes(60),
                'end_date': self.minutes(120),
                'reservations': [reservation], 'events': []})
            self.assert_refused(response, 400,
                                'reservations.0.resource_type')
        self.assertEqual([], blazar_db.lease_get_all())
        lease = self.post_lease(self.reservation(1))
        rid = lease['reservations'][0]['id']
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'resource_type': 'nope'}]})
        self.assert_refused(response, 400, 'reservations.0.resource_type')

    def test_a_term_no_reservation_of_the_type_has_is_400_naming_it(self):
        # Each was accepted and ignored: the lease meant less than asked.
        for reservation, field in (
                (dict(self.reservation(1), zone='nowhere'),
                 'reservations.0.zone'),
                (self.hosts_res(1, cpus=64), 'reservations.0.cpus'),
                # Only the scoped capabilities: a prefix alone is none.
                (self.hosts_res(1, **{'capabilities:': 'x86_64'}),
                 'reservations.0.capabilities:'),
                (self.hosts_res(1, capabilities={'cpu_arch': 'x86_64'}),
                 'reservations.0.capabilities'),
                (dict(self.reservation(1), hypervisor_properties='[]'),
                 'reservations.0.hypervisor_properties'),
                (self.hosts_res(1, flavor_id='x'),
                 'reservations.0.flavor_id')):
            response = self.call('POST', '/leases', {
                'name': 'x', 'start_date': self.minutes(60),
                'end_date': self.minutes(120),
                'reservations': [reservation], 'events': []})
            self.assert_refused(response, 400, field)
            self.assertIn('its terms are', response.json()['error_message'])
        self.assertEqual([], blazar_db.lease_get_all())
        self.assertEqual([], db_claims.list_consumers(self.context))
        lease = self.post_lease(self.reservation(1))
        rid = lease['reservations'][0]['id']
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'amount': 2, 'flavor': 'x'}]})
        self.assert_refused(response, 400, 'reservations.0.flavor')
        self.assertEqual(1, self.row_of(lease)['amount'])

    def test_a_region_other_than_this_clouds_is_400_naming_it(self):
        # Blazar's region, and without it the catalog's one region.
        for blazars in ('RegionOne', None):
            self.conf.set_override('os_region_name', blazars)
            for reservation in (dict(self.reservation(1), region='Two'),
                                self.hosts_res(1, region='nowhere')):
                response = self.call('POST', '/leases', {
                    'name': 'x', 'start_date': self.minutes(60),
                    'end_date': self.minutes(120),
                    'reservations': [reservation], 'events': []})
                self.assert_refused(response, 400, 'reservations.0.region')
                self.assertIn("region of this cloud: 'RegionOne'",
                              response.json()['error_message'])
        self.assertEqual([], blazar_db.lease_get_all())
        lease = self.post_lease(dict(self.reservation(1),
                                     region='RegionOne'))
        rid = lease['reservations'][0]['id']
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'region': 'Two', 'amount': 2}]})
        self.assert_refused(response, 400, 'reservations.0.region')
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'region': 'RegionOne',
                              'amount': 2}]})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(2, self.row_of(lease)['amount'])

    def test_amounts_over_the_operators_limits_are_400_naming_them(self):
        self.conf.set_override('max_amount', 2, group='pcloud_instance')
        self.conf.set_override('max_amount', 1, group='pcloud_host')
        for reservation, option in (
                (self.reservation(3), '[pcloud_instance] max_amount'),
                (self.hosts_res(2), '[pcloud_host] max_amount')):
            response = self.call('POST', '/leases', {
                'name': 'x', 'start_date': self.minutes(60),
                'end_date': self.minutes(120),
                'reservations': [reservation], 'events': []})
            self.assert_refused(response, 400, 'reservations.0.amount')
            self.assertIn(option, response.json()['error_message'])
        self.assertEqual([], blazar_db.lease_get_all())
        # Within them, admitted; growing past one is refused as well.
        lease = self.post_lease(self.reservation(2))
        rid = lease['reservations'][0]['id']
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'amount': '3'}]})
        self.assert_refused(response, 400, '[pcloud_instance] max_amount')
        self.assertEqual(2, self.row_of(lease)['amount'])
        # A caller policy lets past them is not held to them.
        base.override_policy(self, {'pcloud:lease:exceed_limits':
                                    'role:member'})
        response = self.call('PUT', '/leases/%s' % lease['id'], {
            'reservations': [{'id': rid, 'amount': 3}]})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(3, self.row_of(lease)['amount'])

    def test_seeds_003_request_body_as_printed_is_admitted(self):
        start, end = self.minutes(60), self.minutes(120)
        # The seed's amount is 5; affinity false needs a host each and
        # this cloud has one free for tenants.
        response = self.call('POST', '/leases', {
            'name': 'instance-reservation-1',
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 4, 'memory_mb': 4096, 'disk_gb': 10,
                              'amount': 1, 'affinity': False}],
            'start': start, 'end': end, 'events': []})
        self.assertEqual(201, response.status_code, response.text)
        lease = response.json()['lease']
        self.assertEqual((start, end), (lease['start_date'][:16].replace(
            'T', ' '), lease['end_date'][:16].replace('T', ' ')))
        row = self.row_of(lease)
        self.assertEqual((1, 4, False, ''), (
            row['amount'], row['vcpus'], row['affinity'],
            row['resource_properties']))
        response = self.call('POST', '/leases', {
            'name': 'both', 'start': start, 'start_date': start,
            'end': end, 'reservations': [self.reservation(1)],
            'events': []})
        self.assert_refused(response, 400, 'start')
        self.assertEqual(1, len(blazar_db.lease_get_all()))

    def test_names_blazar_cannot_store_are_400(self):
        for name in ('n' * 81, 'smile \U0001F600', ''):
            response = self.call('POST', '/leases', {
                'name': name, 'start_date': self.minutes(60),
                'end_date': self.minutes(120),
                'reservations': [self.reservation(1)], 'events': []})
            self.assert_refused(response, 400, 'name')
        self.post_lease(self.reservation(1), name='n' * 80)
        # Anywhere in the body.
        response = self.call('POST', '/leases', {
            'name': 'x', 'start_date': self.minutes(60),
            'end_date': self.minutes(120),
            'reservations': [dict(self.reservation(1),
                                  resource_properties='\U0001F600')],
            'events': []})
        self.assert_refused(response, 400,
                            'reservations.0.resource_properties')

    def test_malformed_or_deep_json_is_400(self):
        lease = self.post_lease(self.reservation(1))
        for path, method in (('/leases', 'POST'),
                             ('/leases/%s' % lease['id'], 'PUT')):
            for raw, field in (
                    (b'{"name": ', 'body'), (b'\xff\xfe', 'body'),
                    (b'[' * 100000 + b']' * 100000, 'body'),
                    (b'{"reservations": [' + b'{"a":' * 40 + b'1' +
                     b'}' * 40 + b']}', 'reservations.0.a.a')):
                response = self.call(
                    method, path, data=raw,
                    headers={'Content-Type': 'application/json'})
                self.assert_refused(response, 400, field)

    def test_ids_no_lease_has_are_404(self):
        for lease_id in ('x' * 300, '\U0001F600', 'a' * 37,
                         '00000000-0000-0000-0000-000000000000'):
            for method in ('GET', 'PUT', 'DELETE'):
                response = self.call(method, '/leases/%s' % lease_id,
                                     {'name': 'y'} if method == 'PUT'
                                     else None)
                self.assert_refused(response, 404)


class EventTests(LeaseGuardTestCase):
    """A tenant's change that meets the lease's own start or end."""

    def test_an_update_as_the_lease_starts_waits_for_the_start(self):
        lease = self.post_lease(self.reservation(1), start=0)
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': self.minutes(180)})
        self.assert_refused(response, 409, 'start')
        self.assertGreaterEqual(int(response.headers['Retry-After']), 1)
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(lease['id'])['status'])
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': self.minutes(180)})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])

    def test_a_change_while_the_lease_is_starting_is_409(self):
        lease = self.post_lease(self.reservation(1))
        blazar_db.lease_update(lease['id'],
                               {'status': status.lease.STARTING})
        for method, body in (('PUT', {'name': 'z'}), ('DELETE', None)):
            response = self.call(method, '/leases/%s' % lease['id'], body)
            self.assert_refused(response, 409, 'STARTING')
        self.assertEqual(status.lease.STARTING,
                         blazar_db.lease_get(lease['id'])['status'])

    def test_a_delete_that_meets_the_start_as_it_begins_is_409(self):
        lease = self.post_lease(self.reservation(1), start=0)
        check = lease_lock.busy

        def then_the_start_begins(lease_id, *change):
            # Our check passes; the manager takes the event right after.
            answer = check(lease_id, *change)
            start = blazar_db.event_get_first_sorted_by_filters(
                'lease_id', 'asc', {'lease_id': lease_id,
                                    'event_type': 'start_lease'})
            blazar_db.event_update(start['id'],
                                   {'status': status.event.IN_PROGRESS})
            return answer
        self.useFixture(fixtures.MockPatchObject(
            lease_lock, 'busy', then_the_start_begins))
        response = self.call('DELETE', '/leases/%s' % lease['id'])
        self.assert_refused(response, 409, 'start')
        self.assertGreaterEqual(int(response.headers['Retry-After']), 1)
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(lease['id'])['status'])

    def test_an_early_end_of_an_active_instance_reservation_ends_it(self):
        lease = self.post_lease(self.reservation(2), start=0)
        self.start(lease['id'])
        rid = lease['reservations'][0]['id']
        self.later(150)
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': 'now'})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        now = timeutils.utcnow().replace(second=0)
        self.assertEqual(now, self.claims(rid)['end'])
        self.assertEqual(status.lease.TERMINATED,
                         self.end(lease['id'])['status'])

    def test_an_end_at_the_minute_an_active_lease_started_is_400(self):
        lease = self.post_lease(self.reservation(1), start=0)
        self.start(lease['id'])
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': 'now'})
        self.assert_refused(response, 400, 'end_date')
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])

    def test_a_lease_past_its_before_end_takes_updates_one_after_another(
            self):
        # Ending within the hour: its before-end is at its start, and has
        # run. Blazar sets it to run again after every update, at the
        # same time if no date moved. (An active instance reservation's
        # amount only grows.)
        lease = self.post_lease(self.reservation(1), start=0, end=50)
        self.start(lease['id'])
        before_end = self.event(lease['id'], 'before_end_lease')
        self.assertEqual(status.event.DONE, before_end['status'])
        rid = lease['reservations'][0]['id']

        def resize(amount):
            response = self.call('PUT', '/leases/%s' % lease['id'], {
                'reservations': [{'id': rid, 'amount': amount}],
                'before_end_date': None})
            self.assertEqual(200, response.status_code, response.text)
            self.assertEqual(amount, self.row_of(lease)['amount'])
            self.assertEqual(status.lease.ACTIVE,
                             blazar_db.lease_get(lease['id'])['status'])
            return self.event(lease['id'], 'before_end_lease')
        for amount in (2, 3):
            self.assertEqual((status.event.DONE, before_end['time']),
                             operator.itemgetter('status', 'time')(
                                 resize(amount)))
        # While the manager runs it, the update leaves it to the run.
        blazar_db.event_update(before_end['id'],
                               {'status': status.event.IN_PROGRESS})
        self.assertEqual(status.event.IN_PROGRESS, resize(4)['status'])
        # One that moves the dates lets the before-end run first, and
        # Blazar sets it anew.
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': self.minutes(55)})
        self.assert_refused(response, 409, 'under way')
        blazar_db.event_update(before_end['id'],
                               {'status': status.event.UNDONE})
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': self.minutes(55)})
        self.assert_refused(response, 409, 'before-end')
        self.assertEqual(status.event.DONE, self.run_event(
            lease['id'], 'before_end_lease')['status'])
        response = self.call('PUT', '/leases/%s' % lease['id'],
                             {'end_date': self.minutes(55)})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(lease['id'])['status'])
        moved = self.event(lease['id'], 'before_end_lease')
        self.assertEqual(status.event.UNDONE, moved['status'])
        self.assertGreater(moved['time'], timeutils.utcnow())


class RepairTests(LeaseGuardTestCase):
    """reconcile.repair_leases, as the plugins' periodic sweep runs it."""

    def setUp(self):
        super().setUp()
        self.conf.set_override('lease_transition_timeout', 0,
                               group='pcloud')

    def sweep(self):
        self.later(1)
        self.plugin.sweep()

    def test_an_orphaned_event_no_longer_stops_every_lease(self):
        # What Blazar made of PUT {"events": []} before the guard: the
        # lease's events lose their lease.
        broken = self.create_lease(self.reservation(1), start=0, end=60)
        for event in blazar_db.event_get_all_sorted_by_filters(
                'time', 'asc', {'lease_id': broken['id']}):
            blazar_db.event_update(event['id'], {'lease_id': None})
        other = self.create_lease(self.reservation(1), start=0, end=60)
        # The loop raises at the orphan, every pass: nothing starts.
        self.assertRaises(TypeError, self.manager._process_events)
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(other['id'])['status'])
        self.sweep()
        self.manager._process_events()
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(other['id'])['status'])
        # The broken lease has its events again: it started, and goes.
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(broken['id'])['status'])
        self.delete_lease(broken['id'])
        self.assertIsNone(blazar_db.lease_get(broken['id']))

    def test_leases_a_dead_process_left_midway_are_put_back(self):
        leases = {state: self.create_lease(self.reservation(1))
                  for state in (status.lease.CREATING,
                                status.lease.UPDATING,
                                status.lease.DELETING)}
        for state, lease in leases.items():
            blazar_db.lease_update(lease['id'], {'status': state})
        self.sweep()
        self.assertIsNone(blazar_db.lease_get(
            leases[status.lease.CREATING]['id']))
        self.assertIsNone(blazar_db.lease_get(
            leases[status.lease.DELETING]['id']))
        updated = leases[status.lease.UPDATING]
        self.assertEqual(status.lease.PENDING,
                         blazar_db.lease_get(updated['id'])['status'])
        # No claim is left without its reservation.
        self.sweep()
        self.assertEqual([updated['reservations'][0]['id']],
                         db_claims.list_consumers(self.context))
        self.delete_lease(updated['id'])
        self.assertEqual([], db_claims.list_consumers(self.context))

    def test_an_event_a_dead_manager_left_under_way_runs_again(self):
        # Killed after Blazar's loop marked the start IN_PROGRESS, before
        # the lease was STARTING: nothing ran it again, and the guard
        # refused the owner's delete as "under way" for good.
        lease = self.create_lease(self.reservation(1), start=0)
        start = blazar_db.event_get_first_sorted_by_filters(
            'lease_id', 'asc', {'lease_id': lease['id'],
                                'event_type': 'start_lease'})
        blazar_db.event_update(start['id'],
                               {'status': status.event.IN_PROGRESS})
        self.assertEqual(409, self.call(
            'DELETE', '/leases/%s' % lease['id']).status_code)
        self.sweep()
        self.assertEqual(status.event.UNDONE,
                         blazar_db.event_get(start['id'])['status'])
        self.assertEqual(status.lease.ACTIVE,
                         self.start(lease['id'])['status'])
        self.assertEqual(204, self.call(
            'DELETE', '/leases/%s' % lease['id']).status_code)

    def test_a_lease_a_request_holds_is_left_to_the_request(self):
        # An API request on the lease (its lock held) may be deleting it
        # right now: the repair waits for the next pass.
        lease = self.create_lease(self.reservation(1))
        blazar_db.lease_update(lease['id'],
                               {'status': status.lease.CREATING})
        held = locks.acquire('lease:' + lease['id'])
        try:
            self.sweep()
            self.assertEqual(status.lease.CREATING,
                             blazar_db.lease_get(lease['id'])['status'])
        finally:
            locks.release(held)
        self.sweep()
        self.assertIsNone(blazar_db.lease_get(lease['id']))
        self.assertEqual([], db_claims.list_consumers(self.context))

    def test_a_lease_in_a_transition_still_running_is_left_alone(self):
        self.conf.set_override('lease_transition_timeout', 600,
                               group='pcloud')
        lease = self.create_lease(self.reservation(1))
        blazar_db.lease_update(lease['id'],
                               {'status': status.lease.UPDATING})
        self.sweep()
        self.assertEqual(status.lease.UPDATING,
                         blazar_db.lease_get(lease['id'])['status'])
