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
"""The usage record every usage event carries, and where its interval is.

Each change of what a project holds is one event, and each such event is
a usage record: ``per_host`` and ``totals`` were (or are) held from
``held_from`` to ``held_to``, both real times. A record whose
``held_to`` is set is ``closed``: final, and what to bill. A record that
opens (a start, an allocation) has ``held_to`` null and zero hours.
``record_id`` names the interval (what, and since when): the opening
record and the closing one of an interval share it, and an event sent
again after a crash repeats it, so a consumer bills each closed
``record_id`` once.

Where an interval starts is the ledger's: the start of the claim that
holds it (held_since). A change that closes an interval moves that
start to its own moment (the instance plugin's active updates do), so
that the next record starts where the last one stopped.

The event bodies of each reservation kind build on record():
``instance_payloads`` and ``host_payloads``; ``usage`` sends them.
"""

import collections

from oslo_utils import timeutils

# Per-host amounts summed into totals, and the field of each's
# amount x hours (what the meters of etc/ceilometer read).
QUANTITIES = {'slots': 'slot_hours', 'vcpus': 'vcpu_hours',
              'memory_mb': 'memory_mb_hours', 'disk_gb': 'disk_gb_hours',
              'hosts': 'host_hours'}


def moment(value):
    return value.isoformat() if value is not None else None


def utcnow():
    """Now, to the whole second: the times of records."""
    return timeutils.utcnow().replace(microsecond=0)


def held_since(claims, fallback, now=None):
    """Where the interval a claim holds began: the claim's start

    (db.claims.get_claims), or ``fallback`` when there is none; never
    later than now.
    """
    start = claims['start'] if claims else fallback
    now = now or utcnow()
    return now if start is None or start > now else start


def held_until(claims, now=None):
    """Where an interval that ends now ends: now, unless the claim ended

    before (its end event ran late: the ledger let it go at its end).
    """
    now = now or utcnow()
    end = claims['end'] if claims else None
    return end if end is not None and end < now else now


def instances(stays):
    """The instances that ran under a reservation, as a closing record

    says them: [{'id', 'joined_at', 'left_at' (null: still running)}].
    """
    return [{'id': stay['id'], 'joined_at': moment(stay['joined_at']),
             'left_at': moment(stay['left_at'])} for stay in stays]


def record(resource_type, resource_id, project_id, per_host, held_from,
           held_to=None, at=None):
    """The usage record of per_host held from held_from to held_to

    (None: still held; held_from None: nothing held).
    """
    totals = collections.Counter()
    for entry in per_host:
        totals.update({q: entry[q] for q in QUANTITIES if q in entry})
    closed = held_from is not None and held_to is not None
    seconds = max(0, int((held_to - held_from).total_seconds())) \
        if closed else 0
    hours = seconds / 3600.0
    found = {
        'resource_type': resource_type,
        'resource_id': resource_id,
        'project_id': project_id,
        'record_id': ('%s@%s' % (resource_id, moment(held_from))
                      if held_from is not None else None),
        'held_from': moment(held_from),
        'held_to': moment(held_to),
        'closed': closed,
        'seconds': seconds,
        'hours': hours,
        'per_host': per_host,
        'totals': dict(totals),
        'at': moment(at or timeutils.utcnow()),
    }
    # Every field, 0 where it does not apply: a meter never reads null.
    found.update((field, totals.get(q, 0) * hours)
                 for q, field in QUANTITIES.items())
    return found


def changed(body, before, now, at):
    """An update's body: ``body``, the closed record of what ``before``

    (a reservation record of either kind) held until ``at``, with what
    it was (``previous_*``) and ``next``, what ``now`` (the body of the
    reservation after the change) holds from then.
    """
    body['previous_amount'] = before['amount']
    body['previous_end'] = moment(before['end_time'])
    body['next'] = {'held_from': moment(at), 'per_host': now['per_host'],
                    'totals': now['totals'], 'end': now['end']}
    return body
