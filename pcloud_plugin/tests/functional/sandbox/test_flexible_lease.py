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

"""Flexible leases in the sandbox (issue 36): three bookings of "every

slot of this host for an hour, the earliest you can", by two tenants,
race a fixed booking of the hour from now through blazar-api and
blazar-manager. Each hour is held by one lease, the hours in turn from
now: the fixed one is refused if a flexible one took its hour first,
and each flexible one that lost a window books the next. The first
hour's lessee boots into it; the next hour's boot is refused until then.
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
        quota) for each of the next five hours (the race books four), as
        the Pcloud API counts them.
        """
        for host in reversed(self.computes):
            pinned = json.dumps(['=', '$hypervisor_hostname', host])
            for memory_mb in (4096, 8192, 16384, 32768):
                free = min(self.alt.show_instance_availability({
                    'vcpus': 1, 'memory_mb': memory_mb, 'disk_gb': 1,
                    'resource_properties': pinned, 'hours': 5})['free'])
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

    def test_flexible_leases_racing_a_fixed_one_take_the_hours_in_turn(self):
        host, slots = self._whole_host_slots()
        fixed_body = {'events': [], 'start_date': 'now',
                      'end_date': _minute(hours=1), 'reservations': [slots]}
        flexible_body = {'events': [], 'duration': 60,
                         'reservations': [slots]}
        racers = [(self.demo, common.DEMO_USER, fixed_body)] + [
            (client, user, flexible_body) for client, user in (
                (self.alt, common.ALT_USER), (self.demo, common.DEMO_USER),
                (self.alt, common.ALT_USER))]
        answers = [[] for _racer in racers]
        threads = [threading.Thread(target=self._post, args=(
            client, dict(body, name='race-%d-%s' % (n, host)), answers[n]))
            for n, (client, _user, body) in enumerate(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        held, refused = [], 0
        for (client, user, body), (answer,) in zip(racers, answers):
            answer = self._leased(client, answer)
            if body is fixed_body and not isinstance(answer, dict):
                # A flexible one took the hour first.
                self.assertEqual(409, answer.code, answer)
                refused += 1
                continue
            self.assertIsInstance(answer, dict, answer)
            start, end = (_moment(answer[k]) for k in ('start_date',
                                                       'end_date'))
            self.assertEqual(HOUR, end - start)
            held.append((start, end, answer, user))
        # Every slot of the host, each hour by one lease: the hours in
        # turn, the first from now, none over another.
        held.sort(key=lambda found: found[0])
        self.assertEqual(len(racers) - refused, len(held))
        self.assertLessEqual(held[0][0], datetime.datetime.utcnow()
                             + datetime.timedelta(minutes=1))
        for before, after in zip(held, held[1:]):
            self.assertEqual(before[1], after[0], (before, after))
        # The first hour's lessee boots into it, on the host; the next
        # hour's cannot before it starts.
        _start, _end, holder, holder_user = held[0]
        # A flexible one starts at the next whole minute, and Blazar's
        # event loop starts it on its next pass.
        self.cli.wait('lease %s to start' % holder['name'], (
            'openstack', 'reservation', 'lease', 'show', holder['id']),
            lambda found: found['status'] == 'ACTIVE', user=holder_user,
            timeout=180)
        rid = fixture.reservation_of(self.sandbox, holder['id'])
        server = fixture.boot(self, self.cli, 'flexible-holder', rid,
                              holder_user)
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        _start, _end, later, later_user = held[1]
        self.assertEqual('PENDING', self.cli.json(
            'openstack', 'reservation', 'lease', 'show', later['id'],
            user=later_user)['status'])
        commands.boot_fails(
            self.cli, 'flexible-too-early',
            fixture.reservation_of(self.sandbox, later['id']), later_user)
