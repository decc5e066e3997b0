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
"""Schema migrations of the ledger, through alembic."""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script

from pcloud_plugin.db import api as db_api

_ALEMBIC_INI = os.path.join(os.path.dirname(__file__), 'migrations',
                            'alembic.ini')


def _config(connection):
    config = alembic_config.Config(_ALEMBIC_INI)
    config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        command.upgrade(_config(connection), revision)


def current_revision(engine=None):
    engine = engine or db_api.get_engine()
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head_revision():
    return alembic_script.ScriptDirectory.from_config(
        alembic_config.Config(_ALEMBIC_INI)).get_current_head()
