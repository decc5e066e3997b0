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

"""Lease terms mean what they say, in the sandbox: a term no reservation

of the type has is refused naming it, an availability zone takes only
its hosts (and one the cloud lacks is refused), Blazar's
resource_properties take only the hosts they name (and one that names
none is refused), and seeds/003's request body is admitted as printed.
"""

import json
import time

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth

_minute = test_capacity_truth._minute


class LeaseTerms(test_capacity_truth._Capacity):

    def test_a_term_the_type_does_not_have_is_refused_naming_it(self):
        # As a REST client sends them: Blazar's own client parses only the
        # terms it knows of virtual:instance, and a pcloud:host string
        # value not at all (osc.leases).
        for reservation, field in (
                (dict(self._slot(64), zone='nowhere'),
                 'reservations.0.zone'),
                ({'resource_type': 'pcloud:host', 'amount': 1,
                  'host_flavor': 'any', 'pcloud_id': 'any',
                  'flavor_id': 'x'},
                 'reservations.0.flavor_id')):
            refused = self.assertRaises(
                pcloud_client.PcloudError, self.alt._request, 'POST',
                '/leases', {'name': 'terms-refused', 'events': [],
                            'start_date': _minute(hours=2),
                            'end_date': _minute(hours=3),
                            'reservations': [reservation]})
            self.assertEqual(400, refused.code, refused)
            self.assertIn(field, str(refused))
            self.assertIn('its terms are', str(refused))
        self.assertNotIn('terms-refused', [
            lease['name'] for lease in self.cli.json(
                'openstack', 'reservation', 'lease', 'list',
                user=common.ALT_USER)])

    def test_a_region_is_this_clouds_or_refused_naming_it(self):
        refused = self.assertRaises(
            pcloud_client.PcloudError, self._lease, self.alt,
            dict(self._slot(64), region='nowhere'), _minute(hours=2),
            _minute(hours=3))
        self.assertEqual(400, refused.code, refused)
        self.assertIn("reservations.0.region", str(refused))
        self.assertIn("not the region of this cloud: %r" % common.REGION,
                      str(refused))
        lease = self._lease(self.alt, dict(self._slot(64),
                                           region=common.REGION),
                            _minute(hours=2), _minute(hours=3))
        self.assertEqual('PENDING', lease['status'])

    def test_seeds_003_request_body_as_printed_is_admitted(self):
        # The seed's body but for its dates (past now) and its amount: 5
        # slots on distinct hosts need more free computes than this cloud
        # has beside the other tests'.
        start, end = _minute(hours=2), _minute(hours=3)
        lease = self.alt._request('POST', '/leases', {
            'name': 'instance-reservation-1',
            'reservations': [{'resource_type': 'virtual:instance',
                              'vcpus': 4, 'memory_mb': 4096, 'disk_gb': 10,
                              'amount': 1, 'affinity': False}],
            'start': start, 'end': end,
            'events': []})['lease']
        self.addCleanup(fixture.delete_lease, self.alt, lease['id'])
        (reservation,) = lease['reservations']
        self.assertEqual((4, 4096, 10, 1, False, ''), tuple(
            reservation[k] for k in ('vcpus', 'memory_mb', 'disk_gb',
                                     'amount', 'affinity',
                                     'resource_properties')))
        self.assertEqual((start, end), tuple(
            lease[k][:16].replace('T', ' ') for k in ('start_date',
                                                      'end_date')))
        # Admitted, not started: INACTIVE as seeds/001 names it.
        shown = self.cli.json('openstack', 'pcloud', 'lease', 'show',
                              lease['name'], user=common.ALT_USER)
        self.assertEqual(('INACTIVE', 'PENDING', 'instance-reservation-1'),
                         (shown['state'], shown['blazar_status'],
                          shown['name']))
        self.assertEqual([(4, 1, 'INACTIVE')], [
            (r['vcpus'], r['amount'], r['state'])
            for r in shown['reservations']])

    def test_an_availability_zone_places_and_boots_only_on_its_hosts(self):
        zone_host = self.computes[0]
        agg = self.nova.aggregates.create('terms-zone', 'terms-az')
        self.addCleanup(self.nova.aggregates.delete, agg.id)
        self.nova.aggregates.add_host(agg.id, zone_host)
        self.addCleanup(self.nova.aggregates.remove_host, agg.id, zone_host)
        refused = self.assertRaises(
            pcloud_client.PcloudError, self.alt._request, 'POST', '/leases',
            {'name': 'terms-nowhere', 'start_date': 'now', 'events': [],
             'end_date': _minute(hours=1),
             'reservations': [dict(self._slot(64),
                                   availability_zone='nowhere')]})
        self.assertEqual(400, refused.code, refused)
        self.assertIn("no availability zone 'nowhere'", str(refused))
        self.assertIn('terms-az', str(refused))
        # Nova writes the host's aggregate into Placement; blazar-manager's
        # mirror reads it on its next pass: until then no host is in the
        # zone as the ledger knows it (409).
        deadline = time.monotonic() + 60
        while True:
            try:
                lease = self._lease(self.alt, dict(
                    self._slot(64), amount=2, availability_zone='terms-az'))
                break
            except pcloud_client.PcloudError as e:
                self.assertEqual(409, e.code, e)
                self.assertLess(time.monotonic(), deadline,
                                'the zone never had room: %s' % e)
                time.sleep(2)
        self.assertEqual([zone_host], self._slot_hosts(lease))
        self._settled(lease, common.ALT_USER, 'ACTIVE')
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        for n in range(2):
            server = fixture.boot(self, self.cli, 'terms-zone-%d' % n, rid,
                                  common.ALT_USER)
            self.assertEqual(zone_host, server['OS-EXT-SRV-ATTR:host'])

    def test_blazar_properties_place_and_boot_only_on_hosts_named(self):
        # The two hosts the lease would take without properties; named,
        # the two others take it.
        slots = dict(self._slot(64), amount=2, affinity=False)
        probe = self._lease(self.alt, slots)
        unnamed = self._slot_hosts(probe)
        fixture.delete_lease(self.alt, probe['id'])
        named = [host for host in self.computes if host not in unnamed][:2]
        self.assertEqual(2, len(named), unnamed)
        expr = json.dumps(['or'] + [['=', '$hypervisor_hostname', host]
                                    for host in named])
        lease = self._lease(self.alt, dict(slots, resource_properties=expr))
        self.assertEqual(sorted(named), sorted(self._slot_hosts(lease)))
        self._settled(lease, common.ALT_USER, 'ACTIVE')
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        landed = [fixture.boot(self, self.cli, 'terms-named-%d' % n, rid,
                               common.ALT_USER)['OS-EXT-SRV-ATTR:host']
                  for n in range(2)]
        self.assertEqual(sorted(named), sorted(landed))
        # A host that does not exist, or more VCPUs than any compute has:
        # no host to place on (409), saying which hosts were asked for.
        for none in (['=', '$hypervisor_hostname', 'no-such-host'],
                     ['>', '$vcpus', '1000000']):
            refusal = self._refused(
                self._lease, self.alt, dict(
                    self._slot(64), resource_properties=json.dumps(none)))
            self.assertIn('resource_properties %s' % json.dumps(none),
                          refusal)
            self.assertIn('Only 0 of 1 slots fit', refusal)
        # A name that is no host fact: 400, listing those there are.
        refused = self.assertRaises(
            pcloud_client.PcloudError, self._lease, self.alt, dict(
                self._slot(64), resource_properties='[">", "$cpus", "1"]'))
        self.assertEqual(400, refused.code, refused)
        self.assertIn('resource_properties (no host fact $cpus; it may name '
                      '$hypervisor_hostname', str(refused))

    def test_slots_over_max_unit_in_sum_are_admitted_and_booted(self):
        # Ten 2-vCPU slots on one host of at most 16 cores are ten
        # instances: 20 cores, over its VCPU max_unit (its cores), within
        # what it holds at its CPU ratio and the project's cores quota.
        # Before, refused.
        lease = self._lease(self.alt, dict(
            self._slot(256), amount=10, vcpus=2, affinity=True,
            resource_properties='["<=", "$vcpus", "16"]'))
        (host,) = self._slot_hosts(lease)
        cores = {c['name']: c['vcpus'] for c in self.sandbox.computes}
        self.assertLess(cores[host], 2 * 10)
        self._settled(lease, common.ALT_USER, 'ACTIVE')
        rid = fixture.reservation_of(self.sandbox, lease['id'])

        def servers():
            return self.nova.servers.list(search_opts={
                'all_tenants': 1, 'name': '^terms-max-unit-'})

        def delete_them():
            ids = [server.id for server in servers()]
            if ids:
                self.cli.run('openstack', 'server', 'delete', '--wait',
                             *ids, user=common.ALT_USER)
        self.addCleanup(delete_them)
        self.cli.run('openstack', 'server', 'create', '--flavor', rid,
                     '--image', 'cirros', '--nic', 'none', '--min',
                     '10', '--max', '10', 'terms-max-unit',
                     user=common.ALT_USER)
        deadline = time.monotonic() + 180
        while True:
            found = servers()
            statuses = sorted(s.status for s in found)
            if statuses == ['ACTIVE'] * 10 or 'ERROR' in statuses:
                break
            self.assertLess(time.monotonic(), deadline, statuses)
            time.sleep(2)
        self.assertEqual(['ACTIVE'] * 10, statuses)
        self.assertEqual({host}, {getattr(s, 'OS-EXT-SRV-ATTR:host')
                                  for s in found})

    def test_whole_host_terms_lease_and_boot_only_hosts_meeting_them(self):
        cores = {c['name']: c['vcpus'] for c in self.sandbox.computes}
        small, big = sorted(self.computes[-2:], key=cores.get)
        flavor = self._pool(small, big)
        pcloud = self._pcloud(self.demo)
        # Metadata of a Nova aggregate the big host alone is in.
        agg = self.nova.aggregates.create('terms-metadata', None)
        self.addCleanup(self.nova.aggregates.delete, agg.id)
        self.nova.aggregates.set_metadata(agg.id, {'terms_disk': 'fast'})
        self.nova.aggregates.add_host(agg.id, big)
        self.addCleanup(self.nova.aggregates.remove_host, agg.id, big)

        def lease(**terms):
            return self._lease(self.demo, dict(
                {'resource_type': 'pcloud:host', 'amount': 1,
                 'host_flavor': flavor, 'pcloud_id': pcloud,
                 'lease_type': 'IMMEDIATE'}, **terms))
        # Each term alone, as no host of the flavor meets it: 409 naming
        # it.
        size = {c['name']: c for c in self.sandbox.computes}[big]
        for term, value, named in (
                ('vcpus', cores[big] + 1, 'vcpus at least %d' % (
                    cores[big] + 1)),
                ('memory_mb', size['memory_mb'] + 1, 'memory_mb at least'),
                ('disk_gb', size['disk_gb'] + 1, 'disk_gb at least'),
                ('resource_properties', json.dumps(
                    ['>', '$vcpus', str(cores[big])]), 'resource_properties'),
                ('availability_zone', 'nowhere', 'availability zone nowhere'),
                ('capabilities:hypervisor_hostname', 's== nowhere',
                 'capabilities:hypervisor_hostname'),
                ('aggregate_instance_extra_specs:terms_disk', 'slow',
                 'aggregate_instance_extra_specs:terms_disk')):
            self.assertIn(named, self._refused(lease, **{term: value}))
        # Terms the big host alone meets: it is leased, and boots land
        # there.
        leased = lease(**{
            'vcpus': cores[big], 'memory_mb': size['memory_mb'],
            'disk_gb': size['disk_gb'], 'local_gb': '>= 1',
            'hypervisor_properties': json.dumps(['>=', '$memory_mb', '1']),
            'capabilities:hypervisor_hostname': '<or> %s <or> %s' % (
                small, big),
            'aggregate_instance_extra_specs:terms_disk': 'fast'})
        self.assertEqual('ACTIVE', self._settled(
            leased, common.DEMO_USER, 'ACTIVE', 'ERROR'))
        self.assertEqual({big: pcloud, small: None}, self._holders(flavor))
        _server, host = self._boot('terms-host', 'm1.tiny', common.DEMO_USER,
                                   '--hint', 'pcloud=%s' % pcloud)
        self.assertEqual(big, host)
