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
"""The alembic migrations build exactly the schema the models declare."""

from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations

from pcloud_plugin.db import api as db_api
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


class _MySQLEmpty(_EmptyDatabase):
    DRIVER = 'mysql'


class _PostgresqlEmpty(_EmptyDatabase):
    DRIVER = 'postgresql'
