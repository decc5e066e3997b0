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
"""The capacity ledger: providers, classes, inventories, traits,

aggregates, consumers and time-windowed allocations.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa

revision = '0001_initial'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime),
            sa.Column('updated_at', sa.DateTime)]


def _named(name):
    return [*_timestamps(),
            sa.Column('id', sa.Integer, primary_key=True,
                      autoincrement=True),
            sa.Column('name', sa.Unicode(255), nullable=False),
            sa.UniqueConstraint('name', name='uniq_%s0name' % name)]


def upgrade():
    op.create_table(
        'resource_providers',
        *_timestamps(),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.Unicode(200), nullable=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('can_host', sa.Integer, nullable=False),
        sa.Column('root_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id')),
        sa.Column('parent_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id')),
        sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
        sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
        sa.Index('resource_providers_root_provider_id_idx',
                 'root_provider_id'),
        sa.Index('resource_providers_parent_provider_id_idx',
                 'parent_provider_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table('resource_classes', *_named('resource_classes'),
                    mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table('traits', *_named('traits'),
                    mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'inventories',
        *_timestamps(),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('resource_class_id', sa.Integer,
                  sa.ForeignKey('resource_classes.id'), nullable=False),
        sa.Column('total', sa.Integer, nullable=False),
        sa.Column('reserved', sa.Integer, nullable=False),
        sa.Column('min_unit', sa.Integer, nullable=False),
        sa.Column('max_unit', sa.Integer, nullable=False),
        sa.Column('step_size', sa.Integer, nullable=False),
        sa.Column('allocation_ratio', sa.Double, nullable=False),
        sa.UniqueConstraint(
            'resource_provider_id', 'resource_class_id',
            name='uniq_inventories0resource_provider_resource_class'),
        sa.Index('inventories_resource_class_id_idx', 'resource_class_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'resource_provider_traits',
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), primary_key=True),
        sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'),
                  primary_key=True),
        sa.Index('resource_provider_traits_trait_id_idx', 'trait_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'resource_provider_aggregates',
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), primary_key=True),
        sa.Column('aggregate_uuid', sa.String(36), primary_key=True),
        sa.Index('resource_provider_aggregates_aggregate_uuid_idx',
                 'aggregate_uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'consumers',
        *_timestamps(),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(64), nullable=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('start_time', sa.DateTime, nullable=False),
        sa.Column('end_time', sa.DateTime, nullable=False),
        sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'allocations',
        *_timestamps(),
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('resource_class_id', sa.Integer,
                  sa.ForeignKey('resource_classes.id'), nullable=False),
        sa.Column('consumer_id', sa.String(64), nullable=False),
        sa.Column('used', sa.Integer, nullable=False),
        sa.Column('start_time', sa.DateTime, nullable=False),
        sa.Column('end_time', sa.DateTime, nullable=False),
        sa.Index('allocations_window_idx', 'resource_provider_id',
                 'resource_class_id', 'end_time'),
        sa.Index('allocations_consumer_id_idx', 'consumer_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
