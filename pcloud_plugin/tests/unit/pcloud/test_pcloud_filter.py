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

"""The three rules of the PcloudFilter, on Nova's own HostState and

RequestSpec objects.
"""

import datetime
import subprocess
import sys

import fixtures
from nova import objects
from nova.scheduler import host_manager
from oslo_utils import timeutils
import testtools

from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.scheduler.filters import pcloud_filter

PCLOUD = 'aaaaaaaa-1111-4a6b-9c1d-0123456789ab'
OTHER = 'bbbbbbbb-1111-4a6b-9c1d-0123456789ab'


def _aggregate(agg_id, name, metadata, hosts=()):
    return objects.Aggregate(id=agg_id, name=name, metadata=metadata,
                             hosts=list(hosts))


def _host(name, *aggregates):
    state = host_manager.HostState(name, name, 'cell1')
    state.aggregates = list(aggregates)
    return state


def _spec(project_id='p1', **hints):
    return objects.RequestSpec(
        project_id=project_id,
        scheduler_hints={k: v if isinstance(v, list) else [v]
                         for k, v in hints.items()})


def _move(project_id='p1', **hints):
    """A move's request, as Nova's conductor restricts it to the cell."""
    spec = _spec(project_id, **hints)
    spec.requested_destination = objects.Destination(
        cell=objects.CellMapping(uuid='cccccccc-1111-4a6b-9c1d-0123456789ab',
                                 name='cell1'))
    return spec


