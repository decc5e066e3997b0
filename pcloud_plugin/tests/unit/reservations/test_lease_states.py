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
"""A lease's state from its reservations' (seeds/001), and the lessee's

view of our records.
"""

import datetime

from pcloud_plugin.reservations import lease_states
from pcloud_plugin.tests import base

T0 = datetime.datetime(2026, 1, 1, 12, 0)
HOUR = datetime.timedelta(hours=1)


def _host_row(rid, state, lease_id='L1', start=T0, deadline=None):
    return {'reservation_id': rid, 'lease_id': lease_id, 'project_id': 'p',
            'state': state, 'start_time': start, 'end_time': start + HOUR,
            'deadline': deadline, 'amount': 1, 'host_flavor': 'big',
            'pcloud_id': 'pc', 'lease_type': 'BEST-EFFORT', 'timeout': 10,
            'availability_zone': None, 'required_traits': None,
            'vcpus': 32, 'memory_mb': 0, 'disk_gb': 0,
            'hypervisor_properties': '', 'resource_properties': '',
            'capabilities': {'cpu_arch': 'x86_64'},
            'aggregate_metadata': {'disk': '<or> ssd <or> nvme'},
            'hosts': [{'name': 'lease-b-2', 'host_name': 'cn2'},
                      {'name': 'lease-b-1', 'host_name': 'cn1'}],
            'hand_over': None}


def _instance_row(rid, state, lease_id='L1', start=T0):
    return {'reservation_id': rid, 'lease_id': lease_id, 'project_id': 'p',
            'state': state, 'start_time': start, 'end_time': start + HOUR,
            'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 1, 'amount': 3,
            'affinity': None, 'resource_properties': '',
            'availability_zone': None}


class LeaseStateTests(base.TestCase):

    def test_a_reservation_that_gave_up_or_waits_names_the_lease(self):
        S = lease_states
        self.assertEqual(S.TIMEDOUT, S.lease_state(
            [S.ACTIVE, S.TIMEDOUT, S.IN_PROGRESS]))
        self.assertEqual(S.IN_PROGRESS, S.lease_state([S.ACTIVE,
                                                       S.IN_PROGRESS]))
        self.assertEqual(S.ACTIVE, S.lease_state([S.ACTIVE, S.ENDED]))
        self.assertEqual(S.ACTIVE, S.lease_state([S.ACTIVE, S.INACTIVE]))
        self.assertEqual(S.ENDED, S.lease_state([S.ENDED, S.ENDED]))
        self.assertEqual(S.INACTIVE, S.lease_state([S.INACTIVE]))

    def test_the_lessee_sees_terms_and_pcloud_names_not_host_names(self):
        deadline = T0 + datetime.timedelta(minutes=10)
        (lease,) = lease_states.leases(
            [_host_row('h', lease_states.IN_PROGRESS, deadline=deadline)],
            [_instance_row('i', 'reserved', start=T0 - HOUR)]).values()
        self.assertEqual(('L1', lease_states.IN_PROGRESS,
                          (T0 - HOUR).isoformat(), (T0 + HOUR).isoformat()),
                         (lease['id'], lease['state'], lease['start_date'],
                          lease['end_date']))
        instance, host = lease['reservations']
        self.assertEqual(('virtual:instance', 'INACTIVE', 3, 'i'),
                         (instance['resource_type'], instance['state'],
                          instance['amount'], instance['flavor_id']))
        self.assertEqual(['lease-b-1', 'lease-b-2'], host['hosts'])
        self.assertEqual((deadline.isoformat(), 10, 'BEST-EFFORT'),
                         (host['deadline'], host['timeout'],
                          host['lease_type']))
        # seeds/001's host terms it was given.
        self.assertEqual((32, 0, '', {'cpu_arch': 'x86_64'},
                          {'disk': '<or> ssd <or> nvme'}),
                         (host['vcpus'], host['disk_gb'],
                          host['hypervisor_properties'],
                          host['capabilities'], host['aggregate_metadata']))
        self.assertNotIn('cn1', str(lease))

    def test_a_deadline_is_shown_only_while_waiting(self):
        row = _host_row('h', lease_states.TIMEDOUT, deadline=T0)
        self.assertIsNone(lease_states.host_reservation(row)['deadline'])
