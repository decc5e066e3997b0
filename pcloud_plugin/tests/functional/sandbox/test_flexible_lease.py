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

"""A flexible lease in the sandbox (issue 36): one tenant's "every slot

of this host for an hour, the earliest you can" races another tenant's
fixed booking of the same hour through blazar-api and blazar-manager.
Exactly one holds the hour and boots into it; the other is refused
(the fixed one) or booked for the hour after (the flexible one), whose
boot is refused until then.
"""

import datetime
import json
import threading

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute
HOUR = datetime.timedelta(hours=1)
# The sandbox projects' Nova instance quota bounds a reservation's slots.
QUOTA = 10


def _moment(text):
    return datetime.datetime.fromisoformat(text[:16].replace('T', ' '))


class FlexibleLease(test_capacity_truth._Capacity):

    def _whole_host_slots(self):
        """(host, slots): a compute and the reservation of every slot of

        a shape it holds a few of (within the projects' Nova instance
        quota) for the next two hours, as the Pcloud API counts them.
        """
        for host in reversed(self.computes):
            pinned = json.dumps(['=', '$hypervisor_hostname', host])
            for memory_mb in (4096, 8192, 16384, 32768):
                free = min(self.alt.show_instance_availability({
                    'vcpus': 1, 'memory_mb': memory_mb, 'disk_gb': 1,
                    'resource_properties': pinned, 'hours': 2})['free'])
                if 0 < free <= QUOTA:
                    return host, dict(self._slot(memory_mb), amount=free,
                                      resource_properties=pinned)
        self.fail('no compute holds a few slots')

    def _post(self, client, body, answers):
        try:
            answers.append(client._request('POST', '/leases', body)['lease'])
        except pcloud_client.PcloudError as e:
            answers.append(e)

    def _leased(self, client, answer):
        if isinstance(answer, dict):
            self.addCleanup(fixture.delete_lease, client, answer['id'])
        return answer

    def test_a_flexible_lease_racing_a_fixed_one_gets_the_next_hour(self):
        host, slots = self._whole_host_slots()
        fixed_body = {'name': 'fixed-%s' % host, 'events': [],
                      'start_date': 'now', 'end_date': _minute(hours=1),
                      'reservations': [slots]}
        flexible_body = {'name': 'flexible-%s' % host, 'events': [],
                         'duration': 60, 'reservations': [slots]}
        fixed, flexible = [], []
        racers = [threading.Thread(target=self._post, args=args) for args in (
            (self.demo, fixed_body, fixed),
            (self.alt, flexible_body, flexible))]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        fixed = self._leased(self.demo, fixed[0])
        flexible = self._leased(self.alt, flexible[0])
        self.assertIsInstance(flexible, dict, flexible)
        start = _moment(flexible['start_date'])
        self.assertEqual(HOUR, _moment(flexible['end_date']) - start)
        if isinstance(fixed, dict):
            # The fixed lease won the hour: the flexible one has the next,
            # from the fixed one's end.
            self.assertEqual(_moment(fixed['end_date']), start)
            holder, holder_user = fixed, common.DEMO_USER
            later, later_user = flexible, common.ALT_USER
        else:
            # The flexible one won: the fixed one is refused for capacity.
            self.assertEqual(409, fixed.code, fixed)
            self.assertLessEqual(start, datetime.datetime.utcnow()
                                 + datetime.timedelta(minutes=1))
            holder, holder_user = flexible, common.ALT_USER
            # Booked again now, the same hour is the next one.
            later, later_user = self._leased(self.demo, self.demo._request(
                'POST', '/leases', dict(flexible_body, name='later-%s' % host,
                                        earliest_start='now'))['lease']), \
                common.DEMO_USER
            self.assertEqual(_moment(flexible['end_date']),
                             _moment(later['start_date']))
        # The holder boots into its hour, on the host.
        self._settled(holder, holder_user, 'ACTIVE')
        rid = fixture.reservation_of(self.sandbox, holder['id'])
        server = fixture.boot(self, self.cli, 'flexible-holder', rid,
                              holder_user)
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        # The next hour's lessee cannot boot into it before it starts.
        self.assertEqual('PENDING', self.cli.json(
            'openstack', 'reservation', 'lease', 'show', later['id'],
            user=later_user)['status'])
        commands.boot_fails(
            self.cli, 'flexible-too-early',
            fixture.reservation_of(self.sandbox, later['id']), later_user)
