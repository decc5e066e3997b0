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

"""Operators' maintenance windows on hosts.

Revision ID: 0014_maintenances
Revises: 0013_usage_snapshots
Create Date: 2026-12-06
"""

from alembic import op
import sqlalchemy as sa

revision = '0014_maintenances'
down_revision = '0013_usage_snapshots'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_maintenances',
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('hosts', sa.Text, nullable=False),
        sa.Column('start_time', sa.DateTime, nullable=False),
        sa.Column('end_time', sa.DateTime, nullable=False),
        sa.Column('reason', sa.String(255), nullable=True),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('report', sa.Text, nullable=False),
        sa.Index('pcloud_maintenances_state_idx', 'state'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
