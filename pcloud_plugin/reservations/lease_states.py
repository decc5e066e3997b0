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
"""A lease as seeds/001 names its states, with the terms it was given.

Blazar shows a lease ACTIVE while a BEST-EFFORT reservation still waits
for other projects' instances to move (IN-PROGRESS) or after it gave up
(TIMEDOUT), and a whole-host reservation without any of its terms. This
says, from our records alone, what each of the lease's reservations of
our types asks and which state it is in, and the lease's state from
them: INACTIVE (admitted, not started), IN-PROGRESS, ACTIVE, TIMEDOUT or
ENDED.
"""

from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.reservations import registry

INACTIVE = host_db.INACTIVE
IN_PROGRESS = host_db.IN_PROGRESS
ACTIVE = host_db.ACTIVE
TIMEDOUT = host_db.TIMEDOUT
ENDED = host_db.ENDED

HOST_TYPE = 'pcloud:host'
INSTANCE_TYPE = 'virtual:instance'
HOST_TERMS = ('amount', 'host_flavor', 'pcloud_id', 'lease_type', 'timeout',
              'availability_zone', 'required_traits', 'vcpus', 'memory_mb',
              'disk_gb', 'hypervisor_properties', 'resource_properties',
              'capabilities', 'aggregate_metadata')
INSTANCE_TERMS = ('amount', 'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                  'resource_properties', 'availability_zone')
# An instance reservation's record state, as seeds/001 names it.
_INSTANCE_STATES = {res_db.RESERVED: INACTIVE, res_db.ACTIVE: ACTIVE,
                    res_db.ENDING: ENDED}


def _moment(value):
    return value.isoformat() if value is not None else None


def _common(row, resource_type, state):
    return {'id': row['reservation_id'], 'resource_type': resource_type,
            'state': state, 'start_date': _moment(row['start_time']),
            'end_date': _moment(row['end_time'])}


def host_reservation(row):
    """A pcloud:host reservation record as its lessee sees it: its terms,

    its state, when it gives up waiting (IN-PROGRESS), its hosts by
    their names in the pcloud (never the cloud's host names), and the
    hand-over it was warned of.
    """
    shown = _common(row, HOST_TYPE, row['state'])
    shown.update((term, row[term]) for term in HOST_TERMS)
    shown['deadline'] = (_moment(row['deadline'])
                         if row['state'] == IN_PROGRESS else None)
    shown['hosts'] = sorted(h['name'] for h in row['hosts'])
    # Which of them another holder has next, once the lessee was told.
    shown['hand_over'] = row['hand_over']
    return shown


def instance_reservation(row):
    """A virtual:instance reservation record as its lessee sees it."""
    shown = _common(row, INSTANCE_TYPE, _INSTANCE_STATES[row['state']])
    shown.update((term, row[term]) for term in INSTANCE_TERMS)
    shown['flavor_id'] = row['reservation_id']
    return shown


def lease_state(states):
    """The lease's state from its reservations' (seeds/001): any that gave

    up makes it TIMEDOUT, any still waiting IN-PROGRESS; else ENDED when
    all ended, ACTIVE when any runs, INACTIVE before its start.
    """
    states = set(states)
    for state in (TIMEDOUT, IN_PROGRESS):
        if state in states:
            return state
    if states == {ENDED}:
        return ENDED
    return ACTIVE if ACTIVE in states else INACTIVE


def find(context, lease_id=None, project_id=None):
    """[the lease as its lessee sees it] of each lease (the one of

    ``lease_id``, those of ``project_id``, or every one) with a
    reservation of ours, by start.
    """
    found = leases(
        host_db.list_reservations(context, lease_id=lease_id,
                                  project_id=project_id),
        res_db.list_reservations(context, lease_id=lease_id,
                                 project_id=project_id))
    return sorted(found.values(),
                  key=lambda lease: (lease['start_date'], lease['id']))


def with_instances(context, lease):
    """The lease, each reservation with the instances that ran or run in

    it (reservations.registry): [{'id', 'joined_at', 'left_at'}].
    """
    found = registry.instances(context, [r['id'] for r in
                                         lease['reservations']])
    for reservation in lease['reservations']:
        reservation['instances'] = [
            dict(stay, joined_at=_moment(stay['joined_at']),
                 left_at=_moment(stay['left_at']))
            for stay in found[reservation['id']]]
    return lease


def leases(host_rows, instance_rows):
    """{lease id: the lease as its lessee sees it}, from our records of

    its reservations (a lease with none of ours is not there).
    """
    found = {}
    shown = ([(r, host_reservation(r)) for r in host_rows]
             + [(r, instance_reservation(r)) for r in instance_rows])
    for row, reservation in shown:
        lease = found.setdefault(row['lease_id'], {
            'id': row['lease_id'], 'project_id': row['project_id'],
            'reservations': []})
        lease['reservations'].append(reservation)
    for lease in found.values():
        lease['reservations'].sort(key=lambda r: (r['start_date'], r['id']))
        lease['state'] = lease_state(
            r['state'] for r in lease['reservations'])
        lease['start_date'] = min(
            r['start_date'] for r in lease['reservations'])
        lease['end_date'] = max(r['end_date'] for r in lease['reservations'])
    return found


def shown_in_blazar(context, leases):
    """Blazar's lease dicts (its answers to its own lease routes), each

    reservation of ours with its terms and state as seeds/001 names
    them: Blazar shows a whole-host reservation without any. Blazar's
    own fields win over ours of the same name.
    """
    projects = {lease.get('project_id') for lease in leases
                if any(r.get('resource_type') in (HOST_TYPE, INSTANCE_TYPE)
                       for r in lease.get('reservations', ()))}
    ours = {}
    for project_id in projects:
        for lease in find(context, project_id=project_id):
            ours.update((r['id'], r) for r in lease['reservations'])
    for lease in leases:
        for reservation in lease.get('reservations', ()):
            for key, value in ours.get(reservation.get('id'), {}).items():
                reservation.setdefault(key, value)
    return leases


def type_of(context, reservation_id):
    """HOST_TYPE or INSTANCE_TYPE for a reservation of ours, else None."""
    if not isinstance(reservation_id, str):
        return None
    if res_db.reservation_ids(context, among={reservation_id}):
        return INSTANCE_TYPE
    if host_db.list_reservations(context, reservation_id=reservation_id):
        return HOST_TYPE
    return None
