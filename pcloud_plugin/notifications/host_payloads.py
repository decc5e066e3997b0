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
"""The bodies of the usage events of whole hosts: pcloud:host
reservations' and those of the hosts pclouds hold for good.

What ``pcloud.host_reservation.<state>`` and ``.update`` carry, and
``pcloud.pcloud_host.allocated`` and ``.released`` (usage.UsageNotifier
sends them): the reservation or host as it is, and the usage record
(usage_records) of its hosts, each under its name in the pcloud.
"""

from pcloud_plugin.notifications import usage_records

RESOURCE_TYPE = 'pcloud:host'
PERMANENT_HOST = 'pcloud:permanent_host'


def per_host(row):
    """Per host of a host reservation record (db.host_reservations),

    by its name in the pcloud only (seeds/000: users never learn the real
    host names).
    """
    return [{'host': h['name'], 'host_flavor': row['host_flavor'],
             'hosts': 1} for h in row['hosts']]


def payload(row, previous=None, held_from=None, held_to=None, at=None,
            instances=()):
    """The event body of a host reservation record: the reservation as

    it is, and the usage record of its hosts (held_from None: a state in
    which it holds none); a closing one says the ``instances`` (the
    registry's stays) that ran under it.
    """
    body = usage_records.record(
        RESOURCE_TYPE, row['reservation_id'], row['project_id'],
        per_host(row) if held_from is not None else [], held_from, held_to,
        at)
    body.update({
        'reservation_id': row['reservation_id'],
        'lease_id': row['lease_id'],
        'pcloud_id': row['pcloud_id'],
        'host_flavor': row['host_flavor'],
        'amount': row['amount'],
        'lease_type': row['lease_type'],
        'state': row['state'],
        'previous_state': previous,
        'start': usage_records.moment(row['start_time']),
        'end': usage_records.moment(row['end_time']),
        'deadline': usage_records.moment(row['deadline']),
        'hosts': [h['name'] for h in row['hosts']],
    })
    if held_to is not None:
        body['ended_early'] = held_to < row['end_time']
        body['instances'] = usage_records.instances(instances)
    return body


def update_payload(before, after, held_from, at):
    """An active host reservation's hosts changed at ``at`` (hosts

    joined or left): the record of ``before``'s since held_from, closed;
    ``next``, what ``after`` holds from then. For a change of its end
    alone, which keeps the interval open, send payload instead.
    """
    body = payload(before, before['state'], held_from, at, at)
    del body['ended_early']
    now = payload(after, before['state'], at)
    body.update((k, now[k]) for k in ('amount', 'end', 'hosts', 'state'))
    return usage_records.changed(body, before, now, at)


# --- hosts of pclouds, for good --------------------------------------------

def pcloud_host_payload(project_id, pcloud_id, name, host_flavor,
                        held_from, held_to=None, at=None):
    """A host a pcloud holds for good, under its name there."""
    body = usage_records.record(
        PERMANENT_HOST, '%s/%s' % (pcloud_id, name), project_id,
        [{'host': name, 'host_flavor': host_flavor, 'hosts': 1}], held_from,
        held_to, at)
    body.update({'pcloud_id': pcloud_id, 'host': name,
                 'host_flavor': host_flavor})
    return body
