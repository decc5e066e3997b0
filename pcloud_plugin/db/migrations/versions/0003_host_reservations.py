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
"""pcloud:host reservations and the whole hosts each holds.

Revision ID: 0003_host_reservations
Revises: 0002_instance_reservations
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa

from pcloud_plugin.db.migrations import reservation_tables

revision = '0003_host_reservations'
down_revision = '0002_instance_reservations'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_host_reservations',
        *reservation_tables.head_columns(),
        sa.Column('pcloud_id', sa.String(36), nullable=False),
        sa.Column('host_flavor', sa.String(64), nullable=False),
        sa.Column('amount', sa.Integer, nullable=False),
        sa.Column('availability_zone', sa.String(255)),
        sa.Column('required_traits', sa.Text),
        sa.Column('lease_type', sa.String(16), nullable=False),
        sa.Column('timeout', sa.Integer),
        sa.Column('deadline', sa.DateTime),
        *reservation_tables.window_columns(),
        sa.Column('aggregate_id', sa.Integer),
        *reservation_tables.lookups('pcloud_host_reservations'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'pcloud_host_reservation_hosts',
        sa.Column('reservation_id', sa.String(36),
                  sa.ForeignKey('pcloud_host_reservations.reservation_id'),
                  primary_key=True),
        sa.Column('host_uuid', sa.String(36), primary_key=True),
        sa.Column('host_name', sa.Unicode(200), nullable=False),
        sa.Column('service_host', sa.Unicode(255), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('joined', sa.Boolean, nullable=False),
        sa.Index('pcloud_host_reservation_hosts_host_idx', 'host_uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