class PcloudFilterTests(testtools.TestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.filter = pcloud_filter.PcloudFilter()
        pool_md = codec.pool_metadata(codec.HostFlavor('big', '', 1))
        self.pool = _aggregate(1, codec.pool_name('big'), pool_md)
        md = codec.pcloud_metadata(PCLOUD, 'mine', 'p1')
        md.update({codec.host_key('a'): 'cn-on',
                   codec.host_state_key('cn-on'): codec.ENABLED,
                   codec.host_key('b'): 'cn-off',
                   codec.host_state_key('cn-off'): codec.DISABLED,
                   codec.tenant_key('p2'): codec.TENANT})
        self.pcloud = _aggregate(2, codec.pcloud_name(PCLOUD), md)
        other_md = codec.pcloud_metadata(OTHER, 'theirs', 'p9')
        other_md[codec.host_state_key('cn-theirs')] = codec.ENABLED
        self.other = _aggregate(3, codec.pcloud_name(OTHER), other_md)
        self.az = _aggregate(4, 'az1', {'availability_zone': 'az1'})
        self.hosts = {
            'general': _host('general', self.az),
            'plain': _host('plain'),
            'free-pool': _host('free-pool', self.pool, self.az),
            'cn-on': _host('cn-on', self.pool, self.pcloud, self.az),
            'cn-off': _host('cn-off', self.pool, self.pcloud),
            'cn-theirs': _host('cn-theirs', self.pool, self.other),
        }

    def _passing(self, spec):
        return sorted(h.host for h in self.filter.filter_all(
            list(self.hosts.values()), spec))

    def test_no_hint_only_hosts_outside_pools_and_pclouds(self):
        self.assertEqual(['general', 'plain'], self._passing(_spec()))

    def test_hint_only_enabled_hosts_of_that_pcloud(self):
        self.assertEqual(['cn-on'], self._passing(_spec(pcloud=PCLOUD)))

    def test_authorized_tenant_passes_others_do_not(self):
        self.assertEqual(['cn-on'],
                         self._passing(_spec('p2', pcloud=PCLOUD)))
        self.assertEqual([], self._passing(_spec('p3', pcloud=PCLOUD)))
        # The owner of another pcloud gains nothing in this one.
        self.assertEqual([], self._passing(_spec('p9', pcloud=PCLOUD)))

    def test_owner_who_removed_itself_is_refused(self):
        del self.pcloud.metadata[codec.tenant_key('p1')]
        self.assertEqual([], self._passing(_spec('p1', pcloud=PCLOUD)))

    def test_anything_else_fails(self):
        for spec in (_spec(pcloud='no-such-pcloud'),
                     _spec(pcloud=[PCLOUD, OTHER]),
                     _spec(pcloud=''),
                     _spec(None, pcloud=PCLOUD)):
            self.assertEqual([], self._passing(spec))

    def test_aggregate_named_like_a_pcloud_but_untyped_fails(self):
        fake = _aggregate(5, codec.pcloud_name(OTHER),
                          {codec.tenant_key('p1'): codec.TENANT,
                           codec.host_state_key('plain'): codec.ENABLED})
        self.hosts['plain'].aggregates = [fake]
        self.assertEqual([], self._passing(_spec(pcloud=OTHER)))

    def test_host_passes_agrees_with_filter_all(self):
        for spec in (_spec(), _spec(pcloud=PCLOUD), _spec('p3',
                                                          pcloud=PCLOUD)):
            self.assertEqual(
                self._passing(spec),
                sorted(h.host for h in self.hosts.values()
                       if self.filter.host_passes(h, spec)))

    def test_a_move_goes_to_its_pcloud_first(self):
        self.assertEqual(['cn-on'], self._passing(_move(pcloud=PCLOUD)))
        self.assertEqual(['cn-on'],
                         self._passing(_move('p2', pcloud=PCLOUD)))

    def test_a_move_its_pcloud_cannot_take_goes_to_ordinary_hosts(self):
        """Never to an idle pool host or another pcloud's host."""
        self.pcloud.metadata[codec.host_state_key('cn-on')] = codec.DISABLED
        self.assertEqual(['general', 'plain'],
                         self._passing(_move(pcloud=PCLOUD)))
        # A project no longer authorized, a pcloud deleted: the same.
        self.assertEqual(['general', 'plain'],
                         self._passing(_move('p3', pcloud=PCLOUD)))
        self.assertEqual(['general', 'plain'],
                         self._passing(_move(pcloud='no-such-pcloud')))
        self.assertEqual(['general', 'plain'], self._passing(_move()))

    def test_a_boot_is_not_a_move(self):
        """A boot aimed at a host carries a destination, but no cell."""
        self.pcloud.metadata[codec.host_state_key('cn-on')] = codec.DISABLED
        spec = _spec(pcloud=PCLOUD)
        spec.requested_destination = objects.Destination(host='general')
        self.assertEqual([], self._passing(spec))

    def test_host_passes_lets_a_move_reach_ordinary_hosts(self):
        spec = _move(pcloud=PCLOUD)
        self.assertEqual(
            ['cn-on', 'general', 'plain'],
            sorted(h.host for h in self.hosts.values()
                   if self.filter.host_passes(h, spec)))

    def test_rebuild_is_not_filtered(self):
        spec = _spec(pcloud=PCLOUD)
        spec.scheduler_hints['_nova_check_type'] = ['rebuild']
        self.assertEqual(sorted(self.hosts), self._passing(spec))

    def test_runs_once_per_request(self):
        self.assertFalse(self.filter.run_filter_for_index(1))

    def test_reads_only_aggregates(self):
        """No API, DB or config: a HostState with just aggregates works."""
        class Bare(object):
            host = nodename = 'cn-on'
            aggregates = [self.pcloud]
        self.assertEqual(1, len(self.filter.filter_all(
            [Bare()], _spec(pcloud=PCLOUD))))


NOW = datetime.datetime(2026, 5, 1, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)


def _lease(agg_id, start=NOW - HOUR, end=NOW + HOUR, pcloud=PCLOUD):
    md = codec.lease_window_metadata(pcloud, start, end)
    md[codec.LEASE_ID] = 'lease-%d' % agg_id
    return _aggregate(agg_id, 'pcloud-lease:%d' % agg_id, md)


class LeaseWindowTests(PcloudFilterTests):
    """cn-on is leased into PCLOUD (filter_lease_id) for NOW +- an hour:

    every rule above holds the same while the lease holds it.
    """

    def setUp(self):
        super().setUp()
        timeutils.set_time_override(NOW)
        self.addCleanup(timeutils.clear_time_override)
        self.lease = _lease(10)
        self.hosts['cn-on'].aggregates.append(self.lease)

    def test_the_keys_the_host_plugin_writes(self):
        self.assertEqual('filter_lease_id', codec.LEASE_ID)  # seeds/001
        self.assertEqual({'pcloud:lease_pcloud': PCLOUD,
                          'pcloud:lease_start': '2026-05-01T11:00:00Z',
                          'pcloud:lease_end': '2026-05-01T13:00:00Z'},
                         codec.lease_window_metadata(PCLOUD, NOW - HOUR,
                                                     NOW + HOUR))

    def test_within_the_window_the_lessees_tenants_pass(self):
        self.assertEqual(['cn-on'], self._passing(_spec(pcloud=PCLOUD)))
        self.assertEqual(['cn-on'],
                         self._passing(_spec('p2', pcloud=PCLOUD)))
        self.assertEqual([], self._passing(_spec('p3', pcloud=PCLOUD)))

    def test_from_its_end_and_before_its_start_nothing_passes(self):
        for now in (NOW + HOUR, NOW + 2 * HOUR, NOW - 2 * HOUR):
            timeutils.set_time_override(now)
            self.assertEqual([], self._passing(_spec(pcloud=PCLOUD)), now)
        timeutils.set_time_override(NOW + HOUR - datetime.timedelta(
            seconds=1))
        self.assertEqual(['cn-on'], self._passing(_spec(pcloud=PCLOUD)))

    def test_a_lease_for_another_pcloud_lets_nothing_in(self):
        self.lease.metadata[codec.LEASE_PCLOUD] = OTHER
        self.assertEqual([], self._passing(_spec(pcloud=PCLOUD)))

    def test_missing_or_garbled_window_fails_closed(self):
        for key, value in ((codec.LEASE_START, None),
                           (codec.LEASE_END, None),
                           (codec.LEASE_PCLOUD, None),
                           (codec.LEASE_END, '2026-05-01 13:00'),
                           (codec.LEASE_START, 'soon')):
            self.lease.metadata = dict(_lease(10).metadata)
            if value is None:
                del self.lease.metadata[key]
            else:
                self.lease.metadata[key] = value
            self.assertEqual([], self._passing(_spec(pcloud=PCLOUD)), key)

    def test_one_lease_holding_it_is_enough(self):
        """A lease aggregate a failed clean-up left behind grants nothing,

        and takes nothing from the lease holding the host now.
        """
        self.hosts['cn-on'].aggregates.insert(
            0, _lease(11, NOW - 3 * HOUR, NOW - 2 * HOUR))
        self.assertEqual(['cn-on'], self._passing(_spec(pcloud=PCLOUD)))
        self.lease.metadata[codec.LEASE_END] = codec.format_moment(NOW)
        self.assertEqual([], self._passing(_spec(pcloud=PCLOUD)))

    def test_without_the_hint_a_leased_host_never_passes(self):
        # Even one in no pool or pcloud.
        self.hosts['plain'].aggregates = [_lease(12)]
        self.assertEqual(['general'], self._passing(_spec()))

    def test_reads_each_window_once_per_request(self):
        hosts = [_host('h%d' % n, self.pcloud, self.lease)
                 for n in range(3)]
        for host in hosts:
            self.pcloud.metadata[codec.host_state_key(host.nodename)] = (
                codec.ENABLED)
        seen = []
        holds = codec.lease_holds

        def counting(*args):
            seen.append(args)
            return holds(*args)
        self.useFixture(fixtures.MockPatchObject(codec, 'lease_holds',
                                                 counting))
        self.assertEqual(3, len(self.filter.filter_all(
            hosts, _spec(pcloud=PCLOUD))))
        self.assertEqual(1, len(seen))


class FilterImportsTests(testtools.TestCase):

    def test_loads_none_of_our_config_clients_or_db(self):
        """nova-scheduler gets the filter, the pure codec and the rule,

        no more.
        """
        code = ('import sys; '
                'import pcloud_plugin.scheduler.filters.pcloud_filter; '
                'print(" ".join(sorted(m for m in sys.modules '
                'if m.startswith("pcloud_plugin"))))')
        loaded = subprocess.run(
            [sys.executable, '-W', 'ignore', '-c', code], check=True,
            capture_output=True, text=True).stdout.split()
        self.assertEqual(['pcloud_plugin', 'pcloud_plugin.exception',
                          'pcloud_plugin.pcloud',
                          'pcloud_plugin.pcloud.aggregates',
                          'pcloud_plugin.pcloud.boot_rule',
                          'pcloud_plugin.scheduler',
                          'pcloud_plugin.scheduler.filters',
                          'pcloud_plugin.scheduler.filters.pcloud_filter'],
                         loaded)
