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

import numpy as np

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


class StepsByKeyTests(base.TestCase):
    """Steps summed from arrays at once are those built claim by claim."""

    def _claims(self, rng, keys):
        # Hours around T0 (some before the epoch, some open), touching and
        # cancelling out often: few distinct bounds.
        return [(rng.choice(keys), hours(start),
                 window.FOREVER if rng.random() < 0.1
                 else hours(start + rng.randint(1, 6)), rng.randint(0, 4))
                for start in (rng.randrange(-5, 20) * rng.choice((1, 3))
                              for _c in range(rng.randint(0, 40)))]

    def _by_key(self, claims):
        return window.steps_by_key(
            np.array([key for key, _s, _e, _u in claims], dtype=np.int64),
            np.array([window.epoch_seconds(s) for _k, s, _e, _u in claims],
                     dtype=np.int64),
            np.array([window.epoch_seconds(e) for _k, _s, e, _u in claims],
                     dtype=np.int64),
            np.array([u for _k, _s, _e, u in claims], dtype=np.int64))

    def test_each_key_as_built_from_its_own_claims(self):
        rng = random.Random(3)
        # Small keys sort as one int64; large or negative ones apart.
        for keys in ([0, 1, 7], [2 ** 40, 5, -3]):
            for _n in range(1000):
                claims = self._claims(rng, keys)
                if rng.random() < 0.1:
                    # Before the epoch: negative seconds.
                    claims.append((keys[0], datetime.datetime(1969, 7, 1),
                                   hours(2), 1))
                got = self._by_key(claims)
                self.assertEqual(
                    {k for k, _s, _e, _u in claims}, set(got), claims)
                for key, steps in got.items():
                    whole = window.UsageSteps(
                        [(s, e, u) for k, s, e, u in claims if k == key])
                    self.assertEqual(
                        (whole.times, whole.levels, whole.top, whole.ends),
                        (steps.times, steps.levels, steps.top, steps.ends))
                    self.assertEqual(whole.seconds().tolist(),
                                     steps.seconds().tolist())
                    self.assertEqual(whole.levels_array().tolist(),
                                     steps.levels_array().tolist())

    def test_answers_as_steps_built_from_claims(self):
        rng = random.Random(8)
        for _n in range(500):
            claims = self._claims(rng, [1])
            if not claims:
                continue
            (steps,) = self._by_key(claims).values()
            whole = window.UsageSteps([(s, e, u) for _k, s, e, u in claims])
            # Asked before anything else made its moments and lists.
            fresh = self._by_key(claims)[1]
            self.assertEqual(whole.ends, fresh.ends)
            start = hours(rng.randrange(-8, 40))
            end = start + datetime.timedelta(hours=rng.randint(1, 30))
            self.assertEqual(whole.peak(start, end), fresh.peak(start, end))
            self.assertEqual(whole.between(start, end),
                             steps.between(start, end))
            more = [(hours(2), hours(9), 2), (hours(-3), None, 1)]
            grown, also = whole.plus(more), steps.plus(more)
            self.assertEqual((grown.times, grown.levels),
                             (also.times, also.levels))
            self.assertEqual(grown.seconds().tolist(),
                             also.seconds().tolist())

    def test_no_claims(self):
        empty = np.zeros(0, dtype=np.int64)
        self.assertEqual({}, window.steps_by_key(empty, empty, empty, empty))
