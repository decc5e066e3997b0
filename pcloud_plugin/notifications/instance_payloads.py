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
"""The bodies of virtual:instance reservations' usage events.

What ``pcloud.reservation.start``, ``.update`` and ``.end`` carry
(usage.UsageNotifier sends them): the reservation as it is, and the
usage record (usage_records) of its slots on each host.
"""

from pcloud_plugin.notifications import usage_records

RESOURCE_TYPE = 'virtual:instance'


def per_host(reservation):
    """Per host: its slots and what they are, of a reservation record

    (db.reservations).
    """
    return [{'host': s['host_name'], 'host_uuid': s['host_uuid'],
             'slots': s['slots'],
             'vcpus': s['slots'] * reservation['vcpus'],
             'memory_mb': s['slots'] * reservation['memory_mb'],
             'disk_gb': s['slots'] * reservation['disk_gb']}
            for s in reservation['slots']]


def payload(reservation, held_from=None, held_to=None, at=None):
    """The event body of a reservation record (db.reservations.get):

    the reservation as it is, and the usage record of its slots from
    held_from (default: its start) to held_to.
    """
    if held_from is None:
        held_from = reservation['start_time']
    body = usage_records.record(
        RESOURCE_TYPE, reservation['reservation_id'],
        reservation['project_id'], per_host(reservation), held_from,
        held_to, at)
    body.update({
        'reservation_id': reservation['reservation_id'],
        'lease_id': reservation['lease_id'],
        'vcpus': reservation['vcpus'],
        'memory_mb': reservation['memory_mb'],
        'disk_gb': reservation['disk_gb'],
        'amount': reservation['amount'],
        'affinity': reservation['affinity'],
        'flavor_id': reservation['flavor_id'],
        'resource_class': reservation['resource_class'],
        'start': usage_records.moment(reservation['start_time']),
        'end': usage_records.moment(reservation['end_time']),
        'slots': [{'host': s['host_name'], 'host_uuid': s['host_uuid'],
                   'slots': s['slots']} for s in reservation['slots']],
    })
    return body


def update_payload(before, after, held_from, at):
    """An active reservation changed at ``at``: the record of what

    ``before`` held since held_from, closed; ``next``, what ``after``
    holds from then. The rest describes the reservation as it is now.
    """
    body = payload(before, held_from, at, at)
    now = payload(after)
    body.update((k, now[k]) for k in (
        'amount', 'flavor_id', 'start', 'end', 'slots'))
    return usage_records.changed(body, before, now, at)


def end_payload(reservation, held_from, held_to, at=None, instances=()):
    """``instances``: the registry's stays of the reservation."""
    body = payload(reservation, held_from, held_to, at)
    body['ended_early'] = held_to < reservation['end_time']
    body['instances'] = usage_records.instances(instances)
    return body
