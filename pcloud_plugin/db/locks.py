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

"""Named locks across processes, in the ledger database.

``acquire(name)`` waits until no other holder of ``name`` remains and
returns what ``release`` takes. On MySQL and PostgreSQL the lock is the
row ``name`` of pcloud_locks (made first, if new, and committed) locked
for update in a transaction of its own, so a process that dies releases
it with its connection. SQLite
serves one machine's processes and has no row locks: the lock is held in
this process only there.
"""

import datetime
import threading
import weakref

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models

_LOCK = models.Lock.__table__
# Rows of locks not taken for this long are removed as others are released.
_KEEP = datetime.timedelta(days=1)

_local_guard = threading.Lock()
_local = weakref.WeakValueDictionary()


def acquire(name, wait=True):
    """What release takes; without ``wait``, None when another holds it."""
    engine = db_api.get_engine()
    if engine.dialect.name == 'sqlite':
        with _local_guard:
            lock = _local.get(name)
            if lock is None:
                lock = _local[name] = threading.Lock()
        return lock if lock.acquire(blocking=wait) else None
    connection = engine.connect()
    try:
        # The row first, committed on its own, and only where a plain
        # read does not see it: an insert that meets a held row waits
        # for its whole hold (its duplicate check locks it).
        row = sa.select(_LOCK.c.name).where(_LOCK.c.name == name)
        try:
            with connection.begin():
                if connection.execute(row).first() is None:
                    connection.execute(_LOCK.insert().values(
                        name=name, created_at=timeutils.utcnow()))
        except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
            pass  # made by another meanwhile
        transaction = connection.begin()
        taken = connection.execute(
            row.with_for_update(skip_locked=not wait)).first()
        if taken is None:
            connection.close()
            return None
        connection.execute(_LOCK.update().where(_LOCK.c.name == name).values(
            created_at=timeutils.utcnow()))
        return connection, transaction
    except BaseException:
        connection.close()
        raise


def release(held):
    if isinstance(held, tuple):
        connection, transaction = held
        try:
            # Forget old locks nobody holds (those held are skipped).
            unused = list(connection.execute(sa.select(_LOCK.c.name).where(
                _LOCK.c.created_at < timeutils.utcnow() - _KEEP).limit(
                    100).with_for_update(skip_locked=True)).scalars())
            if unused:
                connection.execute(_LOCK.delete().where(
                    _LOCK.c.name.in_(unused)))
            transaction.commit()
        finally:
            connection.close()
    else:
        held.release()
