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
"""Capacity arithmetic of one inventory record (seeds/002)."""

import dataclasses
import functools
import math

from pcloud_plugin import exception

# MySQL INT UNSIGNED, the column type of every amount in the ledger.
MAX_AMOUNT = 2 ** 31 - 1


@dataclasses.dataclass(frozen=True)
class Inventory:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_AMOUNT
    step_size: int = 1
    allocation_ratio: float = 1.0

    # Cached: the engine asks for it for every provider of every candidate.
    @functools.cached_property
    def capacity(self):
        """What may be claimed at any one instant: (total - reserved) x ratio.

        Rounded down like Placement does, so both agree on every edge.
        """
        return int((self.total - self.reserved) * self.allocation_ratio)

    def validate(self, provider, resource_class):
        def bad(reason):
            return exception.InvalidInventory(
                provider=provider, resource_class=resource_class,
                reason=reason)

        for field in ('total', 'reserved', 'min_unit', 'max_unit',
                      'step_size'):
            value = getattr(self, field)
            if (not isinstance(value, int) or isinstance(value, bool)
                    or not 0 <= value <= MAX_AMOUNT):
                raise bad('%s must be an integer in [0, %d], got %r'
                          % (field, MAX_AMOUNT, value))
        if self.total < 1:
            raise bad('total must be at least 1')
        if self.min_unit < 1 or self.max_unit < 1 or self.step_size < 1:
            raise bad('min_unit, max_unit and step_size must be at least 1')
        if self.reserved > self.total:
            raise bad('reserved (%d) exceeds total (%d)'
                      % (self.reserved, self.total))
        if self.min_unit > self.max_unit:
            raise bad('min_unit (%d) exceeds max_unit (%d)'
                      % (self.min_unit, self.max_unit))
        ratio = self.allocation_ratio
        if (isinstance(ratio, bool) or not isinstance(ratio, (int, float))
                or not math.isfinite(ratio) or ratio <= 0):
            raise bad('allocation_ratio must be a positive number, got %r'
                      % (ratio,))

    def unit_violation(self, amount):
        """The (rule, limit) that amount breaks, or None if it is fine."""
        if amount < self.min_unit:
            return 'min_unit', self.min_unit
        if amount > self.max_unit:
            return 'max_unit', self.max_unit
        if amount % self.step_size:
            return 'step_size', self.step_size
        return None

    def check_amount(self, provider, resource_class, amount):
        violation = self.unit_violation(amount)
        if violation:
            rule, limit = violation
            raise exception.UnitRuleViolation(
                provider=provider, resource_class=resource_class,
                amount=amount, rule=rule, limit=limit)


def validate_amount(resource_class, amount):
    """A requested amount must be a positive integer."""
    if (not isinstance(amount, int) or isinstance(amount, bool)
            or not 0 < amount <= MAX_AMOUNT):
        raise exception.InvalidAmount(
            resource_class=resource_class, amount=amount,
            reason='must be an integer in [1, %d]' % MAX_AMOUNT)
