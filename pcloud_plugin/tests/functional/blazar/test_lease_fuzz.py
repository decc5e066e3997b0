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
"""Hypothesis against Blazar's real v1 API with both of our plugins:

lease creation and update bodies of our resource types, well-formed or
not, must never be answered with a 5xx; a refused creation leaves no
lease and no claim, a refused update changes no claim. Every lease route
(ids, raw bodies, Blazar's own resource types and ones nobody runs
included) answers below 500, and after thousands of such requests a new
lease still starts and ends on time.
"""

import datetime
import json
import os
import urllib.parse

from blazar.db import api as blazar_db
from blazar import status
import hypothesis
from hypothesis import strategies as st
from oslo_utils import timeutils

from pcloud_plugin.blazar import host_plugin
from pcloud_plugin.blazar import instance_plugin
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin

# More for a longer search: PCLOUD_FUZZ_EXAMPLES=1000.
EXAMPLES = int(os.environ.get('PCLOUD_FUZZ_EXAMPLES', 60))
# Requests of the route fuzz (most are refused, and cheap).
ROUTE_EXAMPLES = int(os.environ.get('PCLOUD_ROUTE_FUZZ_EXAMPLES', 2000))

_junk = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 40, 2 ** 40),
    st.floats(allow_nan=True), st.text(max_size=12),
    st.lists(st.one_of(st.text(max_size=6), st.integers()), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


def _either(good):
    """Mostly a plausible value, sometimes anything."""
    return st.one_of(good, good, _junk)


def _date(offset_minutes):
    return (timeutils.utcnow() + datetime.timedelta(
        minutes=offset_minutes)).strftime('%Y-%m-%d %H:%M')


_dates = st.one_of(
    st.integers(-60, 60 * 24 * 30).map(_date),
    st.sampled_from(['now', '9999-12-31 23:59', '9999-12-31 22:00',
                     '0001-01-01 00:00', '2026-02-30 10:00', '']),
    _junk)

_instance = st.fixed_dictionaries({
    'resource_type': st.just(instance_plugin.RESOURCE_TYPE),
    'amount': _either(st.integers(0, 20)),
    'vcpus': _either(st.integers(0, 32)),
    'memory_mb': _either(st.integers(0, 65536)),
    'disk_gb': _either(st.integers(0, 1000)),
    'affinity': _either(st.sampled_from([True, False, None, 'none'])),
    'resource_properties': _either(st.sampled_from(
        ['', 'HW_CPU_X86_AVX2', '!CUSTOM_SLOW', 'CUSTOM_', 'a,b'])),
})
_host = st.fixed_dictionaries({
    'resource_type': st.just(host_plugin.RESOURCE_TYPE),
    'amount': _either(st.integers(0, 5)),
    'host_flavor': _either(st.sampled_from(['big', 'nope'])),
    'pcloud_id': _either(st.sampled_from(
        [test_host_plugin.PCLOUD, test_host_plugin.OTHERS_PCLOUD])),
}, optional={
    'availability_zone': _either(st.sampled_from(['az2', 'nowhere'])),
    'required_traits': _either(st.one_of(
        st.sampled_from(['HW_CPU_X86_AVX2', '!HW_CPU_X86_AVX2', 'A,,B']),
        st.lists(st.one_of(st.text(max_size=8), st.integers()),
                 max_size=3))),
    'lease_type': _either(st.sampled_from(
        ['IMMEDIATE', 'SCHEDULE', 'BEST-EFFORT', 'SOMEDAY'])),
    'timeout': _either(st.integers(-5, 120)),
})
# A key left out now and then: a missing parameter is an answer too.
_reservation = st.one_of(_instance, _host).flatmap(
    lambda r: st.sets(st.sampled_from(sorted(r)), max_size=1).map(
        lambda drop: {k: v for k, v in r.items()
                      if k == 'resource_type' or k not in drop}))
# Blazar's own types (not run in this cloud) and ones nobody runs.
_foreign = st.fixed_dictionaries({
    'resource_type': st.one_of(
        st.sampled_from(['physical:host', 'flavor:instance',
                         'virtual:floatingip', 'nope', '']),
        _junk),
    'min': _either(st.integers(0, 3)), 'max': _either(st.integers(0, 3)),
    'hypervisor_properties': _either(st.just('')),
    'resource_properties': _either(st.just('')),
})
_names = st.one_of(st.text(min_size=1, max_size=10),
                   st.text(min_size=79, max_size=82),
                   st.sampled_from(['\U0001F600', 'a\x00b', ' ']), _junk)
_ids = st.one_of(
    st.just('LEASE'), st.uuids().map(str), st.text(max_size=8),
    st.text(min_size=36, max_size=300),
    st.sampled_from(['\U0001F600', '..', '%00', 'a' * 37]))
_lease_bodies = st.fixed_dictionaries({}, optional={
    'name': _names, 'start_date': _dates, 'end_date': _dates,
    'start': _dates, 'end': _dates, 'before_end_date': _dates,
    'reservations': st.one_of(
        st.lists(st.one_of(_reservation, _foreign), max_size=2), _junk),
    'events': st.one_of(st.just([]), st.lists(
        st.fixed_dictionaries({'event_type': st.text(max_size=12),
                               'time': _dates}), max_size=1), _junk),
    'status': st.sampled_from(['ACTIVE', 'ERROR']),
    'project_id': st.text(max_size=8),
    'id': st.text(max_size=40),
})
_raw = st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b'{"name": ', b'[' * 100000 + b']' * 100000,
                     b'{"reservations": [' + b'{"a":' * 60 + b'1' +
                     b'}' * 60 + b']}', b'null', b'"x"', b'[]',
                     b'{"reservations": [{"resource_type": null}]}']))
