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
"""A lease's state as seeds/001 names it, with its terms, through the

Pcloud API in Blazar's real API (GET /v1/pcloud-leases): INACTIVE before
a SCHEDULE lease starts, IN-PROGRESS while a BEST-EFFORT one waits and
TIMEDOUT once it gave up, where Blazar shows ACTIVE for both.
"""

import datetime

from blazar import context as blazar_context
from blazar.utils import trusts
import fixtures
from oslo_utils import timeutils

from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin
from pcloud_plugin.tests.functional.blazar import test_lease_guard


class LeaseStatesTests(test_lease_guard.LeaseGuardTestCase):

    hold_everything = test_host_plugin.BestEffortTests.hold_everything

    def shown(self, lease_id, code=200):
        response = self.call('GET', '/pcloud-leases/%s' % lease_id)
        self.assertEqual(code, response.status_code, response.text)
        return response.json().get('lease')

    def test_a_schedule_lease_is_inactive_then_active_with_its_terms(self):
        lease = self.create_lease(self.hosts_res(2), start=60, end=120)
        rid = lease['reservations'][0]['id']
        shown = self.shown(lease['id'])
        self.assertEqual('INACTIVE', shown['state'])
        (reservation,) = shown['reservations']
        self.assertEqual(
            {'id': rid, 'resource_type': 'pcloud:host', 'state': 'INACTIVE',
             'amount': 2, 'host_flavor': 'big',
             'pcloud_id': test_host_plugin.PCLOUD, 'lease_type': 'SCHEDULE',
             'timeout': None, 'availability_zone': None,
             'required_traits': None, 'deadline': None},
            {k: reservation[k] for k in (
                'id', 'resource_type', 'state', 'amount', 'host_flavor',
                'pcloud_id', 'lease_type', 'timeout', 'availability_zone',
                'required_traits', 'deadline')})
        # The hosts by their names in the pcloud, not the cloud's.
        self.assertEqual(2, len(reservation['hosts']))
        self.assertFalse({'cn1', 'cn2'} & set(reservation['hosts']))
        self.start(lease['id'])
        self.assertEqual('ACTIVE', self.shown(lease['id'])['state'])

    def test_best_effort_is_in_progress_while_it_waits_then_timedout(self):
        holder = self.hold_everything(end=120)
        lease = self.create_lease(
            self.hosts_res(1, 'BEST-EFFORT', timeout=5), start=0, end=180)
        self.assertEqual('ACTIVE', self.start(lease['id'])['status'])
        shown = self.shown(lease['id'])
        self.assertEqual('IN-PROGRESS', shown['state'])
        (reservation,) = shown['reservations']
        self.assertEqual(('IN-PROGRESS', 'BEST-EFFORT', 5, []), (
            reservation['state'], reservation['lease_type'],
            reservation['timeout'], reservation['hosts']))
        self.assertEqual(self.row(lease)['deadline'].isoformat(),
                         reservation['deadline'])
        timeutils.advance_time_delta(datetime.timedelta(minutes=6))
        self.host_plugin.retry_waiting()
        shown = self.shown(lease['id'])
        self.assertEqual(('TIMEDOUT', 'TIMEDOUT', None), (
            shown['state'], shown['reservations'][0]['state'],
            shown['reservations'][0]['deadline']))
        # The holder's lease, like any of the project's, is listed.
        response = self.call('GET', '/pcloud-leases')
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual({holder['id']: 'ACTIVE', lease['id']: 'TIMEDOUT'},
                         {found['id']: found['state']
                          for found in response.json()['leases']})

    def test_blazars_own_lease_answers_carry_our_terms_and_states(self):
        # openstack reservation lease show|list: Blazar's routes, which
        # had none of a whole-host reservation's terms.
        self.hold_everything(end=120)
        lease = self.create_lease(
            self.hosts_res(1, 'BEST-EFFORT', timeout=5), start=0, end=180)
        slots = self.create_lease(self.reservation(2, vcpus=1), start=60,
                                  end=120)
        self.start(lease['id'])
        response = self.call('GET', '/leases/%s' % lease['id'])
        self.assertEqual(200, response.status_code, response.text)
        shown = response.json()['lease']
        (reservation,) = shown['reservations']
        self.assertEqual(
            ('ACTIVE', 'active', 'IN-PROGRESS', 1, 'big', 'BEST-EFFORT', 5,
             test_host_plugin.PCLOUD),
            (shown['status'], reservation['status'], reservation['state'],
             reservation['amount'], reservation['host_flavor'],
             reservation['lease_type'], reservation['timeout'],
             reservation['pcloud_id']))
        response = self.call('GET', '/leases')
        self.assertEqual(200, response.status_code, response.text)
        states = {r['id']: (r['resource_type'], r.get('state'))
                  for found in response.json()['leases']
                  for r in found['reservations']}
        self.assertEqual(('pcloud:host', 'IN-PROGRESS'),
                         states[reservation['id']])
        self.assertEqual(('virtual:instance', 'INACTIVE'),
                         states[slots['reservations'][0]['id']])

    def test_instance_slots_show_their_terms_and_state(self):
        lease = self.create_lease(self.reservation(2, vcpus=1), start=60,
                                  end=120)
        shown = self.shown(lease['id'])
        (reservation,) = shown['reservations']
        self.assertEqual(('INACTIVE', 'virtual:instance', 2, 1, None),
                         (shown['state'], reservation['resource_type'],
                          reservation['amount'], reservation['vcpus'],
                          reservation['affinity']))
        self.assertEqual(lease['reservations'][0]['id'],
                         reservation['flavor_id'])

    def test_no_such_lease_or_another_projects_is_404(self):
        self.shown('no-such-lease', 404)
        others = blazar_context.BlazarContext(
            user_id=base.USER, project_id=test_host_plugin.OTHER_PROJECT,
            service_catalog=base.CATALOG)
        with fixtures.MockPatchObject(
                trusts, 'create_ctx_from_trust',
                side_effect=lambda trust_id: others):
            lease = self.create_lease(self.reservation(1), start=60,
                                      end=120)
        self.shown(lease['id'], 404)
        response = self.call('GET', '/pcloud-leases')
        self.assertEqual([], response.json()['leases'])
        # An admin's list of another project's needs the admin rule.
        response = self.call('GET', '/pcloud-leases?project_id=%s'
                             % test_host_plugin.OTHER_PROJECT)
        self.assertEqual(403, response.status_code, response.text)
