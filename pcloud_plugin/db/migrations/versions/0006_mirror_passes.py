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

"""When the Placement mirror last completed a pass.

Revision ID: 0006_mirror_passes
Revises: 0005_host_migrations
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = '0006_mirror_passes'
down_revision = '0005_host_migrations'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'pcloud_mirror_passes',
        sa.Column('mirror', sa.String(32), primary_key=True),
        sa.Column('finished_at', sa.DateTime, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
