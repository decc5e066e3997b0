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
"""A flexible lease through Blazar's real v1 API and manager, on real

Placement: "1 slot for an hour, any time in the next ten", booked at the
earliest window that fits (api.v1._book_flexible), and a window another
lease takes between the search and the claim costs nothing but a search
again. Time stands still (HostLeaseTestCase), so windows are exact.
"""

import datetime

from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
import fixtures
from oslo_utils import timeutils

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.tests.functional.blazar import test_lease_guard

# cn5 is the one host instance slots may use (the others are the host
# flavor pool's, cn2 has no inventory of its own to lay a slot on): it
# takes 8 slots of base.reservation's shape.
SLOTS = 8


class FlexibleLeaseTestCase(test_lease_guard.LeaseGuardTestCase):

    def at(self, minutes):
        """The moment n minutes from now, as Blazar stores lease dates."""
        return (timeutils.utcnow() + datetime.timedelta(
            minutes=minutes)).replace(second=0)

    def post_flexible(self, reservation, duration=60, **bounds):
        body = {'name': 'flexible', 'duration': duration,
                'reservations': [reservation], 'events': []}
        body.update(bounds)
        return self.call('POST', '/leases', body)

    def window_of(self, lease):
        return tuple(timeutils.parse_isotime(lease[field]).replace(
            tzinfo=None) for field in ('start_date', 'end_date'))


class InstanceTests(FlexibleLeaseTestCase):

    def raced_by_a_fixed_lease(self):
        """The windows searched, as a fixed lease takes every slot from

        minute 30 to 90 right after the first search.
        """
        search = handlers.API.flexible_window
        found = []

        def racing(api, *args):
            window = search(api, *args)
            if not found:
                self.create_lease(self.reservation(SLOTS), start=30,
                                  end=90, name='fixed')
            found.append(window)
            return window

        self.useFixture(fixtures.MockPatchObject(
            handlers.API, 'flexible_window', racing))
        return found

    def test_the_earliest_window_that_fits_is_booked_and_answered(self):
        # Every slot is taken from minute 60 to 180: an hour fits from
        # minute 30 only at 180, the end of what holds them.
        self.post_lease(self.reservation(SLOTS), start=60, end=180)
        response = self.post_flexible(
            self.reservation(1), earliest_start=self.minutes(30),
            latest_end=self.minutes(600))
        self.assertEqual(201, response.status_code, response.text)
        lease = response.json()['lease']
        self.assertEqual((self.at(180), self.at(240)), self.window_of(lease))
        row = res_db.get(self.context, lease['reservations'][0]['id'])
        self.assertEqual((self.at(180), self.at(240)),
                         (row['start_time'], row['end_time']))
        self.assertNotIn('duration', blazar_db.lease_get(lease['id']))

    def test_a_window_free_at_once_starts_at_the_earliest(self):
        response = self.post_flexible(self.reservation(2), duration=90,
                                      earliest_start=self.minutes(30))
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual((self.at(30), self.at(120)),
                         self.window_of(response.json()['lease']))

    def test_no_window_by_the_latest_end_is_409_and_holds_nothing(self):
        self.post_lease(self.reservation(SLOTS), start=60, end=180)
        before = blazar_db.lease_get_all()
        response = self.post_flexible(
            self.reservation(1), earliest_start=self.minutes(30),
            latest_end=self.minutes(200))
        self.assert_refused(response, 409, 'No window of 60 minutes')
        self.assertEqual('NoWindowFits', response.json()['error_name'])
        self.assertEqual(len(before), len(blazar_db.lease_get_all()))

    def test_a_window_taken_between_search_and_claim_books_the_next(self):
        # Another tenant's fixed lease takes every slot of the window the
        # search found before the flexible lease's claim: its creation is
        # refused, nothing of it is held, and the next search books the
        # window after the other lease.
        found = self.raced_by_a_fixed_lease()
        response = self.post_flexible(
            self.reservation(1), earliest_start=self.minutes(30),
            latest_end=self.minutes(600))
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual([(self.at(30), self.at(90)),
                          (self.at(90), self.at(150))], found)
        self.assertEqual((self.at(90), self.at(150)),
                         self.window_of(response.json()['lease']))
        leases = {lease['name']: lease for lease in blazar_db.lease_get_all()}
        self.assertEqual(['fixed', 'flexible'], sorted(leases))
        # Each window holds what its lease asked, no more.
        for lease, slots in ((leases['fixed'], SLOTS),
                             (leases['flexible'], 1)):
            (reservation,) = blazar_db.reservation_get_all_by_lease_id(
                lease['id'])
            self.assertEqual(slots, sum(
                on_host['slots'] for on_host in res_db.get(
                    self.context, reservation['id'])['slots']))
        # The refused creation left no claim behind.
        self.assertEqual(
            {r['id'] for lease in leases.values()
             for r in blazar_db.reservation_get_all_by_lease_id(
                 lease['id'])},
            {c for c in db_claims.list_consumers(self.context)
             if not c.startswith(db_claims.USAGE_PREFIX)})

    def test_searches_stop_at_the_operators_bound(self):
        self.conf.set_override('flexible_lease_searches', 1, group='pcloud')
        found = self.raced_by_a_fixed_lease()
        response = self.post_flexible(
            self.reservation(1), earliest_start=self.minutes(30),
            latest_end=self.minutes(600))
        self.assert_refused(response, 409)
        self.assertEqual([(self.at(30), self.at(90))], found)
        self.assertEqual(['fixed'], [
            lease['name'] for lease in blazar_db.lease_get_all()])

    def test_a_fixed_lease_on_a_window_a_flexible_one_took_is_409(self):
        response = self.post_flexible(self.reservation(SLOTS),
                                      earliest_start=self.minutes(30))
        self.assertEqual(201, response.status_code, response.text)
        refused = self.call('POST', '/leases', {
            'name': 'fixed', 'start_date': self.minutes(60),
            'end_date': self.minutes(120),
            'reservations': [self.reservation(1)], 'events': []})
        self.assert_refused(refused, 409)
        self.assertEqual(['flexible'], [
            lease['name'] for lease in blazar_db.lease_get_all()])

    def test_a_refusal_not_about_the_window_is_answered_as_it_is(self):
        # A 409 of Blazar's own at every window: the search finds the
        # same window again and stops there.
        calls = []
        search = handlers.API.flexible_window

        def counted(api, *args):
            calls.append(args)
            return search(api, *args)

        self.useFixture(fixtures.MockPatchObject(
            handlers.API, 'flexible_window', counted))
        self.useFixture(fixtures.MockPatchObject(
            self.manager, 'create_lease',
            side_effect=mgr_exc.LeaseNameAlreadyExists(name='taken')))
        response = self.post_flexible(self.reservation(1),
                                      earliest_start=self.minutes(300))
        self.assert_refused(response, 409, 'taken')
        self.assertEqual(2, len(calls))
        self.assertEqual([], blazar_db.lease_get_all())

    def test_bad_terms_get_the_plugins_own_400(self):
        response = self.post_flexible(self.reservation(1, vcpus=0))
        self.assert_refused(response, 400, 'vcpus')
        self.assertEqual([], blazar_db.lease_get_all())


