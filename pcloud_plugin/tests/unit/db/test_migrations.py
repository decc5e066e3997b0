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
"""The alembic migrations build exactly the schema the models declare,

and keep what the rows held before.
"""

import datetime

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import migration
from pcloud_plugin.db import models
from pcloud_plugin.tests import base


class _EmptyDatabase(test_fixtures.OpportunisticDbFixture):
    def get_enginefacade(self):
        return db_api.main_context_manager


class MigrationsMatchModels(test_migrations.ModelsMigrationsSync,
                            test_fixtures.OpportunisticDBTestMixin,
                            base.TestCase):
    FIXTURE = _EmptyDatabase

    def get_engine(self):
        return self._db_default.engine

    def get_metadata(self):
        return models.BASE.metadata

    def db_sync(self, engine):
        migration.upgrade(engine=engine)

    def test_upgrade_reaches_head(self):
        engine = self.get_engine()
        self.assertIsNone(migration.current_revision(engine))
        migration.upgrade(engine=engine)
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(engine))
        # Running it again is a no-op, as "pcloud-manage db upgrade" on
        # an up-to-date database must be.
        migration.upgrade(engine=engine)

    def test_host_reservations_from_before_0009_ask_no_host_terms(self):
        engine = self.get_engine()
        migration.upgrade('0008_instance_zone', engine=engine)
        moment = datetime.datetime(2030, 1, 1)
        table = sa.table(
            'pcloud_host_reservations', *(sa.column(c) for c in (
                'reservation_id', 'lease_id', 'pcloud_id', 'host_flavor',
                'amount', 'lease_type', 'start_time', 'end_time', 'state',
                'created_at')))
        with engine.begin() as connection:
            connection.execute(table.insert().values(
                reservation_id='r1', lease_id='l1', pcloud_id='pc',
                host_flavor='big', amount=2, lease_type='SCHEDULE',
                start_time=moment, end_time=moment, state='INACTIVE',
                created_at=moment))
        migration.upgrade(engine=engine)
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(engine))
        self.useFixture(fixtures.MockPatchObject(db_api, '_configured',
                                                 True))
        row = host_db.get(self.context, 'r1')
        self.assertEqual((2, host_db.TERMS), (
            row['amount'], {term: row[term] for term in host_db.TERMS}))
        # And they take terms from then on.
        terms = dict(host_db.TERMS, vcpus=64,
                     capabilities={'cpu_arch': 'x86_64'})
        host_db.update(self.context, 'r1', **terms)
        row = host_db.get(self.context, 'r1')
        self.assertEqual(terms, {term: row[term] for term in host_db.TERMS})


class _MySQLEmpty(_EmptyDatabase):
    DRIVER = 'mysql'


class _PostgresqlEmpty(_EmptyDatabase):
    DRIVER = 'postgresql'
