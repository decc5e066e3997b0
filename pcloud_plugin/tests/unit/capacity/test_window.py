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

import datetime
import random

from pcloud_plugin.capacity import window
from pcloud_plugin.tests import base

T0 = datetime.datetime(2030, 1, 1)


def hours(n):
    return T0 + datetime.timedelta(hours=n)


class UsageStepsTests(base.TestCase):

    def test_plus_is_as_if_built_from_every_claim(self):
        rng = random.Random(5)
        for _n in range(200):
            claims = [(hours(a), None if rng.random() < 0.1 else
                       hours(a + rng.randint(1, 9)), rng.randint(1, 4))
                      for a in (rng.randrange(20)
                                for _c in range(rng.randint(0, 6)))]
            cut = rng.randint(0, len(claims))
            part = window.UsageSteps(claims[:cut])
            if rng.random() < 0.5:
                part.seconds()  # made before: carried along
            grown = part.plus(claims[cut:])
            whole = window.UsageSteps(claims)
            self.assertEqual((whole.times, whole.levels, whole.top),
                             (grown.times, grown.levels, grown.top))
            self.assertEqual(whole.ends, grown.ends)
            self.assertEqual(whole.seconds().tolist(),
                             grown.seconds().tolist())
            self.assertEqual(whole.levels_array().tolist(),
                             grown.levels_array().tolist())

    def test_no_claims(self):
        self.assertEqual((0, None), window.UsageSteps([]).peak(
            hours(0), window.FOREVER))

    def test_peak_and_first_moment_of_it(self):
        steps = window.UsageSteps([(hours(0), hours(4), 2),
                                   (hours(2), hours(6), 3),
                                   (hours(5), hours(8), 3)])
        self.assertEqual((6, hours(5)), steps.peak(hours(0), hours(10)))
        self.assertEqual((5, hours(2)), steps.peak(hours(0), hours(5)))
        # Clipped: the peak is reached at the window's own start.
        self.assertEqual((5, hours(3)), steps.peak(hours(3), hours(4)))
        self.assertEqual((3, hours(4)), steps.peak(hours(4), hours(5)))
        self.assertEqual((0, None), steps.peak(hours(8), hours(9)))
        self.assertEqual((0, None), steps.peak(hours(20), window.FOREVER))
        self.assertEqual((0, None), steps.peak(hours(-3), hours(0)))

    def test_touching_claims_do_not_overlap(self):
        steps = window.UsageSteps([(hours(0), hours(1), 4),
                                   (hours(1), hours(2), 4)])
        self.assertEqual((4, hours(0)), steps.peak(hours(0), hours(2)))

    def test_open_end(self):
        steps = window.UsageSteps([(hours(1), None, 2),
                                   (hours(3), window.FOREVER, 1)])
        self.assertEqual((3, hours(3)), steps.peak(hours(0), window.FOREVER))
        self.assertEqual((3, hours(500)), steps.peak(hours(500), hours(501)))

    def test_matches_an_hour_by_hour_count(self):
        rng = random.Random(11)
        for _ in range(1000):
            claims = []
            for _ in range(rng.randint(0, 12)):
                start = rng.randrange(48)
                claims.append((start, start + rng.randint(1, 24),
                               rng.randint(0, 5)))
            start = rng.randrange(-5, 60)
            end = start + rng.randint(1, 30)
            by_hour = [(sum(u for s, e, u in claims if s <= h < e), h)
                       for h in range(start, end)]
            peak = max(level for level, _h in by_hour)
            first = min((h for level, h in by_hour if level == peak),
                        default=None)
            expected = (peak, hours(first)) if peak else (0, None)
            steps = window.UsageSteps(
                [(hours(s), hours(e), u) for s, e, u in claims])
            self.assertEqual(expected, steps.peak(hours(start), hours(end)),
                             '%s in [%d, %d)' % (claims, start, end))

    def test_between_lists_each_change_in_the_window(self):
        steps = window.UsageSteps([(hours(0), hours(4), 2),
                                   (hours(2), None, 3)])
        self.assertEqual([(hours(1), 2), (hours(2), 5), (hours(4), 3)],
                         steps.between(hours(1), hours(9)))
        self.assertEqual([(hours(-1), 0), (hours(0), 2)],
                         steps.between(hours(-1), hours(2)))
        self.assertEqual([(hours(5), 3)], steps.between(hours(5), hours(6)))
