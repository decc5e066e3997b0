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

"""Backfill (cloud.backfill) with Blazar's manager and our plugin on a

real Placement: what a reservation not started yet was promised is
offered to backfill boots (Placement's own allocation candidates say
where they may land) until its start, when they are shelved; a
holder's start and boots are never refused because of them. Nova's
servers are a recording fake (Servers below); the sandbox boots real
ones (sandbox/test_backfill.py).
"""

import datetime
import uuid

from novaclient import exceptions as nova_exc
from oslo_utils import timeutils

from pcloud_plugin.cloud import backfill
from pcloud_plugin.cloud import resources
from pcloud_plugin.notifications import usage
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import fake_nova


class Servers:
    """Nova's servers on a FakeNova, each backfill boot an allocation in

    Placement as Nova's scheduler makes it; shelving offloads it.
    """

    def __init__(self, test):
        self.test = test
        self.servers = {}
        self.names = {}
        methods = test.nova.servers._methods
        methods.update(get=self._get, set_meta=self._set_meta,
                       shelve=self._shelve, shelve_offload=self._shelve)

    def boot(self, name, host, vcpus=1, memory_mb=512, created=None):
        """A backfill flavor's boot onto ``host``, as Placement takes it;

        the server is known by ``name`` in ``servers``.
        """
        server_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, name))
        root = self.test.hosts[host]
        self.test.placement.allocate(server_id, {
            resources.child_uuid(root): {backfill.VCPU: vcpus,
                                         backfill.MEMORY_MB: memory_mb,
                                         backfill.DISK_GB: 1},
            root: {'MEMORY_MB': 1}})
        self.names[server_id] = name
        self.servers[server_id] = self.servers[name] = fake_nova._Obj(
            id=server_id, status='ACTIVE', metadata={},
            created=created or timeutils.utcnow().isoformat(),
            tenant_id=base.PROJECT, user_id='u', flavor={
                'original_name': 'backfill.small'})

    def _get(self, server_id):
        if server_id not in self.servers:
            raise nova_exc.NotFound(404, 'No server %s' % server_id)
        return self.servers[server_id]

    def _set_meta(self, server, metadata):
        server.metadata.update(metadata)

    def _shelve(self, server):
        server.status = 'SHELVED_OFFLOADED'
        self.test.placement.client.delete('/allocations/%s' % server.id)


