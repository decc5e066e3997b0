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
"""What the tables of both reservation kinds share, as migrations 0002

(virtual:instance) and 0003 (pcloud:host) create them.

Released migrations must create the same schema for ever: nothing here
changes; a later migration that needs other columns writes its own.
"""

import sqlalchemy as sa


def head_columns():
    """A reservation record's first columns: who and which lease."""
    return [
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('reservation_id', sa.String(36), nullable=False),
        sa.Column('lease_id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255)),
    ]


def window_columns():
    """Its window and where it is in its life."""
    return [
        sa.Column('start_time', sa.DateTime, nullable=False),
        sa.Column('end_time', sa.DateTime, nullable=False),
        sa.Column('state', sa.String(16), nullable=False),
    ]


def lookups(table):
    """One record per reservation; found by lease and by state."""
    return [
        sa.UniqueConstraint('reservation_id',
                            name='uniq_%s0reservation_id' % table),
        sa.Index('%s_lease_id_idx' % table, 'lease_id'),
        sa.Index('%s_state_idx' % table, 'state'),
    ]
