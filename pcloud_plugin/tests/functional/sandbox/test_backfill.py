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

"""Backfill in the sandbox (issue 36), through Nova's real scheduler and

Placement: a project that may use a backfill flavor boots into what a
lease starting in a minute was promised, is told until when it may run,
and its server is shelved at the lease's start, when the lessee's boot
lands on that host; a backfill boot beyond what is promised is refused.
The in-process tests (functional/blazar/test_backfill.py) cover the
rest.
"""

import datetime
import json
import uuid

from pcloud_plugin.cloud import backfill
from pcloud_plugin.cloud import resources
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


class Backfill(test_capacity_truth._Capacity):

    def _backfill_flavor(self):
        """A private backfill flavor (1 VCPU, 512 MB, 1 GB) alt may

        use, made as the admin guide says (deleted when the test ends).
        """
        flavor = self.nova.flavors.create(
            'backfill-%s' % uuid.uuid4().hex[:6], 512, 1, 1,
            is_public=False)
        self.addCleanup(self.nova.flavors.delete, flavor.id)
        flavor.set_keys({'resources:VCPU': '0', 'resources:MEMORY_MB': '1',
                         'resources:DISK_GB': '0',
                         'resources:%s' % backfill.VCPU: '1',
                         'resources:%s' % backfill.MEMORY_MB: '512',
                         'resources:%s' % backfill.DISK_GB: '1'})
        alt = fixture.session(self.sandbox, common.ALT_USER).get_project_id()
        self.nova.flavor_access.add_tenant_access(flavor, alt)
        return flavor.name

    def _offered(self, host):
        """{backfill class: units open} on the host's child provider."""
        inventories = self.placement.get(
            '/resource_providers/%s/inventories'
            % resources.child_uuid(self._provider(host)), raise_exc=False)
        if inventories.status_code != 200:
            return {}
        return {rc: inv['total'] - inv['reserved']
                for rc, inv in inventories.json()['inventories'].items()
                if rc in backfill.CLASSES}

    def test_a_backfill_server_runs_until_the_lease_starts(self):
        host = self.computes[-1]
        start = _minute(minutes=2)
        lease = self._lease(self.demo, dict(
            self._slot(1024), resource_properties=json.dumps(
                ['=', '$hypervisor_hostname', host])),
            start=start, end=_minute(hours=1))
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        flavor = self._backfill_flavor()
        interval = self._blazar_option('backfill_interval')
        self._until('backfill offered on %s' % host,
                    lambda: self._offered(host).get(backfill.VCPU),
                    3 * interval + 10)

        # The alt project boots into what the lease was promised: on its
        # host, told until when (the lease's start).
        server = fixture.boot(self, self.cli, 'backfill-1', flavor,
                              common.ALT_USER)
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        until = datetime.datetime.strptime(start, '%Y-%m-%d %H:%M')

        def told():
            meta = self.nova.servers.get(server['id']).metadata
            return meta.get(backfill.UNTIL)
        self._until('backfill-1 told its time', told, 3 * interval + 10)
        self.assertEqual(until.isoformat(), told())
        # The promise holds one VCPU: a second backfill boot is refused.
        commands.boot_fails(self.cli, 'backfill-2', flavor, common.ALT_USER)

        # The lease starts: the backfill server is shelved (offloaded),
        # and the lessee's boot lands on the host.
        self.cli.wait('lease %s to start' % lease['name'], (
            'openstack', 'reservation', 'lease', 'show', lease['id']),
            lambda found: found['status'] == 'ACTIVE',
            user=common.DEMO_USER, timeout=180)
        self._until('backfill-1 shelved', lambda: self.nova.servers.get(
            server['id']).status == 'SHELVED_OFFLOADED', 3 * interval + 30)
        booked = fixture.boot(self, self.cli, 'backfill-holder', rid,
                              common.DEMO_USER)
        self.assertEqual(host, booked['OS-EXT-SRV-ATTR:host'])
        with open(self.sandbox.log('blazar')) as f:
            log = f.read()
        self.assertIn('pcloud.backfill.end', log)
        self.assertIn(server['id'], log)