_requests = st.tuples(
    st.sampled_from(['GET', 'POST', 'PUT', 'DELETE']), _ids,
    st.one_of(_lease_bodies, _lease_bodies, _raw))
_bodies = st.fixed_dictionaries({
    'name': st.text(min_size=1, max_size=10),
    'start_date': _dates,
    'end_date': _dates,
    'reservations': st.lists(_reservation, min_size=1, max_size=2),
    'events': st.just([]),
})


class FuzzTestCase(test_host_plugin.HostLeaseTestCase,
                   base.BlazarAPITestCase):

    def _post(self, path, body, method='POST'):
        session, url = self.api
        return session.request(url + path, method, json=body,
                               raise_exc=False)

    def _leases(self):
        return self._post('/leases', None, 'GET').json()['leases']

    def _clear(self):
        for lease in self._leases():
            self.assertLess(self._post('/leases/%s' % lease['id'], None,
                                       'DELETE').status_code, 500)


class LeaseFuzz(FuzzTestCase):

    @hypothesis.settings(max_examples=EXAMPLES, deadline=None,
                         suppress_health_check=list(hypothesis.HealthCheck),
                         database=None)
    @hypothesis.given(body=_bodies)
    def test_no_creation_body_is_a_server_error(self, body):
        try:
            response = self._post('/leases', body)
            self.assertLess(response.status_code, 500,
                            '%s -> %s' % (body, response.text))
            if response.status_code >= 400:
                # A refused lease leaves nothing.
                self.assertEqual([], self._leases())
                self.assertEqual([], db_claims.list_consumers(self.context))
        finally:
            self._clear()

    @hypothesis.settings(max_examples=EXAMPLES, deadline=None,
                         suppress_health_check=list(hypothesis.HealthCheck),
                         database=None)
    @hypothesis.given(kind=st.sampled_from(['instance', 'host']),
                      change=st.dictionaries(
                          st.sampled_from(['amount', 'vcpus', 'memory_mb',
                                           'affinity', 'host_flavor',
                                           'pcloud_id', 'required_traits',
                                           'timeout', 'lease_type']),
                          _junk, max_size=2),
                      dates=st.fixed_dictionaries({}, optional={
                          'start_date': _dates, 'end_date': _dates}))
    def test_no_update_body_is_a_server_error(self, kind, change, dates):
        good = (self.reservation(1) if kind == 'instance'
                else self.hosts_res(1))
        try:
            created = self._post('/leases', {
                'name': 'fuzzed', 'start_date': _date(60),
                'end_date': _date(120), 'reservations': [good],
                'events': []})
            self.assertEqual(201, created.status_code, created.text)
            lease = created.json()['lease']
            rid = lease['reservations'][0]['id']
            body = dict(dates, reservations=[dict(change, id=rid)])
            before = db_claims.get_claims(self.context, rid)
            response = self._post('/leases/%s' % lease['id'], body, 'PUT')
            self.assertLess(response.status_code, 500,
                            '%s -> %s' % (body, response.text))
            if response.status_code >= 400:
                # A refused update changes nothing.
                self.assertEqual(before,
                                 db_claims.get_claims(self.context, rid))
        finally:
            self._clear()


class LeaseRoutesFuzz(FuzzTestCase):

    def test_no_lease_request_is_a_server_error_and_leases_go_on(self):
        session, url = self.api
        lease = self.create_lease(self.reservation(1), start=60, end=120)

        @hypothesis.settings(max_examples=ROUTE_EXAMPLES, deadline=None,
                             suppress_health_check=list(
                                 hypothesis.HealthCheck),
                             database=None)
        @hypothesis.given(request=_requests)
        def one(request):
            method, lease_id, body = request
            lease_id = lease['id'] if lease_id == 'LEASE' else lease_id
            path = '/leases' if method == 'POST' else '/leases/%s' % (
                urllib.parse.quote(lease_id, safe=''))
            kwargs = {'headers': {'Content-Type': 'application/json'}}
            if isinstance(body, bytes):
                kwargs['data'] = body
            elif method in ('POST', 'PUT'):
                kwargs['data'] = json.dumps(body).encode()
            response = session.request(url + path, method,
                                       raise_exc=False, **kwargs)
            self.assertLess(response.status_code, 500,
                            '%s %s %r -> %s' % (method, path, body,
                                                response.text))
            for other in self._leases():
                if other['id'] != lease['id']:
                    self._post('/leases/%s' % other['id'], None, 'DELETE')

        one()
        # The events of every lease still run: a new lease starts and
        # ends on time (and the fuzzed one is there, or gone by a DELETE).
        for other in self._leases():
            self.assertNotIn(other['status'], ('ERROR',) + tuple(
                status.lease.TRANSITIONAL), other)
        fresh = self.create_lease(self.reservation(1), start=1, end=2)
        timeutils.advance_time_delta(datetime.timedelta(minutes=1))
        self.manager._process_events()
        self.assertEqual(status.lease.ACTIVE,
                         blazar_db.lease_get(fresh['id'])['status'])
        timeutils.advance_time_delta(datetime.timedelta(minutes=1))
        self.manager._process_events()
        self.assertEqual(status.lease.TERMINATED,
                         blazar_db.lease_get(fresh['id'])['status'])
