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
"""The one plan-and-claim loop (reservations.admission.Races)."""

from unittest import mock

from pcloud_plugin import exception
from pcloud_plugin.reservations import admission
from pcloud_plugin.tests import base


def _claims(*outcomes):
    """A claim that raises or returns each of ``outcomes`` in turn."""
    outcomes = list(outcomes)

    def claim(plan):
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    return claim


def _admit(claim, attempts=3, **kwargs):
    """A loop as the plugins write it: (plans made, result or None)."""
    plans = []
    races = admission.Races(attempts, 'r1', **kwargs)
    for race in races:
        plans.append(len(plans) + 1)
        with race:
            return plans, claim(plans[-1]), races
    return plans, None, races


class RacesTest(base.TestCase):

    def test_a_claim_that_wins_returns_its_plan_at_once(self):
        plans, result, races = _admit(_claims('claimed'))
        self.assertEqual(([1], 'claimed', None), (plans, result, races.last))

    def test_each_lost_race_is_planned_again_from_a_fresh_read(self):
        for lost in (exception.CapacityExceeded('lost'),
                     exception.HostBusy('lost'),
                     exception.ConcurrentUpdateDetected('lost'),
                     exception.ResourceProviderNotFound('gone')):
            plans, result, _races = _admit(_claims(lost, 'claimed'))
            self.assertEqual(([1, 2], 'claimed'), (plans, result), lost)

    def test_every_attempt_lost_leaves_the_last_loss(self):
        last = exception.HostBusy('lost')
        plans, result, races = _admit(_claims(
            exception.CapacityExceeded('lost'),
            exception.CapacityExceeded('lost'),
            last))
        self.assertEqual(([1, 2, 3], None), (plans, result))
        self.assertIs(last, races.last)

    def test_another_failure_is_not_a_race_and_goes_through(self):
        self.assertRaises(exception.NovaError, _admit,
                          _claims(exception.NovaError('down')))
        self.assertRaises(exception.Invalid, _admit,
                          _claims(exception.Invalid('no')))

    def test_a_claimer_names_its_own_losses(self):
        class Refused(exception.Conflict):
            pass

        plans, result, races = _admit(
            _claims(Refused('full'), 'claimed'),
            lost_on=admission.LOST_RACE + (Refused,))
        self.assertEqual(([1, 2], 'claimed'), (plans, result))
        self.assertRaises(Refused, _admit, _claims(Refused('full')))

    def test_the_loss_is_known_right_after_the_claim_and_no_one_sleeps(self):
        lost = exception.HostBusy('lost')
        claim = _claims(lost, 'claimed')
        seen = []
        with mock.patch('time.sleep') as sleep:
            for race in admission.Races(3, 'r1'):
                with race:
                    result = claim(None)
                    break
                seen.append(race.last)
        self.assertEqual(([lost], 'claimed'), (seen, result))
        sleep.assert_not_called()

    def test_another_failure_leaves_at_the_claim(self):
        after = []
        races = admission.Races(3, 'r1')

        def admit():
            for race in races:
                with race:
                    raise exception.NovaError('down')
                after.append(race)
        self.assertRaises(exception.NovaError, admit)
        self.assertEqual([], after)

    def test_a_plan_set_aside_before_its_claim_counts_as_an_attempt(self):
        plans = []
        for race in admission.Races(3, 'r1'):
            plans.append(race)
            if len(plans) == 1:
                continue  # a stale read: plan again
            with race:
                raise exception.HostBusy('lost')
        self.assertEqual(3, len(plans))
