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

"""The availability zone a virtual:instance reservation's slots go to.

Revision ID: 0008_instance_zone
Revises: 0007_reservations_project_idx
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa

revision = '0008_instance_zone'
down_revision = '0007_reservations_project_idx'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('pcloud_instance_reservations',
                  sa.Column('availability_zone', sa.String(255)))
