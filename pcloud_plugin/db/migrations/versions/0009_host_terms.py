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

"""The host terms of a pcloud:host reservation (seeds/001's CPU cores,

RAM, disk, hypervisor and resource properties, capabilities), as JSON:
NULL, as every reservation made before, asks none of them.

Revision ID: 0009_host_terms
Revises: 0008_instance_zone
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa

revision = '0009_host_terms'
down_revision = '0008_instance_zone'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('pcloud_host_reservations',
                  sa.Column('host_terms', sa.Text, nullable=True))
