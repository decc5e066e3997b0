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
"""Lease terms both plugins read the same way."""

from oslo_utils import timeutils

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import exception

# seeds/001's region: a term of every reservation of ours, about where the
# lease is rather than what it holds; honoured where a request enters
# (api.lease_guard: this cloud's region or a 400), stored nowhere.
REGION = 'region'
# How Blazar writes and reads a lease's dates, to the minute (UTC).
LEASE_DATE = '%Y-%m-%d %H:%M'


def lease_window(start, end):
    """(start, end) of a lease, if the ledger holds them exactly.

    Blazar accepts dates up to 9999-12-31 23:59; the ledger holds moments
    before capacity.window.FOREVER. A window it cannot hold is a 400
    naming the date, never clamped into another meaning.
    """
    try:
        window_mod.Window.of(start, end)
    except exception.InvalidWindow as e:
        raise exception.InvalidTerm(param='%s_date (%s)' % (
            e.kwargs.get('field', 'start'), e.kwargs['reason']))
    return start, end


def moment(text, field):
    """A moment as the API takes one (ISO 8601 or "YYYY-MM-DD HH:MM",

    UTC), as naive UTC; SchemaViolation naming ``field`` otherwise.
    """
    try:
        found = timeutils.parse_isotime(text)
    except ValueError:
        try:
            # Also "2031-01-01 9:00", which parse_isotime refuses.
            found = timeutils.parse_strtime(text, LEASE_DATE)
        except ValueError:
            raise _invalid(field, 'a date like "2031-01-01 12:00" or '
                           'ISO 8601, got %r' % text)
    try:
        found = window_mod.normalize(found, field)
    except OverflowError:
        # An offset that takes it before year 1 (or past 9999).
        raise _invalid(field, 'must be from year 1 to %s, got %r'
                       % (window_mod.FOREVER, text))
    if found >= window_mod.FOREVER:
        raise _invalid(field, 'must be before %s' % window_mod.FOREVER)
    return found


def _invalid(field, reason):
    return exception.SchemaViolation(field=field, reason=reason)
