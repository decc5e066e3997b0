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

"""Operations under way on Nova and Placement, for the reconciler; locks.

Revision ID: 0004_intents
Revises: 0003_host_reservations
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0004_intents'
down_revision = '0003_host_reservations'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_intents',
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('operation', sa.String(32), nullable=False),
        sa.Column('subject', sa.String(255), nullable=False),
        sa.Column('details', sa.Text, nullable=False),
        sa.Column('owner', sa.String(255), nullable=False),
        sa.Column('failed', sa.Boolean, nullable=False),
        sa.Index('pcloud_intents_operation_idx', 'operation'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'pcloud_locks',
        sa.Column('name', sa.String(255), primary_key=True),
        sa.Column('created_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