class HostTests(FlexibleLeaseTestCase):

    def test_whole_hosts_are_booked_at_the_earliest_window(self):
        # The pool's 3 hosts of the default zone are all leased from
        # minute 60 to 180.
        self.post_lease(self.hosts_res(3), start=60, end=180)
        response = self.post_flexible(
            self.hosts_res(2), duration=120,
            earliest_start=self.minutes(10))
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual((self.at(180), self.at(300)),
                         self.window_of(response.json()['lease']))

    def test_an_immediate_or_best_effort_lease_is_not_flexible(self):
        for kind in ('IMMEDIATE', 'BEST-EFFORT'):
            response = self.post_flexible(self.hosts_res(1, kind))
            self.assert_refused(response, 400, 'reservations.0.lease_type')
        self.assertEqual([], blazar_db.lease_get_all())


class BodyTests(FlexibleLeaseTestCase):

    def assert_400(self, field, **body):
        lease = dict({'name': 'x', 'events': [],
                      'reservations': [self.reservation(1)]}, **body)
        response = self.call('POST', '/leases', lease)
        self.assert_refused(response, 400, field)
        self.assertEqual([], blazar_db.lease_get_all())

    def test_dates_and_a_duration_together_are_400(self):
        self.assert_400('start_date', duration=60,
                        start_date=self.minutes(10),
                        end_date=self.minutes(100))
        self.assert_400('end_date', duration=60, end_date=self.minutes(100))
        # seeds/003's names of them too.
        self.assert_400('start_date', duration=60, start=self.minutes(10))

    def test_bounds_without_a_duration_are_400(self):
        self.assert_400('earliest_start', start_date=self.minutes(10),
                        end_date=self.minutes(100),
                        earliest_start=self.minutes(10))
        self.assert_400('latest_end', start_date=self.minutes(10),
                        end_date=self.minutes(100),
                        latest_end=self.minutes(100))

    def test_bad_durations_and_bounds_are_400(self):
        for duration in (0, -5, '60', 1.5, 366 * 24 * 60 + 1):
            self.assert_400('duration', duration=duration)
        self.assert_400('earliest_start', duration=60,
                        earliest_start='tomorrow')
        self.assert_400('latest_end', duration=60,
                        earliest_start=self.minutes(10),
                        latest_end=self.minutes(69))

    def test_one_reservation_of_ours_is_booked_flexibly(self):
        self.assert_400('reservations', duration=60,
                        reservations=[self.reservation(1),
                                      self.reservation(1)])
        self.assert_400('reservations', duration=60, reservations=[])
