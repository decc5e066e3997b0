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
"""The database user oslo.db's opportunistic fixtures log in as.

oslo.db's MySQL and PostgreSQL fixtures connect as ``openstack_citest``
(password the same) and skip their tests when that login fails. So that
the README's test command alone runs those tiers on a machine whose
servers answer, the functional tests create that user once per process,
where an administrator's login works without a password: MariaDB's
``root`` and PostgreSQL's ``postgres`` on 127.0.0.1, or the SQLAlchemy
URLs in PCLOUD_TEST_MYSQL_ADMIN / PCLOUD_TEST_POSTGRESQL_ADMIN. Where
neither works, nothing is created and the fixtures skip, saying why.
"""

import os

import sqlalchemy as sa

USER = PASSWORD = 'openstack_citest'
_ADMINS = {
    'mysql': ('PCLOUD_TEST_MYSQL_ADMIN',
              'mysql+pymysql://root@127.0.0.1/?connect_timeout=3'),
    'postgresql': ('PCLOUD_TEST_POSTGRESQL_ADMIN',
                   'postgresql+psycopg2://postgres@127.0.0.1/postgres'
                   '?connect_timeout=3'),
}
_MYSQL = [
    "CREATE USER IF NOT EXISTS '{u}'@'%' IDENTIFIED BY '{p}'",
    "CREATE USER IF NOT EXISTS '{u}'@'localhost' IDENTIFIED BY '{p}'",
    "GRANT ALL PRIVILEGES ON *.* TO '{u}'@'%' WITH GRANT OPTION",
    "GRANT ALL PRIVILEGES ON *.* TO '{u}'@'localhost' WITH GRANT OPTION",
]
# One statement, so that two processes creating the role at once do not
# fail between a look and a create.
_POSTGRESQL = [
    "DO $$ BEGIN CREATE ROLE {u} WITH LOGIN SUPERUSER PASSWORD '{p}'; "
    "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; "
    "END $$",
]

_done = {}


def _create(driver):
    variable, default = _ADMINS[driver]
    statements = _MYSQL if driver == 'mysql' else _POSTGRESQL
    engine = sa.create_engine(os.environ.get(variable, default),
                              poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as connection:
            for statement in statements:
                # No parameters: a '%' is the driver's placeholder sign.
                connection.exec_driver_sql(
                    statement.format(u=USER, p=PASSWORD).replace('%', '%%'))
        return 'created or present'
    except Exception as e:  # noqa: any failure means: cannot, skip
        return 'not created: %s' % str(e).splitlines()[0]
    finally:
        engine.dispose()


def ensure():
    """Create the user on each backend once per process; what happened.

    Returns {driver: 'created or present' | 'not created: <why>'}.
    """
    for driver in _ADMINS:
        if driver not in _done:
            _done[driver] = _create(driver)
    return dict(_done)
