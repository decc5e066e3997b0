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

import contextlib
import os
import uuid

import sqlalchemy as sa

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
