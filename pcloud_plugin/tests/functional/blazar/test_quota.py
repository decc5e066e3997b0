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

"""Per-project limits from Keystone unified limits (oslo.limit's lookups

answered by a fake Keystone) on virtual:instance reservations and on the
pcloud units quota, through Blazar's manager and API.
"""

import threading

from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar.manager import exceptions as mgr_exc
from blazar.utils import trusts
from blazarclient import exception as client_exc
import fixtures
from oslo_limit import limit as os_limit

from pcloud_plugin.blazar import errors
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import locks
from pcloud_plugin import quota
from pcloud_plugin.tests.functional.blazar import base
from pcloud_plugin.tests.functional.blazar import test_host_plugin


class _Keystone(object):
    """The limits Keystone holds: {project or None: {resource: limit}}."""

    def __init__(self, test, limits):
        self.limits = limits
        self.asked = 0
        keystone = self

        class Enforcer(object):
            def __init__(self, usage_callback, cache=True):
                pass

            def get_project_limits(self, project_id, resources):
                keystone.asked += 1
                return list(keystone.limits.get(project_id, {}).items())

            def get_registered_limits(self, resources):
                keystone.asked += 1
                return list(keystone.limits.get(None, {}).items())

        test.useFixture(fixtures.MockPatchObject(os_limit, 'Enforcer',
                                                 Enforcer))
        test.conf.set_override('endpoint_id', 'pcloud-endpoint',
                               group='oslo_limit')
        test.now = 0.0
        test.useFixture(fixtures.MockPatchObject(
            quota.LIMITS, 'clock', lambda: test.now))
        quota.LIMITS.forget()
        test.addCleanup(quota.LIMITS.forget)


class _Rival(threading.Thread):
    """Another API worker's admission of the same project, run in a

    thread: ``result`` is what it returned, or the exception it raised.
    """

    def __init__(self, admission):
        super().__init__(daemon=True)
        self.admission = admission
        self.result = None

    def run(self):
        try:
            self.result = self.admission()
        except Exception as e:
            self.result = e


def _rival_after_first_check(test, owner, name, admission):
    """Patch the quota check ``owner.name`` so that, once the first check

    made (the admission under test's) has passed, ``admission`` starts in
    a thread of its own (a _Rival, returned) and has a second to run into
    the project's quota lock before the first goes on to claim and
    commit.
    """
    real = getattr(owner, name)
    rival = _Rival(admission)

    def racing(*args, **kwargs):
        found = real(*args, **kwargs)
        if not rival.is_alive() and rival.result is None:
            rival.start()
            rival.join(1)
        return found
    test.useFixture(fixtures.MockPatchObject(owner, name, racing))
    return rival


def _assert_only_the_first_holds(test, first, rival, list_reservations):
    """The rival was refused for quota, and the first's lease,

    reservation row (``list_reservations``: of its plugin) and ledger
    claim are all that remain.
    """
    rival.join(60)
    test.assertFalse(rival.is_alive())
    test.assertIsInstance(rival.result, errors.QuotaRefused)
    rid = _reservation_of(first)['id']
    test.assertEqual([first['id']],
                     [lease['id'] for lease in blazar_db.lease_get_all()])
    test.assertEqual([rid], [r['reservation_id'] for r in
                             list_reservations(test.context)])
    test.assertEqual({rid}, set(db_claims.list_consumers(test.context)))
    return rival.result


def _reservation_of(lease):
    (reservation,) = lease['reservations']
    return reservation


