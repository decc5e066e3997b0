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

"""seeds/000's race protection, against the real Nova API and database.

Ten allocations start at once, each from its own project into its own
pcloud, each with its own Pcloud service and novaclient session (as if
served by different API workers), for a pool with three free hosts.
"""

import logging
import threading
import time

import fixtures
import testtools

from pcloud_plugin import exception
from pcloud_plugin.tests.functional.nova import base

CONTENDERS = 10


class AllocationRaceTests(base.PcloudNovaTestCase):

    HOSTS = ('host1', 'host2', 'host3', 'host4')

    def test_ten_allocations_three_free_hosts(self):
        self.make_pool(hosts=('host1', 'host2', 'host3'))
        log = self.useFixture(fixtures.FakeLogger(
            name='pcloud_plugin.pcloud.service', level=logging.INFO))
        projects = ['project%d' % i for i in range(CONTENDERS)]
        pclouds = {p: self.service.create_pcloud(base.user(p), p)['id']
                   for p in projects}
        services = {p: self.make_service() for p in projects}
        results = {}
        start = threading.Barrier(CONTENDERS)

        def allocate(project):
            start.wait()
            try:
                results[project] = services[project].allocate_host(
                    base.user(project), pclouds[project], 'mine', 'big')
            except Exception as e:
                results[project] = e

        threads = [threading.Thread(target=allocate, args=(p,))
                   for p in projects]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        won = sorted(p for p, r in results.items() if isinstance(r, dict))
        lost = [r for r in results.values() if not isinstance(r, dict)]
        self.assertEqual(3, len(won), results)
        for error in lost:
            self.assertIsInstance(error, exception.NoFreeHost)
            self.assertIn('No free host of host flavor big', str(error))
        held = {}
        for agg in self.service.nova.aggregates.list():
            if agg.metadata.get('pcloud:type') == 'pcloud':
                for host in agg.hosts:
                    self.assertNotIn(host, held, 'in two pclouds')
                    held[host] = agg.metadata['pcloud:owner']
        self.assertEqual(['host1', 'host2', 'host3'], sorted(held))
        self.assertEqual(won, sorted(held.values()))
        for project in won:
            hosts = self.service.list_hosts(base.user(project),
                                            pclouds[project])
            self.assertEqual([('mine', 'disabled')],
                             [(h['name'], h['state']) for h in hosts])
        self.addDetail('race', testtools.content.text_content(
            '%d won, %d refused, %d collisions given back, %.1f s' % (
                len(won), len(lost), log.output.count('lost a host'),
                time.monotonic() - started)))
