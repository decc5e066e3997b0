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

"""The hand-over a pcloud:host reservation's lessee was warned of, as

JSON: NULL, as every reservation made before, was warned of none.

Revision ID: 0012_hand_over
Revises: 0011_galera_locks
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

revision = '0012_hand_over'
down_revision = '0011_galera_locks'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('pcloud_host_reservations',
                  sa.Column('hand_over', sa.Text, nullable=True))