class InstanceQuotaTests(base.BlazarAPITestCase):
    """Slots of 2 VCPU and 1024 MB; the project may hold 8 VCPU."""

    def setUp(self):
        super().setUp()
        self.keystone = _Keystone(self, {
            base.PROJECT: {quota.RESERVED_VCPUS: 8}})

    def test_over_the_vcpus_limit_is_403_saying_what_is_held_and_when(self):
        self.client.lease.create('six', self.minutes(60), self.minutes(120),
                                 [self.reservation(3)], [])
        # Once: the minute may turn before the message is checked.
        start = self.minutes(90)
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'four-more', start, self.minutes(150),
            [self.reservation(2)], [])
        self.assertEqual(403, e.kwargs['code'])
        message = str(e)
        self.assertIn('pcloud_reserved_vcpus limit is 8; 6 held at the '
                      'peak', message)
        self.assertIn(start.replace(' ', 'T'), message)
        self.assertIn('4 more requested', message)
        self.assertEqual(1, len(self.client.lease.list()))
        # Within the limit beside it, and after it, both fit.
        self.client.lease.create('two-more', self.minutes(90),
                                 self.minutes(150), [self.reservation(1)],
                                 [])
        self.client.lease.create('after', self.minutes(150),
                                 self.minutes(210), [self.reservation(4)],
                                 [])
        self.assertEqual(3, len(self.client.lease.list()))

    def test_a_changed_limit_applies_after_the_cache_time(self):
        self.keystone.limits[base.PROJECT][quota.RESERVED_VCPUS] = 4
        self.assertRaises(errors.QuotaRefused, self.create_lease,
                          self.reservation(3))
        self.keystone.limits[base.PROJECT][quota.RESERVED_VCPUS] = 6
        asked = self.keystone.asked
        # Kept: no Keystone round trip, the old limit still applies.
        e = self.assertRaises(errors.QuotaRefused, self.create_lease,
                              self.reservation(3))
        self.assertIn('limit is 4', str(e))
        self.assertEqual(asked, self.keystone.asked)
        self.now += 60
        self.create_lease(self.reservation(3))
        # With no cache, each admission asks again.
        self.conf.set_override('quota_cache_seconds', 0, group='pcloud')
        self.keystone.limits[base.PROJECT][quota.RESERVED_VCPUS] = 12
        self.create_lease(self.reservation(3))

    def test_growing_over_the_limit_is_refused_and_shrinking_is_not(self):
        lease = self.create_lease(self.reservation(3))
        rid = _reservation_of(lease)['id']
        e = self.assertRaises(
            mgr_exc.CantUpdateParameter, self.update_lease, lease['id'],
            reservations=[{'id': rid, 'amount': 5}])
        self.assertIn('pcloud_reserved_vcpus limit is 8; 0 held', str(e))
        self.assertIn('10 more requested', str(e))
        # Even over a limit lowered since, less is always allowed.
        self.keystone.limits[base.PROJECT][quota.RESERVED_VCPUS] = 2
        self.now += 60
        self.update_lease(lease['id'],
                          reservations=[{'id': rid, 'amount': 2}])

    def test_memory_falls_back_to_the_option_and_others_are_not_counted(
            self):
        self.conf.set_override('reserved_memory_mb_quota', 2048,
                               group='pcloud')
        # Another project's reservation counts against nothing of ours.
        others = blazar_context.BlazarContext(
            user_id=base.USER, project_id='other',
            service_catalog=base.CATALOG)
        with fixtures.MockPatchObject(
                trusts, 'create_ctx_from_trust',
                side_effect=lambda trust_id: others):
            self.create_lease(self.reservation(2))
        self.create_lease(self.reservation(2))
        e = self.assertRaises(errors.QuotaRefused, self.create_lease,
                              self.reservation(1, vcpus=1))
        self.assertIn('pcloud_reserved_memory_mb limit is 2048; 2048 held',
                      str(e))

    def test_admissions_of_a_limited_project_wait_for_each_other(self):
        # One admission or update of the project at a time: while another
        # holds its quota lock, an admission waits, then checks against
        # what the other committed. (Real managers racing on MariaDB and
        # PostgreSQL: test_lease_race.)
        held = locks.acquire('quota:%s' % base.PROJECT)
        rival = _Rival(lambda: self.create_lease(self.reservation(2)))
        rival.start()
        rival.join(2)
        self.assertTrue(rival.is_alive())
        self.assertEqual([], db_claims.list_consumers(self.context))
        locks.release(held)
        rival.join(60)
        self.assertEqual('PENDING', rival.result['status'])

    def test_without_any_limit_no_reservation_is_read(self):
        self.keystone.limits.clear()
        with fixtures.MockPatchObject(
                quota.res_db, 'list_reservations',
                side_effect=AssertionError('read')):
            self.create_lease(self.reservation(6))


