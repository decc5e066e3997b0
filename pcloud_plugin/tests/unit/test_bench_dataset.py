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

"""bench.dataset: the instance reservations the admission bench loads."""

import collections
import datetime

from bench import dataset
from pcloud_plugin.tests import base


class DatasetTest(base.TestCase):

    def setUp(self):
        super().setUp()
        # Few hosts for many reservations: most hosts get crowded.
        self.data = dataset.Dataset(20, 600, seed=7)

    def test_same_seed_same_data(self):
        again = dataset.Dataset(20, 600, seed=7)
        other = dataset.Dataset(20, 600, seed=8)
        self.assertEqual(self.data.hosts, again.hosts)
        self.assertEqual(self.data.reservations, again.reservations)
        self.assertEqual(self.data.requests(20, 1), again.requests(20, 1))
        self.assertNotEqual(self.data.reservations, other.reservations)

    def test_no_host_overbooked_at_any_hour(self):
        used = collections.defaultdict(lambda: [0, 0, 0])
        for r in self.data.reservations:
            for index, slots in r.hosts.items():
                for hour in range(r.start, r.end):
                    for k in range(3):
                        used[index, hour][k] += slots * r.flavor[k]
        for (index, hour), usage in used.items():
            size = self.data.hosts[index].size
            self.assertTrue(all(u <= s for u, s in zip(usage, size)),
                            'host %d at hour %d: %s of %s'
                            % (index, hour, usage, size))
        # Crowded: some had to be drawn again, so the check was at work.
        self.assertGreater(self.data.redrawn, 0)

    def test_affinity_kept(self):
        for r in self.data.reservations:
            self.assertEqual(r.amount, sum(r.hosts.values()))
            if r.affinity is True:
                self.assertEqual(1, len(r.hosts))
            elif r.affinity is False:
                self.assertEqual({1}, set(r.hosts.values()))

    def test_mixed_not_uniform(self):
        rs = self.data.reservations
        self.assertEqual({True, False, None}, {r.affinity for r in rs})
        self.assertGreaterEqual(len({r.flavor for r in rs}), 5)
        self.assertEqual(set(range(1, 11)), {r.amount for r in rs})
        lengths = [r.end - r.start for r in rs]
        self.assertEqual(1, min(lengths))
        self.assertGreater(max(lengths), 5 * 24)
        self.assertLessEqual(max(lengths), dataset.MAX_HOURS)
        self.assertTrue(all(0 <= r.start and r.end <= dataset.HOURS
                            for r in rs))
        self.assertGreaterEqual(len({h.size for h in self.data.hosts}), 3)

    def test_requests(self):
        requests = self.data.requests(300, seed=3)
        self.assertEqual({True, False, None},
                         {q.affinity for q in requests})
        amounts = [q.amount for q in requests]
        self.assertEqual(1, min(amounts))
        self.assertGreater(max(amounts), 30)
        self.assertLessEqual(max(amounts), 50)
        largest = max(size for size, _w in dataset.HOST_SIZES)
        for q in requests:
            if q.affinity is True:
                self.assertLessEqual(q.amount * q.flavor[0], largest[0])

    def test_rows_hold_the_reservations(self):
        now = datetime.datetime(2030, 1, 1)
        ledger = self.data.ledger_rows(now)
        blazar = self.data.blazar_rows(now)
        used = collections.Counter()
        for row in ledger['allocations']:
            used[row['consumer_id'], row['resource_class_id']] += row['used']
        per_slot = collections.Counter(
            row['reservation_id'] for row in
            blazar['computehost_allocations'])
        for r in self.data.reservations:
            for k in range(3):
                self.assertEqual(r.amount * r.flavor[k], used[r.id, k + 1])
            self.assertEqual(r.amount, per_slot[r.id])
        self.assertEqual(len(self.data.reservations),
                         len(ledger['consumers']))
        self.assertEqual(2 * len(self.data.reservations),
                         len(blazar['events']))
