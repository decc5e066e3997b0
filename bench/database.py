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

"""Where a bench keeps its ledger: a SQLite file by default, or a new

database on the server of ``--db`` (MariaDB or PostgreSQL, e.g.
``mysql+pymysql://root@127.0.0.1:3306``), dropped when the bench ends.
"""

import collections
import contextlib
import os
import time
import uuid

from oslo_config import cfg
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import migration

# python -m bench --db URL sets it; None: SQLite files.
SERVER = None


def label():
    """The ledger's database, as the tables name it."""
    if SERVER is None:
        return 'SQLite'
    return sa.engine.make_url(SERVER).get_backend_name()


@contextlib.contextmanager
def ledger_url(tmp, name='ledger'):
    """The URL of an empty ledger database for one bench run."""
    if SERVER is None:
        yield 'sqlite:///%s' % os.path.join(tmp, name + '.db')
        return
    server = sa.engine.make_url(SERVER)
    database = 'pcloud_bench_%s' % uuid.uuid4().hex[:10]
    admin = sa.create_engine(
        server.set(database='postgres')
        if server.get_backend_name() == 'postgresql' else server,
        isolation_level='AUTOCOMMIT')
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s' % database)
        try:
            yield server.set(database=database).render_as_string(
                hide_password=False)
        finally:
            with admin.connect() as conn:
                if server.get_backend_name() == 'postgresql':
                    conn.exec_driver_sql(
                        'SELECT pg_terminate_backend(pid) FROM '
                        'pg_stat_activity WHERE datname = %s',
                        (database,))
                conn.exec_driver_sql('DROP DATABASE %s' % database)
    finally:
        admin.dispose()


def use(url):
    """Point the plugin's database layer at ``url``; its engine."""
    cfg.CONF.set_override('connection', url, group='pcloud_database')
    db_api._configured = False
    db_api.main_context_manager = db_api.enginefacade.transaction_context()
    return db_api.get_engine()


@contextlib.contextmanager
def ledger(tmp, name='ledger'):
    """The engine of a new, migrated ledger, which the plugin's database

    layer uses until the block ends (then the database is dropped).
    """
    with ledger_url(tmp, name) as url:
        engine = use(url)
        migration.upgrade(engine=engine)
        try:
            yield engine
        finally:
            db_api.main_context_manager.dispose_pool()
            engine.dispose()


# What one call made of the database: durable commits, statements, and
# rows read (returned by its SELECTs).
Shape = collections.namedtuple('Shape', 'commits statements rows')


def shape(engine, call, others=()):
    """The Shape of ``call()`` on ``engine`` and the ``others`` it also

    writes to (run once, untimed).
    """
    counts = collections.Counter()

    def executed(conn, cursor, statement, parameters, _context, many):
        words = statement.lstrip().upper()
        if words.startswith('BEGIN'):  # SQLite's, not an admission's
            return
        counts['statements'] += 1
        if many or not words.startswith('SELECT'):
            return
        if cursor.rowcount >= 0:  # MariaDB and PostgreSQL buffer them
            counts['rows'] += cursor.rowcount
            return
        # SQLite says -1 until they are fetched: count them apart.
        counter = conn.connection.dbapi_connection.cursor()
        try:
            counter.execute('SELECT count(*) FROM (%s) AS counted'
                            % statement, parameters)
            counts['rows'] += counter.fetchone()[0]
        finally:
            counter.close()

    def commit(_conn):
        counts['commits'] += 1
    engines = (engine,) + tuple(others)
    for each in engines:
        sa.event.listen(each, 'after_cursor_execute', executed)
        sa.event.listen(each, 'commit', commit)
    try:
        call()
    finally:
        for each in engines:
            sa.event.remove(each, 'after_cursor_execute', executed)
            sa.event.remove(each, 'commit', commit)
    return Shape(counts['commits'], counts['statements'], counts['rows'])


def floor(engine, of, runs, cpu=None):
    """Milliseconds, ``runs`` times, of what a call of Shape ``of`` can cost

    no less than on this database: as many durable one-row commits and,
    for its other statements, primary-key reads, on the same engine.
    The CPU milliseconds of each run are appended to ``cpu`` if given.
    """
    table = sa.Table('bench_floor', sa.MetaData(),
                     sa.Column('id', sa.Integer, primary_key=True),
                     sa.Column('v', sa.Integer))
    table.create(engine)
    timings = []
    try:
        # The row read, under a key no insert below generates.
        with engine.begin() as conn:
            conn.execute(table.insert().values(id=-1, v=1))
        for _run in range(runs):
            began, cpu_began = time.perf_counter(), time.process_time()
            for _commit in range(of.commits):
                with engine.begin() as conn:
                    conn.execute(table.insert().values(v=1))
            with engine.connect() as conn:
                for _read in range(max(of.statements - of.commits, 0)):
                    conn.execute(sa.select(table.c.v).where(
                        table.c.id == -1)).all()
            timings.append((time.perf_counter() - began) * 1000)
            if cpu is not None:
                cpu.append((time.process_time() - cpu_began) * 1000)
    finally:
        table.drop(engine)
    return timings