class NovaInstanceQuotaTests(base.BlazarAPITestCase):
    """seeds/003: a reservation of more instances than the project's Nova

    instance quota is refused; so is one of more cores than its cores
    quota. Nova's os-quota-sets is the recording fake's.
    """

    def setUp(self):
        super().setUp()
        self.nova.quota_sets[base.PROJECT] = {'instances': 10, 'cores': 40}

    def test_more_instances_than_the_instance_quota_is_403(self):
        e = self.assertRaises(
            client_exc.BlazarClientException, self.client.lease.create,
            'fifteen', self.minutes(60), self.minutes(120),
            [self.reservation(15, vcpus=1)], [])
        self.assertEqual(403, e.kwargs['code'])
        self.assertIn('the number of instances reserved (15) is greater '
                      'than the instance quota (10) in Nova', str(e))
        self.assertEqual([], self.client.lease.list())
        self.assertEqual([], db_claims.list_consumers(self.context))
        self.assertIn(('quotas.get', (base.PROJECT,), {}), self.nova.calls)
        # Ten is within it.
        self.client.lease.create('ten', self.minutes(60), self.minutes(120),
                                 [self.reservation(10, vcpus=1)], [])

    def test_more_cores_is_403_and_an_update_only_for_what_it_grows(self):
        e = self.assertRaises(errors.QuotaRefused, self.create_lease,
                              self.reservation(5, vcpus=9))
        self.assertIn('the cores reserved (amount x vcpus) (45) is greater '
                      'than the cores quota (40)', str(e))
        lease = self.create_lease(self.reservation(4, vcpus=2))
        rid = _reservation_of(lease)['id']
        e = self.assertRaises(
            mgr_exc.CantUpdateParameter, self.update_lease, lease['id'],
            reservations=[{'id': rid, 'amount': 11}])
        self.assertIn('instance quota (10)', str(e))
        self.assertEqual(4, blazar_db.reservation_get(rid)['amount'])
        # A quota lowered since still lets the reservation shrink.
        self.nova.quota_sets[base.PROJECT] = {'instances': 2, 'cores': 4}
        self.update_lease(lease['id'],
                          reservations=[{'id': rid, 'amount': 3}])


class UnitsQuotaTests(test_host_plugin.HostLeaseTestCase):
    """Hosts of "big" flavor, 4 units each; the option would allow 8."""

    def setUp(self):
        super().setUp()
        self.conf.set_override('units_quota', 8, group='pcloud')
        self.keystone = _Keystone(self, {
            None: {quota.HOST_UNITS: 4}})

    def test_the_units_quota_is_keystones(self):
        e = self.assertRaises(errors.QuotaRefused, self.create_lease,
                              self.hosts_res(2))
        self.assertEqual(403, e.code)
        self.assertIn('over its limit of 4', str(e))
        # Raised for this project: admitted after the cache time.
        self.keystone.limits[base.PROJECT] = {quota.HOST_UNITS: 12}
        self.now += 60
        self.create_lease(self.hosts_res(2))

    def test_of_two_racing_leases_the_one_over_the_limit_is_refused(
            self):
        # One "big" host (4 units) each: either fits in 4 alone, not both.
        rival = _rival_after_first_check(
            self, self.host_plugin, '_check_quota',
            lambda: self.create_lease(self.hosts_res(1)))
        first = self.create_lease(self.hosts_res(1))
        e = _assert_only_the_first_holds(self, first, rival,
                                         host_db.list_reservations)
        self.assertIn('over its limit of 4', str(e))
