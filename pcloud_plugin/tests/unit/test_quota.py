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

"""The limits source: Keystone's answer, the fallback, the cache."""

from unittest import mock

import fixtures
from oslo_limit import limit as os_limit

from pcloud_plugin import exception
from pcloud_plugin import quota
from pcloud_plugin.tests import base


class FakeEnforcer(object):
    """oslo.limit's Enforcer as Keystone would answer, counting calls."""

    project = {}
    registered = {}
    calls = []

    def __init__(self, usage_callback, cache=True):
        assert cache is False  # our cache expires; oslo.limit's does not

    def get_project_limits(self, project_id, resources):
        assert resources is None
        self.calls.append(project_id)
        return list(self.project.get(project_id, {}).items())

    def get_registered_limits(self, resources):
        assert resources is None
        self.calls.append(None)
        return list(self.registered.items())


class LimitsTests(base.TestCase):

    def setUp(self):
        super().setUp()
        FakeEnforcer.project = {'p1': {quota.RESERVED_VCPUS: 8}}
        FakeEnforcer.registered = {quota.RESERVED_VCPUS: 4,
                                   quota.HOST_UNITS: 20}
        FakeEnforcer.calls = []
        self.enforcer = self.useFixture(fixtures.MockPatchObject(
            os_limit, 'Enforcer', FakeEnforcer)).mock
        self.now = 1000.0
        self.limits = quota.Limits(self.conf)
        self.limits.clock = lambda: self.now
        self.conf.set_override('endpoint_id', 'e1', group='oslo_limit')

    def test_project_limit_then_registered_limit_then_options(self):
        self.conf.set_override('units_quota', 3, group='pcloud')
        self.conf.set_override('reserved_memory_mb_quota', 2048,
                               group='pcloud')
        self.assertEqual(8, self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual(4, self.limits.limit('p2', quota.RESERVED_VCPUS))
        self.assertEqual(20, self.limits.limit('p1', quota.HOST_UNITS))
        # Keystone has no memory limit at all: the option applies.
        self.assertEqual(2048, self.limits.limit('p1',
                                                 quota.RESERVED_MEMORY_MB))

    def test_without_oslo_limit_the_options_apply_and_keystone_is_not_asked(
            self):
        self.conf.clear_override('endpoint_id', group='oslo_limit')
        self.conf.set_override('project_units_quota', {'p1': 40},
                               group='pcloud')
        self.assertEqual(40, self.limits.limit('p1', quota.HOST_UNITS))
        self.assertEqual(10, self.limits.limit('p2', quota.HOST_UNITS))
        self.assertEqual(-1, self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual([], FakeEnforcer.calls)

    def test_keystone_failing_falls_back_to_the_options(self):
        with mock.patch.object(FakeEnforcer, 'get_project_limits',
                               side_effect=RuntimeError('down')):
            self.conf.set_override('reserved_vcpus_quota', 6,
                                   group='pcloud')
            self.assertEqual(4, self.limits.limit('p1',
                                                  quota.RESERVED_VCPUS))
        self.limits.forget()
        with mock.patch.object(os_limit, 'Enforcer',
                               side_effect=ValueError('no endpoint')):
            self.assertEqual(6, self.limits.limit('p1',
                                                  quota.RESERVED_VCPUS))

    def test_answers_are_kept_until_the_cache_time_passes(self):
        self.assertEqual(8, self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual(['p1'], FakeEnforcer.calls)
        FakeEnforcer.project['p1'][quota.RESERVED_VCPUS] = 2
        self.now += 59
        self.assertEqual(8, self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual(['p1'], FakeEnforcer.calls)
        self.now += 1
        self.assertEqual(2, self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual(['p1', 'p1'], FakeEnforcer.calls)
        # A limit removed from the project: the registered one applies.
        del FakeEnforcer.project['p1'][quota.RESERVED_VCPUS]
        self.now += 60
        self.assertEqual(4, self.limits.limit('p1', quota.RESERVED_VCPUS))

    def test_cache_zero_asks_each_time(self):
        self.conf.set_override('quota_cache_seconds', 0, group='pcloud')
        for expected in (8, 3):
            FakeEnforcer.project['p1'][quota.RESERVED_VCPUS] = expected
            self.assertEqual(expected,
                             self.limits.limit('p1', quota.RESERVED_VCPUS))
        self.assertEqual(['p1', 'p1'], FakeEnforcer.calls)

    def test_the_enforcer_is_made_once(self):
        calls = []

        def make(*args, **kwargs):
            calls.append(args)
            return FakeEnforcer(*args, **kwargs)
        with mock.patch.object(os_limit, 'Enforcer', side_effect=make):
            for project in ('p1', 'p2', 'p3'):
                self.limits.limit(project, quota.HOST_UNITS)
        self.assertEqual(1, len(calls))

    def test_limits_for_the_global_config_is_the_shared_one(self):
        self.assertIs(quota.LIMITS, quota.limits_for(None))
        self.assertIs(quota.LIMITS, quota.limits_for(quota.CONF))


class NovaQuotaTests(base.TestCase):
    """seeds/003: more instances (or cores) than Nova lets the project

    run is refused, naming the quota.
    """

    PARAMS = {'amount': 15, 'vcpus': 2}

    def check(self, nova_quota, params=None, current=None):
        quota.check_nova_quota('p1', nova_quota, params or self.PARAMS,
                               current=current)

    def test_more_instances_than_the_instance_quota_is_refused(self):
        refused = self.assertRaises(exception.QuotaRefused, self.check,
                                    {'instances': 10, 'cores': -1})
        self.assertIn('the number of instances reserved (15) is greater '
                      'than the instance quota (10)', refused.message)
        self.assertIn('p1', refused.message)

    def test_more_cores_than_the_cores_quota_is_refused(self):
        refused = self.assertRaises(exception.QuotaRefused, self.check,
                                    {'instances': 20, 'cores': 29})
        self.assertIn('(30) is greater than the cores quota (29)',
                      refused.message)

    def test_within_or_without_a_quota_is_admitted(self):
        self.check({'instances': 15, 'cores': 30})
        self.check({'instances': -1, 'cores': -1})
        self.check({})

    def test_an_update_is_refused_only_for_what_it_grows(self):
        current = {'amount': 15, 'vcpus': 2}
        # The quota was lowered after admission: shrinking stays possible.
        self.check({'instances': 10, 'cores': 20},
                   params={'amount': 12, 'vcpus': 2}, current=current)
        self.assertRaises(exception.QuotaRefused, self.check,
                          {'instances': 10, 'cores': -1},
                          params={'amount': 16, 'vcpus': 2}, current=current)
        self.assertRaises(exception.QuotaRefused, self.check,
                          {'instances': -1, 'cores': 30},
                          params={'amount': 15, 'vcpus': 3}, current=current)
