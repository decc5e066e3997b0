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

"""Each provider's usage steps at one of its generations, so that a new

process need not read every claim. Empty until the leading manager's
periodic pass writes it.

Revision ID: 0013_usage_snapshots
Revises: 0012_hand_over
Create Date: 2026-12-06
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0013_usage_snapshots'
down_revision = '0012_hand_over'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'usage_snapshots',
        sa.Column('resource_provider_id', sa.Integer, primary_key=True,
                  autoincrement=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('steps',
                  sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mysql'),
                  nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
