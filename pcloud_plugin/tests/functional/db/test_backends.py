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
"""The ledger's DB tests again on MariaDB and PostgreSQL.

oslo.db's opportunistic fixtures create a private database per test run as
the openstack_citest user (tests.db_users) and drop it afterwards;
where no server answers, every test here skips and says why.
"""

from pcloud_plugin.tests import base
from pcloud_plugin.tests.unit.db import test_api
from pcloud_plugin.tests.unit.db import test_host_reservations
from pcloud_plugin.tests.unit.db import test_migrations
from pcloud_plugin.tests.unit.db import test_reservations


class LedgerAPIMySQL(test_api.LedgerAPITests):
    FIXTURE = base.MySQLLedgerFixture


class LedgerAPIPostgreSQL(test_api.LedgerAPITests):
    FIXTURE = base.PostgresqlLedgerFixture


class InstanceRecordsMySQL(test_reservations.RecordTests):
    FIXTURE = base.MySQLLedgerFixture


class InstanceRecordsPostgreSQL(test_reservations.RecordTests):
    FIXTURE = base.PostgresqlLedgerFixture


class ClaimsOnMySQL(test_reservations.ClaimsOnTests):
    FIXTURE = base.MySQLLedgerFixture


class ClaimsOnPostgreSQL(test_reservations.ClaimsOnTests):
    FIXTURE = base.PostgresqlLedgerFixture


class HostRecordsMySQL(test_host_reservations.RecordTests):
    FIXTURE = base.MySQLLedgerFixture


class HostRecordsPostgreSQL(test_host_reservations.RecordTests):
    FIXTURE = base.PostgresqlLedgerFixture


class MigrationsMatchModelsMySQL(test_migrations.MigrationsMatchModels):
    FIXTURE = test_migrations._MySQLEmpty


class MigrationsMatchModelsPostgreSQL(
        test_migrations.MigrationsMatchModels):
    FIXTURE = test_migrations._PostgresqlEmpty
