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
"""Availability (reservations.offerings.host_availability, free_counts)

against host_windows.free_hosts asked hour by hour.
"""

import datetime
import json
import os
import random
import re
import types

import hypothesis
from hypothesis import strategies as st
from oslo_serialization import jsonutils
import sqlalchemy as sa
import yaml

from pcloud_plugin.capacity import host_windows
from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import models
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import snapshots as db_snapshots
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import offerings
from pcloud_plugin.tests import base

T0 = datetime.datetime(2031, 1, 1, 9, 0)
HOUR = datetime.timedelta(hours=1)
SECOND = datetime.timedelta(seconds=1)
PARAMS = {'host_flavor': 'big', 'availability_zone': None,
          'required_traits': None}
API_REF = os.path.abspath(os.path.join(
    os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir,
    'api-ref', 'source'))


def brute_force(busy, start, hours, order):
    """free_hosts, asked for each hour."""
    return [len(host_windows.free_hosts(busy, start + i * HOUR,
                                        start + (i + 1) * HOUR, order))
            for i in range(hours)]


# Offsets from the first hour's start, in seconds: often on an hour or a
# minute, where an off-by-one would show.
_OFFSETS = st.one_of(st.integers(-48, 96).map(lambda h: h * 3600),
                     st.integers(-48 * 60, 96 * 60).map(lambda m: m * 60),
                     st.integers(-48 * 3600, 96 * 3600))
_LENGTHS = st.one_of(st.just(None),  # open-ended
                     st.integers(0, 72).map(lambda h: h * 3600),
                     st.integers(0, 72 * 3600))


@st.composite
def _intervals(draw, start):
    found = []
    for offset, length in draw(st.lists(st.tuples(_OFFSETS, _LENGTHS),
                                        max_size=6)):
        i_start = start + offset * SECOND
        found.append((i_start, window_mod.FOREVER if length is None
                      else i_start + length * SECOND))
    return sorted(found)


@st.composite
def _timelines(draw):
    """(busy, start, hours, order): some hosts of ``order`` absent from

    busy, and a host of busy that ``order`` leaves out.
    """
    start = T0 + draw(st.integers(0, 3600 * 24)) * SECOND
    hosts = ['h%d' % n for n in range(draw(st.integers(0, 8)))]
    busy = {h: draw(_intervals(start)) for h in hosts
            if draw(st.booleans()) or draw(st.booleans())}
    busy['not-eligible'] = [(start - HOUR, window_mod.FOREVER)]
    order = draw(st.permutations(hosts))
    return busy, start, draw(st.integers(1, 80)), order


class FreeCountsTest(base.TestCase):

    @hypothesis.settings(max_examples=400, deadline=None, database=None,
                         derandomize=True)
    @hypothesis.given(timeline=_timelines())
    def test_as_free_hosts_hour_by_hour(self, timeline):
        busy, start, hours, order = timeline
        self.assertEqual(brute_force(busy, start, hours, order),
                         offerings.free_counts(busy, start, hours, order))

    def test_hour_boundaries(self):
        busy = {'a': [(T0 + HOUR, T0 + 2 * HOUR)],
                'b': [(T0 + 2 * HOUR - SECOND, T0 + 2 * HOUR + SECOND)],
                'c': [(T0 + 4 * HOUR, window_mod.FOREVER)]}
        # a: hour 1 only; b: hours 1 and 2 (a second of each); c: from 4.
        self.assertEqual([3, 1, 2, 3, 2, 2],
                         offerings.free_counts(busy, T0, 6, 'abc'))
        self.assertEqual([], offerings.free_counts(busy, T0, 0, 'abc'))
        self.assertEqual([0, 0], offerings.free_counts({}, T0, 2, []))


def _agg(name, metadata, hosts):
    return types.SimpleNamespace(name=name, uuid=name, metadata=metadata,
                                 hosts=list(hosts), availability_zone=None)


def _pools(names):
    pool = _agg('pcloud-pool-big', dict(
        codec.pool_metadata(codec.HostFlavor('big', '', 1))), names)
    return host_requests.Pools([pool], 'nova')


