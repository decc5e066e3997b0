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

"""A limit made with ``openstack limit create`` in the sandbox's Keystone

applies to a lease, and a raised one too, with no restart (the sandbox's
blazar-manager keeps Keystone's answers a few seconds).
"""

import time

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin import quota
from pcloud_plugin.sandbox import blazar_proc
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


class _Slots(test_capacity_truth._Capacity):

    def _slots(self, amount):
        """A lease of the alt project's, ``amount`` small slots."""
        return self._lease(self.alt, dict(self._slot(64), amount=amount),
                           start=_minute(hours=2), end=_minute(hours=3))


class KeystoneLimits(_Slots):

    def _limit(self, *args):
        return self.cli.json('openstack', *args)

    def _registered_no_limit(self):
        """A registered limit of -1 (none) for every project, as Keystone

        wants one before any project's own.
        """
        found = self._limit('registered', 'limit', 'list', '--service',
                            'blazar', '--resource-name',
                            quota.RESERVED_VCPUS)
        if not found:
            created = self._limit(
                'registered', 'limit', 'create', '--service', 'blazar',
                '--region', common.REGION, '--default-limit', '-1',
                quota.RESERVED_VCPUS)
            self.addCleanup(self.cli.run, 'openstack', 'registered',
                            'limit', 'delete', created['id'])

    def test_a_keystone_limit_refuses_then_a_raised_one_admits(self):
        # Last of the cleanups: the next test of this process shares the
        # sandbox, and blazar-manager may still hold this test's limit.
        self.addCleanup(time.sleep, blazar_proc.QUOTA_CACHE_SECONDS + 1)
        self._registered_no_limit()
        limit = self._limit('limit', 'create', '--service', 'blazar',
                            '--region', common.REGION, '--project',
                            common.ALT_PROJECT, '--resource-limit', '1',
                            quota.RESERVED_VCPUS)
        self.addCleanup(self.cli.run, 'openstack', 'limit', 'delete',
                        limit['id'])
        # Refused once blazar-manager's cached answer (if any) is stale.
        deadline = time.monotonic() + 30
        while True:
            try:
                admitted = self._slots(2)
            except pcloud_client.PcloudError as e:
                refused = e
                break
            # Admitted on the old answer: it would count against the new.
            fixture.delete_lease(self.alt, admitted['id'])
            self.assertLess(time.monotonic(), deadline,
                            'the limit of 1 VCPU never applied')
            time.sleep(1)
        self.assertEqual(403, refused.code, refused)
        self.assertIn('pcloud_reserved_vcpus limit is 1', str(refused))
        self.assertIn('2 more requested', str(refused))

        self._limit('limit', 'set', '--resource-limit', '2', limit['id'])
        deadline = time.monotonic() + 30
        while True:
            try:
                self._slots(2)
                break
            except pcloud_client.PcloudError as e:
                self.assertEqual(403, e.code, e)
                self.assertLess(time.monotonic(), deadline,
                                'the raised limit never applied: %s' % e)
                time.sleep(1)


class NovaInstanceQuota(_Slots):
    """seeds/003: a reservation of more instances than the project's

    instance quota in the sandbox's Nova (``openstack quota set
    --instances``) is refused; one within it is admitted.
    """

    def test_more_instances_than_novas_instance_quota_is_403(self):
        project = fixture.session(self.sandbox,
                                  common.ALT_USER).get_project_id()
        before = self.nova.quotas.get(project).instances
        self.nova.quotas.update(project, instances=10)
        self.addCleanup(self.nova.quotas.update, project, instances=before)
        refused = self.assertRaises(pcloud_client.PcloudError,
                                    self._slots, 15)
        self.assertEqual(403, refused.code, refused)
        self.assertIn('the number of instances reserved (15) is greater '
                      'than the instance quota (10) in Nova', str(refused))
        lease = self._slots(10)
        self.assertEqual(10, lease['reservations'][0]['amount'])
