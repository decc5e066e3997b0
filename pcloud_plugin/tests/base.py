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
"""Test bases: config isolation and the ledger database on each backend."""

import contextlib
import os
import queue
import sys
import time

import fixtures
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import provision
from oslo_db.sqlalchemy import test_fixtures
from oslotest import base
import sqlalchemy as sa
from testtools import content

from pcloud_plugin import conf
from pcloud_plugin import context
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import migration
from pcloud_plugin.sandbox import common as sandbox_common
from pcloud_plugin.tests import db_users

# Read before any test gives the process a temporary HOME (oslotest's
# TempHomeDir), so that every sandbox of a run builds Keystone's snapshot
# and Nova's schemas once, not at each start.
_SANDBOX_CACHE = sandbox_common.cache_dir()


class TestCase(base.BaseTestCase):
    """Every test gets its own view of the global config."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable(
            'PCLOUD_SANDBOX_CACHE', _SANDBOX_CACHE))
        self.conf = self.useFixture(config_fixture.Config(conf.CONF)).conf
        self.context = context.get_admin_context()


class _LedgerSchema(test_fixtures.GeneratesSchemaFromMigrations,
                    test_fixtures.DeletesFromSchema):
    """Build the schema once per database with our own migrations, then

    delete rows between tests (much faster than rebuilding on MariaDB).
    """

    def get_enginefacade(self):
        return db_api.main_context_manager

    def generate_schema_migrations(self, engine):
        migration.upgrade(engine=engine)


class SQLiteLedgerFixture(_LedgerSchema,
                          test_fixtures.OpportunisticDbFixture):
    pass


class MySQLLedgerFixture(_LedgerSchema,
                         test_fixtures.MySQLOpportunisticFixture):
    pass


class PostgresqlLedgerFixture(_LedgerSchema,
                              test_fixtures.PostgresqlOpportunisticFixture):
    pass


class LedgerTestCase(test_fixtures.OpportunisticDBTestMixin, TestCase):
    """A test on a fresh ledger: SQLite here, MariaDB / PostgreSQL in the

    functional subclasses (skipped, saying why, where no server answers).
    """
    FIXTURE = SQLiteLedgerFixture

    def setUp(self):
        super().setUp()
        # The fixture has patched an engine into the facade: never let
        # db_api configure it from [pcloud_database].
        self.useFixture(fixtures.MockPatchObject(db_api, '_configured', True))

    @property
    def engine(self):
        return self._db_default.engine


class ScratchDatabase(fixtures.Fixture):
    """A private, migrated ledger database on a real server, by URL, for

    tests that run several OS processes against it. Dropped at cleanup.
    Raises BackendNotAvailable where the server does not answer: use
    scratch_database to skip then.
    """

    def __init__(self, driver):
        super().__init__()
        self.driver = driver

    def _setUp(self):
        backend = provision.Backend.backend_for_database_type(self.driver)
        ident = 'pcloud_' + provision._random_ident()
        backend.create_named_database(ident)
        self.addCleanup(backend.drop_named_database, ident)
        self.url = str(backend.provisioned_database_url(ident)
                       .render_as_string(hide_password=False))
        engine = sa.create_engine(self.url)
        self.addCleanup(engine.dispose)
        migration.upgrade(engine=engine)
        self.engine = engine


def scratch_database(test, driver):
    """A ScratchDatabase, or skip ``test`` saying why there is none."""
    # Asked here, not inside the fixture: useFixture wraps what a
    # fixture's setUp raises, and the skip would become an error.
    try:
        provision.Backend.backend_for_database_type(driver)
    except db_exc.BackendNotAvailable as e:
        test.skipTest('no %s server for this test: %s (user %s: %s)' % (
            driver, e, db_users.USER, db_users.ensure()[driver]))
    return test.useFixture(ScratchDatabase(driver))


def start_processes(test, processes):
    """Start ``processes`` with their stdout and stderr in a file that is

    attached to ``test`` only if it fails. A child has no log capture: its
    warnings and logged tracebacks (a refused lease logs one) would fill
    the run's output and bury the failure, and a print on the stdout it
    inherits would corrupt the subunit stream.
    """
    path = test.useFixture(fixtures.TempDir()).join('processes.log')

    def attach(_exc_info):
        with contextlib.suppress(OSError), open(path, errors='replace') as f:
            test.addDetail('processes.log', content.text_content(f.read()))
    test.addOnException(attach)
    for process in processes:
        test.addCleanup(process.terminate)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # A spawned child inherits these two descriptors as they are now.
        os.dup2(out, 1)
        os.dup2(out, 2)
        for process in processes:
            process.start()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (out,) + saved:
            os.close(fd)


def reports_of(test, workers, results, timeout=600):
    """One report from each of ``workers`` (processes) off ``results``

    (a queue); fails the test at once if a worker died without one.
    """
    # Never leave one running against a database the cleanup drops.
    for worker in workers:
        test.addCleanup(worker.terminate)
    reports = []
    deadline = time.monotonic() + timeout
    while len(reports) < len(workers):
        try:
            reports.append(results.get(timeout=1))
        except queue.Empty:
            dead = [w.exitcode for w in workers if w.exitcode]
            if dead:
                test.fail('a worker died with exit code %s' % dead[0])
            if time.monotonic() > deadline:
                test.fail('workers did not report in %ds' % timeout)
    return reports


class SQLiteLedgerFile(fixtures.Fixture):
    """[pcloud_database] on a fresh, migrated SQLite file, as a service

    reads it (LedgerFromConfig), for tests of code that opens the ledger
    by itself.
    """

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        path = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///%s/ledger.db' % path
        self.conf.set_override('connection', self.url,
                               group='pcloud_database')
        self.useFixture(LedgerFromConfig())
        migration.upgrade()


class LedgerFromConfig(fixtures.Fixture):
    """A private ledger facade configured from [pcloud_database], as in a

    real service process; disposed and forgotten at cleanup.
    """

    def _setUp(self):
        facade = enginefacade.transaction_context()
        self.useFixture(fixtures.MockPatchObject(
            db_api, 'main_context_manager', facade))
        self.useFixture(fixtures.MockPatchObject(
            db_api, '_configured', False))
        self.addCleanup(facade.dispose_pool)
