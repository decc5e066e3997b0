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
"""Whole-host claims, busy intervals and host reservation records."""

import datetime
import json

import sqlalchemy as sa

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import models
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception
from pcloud_plugin.tests import base

T0 = datetime.datetime(2030, 1, 1)


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class WholeHostClaimTests(base.LedgerTestCase):

    def setUp(self):
        super().setUp()
        self.h1 = self._provider('h1', VCPU=Inventory(8, max_unit=4,
                                                      allocation_ratio=2.0),
                                 DISK_GB=Inventory(100))
        self.h2 = self._provider('h2', DISK_GB=Inventory(100))
        self.numa = self._provider('h2-numa0', parent=self.h2,
                                   VCPU=Inventory(4))

    def _provider(self, name, parent=None, **inventories):
        uuid = 'uuid-' + name
        db_providers.create_provider(self.context, uuid, name,
                                     parent_uuid=parent)
        if inventories:
            db_providers.set_inventories(self.context, uuid, inventories)
        return uuid

    def test_claims_every_class_of_the_tree_in_full(self):
        host_db.claim_hosts(self.context, 'r1', [self.h1, self.h2],
                            hours(0), hours(2))
        self.assertEqual({self.h1: {'VCPU': 16, 'DISK_GB': 100},
                          self.h2: {'DISK_GB': 100},
                          self.numa: {'VCPU': 4}},
                         db_claims.get_claims(self.context, 'r1')['amounts'])
        # Nothing else fits there, however small...
        self.assertRaises(exception.CapacityExceeded, db_claims.claim,
                          self.context, 'small', {self.numa: {'VCPU': 1}},
                          hours(1), hours(3))
        # ...but right after the window it does.
        db_claims.claim(self.context, 'small', {self.numa: {'VCPU': 1}},
                        hours(2), hours(3))

    def test_anything_in_the_way_refuses_the_whole_claim(self):
        db_claims.claim(self.context, 'small', {self.numa: {'VCPU': 1}},
                        hours(1), hours(3))
        e = self.assertRaises(exception.HostBusy, host_db.claim_hosts,
                              self.context, 'r1', [self.h1, self.h2],
                              hours(0), hours(2))
        self.assertEqual('h2', e.kwargs['host'])
        self.assertEqual('small', e.kwargs['consumer'])
        self.assertIsNone(db_claims.get_claims(self.context, 'r1'))
        host_db.claim_hosts(self.context, 'r1', [self.h1], hours(0), None)
        self.assertIsNone(db_claims.get_claims(self.context, 'r1')['end'])
        self.assertRaises(exception.ConsumerExists, host_db.claim_hosts,
                          self.context, 'r1', [self.h1], hours(0), hours(1))

    def test_replace_keeps_the_old_claim_when_the_new_one_fails(self):
        host_db.claim_hosts(self.context, 'r1', [self.h1], hours(0),
                            hours(2))
        host_db.claim_hosts(self.context, 'r2', [self.h2], hours(3),
                            hours(5))
        before = db_claims.get_claims(self.context, 'r1')
        self.assertRaises(exception.HostBusy, host_db.claim_hosts,
                          self.context, 'r1', [self.h1, self.h2], hours(0),
                          hours(4), replace=True)
        self.assertEqual(before['amounts'],
                         db_claims.get_claims(self.context, 'r1')['amounts'])
        # Its own claim is never in its way.
        host_db.claim_hosts(self.context, 'r1', [self.h1, self.h2],
                            hours(0), hours(3), replace=True)
        self.assertEqual((hours(0), hours(3)), tuple(
            db_claims.get_claims(self.context, 'r1')[k]
            for k in ('start', 'end')))

    def test_bad_claims(self):
        self.assertRaises(exception.Invalid, host_db.claim_hosts,
                          self.context, 'r1', [], hours(0), hours(1))
        self.assertRaises(exception.Invalid, host_db.claim_hosts,
                          self.context, 'r1', [self.numa], hours(0),
                          hours(1))
        self.assertRaises(exception.ResourceProviderNotFound,
                          host_db.claim_hosts, self.context, 'r1',
                          ['uuid-nowhere'], hours(0), hours(1))
        empty = self._provider('empty')
        self.assertRaises(exception.Invalid, host_db.claim_hosts,
                          self.context, 'r1', [empty], hours(0), hours(1))
        self.assertIsNone(db_claims.get_claims(self.context, 'r1'))

    def test_busy_intervals(self):
        host_db.claim_hosts(self.context, 'r1', [self.h1], hours(0),
                            hours(2))
        db_claims.claim(self.context, 'small', {self.numa: {'VCPU': 1}},
                        hours(4), None)
        self.assertEqual(
            {self.h1: [(hours(0), hours(2))],
             self.h2: [(hours(4), window_mod.FOREVER)]},
            host_db.busy_intervals(self.context, [self.h1, self.h2],
                                   hours(1)))
        self.assertEqual(
            {self.h1: [], self.h2: []},
            host_db.busy_intervals(self.context, [self.h1, self.h2],
                                   hours(2), before=hours(4)))
        self.assertEqual(
            {self.h1: []},
            host_db.busy_intervals(self.context, [self.h1], hours(0),
                                   exclude_consumer='r1'))


