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
it with its connection. On Galera multi-writer a row lock excludes only
writers on its own node; there the lock is the row's holder, set by a
committed compare-and-swap that certification lets one node win, renewed
while held and free again [pcloud_database] galera_lock_ttl seconds
after a holder that died last renewed it. SQLite serves one machine's
processes and has no row locks: the lock is held in this process only
there, as it is where no ledger database is configured (a pcloud
service on Nova's aggregates alone).
"""

import datetime
import threading
import time
import weakref

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from pcloud_plugin import conf
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models

LOG = logging.getLogger(__name__)

_LOCK = models.Lock.__table__
# Rows of locks not taken for this long are removed as others are released.
_KEEP = datetime.timedelta(days=1)

_local_guard = threading.Lock()
_local = weakref.WeakValueDictionary()


_galera = weakref.WeakKeyDictionary()


def _on_galera(engine):
    """Whether ``engine`` writes to a Galera (wsrep) node."""
    if engine.dialect.name != 'mysql':
        return False
    if engine not in _galera:
        with engine.connect() as connection:
            row = connection.exec_driver_sql(
                "SHOW VARIABLES LIKE 'wsrep_on'").first()
        _galera[engine] = bool(row) and row[1].upper() == 'ON'
    return _galera[engine]


def _engine():
    """The ledger's engine; None where no ledger is configured."""
    return (db_api.get_engine() if conf.CONF.pcloud_database.connection
            else None)


def on_galera():
    """Whether the ledger is on a Galera (wsrep) node."""
    engine = _engine()
    return engine is not None and _on_galera(engine)


def acquire(name, wait=True):
    """What release takes; without ``wait``, None when another holds it."""
    engine = _engine()
    if engine is None or engine.dialect.name == 'sqlite':
        with _local_guard:
            lock = _local.get(name)
            if lock is None:
                lock = _local[name] = threading.Lock()
        return lock if lock.acquire(blocking=wait) else None
    if _on_galera(engine):
        return _Stamp.acquire(engine, name, wait)
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


class _Stamp(object):
    """A lock held as pcloud_locks' holder of ``name`` (Galera).

    Taking it is one committed update of the row from free (no holder,
    or one whose hold expired) to ours: of two nodes that both see it
    free, certification commits one and aborts the other. A thread
    renews the expiry while it is held.
    """

    def __init__(self, engine, name, holder, ttl):
        self.engine = engine
        self.name = name
        self.holder = holder
        self.ttl = ttl
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew, daemon=True,
                                         name='pcloud-lock-' + name)

    @classmethod
    def acquire(cls, engine, name, wait):
        ttl = conf.CONF.pcloud_database.galera_lock_ttl
        holder = uuidutils.generate_uuid()
        pause = 0.01
        while True:
            if cls._take(engine, name, holder, ttl):
                stamp = cls(engine, name, holder, ttl)
                stamp._renewer.start()
                return stamp
            if not wait:
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    @staticmethod
    def _take(engine, name, holder, ttl):
        now = timeutils.utcnow()
        values = dict(holder=holder, created_at=now,
                      expires_at=now + datetime.timedelta(seconds=ttl))
        try:
            with engine.begin() as connection:
                taken = connection.execute(_LOCK.update().where(
                    _LOCK.c.name == name,
                    sa.or_(_LOCK.c.holder.is_(None),
                           _LOCK.c.expires_at < now)).values(
                                **values)).rowcount
                if not taken and connection.execute(sa.select(
                        _LOCK.c.name).where(
                            _LOCK.c.name == name)).first() is None:
                    connection.execute(_LOCK.insert().values(
                        name=name, **values))
                    taken = 1
            return bool(taken)
        except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
            return False  # made by another meanwhile
        except Exception as error:
            if db_api.must_retry(error):
                return False  # another node took it first
            raise

    def _mine(self):
        return sa.and_(_LOCK.c.name == self.name,
                       _LOCK.c.holder == self.holder)

    def _renew(self):
        while not self._stop.wait(self.ttl / 3.0):
            try:
                with self.engine.begin() as connection:
                    kept = connection.execute(
                        _LOCK.update().where(self._mine()).values(
                            expires_at=timeutils.utcnow() +
                            datetime.timedelta(seconds=self.ttl))).rowcount
            except Exception as error:
                # A renewal the next one makes up for, if within the TTL.
                LOG.warning('Could not renew lock %s: %s', self.name, error)
                continue
            if not kept:
                LOG.error('Lock %s expired while held (not renewed for '
                          '%d s): another process may hold it too.',
                          self.name, self.ttl)
                return

    def release(self):
        self._stop.set()
        self._renewer.join()
        for _attempt in range(10):
            try:
                with self.engine.begin() as connection:
                    connection.execute(_LOCK.update().where(
                        self._mine()).values(holder=None, expires_at=None))
                    # Forget old locks nobody holds.
                    connection.execute(_LOCK.delete().where(
                        _LOCK.c.holder.is_(None),
                        _LOCK.c.name != self.name,
                        _LOCK.c.created_at < timeutils.utcnow() - _KEEP))
                return
            except Exception as error:
                if not db_api.must_retry(error):
                    raise
        LOG.warning('Lock %s not released; it expires in %d s.',
                    self.name, self.ttl)


def release(held):
    if isinstance(held, _Stamp):
        held.release()
    elif isinstance(held, tuple):
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
