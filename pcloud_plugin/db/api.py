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

"""The capacity ledger's engine, transactions and compare-and-swap.

How the ledger's modules reach the database: configure and get_engine;
reader, writer and reading; retry_on_deadlock, for a transaction run
again whole after a deadlock; writer_with_cas_retry, with
GenerationConflict, bump_generation and bump_provider_generations, for
the writes of db.providers and db.claims; replace_rows.

Every write that can take capacity follows seeds/002: read the provider
generations, check, write, then ``UPDATE ... SET generation = g + 1 WHERE
generation = g`` for each provider touched. A zero row count means a
concurrent writer got there first: the transaction rolls back and the whole
read-check-write is retried, up to ``[ledger] claim_retries`` times. No
SELECT ... FOR UPDATE, so it is safe on Galera multi-writer. What is
kept of providers between reads is db.provider_cache's; the snapshots
built from it for the engines, db.snapshots'.
"""

import functools
import random
import sqlite3
import time

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_log import log as logging
import sqlalchemy as sa
import tenacity

from pcloud_plugin import conf
from pcloud_plugin.db import models
from pcloud_plugin.db import provider_cache
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)
CONF = conf.CONF

_RP = models.ResourceProvider.__table__


main_context_manager = enginefacade.transaction_context()
_configured = False


def configure(conf_=None):
    """Point the ledger at [pcloud_database]; once per process."""
    global _configured
    if not _configured:
        group = (conf_ or CONF).pcloud_database
        main_context_manager.configure(
            connection=group.connection,
            sqlite_synchronous=group.sqlite_synchronous,
            max_pool_size=group.max_pool_size,
            max_overflow=group.max_overflow,
            pool_timeout=group.pool_timeout,
            connection_recycle_time=group.connection_recycle_time,
            max_retries=group.max_retries)
        _configured = True


def get_engine():
    configure()
    return main_context_manager.writer.get_engine()


def must_retry(exc):
    """A transaction the database aborted because a concurrent one wrote

    what it read: a deadlock (InnoDB, also Galera's certification failure,
    which MySQL drivers report as one) or PostgreSQL's serialization
    failure under REPEATABLE READ and SERIALIZABLE, which oslo.db leaves
    as SQLAlchemy's error; on SQLite (the sandbox, tests), "database is
    locked": a transaction that read cannot write once another has
    committed since (SQLite fails it at once, without waiting). Run whole
    again, it reads the new state.
    """
    while exc is not None:
        if isinstance(exc, db_exc.DBDeadlock):
            return True
        inner = getattr(exc, 'inner_exception', exc)
        orig = getattr(inner, 'orig', inner)
        if getattr(orig, 'pgcode', None) in ('40001', '40P01'):
            return True
        if (isinstance(orig, sqlite3.OperationalError)
                and 'database is locked' in str(orig)):
            return True
        # InnoDB rolls the whole transaction back on a deadlock: leaving
        # a savepoint then fails too, with the deadlock as its context.
        exc = exc.__context__
    return False


# For modules that add tables beside the ledger's: several managers
# writing reservation rows at once can deadlock on InnoDB's gap locks; such
# a transaction is whole, so it is run again.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=10, retry_interval=0.05, inc_retry_interval=True,
    exception_checker=must_retry)


def replace_rows(session, table, key, rows):
    """Make ``rows`` the rows of ``table`` whose columns match ``key``.

    Delete only rows that exist: a DELETE that finds nothing still takes
    a gap lock on MySQL, which deadlocks against concurrent inserts.
    """
    where = [table.c[column] == value for column, value in key.items()]
    if session.execute(sa.select(sa.func.count()).select_from(
            table).where(*where)).scalar():
        session.execute(table.delete().where(*where))
    if rows:
        session.execute(table.insert(), [dict(row, **key) for row in rows])


def writer(context):
    """A write transaction of the ledger, for modules that add tables."""
    configure()
    return main_context_manager.writer.using(context)


def reader(context):
    """A read transaction of the ledger, for modules that add tables."""
    configure()
    return main_context_manager.reader.using(context)


def reading(fn):
    @retry_on_deadlock  # a reader is a deadlock victim under SERIALIZABLE
    @functools.wraps(fn)
    def wrapper(context, *args, **kwargs):
        configure()
        with main_context_manager.reader.using(context) as session:
            return fn(session, *args, **kwargs)
    return wrapper


class GenerationConflict(Exception):
    """A compare-and-swap lost to a concurrent writer; retry from the top."""

    def __init__(self, what):
        self.what = what


def writer_with_cas_retry(fn):
    """Run ``fn(session, ...)`` in its own write transaction, retrying it

    whole when a generation compare-and-swap (or a deadlock the database
    reports) shows that a concurrent writer changed what it read.
    """
    @functools.wraps(fn)
    def wrapper(context, *args, **kwargs):
        configure()
        attempts = CONF.ledger.claim_retries + 1
        lost = set()

        def transaction():
            with main_context_manager.writer.using(context) as session:
                return fn(session, *args, **kwargs)

        def lost_race(error):
            if isinstance(error, GenerationConflict):
                lost.add(error.what)
                return True
            if isinstance(error, (db_exc.DBError, sa.exc.DBAPIError)) \
                    and must_retry(error):
                lost.add('deadlock')
                return True
            return False

        def give_up(_state):
            raise exception.ConcurrentUpdateDetected(
                attempts=attempts, providers=', '.join(sorted(lost)))

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(attempts),
            retry=tenacity.retry_if_exception(lost_race),
            # Spread retries out so racing writers do not collide again.
            wait=lambda state: random.uniform(
                0, 0.005 * state.attempt_number),
            # time looked up at each pause: a test may patch it.
            sleep=lambda seconds: time.sleep(seconds),
            retry_error_callback=give_up)(transaction)
    return wrapper


def bump_generation(session, table, row_id, generation, what):
    """Compare-and-swap the generation of one row of ``table`` (a provider

    or a consumer) read at ``generation``, or raise GenerationConflict
    naming ``what``.
    """
    session.info[provider_cache.UNCOMMITTED] = True
    result = session.execute(
        table.update()
        .where(table.c.id == row_id, table.c.generation == generation)
        .values(generation=generation + 1))
    if result.rowcount != 1:
        raise GenerationConflict(what)


def bump_provider_generations(session, providers):
    """Compare-and-swap the generations of providers (rows read before

    anything was checked) in one statement: all of them, or a conflict
    naming those a concurrent writer moved. In id order, as the database
    walks the primary key, so two writers never wait on each other in
    turn.
    """
    if not providers:
        return
    session.info[provider_cache.UNCOMMITTED] = True
    read = {p['id']: p for p in providers}
    result = session.execute(
        _RP.update()
        .where(_RP.c.id.in_(sorted(read)),
               _RP.c.generation == sa.case(
                   {rp_id: p['generation'] for rp_id, p in read.items()},
                   value=_RP.c.id))
        .values(generation=_RP.c.generation + 1))
    if result.rowcount != len(read):
        moved = [read[rp_id]['uuid'] for rp_id, generation in session.execute(
            sa.select(_RP.c.id, _RP.c.generation).where(
                _RP.c.id.in_(sorted(read))))
            if generation != read[rp_id]['generation']]
        raise GenerationConflict(', '.join(sorted(moved)) or 'providers')