class BackfillTests(base.BlazarTestCase):
    """Hosts of base.BlazarTestCase: cn1 (7 slots of 2 VCPU and 1024 MB

    on the root provider), cn2 (NUMA children).
    """

    def setUp(self):
        self.useFixture(base.StillTime())
        super().setUp()
        self.servers = Servers(self)
        self.pass_ = backfill.Backfill(self.context, self.plugin.placement(),
                                       self.nova, self.plugin.notifier)

    def backfill_pass(self, now=None):
        """One pass: {server name: what was done to it}."""
        return {self.servers.names[sid]: what
                for sid, what in self.pass_.run(now=now).items()}

    def at(self, minutes):
        return timeutils.utcnow().replace(second=0, microsecond=0) + \
            datetime.timedelta(minutes=minutes)

    def on_cn1(self, start=60, end=120):
        """A lease of 5 slots (10 VCPU, 5120 MB), which only cn1 holds."""
        lease = self.create_lease(self.reservation(5, affinity=True),
                                  start=start, end=end)
        return lease

    def candidates(self, vcpus=1, memory_mb=512):
        """The hosts Placement offers a backfill flavor's boot."""
        found = self.placement.client.get(
            '/allocation_candidates?resources=%s:%d,%s:%d,%s:1,MEMORY_MB:1'
            % (backfill.VCPU, vcpus, backfill.MEMORY_MB, memory_mb,
               backfill.DISK_GB),
            headers={'OpenStack-API-Version': 'placement 1.29'}).json()
        names = {uuid: name for name, uuid in self.hosts.items()}
        return sorted({names[rp] for rp in found['provider_summaries']
                       if rp in names and '-' not in names[rp]})

    def inventory(self, host):
        return {rc: (inv['total'], inv['reserved'])
                for rc, inv in self.placement.client.get(
                    '/resource_providers/%s/inventories'
                    % resources.child_uuid(self.hosts[host])).json().get(
                        'inventories', {}).items()
                if rc in backfill.CLASSES}

    def test_only_a_promise_not_started_is_offered(self):
        self.backfill_pass()
        self.assertEqual([], self.candidates())
        self.on_cn1()
        self.backfill_pass()
        self.assertEqual({backfill.VCPU: (10, 0),
                          backfill.MEMORY_MB: (5120, 0),
                          backfill.DISK_GB: (50, 0)},
                         self.inventory('cn1'))
        self.assertEqual(['cn1'], self.candidates())
        # No more than the promise: 11 VCPU fit nowhere.
        self.assertEqual([], self.candidates(vcpus=11))

    def test_a_server_gets_its_time_is_warned_then_shelved(self):
        self.conf.set_override('backfill_warning', 600, group='pcloud')
        lease = self.on_cn1()
        self.backfill_pass()
        self.servers.boot('bf-1', 'cn1')
        server = self.servers.servers['bf-1']
        self.assertEqual({'bf-1': 'given its time'}, self.backfill_pass())
        self.assertEqual(self.at(60).isoformat(),
                         server.metadata[backfill.UNTIL])
        self.assertEqual({}, self.backfill_pass(now=self.at(49)))
        self.assertEqual({'bf-1': 'warned'},
                         self.backfill_pass(now=self.at(50)))
        (warning,) = self.notifications.wait_for(usage.BACKFILL_WARNING)
        self.assertEqual((server.id, self.at(60).isoformat()),
                         (warning['instance_id'], warning['until']))
        # The holder's start is not refused, backfill running or not.
        self.start(lease['id'])
        self.assertEqual({'bf-1': 'shelved'},
                         self.backfill_pass(now=self.at(60)))
        (ended,) = self.notifications.wait_for(usage.BACKFILL_END)
        self.assertEqual((server.id, self.at(60).isoformat()),
                         (ended['instance_id'], ended['ended_at']))
        self.assertEqual('SHELVED_OFFLOADED', server.status)
        # Its promise now held by the reservation: nothing offered.
        self.assertEqual({}, self.backfill_pass(now=self.at(61)))
        self.assertEqual({}, self.inventory('cn1'))

    def test_an_allocation_of_a_server_gone_is_passed_over(self):
        self.on_cn1()
        self.backfill_pass()
        self.servers.boot('bf-gone', 'cn1')
        self.servers.boot('bf-1', 'cn1')
        gone = self.servers.servers.pop('bf-gone')
        del self.servers.servers[gone.id]
        self.assertEqual({'bf-1': 'given its time'}, self.backfill_pass())

    def test_what_the_promise_no_longer_covers_stops_at_once(self):
        # cn1 is promised 6 slots from minute 200, 5 from minute 60.
        self.on_cn1()
        later = self.create_lease(self.reservation(6, affinity=True),
                                  start=200, end=260)
        self.backfill_pass()
        self.servers.boot('bf-old', 'cn1', created='2026-01-01T00:00:00')
        self.servers.boot('bf-new', 'cn1', memory_mb=5120,
                          created='2026-01-02T00:00:00')
        self.backfill_pass()
        # Its lessee deletes the later one: 5 slots' 5120 MB are left
        # for 5632 MB of backfill. The newest stops.
        self.delete_lease(later['id'])
        self.assertEqual({'bf-new': 'shelved'}, self.backfill_pass())
        self.assertEqual('ACTIVE', self.servers.servers['bf-old'].status)
        self.backfill_pass()
        self.assertEqual({backfill.VCPU: (10, 0),
                          backfill.MEMORY_MB: (5120, 0),
                          backfill.DISK_GB: (50, 0)},
                         self.inventory('cn1'))