class RecordTests(base.LedgerTestCase):

    def values(self, **changes):
        values = {'lease_id': 'lease-1', 'project_id': 'p', 'pcloud_id':
                  'pc', 'host_flavor': 'big', 'amount': 1,
                  'lease_type': 'SCHEDULE', 'start_time': hours(0),
                  'end_time': hours(1), 'state': host_db.INACTIVE}
        values.update(changes)
        return values

    def test_lifecycle(self):
        host = {'host_uuid': 'u1', 'host_name': 'h1', 'service_host': 'h1',
                'name': 'lease-1'}
        host_db.create(self.context, 'r1', self.values(), [host])
        row = host_db.get(self.context, 'r1')
        self.assertEqual((host_db.INACTIVE, [dict(host, joined=False)]),
                         (row['state'], row['hosts']))
        host_db.set_joined(self.context, 'r1', 'u1', True)
        self.assertEqual({'h1'}, host_db.joined_service_hosts(self.context))
        host_db.update(self.context, 'r1', state=host_db.ACTIVE)
        self.assertEqual(['r1'], [r['reservation_id'] for r in
                                  host_db.list_reservations(
                                      self.context, states=host_db.HOLDING)])
        self.assertRaises(exception.Invalid, host_db.update, self.context,
                          'r1', state='SLEEPING')
        self.assertRaises(exception.Invalid, host_db.update, self.context,
                          'r1', colour='red')
        self.assertRaises(host_db.HostReservationNotFound, host_db.update,
                          self.context, 'r2', state=host_db.ENDED)
        self.assertRaises(exception.Conflict, host_db.create, self.context,
                          'r1', self.values())
        host_db.update(self.context, 'r1', hosts=[], state=host_db.ENDED)
        self.assertEqual([], host_db.get(self.context, 'r1')['hosts'])
        self.assertEqual(set(), host_db.joined_service_hosts(self.context))

    def test_fields_messages_list_and_delete(self):
        host = {'host_uuid': 'u1', 'host_name': 'h1', 'service_host': 's1',
                'name': 'lease-1', 'joined': 1, 'extra': 'dropped'}
        host_db.create(self.context, 'r1', self.values(
            migrations=[{'server': 's', 'host': 'h1'}]), [host])
        host_db.create(self.context, 'r2', self.values(
            lease_id='lease-2', pcloud_id='pc2', end_time=hours(5),
            state=host_db.ENDED))
        row = host_db.get(self.context, 'r1')
        self.assertIsNotNone(row.pop('created_at'))
        self.assertEqual(dict(self.values(), reservation_id='r1',
                              availability_zone=None, required_traits=None,
                              timeout=None, deadline=None, aggregate_id=None,
                              migrations=[{'server': 's', 'host': 'h1'}],
                              hand_over=None,
                              hosts=[{'host_uuid': 'u1', 'host_name': 'h1',
                                      'service_host': 's1',
                                      'name': 'lease-1', 'joined': True}],
                              **host_db.TERMS),
                         row)
        self.assertEqual([], host_db.get(self.context, 'r2')['migrations'])
        host_db.update(self.context, 'r2', migrations=[{'server': 't'}])
        self.assertEqual([{'server': 't'}],
                         host_db.get(self.context, 'r2')['migrations'])

        def listed(**filters):
            return [r['reservation_id'] for r in
                    host_db.list_reservations(self.context, **filters)]

        self.assertEqual(['r1', 'r2'], listed())
        self.assertEqual(['r2'], listed(lease_id='lease-2'))
        self.assertEqual(['r1'], listed(reservation_id='r1'))
        self.assertEqual(['r1'], listed(states=host_db.HOLDING))
        self.assertEqual(['r2'], listed(ending_after=hours(1)))
        self.assertEqual(['r2'], listed(pcloud_id='pc2'))

        e = self.assertRaises(exception.Invalid, host_db.create,
                              self.context, 'r3', self.values(state=None))
        self.assertEqual('Invalid input: unknown state None', str(e))
        # Unknown fields are named before a bad state.
        e = self.assertRaises(exception.Invalid, host_db.update,
                              self.context, 'r1', colour='red',
                              state='SLEEPING')
        self.assertEqual('Invalid input: unknown fields colour', str(e))
        e = self.assertRaises(exception.Invalid, host_db.update,
                              self.context, 'r1', state='SLEEPING')
        self.assertEqual("Invalid input: unknown state 'SLEEPING'", str(e))
        e = self.assertRaises(host_db.HostReservationNotFound, host_db.get,
                              self.context, 'r3')
        self.assertEqual('No host reservation r3.', str(e))
        e = self.assertRaises(exception.Conflict, host_db.create,
                              self.context, 'r2', self.values())
        self.assertEqual('Conflict: host reservation r2 already exists',
                         str(e))

        host_db.delete(self.context, 'r1')
        self.assertEqual(['r2'], listed())
        self.assertRaises(host_db.HostReservationNotFound, host_db.get,
                          self.context, 'r1')

    def test_host_terms_are_one_column_each_a_key_of_the_row(self):
        terms = {'vcpus': 32, 'memory_mb': 0, 'disk_gb': 100,
                 'hypervisor_properties': '["=", "$cpu_arch", "x86_64"]',
                 'resource_properties': '',
                 'capabilities': {'cpu_arch': 's== x86_64'},
                 'aggregate_metadata': {'ssd': 'true'}}
        host_db.create(self.context, 'r1', self.values(**terms))
        row = host_db.get(self.context, 'r1')
        self.assertEqual(terms, {t: row[t] for t in host_db.TERMS})
        with db_api.reader(self.context) as session:
            stored = session.execute(sa.select(
                models.HostReservation.host_terms)).scalar_one()
        # Only what asks something is written.
        self.assertEqual({'vcpus': 32, 'disk_gb': 100,
                          'hypervisor_properties': terms[
                              'hypervisor_properties'],
                          'capabilities': {'cpu_arch': 's== x86_64'},
                          'aggregate_metadata': {'ssd': 'true'}},
                         json.loads(stored))
        # Other fields change, the terms stay.
        host_db.update(self.context, 'r1', amount=3)
        row = host_db.get(self.context, 'r1')
        self.assertEqual((3, terms),
                         (row['amount'], {t: row[t] for t in host_db.TERMS}))
        # They are written together: one left out is refused, not lost.
        e = self.assertRaises(exception.Invalid, host_db.update,
                              self.context, 'r1', vcpus=8)
        self.assertIn('the host terms are written together', str(e))
        host_db.update(self.context, 'r1', **host_db.TERMS)
        row = host_db.get(self.context, 'r1')
        self.assertEqual(host_db.TERMS, {t: row[t] for t in host_db.TERMS})
        with db_api.reader(self.context) as session:
            self.assertIsNone(session.execute(sa.select(
                models.HostReservation.host_terms)).scalar_one())

    def test_terms_written_before_a_term_was_added_ask_nothing_of_it(self):
        host_db.create(self.context, 'r1', self.values())
        with db_api.writer(self.context) as session:
            # A row of before aggregate_metadata: no key for it.
            session.execute(sa.update(models.HostReservation).values(
                host_terms=json.dumps({'vcpus': 8})))
        row = host_db.get(self.context, 'r1')
        self.assertEqual((8, {}), (row['vcpus'], row['aggregate_metadata']))
