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
"""virtual:instance reservations and the slots each host holds for them.

Revision ID: 0002_instance_reservations
Revises: 0001_initial
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

from pcloud_plugin.db.migrations import reservation_tables

revision = '0002_instance_reservations'
down_revision = '0001_initial'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_instance_reservations',
        *reservation_tables.head_columns(),
        sa.Column('resource_id', sa.String(36)),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('disk_gb', sa.Integer, nullable=False),
        sa.Column('amount', sa.Integer, nullable=False),
        sa.Column('affinity', sa.Boolean),
        sa.Column('resource_properties', sa.Text),
        *reservation_tables.window_columns(),
        sa.Column('resource_class', sa.String(255), nullable=False),
        sa.Column('flavor_id', sa.String(36)),
        sa.Column('aggregate_id', sa.Integer),
        sa.Column('server_group_id', sa.String(36)),
        *reservation_tables.lookups('pcloud_instance_reservations'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'pcloud_instance_reservation_slots',
        sa.Column('reservation_id', sa.String(36),
                  sa.ForeignKey(
                      'pcloud_instance_reservations.reservation_id'),
                  primary_key=True),
        sa.Column('host_uuid', sa.String(36), primary_key=True),
        sa.Column('host_name', sa.Unicode(200), nullable=False),
        sa.Column('slots', sa.Integer, nullable=False),
        sa.Column('placed', sa.Integer, nullable=False),
        sa.Index('pcloud_instance_reservation_slots_host_idx', 'host_uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
