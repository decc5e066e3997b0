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

"""The instances booted into each reservation (the registry).

Revision ID: 0010_lease_instances
Revises: 0009_host_terms
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

revision = '0010_lease_instances'
down_revision = '0009_host_terms'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_lease_instances',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('host_uuid', sa.String(36), nullable=False),
        sa.Column('joined_at', sa.DateTime, nullable=False),
        sa.Column('left_at', sa.DateTime, nullable=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('pcloud_lease_instances_instance_idx',
                    'pcloud_lease_instances', ['instance_uuid'])
    op.create_index('pcloud_lease_instances_reservation_idx',
                    'pcloud_lease_instances', ['reservation_id'])
