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
"""Operators' maintenance windows (reservations.maintenance), stored.

Its hold on the hosts is a ledger claim (host_reservations.hold_free)
whose consumer is the maintenance id; this table keeps the rest.
"""

import json

from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin import exception

_MAINT = models.Maintenance.__table__
# Being booked: its reservations moving (a crash leaves it so).
BOOKING = 'BOOKING'
SCHEDULED = 'SCHEDULED'
ACTIVE = 'ACTIVE'
DONE = 'DONE'
_JSON = ('hosts', 'report')


def _as_dict(row):
    found = dict(row)
    for field in _JSON:
        found[field] = json.loads(found[field])
    return found


@db_api.retry_on_deadlock
def create(context, maintenance_id, hosts, start, end, reason):
    """Record one being booked (BOOKING)."""
    with db_api.writer(context) as session:
        session.execute(_MAINT.insert().values(
            id=maintenance_id, hosts=json.dumps(hosts), start_time=start,
            end_time=end, reason=reason, state=BOOKING,
            report=json.dumps({'moved': [], 'unmovable': []}),
            created_at=timeutils.utcnow()))


@db_api.retry_on_deadlock
def get(context, maintenance_id):
    with db_api.reader(context) as session:
        row = session.execute(sa.select(_MAINT).where(
            _MAINT.c.id == maintenance_id)).mappings().first()
    if row is None:
        raise exception.MaintenanceNotFound(maintenance=maintenance_id)
    return _as_dict(row)


@db_api.retry_on_deadlock
def list_all(context, states=None):
    """Maintenances by start, those in ``states`` only if given."""
    query = sa.select(_MAINT).order_by(_MAINT.c.start_time, _MAINT.c.id)
    if states is not None:
        query = query.where(_MAINT.c.state.in_(states))
    with db_api.reader(context) as session:
        return [_as_dict(row) for row in session.execute(query).mappings()]


@db_api.retry_on_deadlock
def advance(context, maintenance_id, from_state, to_state, **values):
    """Move it from ``from_state`` to ``to_state``, with new ``hosts``

    or ``report`` if given: False if it was not in ``from_state``
    (another process moved it first).
    """
    values = {field: json.dumps(value) for field, value in values.items()}
    values.update(state=to_state, updated_at=timeutils.utcnow())
    with db_api.writer(context) as session:
        return session.execute(_MAINT.update().where(
            _MAINT.c.id == maintenance_id,
            _MAINT.c.state == from_state).values(**values)).rowcount == 1


@db_api.retry_on_deadlock
def delete(context, maintenance_id):
    with db_api.writer(context) as session:
        session.execute(_MAINT.delete().where(_MAINT.c.id == maintenance_id))
