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

"""The registry of instances booted into reservations (seeds/001).

A row per stay of an instance in a reservation: open (``left_at`` NULL)
while it runs there, closed when it left. reservations.registry says
who belongs where; this module only writes and reads rows.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models

_ROW = models.LeaseInstance.__table__
_FIELDS = ('instance_uuid', 'reservation_id', 'lease_id', 'host_uuid',
           'joined_at', 'left_at')


def _open(instance_uuid):
    return sa.and_(_ROW.c.instance_uuid == instance_uuid,
                   _ROW.c.left_at.is_(None))


@db_api.retry_on_deadlock
def register(context, instance_uuid, reservation_id, lease_id, host_uuid,
             at=None):
    """The instance runs in ``reservation_id`` on ``host_uuid`` from now

    (``at``): any other stay of it is closed. True if anything changed.
    """
    at = at or timeutils.utcnow()
    with db_api.writer(context) as session:
        rows = session.execute(sa.select(_ROW).where(
            _open(instance_uuid))).mappings().all()
        same = [r['id'] for r in rows if (r['reservation_id'],
                                          r['host_uuid']) ==
                (reservation_id, host_uuid)]
        # Two stays at once are one too many (events raced): keep one.
        others = [r['id'] for r in rows if r['id'] not in same[:1]]
        if others:
            session.execute(_ROW.update().where(_ROW.c.id.in_(others))
                            .values(left_at=at))
        if not same:
            session.execute(_ROW.insert().values(
                instance_uuid=instance_uuid, reservation_id=reservation_id,
                lease_id=lease_id, host_uuid=host_uuid, joined_at=at))
        return bool(others or not same)


@db_api.retry_on_deadlock
def leave(context, instance_uuid, at=None):
    """The instance runs in no reservation from ``at`` (now): True if it

    did until then.
    """
    with db_api.writer(context) as session:
        return session.execute(_ROW.update().where(
            _open(instance_uuid)).values(
                left_at=at or timeutils.utcnow())).rowcount > 0


@db_api.retry_on_deadlock
def stays(context, reservation_ids=None, running=False):
    """Rows (dicts) of these reservations (all: None), oldest first;

    ``running``: only the open ones.
    """
    query = sa.select(_ROW).order_by(_ROW.c.joined_at, _ROW.c.id)
    if reservation_ids is not None:
        if not reservation_ids:
            return []
        query = query.where(_ROW.c.reservation_id.in_(
            sorted(reservation_ids)))
    if running:
        query = query.where(_ROW.c.left_at.is_(None))
    with db_api.reader(context) as session:
        return [{f: row[f] for f in _FIELDS}
                for row in session.execute(query).mappings()]
