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

"""An index on the project of instance reservations (the quota's query).

Revision ID: 0007_reservations_project_idx
Revises: 0006_mirror_passes
Create Date: 2026-11-24
"""

from alembic import op

revision = '0007_reservations_project_idx'
down_revision = '0006_mirror_passes'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('pcloud_instance_reservations_project_id_idx',
                    'pcloud_instance_reservations', ['project_id'])