class HostAvailabilityTest(base.LedgerTestCase):

    def availability(self, names, start, hours):
        return offerings.host_availability(
            self.context, db_snapshots.load_forest(self.context),
            _pools(names), PARAMS, start, hours)

    def test_ledger_claims_hour_by_hour(self):
        rng = random.Random(3)
        names = ['h%d' % n for n in range(6)]
        for name in names:
            db_providers.create_provider(self.context, 'rp-' + name, name)
            db_providers.set_inventories(self.context, 'rp-' + name,
                                         {'VCPU': Inventory(8)})
        for n in range(30):
            begins = T0 + rng.randrange(-600, 3000) * 60 * SECOND + (
                rng.choice((0, 0, 17)) * SECOND)
            ends = (window_mod.FOREVER if rng.random() < 0.1
                    else begins + rng.randint(1, 600) * 60 * SECOND)
            try:
                host_db.claim_hosts(self.context, 'lease-%d' % n,
                                    ['rp-' + rng.choice(names)], begins,
                                    ends)
            except exception.HostBusy:
                pass
        order = ['rp-' + name for name in names]
        for start, hours in ((T0, 48), (T0 + 17 * 60 * SECOND, 30),
                             (T0 + 20 * HOUR, 1)):
            every = host_db.busy_intervals(self.context, order, start)
            self.assertEqual(
                (6, brute_force(every, start, hours, order)),
                self.availability(names, start, hours))
        # Hosts out of the pool are none of them.
        start = T0 + 100 * HOUR
        every = host_db.busy_intervals(self.context, order[:4], start)
        self.assertEqual((4, brute_force(every, start, 3, order[:4])),
                         self.availability(names[:4], start, 3))

    def test_a_thousand_hosts_for_ninety_days(self):
        """1,000 hosts x 2,160 hours, 20,000 claims, answers."""
        rng = random.Random(1000)
        names = ['cn%04d' % n for n in range(1000)]
        # One made as the ledger makes them, the others written at once.
        db_providers.create_provider(self.context, 'rp-' + names[0],
                                     names[0])
        db_providers.set_inventories(self.context, 'rp-' + names[0],
                                     {'VCPU': Inventory(8)})
        rp = models.ResourceProvider.__table__
        inv = models.Inventory.__table__
        alloc = models.Allocation.__table__
        with self.engine.begin() as conn:
            (first,) = conn.execute(sa.select(rp.c.id)).one()
            (template,) = [dict(r) for r in conn.execute(
                sa.select(inv)).mappings()]
            conn.execute(rp.insert(), [
                dict(id=first + n, uuid='rp-' + name, name=name,
                     generation=0, can_host=0, root_provider_id=first + n,
                     created_at=T0)
                for n, name in enumerate(names) if n])
            del template['id']
            conn.execute(inv.insert(), [
                dict(template, resource_provider_id=first + n)
                for n in range(1, len(names))])
            claims = []
            for n in range(len(names)):
                for k in range(20):
                    begins = T0 + rng.randrange(-24 * 60, 90 * 24 * 60) * (
                        60 * SECOND)
                    claims.append(dict(
                        resource_provider_id=first + n,
                        resource_class_id=template['resource_class_id'],
                        consumer_id='c-%d-%d' % (n, k), used=8,
                        start_time=begins,
                        end_time=begins + rng.randint(1, 48 * 60) * (
                            60 * SECOND),
                        created_at=T0))
            conn.execute(alloc.insert(), claims)
        total, free = self.availability(names, T0, offerings.MAX_HOURS)
        self.assertEqual(1000, total)
        self.assertEqual(offerings.MAX_HOURS, len(free))
        order = ['rp-' + name for name in names]
        busy = host_db.busy_intervals(self.context, order, T0)
        for hour in range(0, offerings.MAX_HOURS, 97):
            moment = T0 + hour * HOUR
            self.assertEqual(len(host_windows.free_hosts(
                busy, moment, moment + HOUR, order)), free[hour])
        self.assertTrue(0 < min(free) < max(free) <= 1000)


class APIRefExampleTest(base.TestCase):
    """availability.inc's hand-written example is what the code answers,

    and its tables name every field.
    """

    def setUp(self):
        super().setUp()
        with open(os.path.join(API_REF, 'availability.inc')) as f:
            # The whole hosts' section.
            self.section = f.read().split('Free instance slots')[0]
        with open(os.path.join(API_REF, 'parameters.yaml')) as f:
            self.parameters = yaml.safe_load(f)
        example = self.section.split('Response example')[-1]
        self.query = re.search(r'GET (\S+)', example).group(1)
        self.example = json.loads(example[example.index('{'):])

    def test_the_example_is_what_the_code_answers(self):
        start = datetime.datetime(2031, 1, 1, 10)
        self.assertIn('start=2031-01-01T10:00Z&hours=4', self.query)
        # One host leased from 11:00 to 12:30, another from 12:00 to 13:00.
        busy = {'a': [(start + HOUR, start + 2.5 * HOUR)],
                'b': [(start + 2 * HOUR, start + 3 * HOUR)]}
        answer = {'availability': {
            'host_flavor': 'big', 'start': start, 'step_minutes': 60,
            'hosts': 3,
            'free': offerings.free_counts(busy, start, 4, 'abc')}}
        self.assertEqual(self.example, json.loads(jsonutils.dumps(answer)))

    def test_every_field_is_in_the_parameter_tables(self):
        request, response = [
            dict(re.findall(r'^   - (\w+): (\w+)$', table, re.M))
            for table in self.section.split(
                '.. rest_parameters:: parameters.yaml')[1:]]
        self.assertEqual(
            ['availability'] + sorted(self.example['availability']),
            sorted(response))
        self.assertEqual(['availability_zone', 'host_flavor', 'hours',
                          'required_traits', 'start'], sorted(request))
        for names, where in ((request, 'query'), (response, 'body')):
            for name in names.values():
                self.assertEqual(where, self.parameters[name]['in'], name)
