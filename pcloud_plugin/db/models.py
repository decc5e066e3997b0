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
"""The capacity ledger's tables (seeds/002, with trees and time windows)."""

from oslo_db.sqlalchemy import models
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm


class _Base(models.ModelBase):
    pass


BASE = orm.declarative_base(cls=_Base)


class ResourceProvider(BASE, models.TimestampMixin):
    __tablename__ = 'resource_providers'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
        sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
        sa.Index('resource_providers_root_provider_id_idx',
                 'root_provider_id'),
        sa.Index('resource_providers_parent_provider_id_idx',
                 'parent_provider_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.Unicode(200), nullable=False)
    # Bumped by every write that touches the provider's inventories or
    # claims: the compare-and-swap token of seeds/002.
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    can_host = sa.Column(sa.Integer, nullable=False, default=0)
    root_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=True)
    parent_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=True)


class ResourceClass(BASE, models.TimestampMixin):
    __tablename__ = 'resource_classes'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_resource_classes0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(sa.Unicode(255), nullable=False)


class Inventory(BASE, models.TimestampMixin):
    __tablename__ = 'inventories'
    __table_args__ = (
        sa.UniqueConstraint(
            'resource_provider_id', 'resource_class_id',
            name='uniq_inventories0resource_provider_resource_class'),
        sa.Index('inventories_resource_class_id_idx', 'resource_class_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    resource_class_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_classes.id'), nullable=False)
    total = sa.Column(sa.Integer, nullable=False)
    reserved = sa.Column(sa.Integer, nullable=False)
    min_unit = sa.Column(sa.Integer, nullable=False)
    max_unit = sa.Column(sa.Integer, nullable=False)
    step_size = sa.Column(sa.Integer, nullable=False)
    # DOUBLE: a FLOAT on MySQL would turn 1.1 into 1.100000023841858.
    allocation_ratio = sa.Column(sa.Double, nullable=False)


class Trait(BASE, models.TimestampMixin):
    __tablename__ = 'traits'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_traits0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(sa.Unicode(255), nullable=False)


class ResourceProviderTrait(BASE):
    __tablename__ = 'resource_provider_traits'
    __table_args__ = (
        sa.Index('resource_provider_traits_trait_id_idx', 'trait_id'),
    )

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'),
        primary_key=True)
    trait_id = sa.Column(
        sa.Integer, sa.ForeignKey('traits.id'), primary_key=True)


class ResourceProviderAggregate(BASE):
    __tablename__ = 'resource_provider_aggregates'
    __table_args__ = (
        sa.Index('resource_provider_aggregates_aggregate_uuid_idx',
                 'aggregate_uuid'),
    )

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'),
        primary_key=True)
    aggregate_uuid = sa.Column(sa.String(36), primary_key=True)


class Allocation(BASE, models.TimestampMixin):
    """An amount of one class held by a consumer for [start_time, end_time).

    An open end is stored as capacity.window.FOREVER so the index on
    end_time answers "what overlaps this window" without scanning history.
    """
    __tablename__ = 'allocations'
    __table_args__ = (
        sa.Index('allocations_window_idx', 'resource_provider_id',
                 'resource_class_id', 'end_time'),
        sa.Index('allocations_consumer_id_idx', 'consumer_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    resource_class_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_classes.id'), nullable=False)
    consumer_id = sa.Column(sa.String(64), nullable=False)
    used = sa.Column(sa.Integer, nullable=False)
    start_time = sa.Column(sa.DateTime, nullable=False)
    end_time = sa.Column(sa.DateTime, nullable=False)


class UsageSnapshot(BASE):
    """A provider's usage steps at one of its generations, so that a new

    process reads these rather than every claim (db.provider_cache). Used
    only while the provider is still at that generation; written by the
    periodic pass of the leading manager. No foreign key: a provider's
    delete drops its row itself.
    """
    __tablename__ = 'usage_snapshots'

    resource_provider_id = sa.Column(sa.Integer, primary_key=True,
                                     autoincrement=False)
    generation = sa.Column(sa.Integer, nullable=False)
    # Little-endian int64s; per class: its id, n, n epoch seconds, n
    # levels. A BLOB holds 64 KiB on MySQL: a busy host needs more.
    steps = sa.Column(
        sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mysql'),
        nullable=False)


class Consumer(BASE, models.TimestampMixin):
    """Who holds a set of claims, and for which window.

    Its generation guards changes to the consumer's own claims, as the
    provider generation guards a provider's capacity.
    """
    __tablename__ = 'consumers'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(64), nullable=False)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    start_time = sa.Column(sa.DateTime, nullable=False)
    end_time = sa.Column(sa.DateTime, nullable=False)


class InstanceReservation(BASE, models.TimestampMixin):
    """A virtual:instance reservation (seeds/003): what one slot holds,

    how many slots, and the Nova and Placement objects made for it while it
    is active. Its ledger claim has the reservation id as consumer.
    """
    __tablename__ = 'pcloud_instance_reservations'
    __table_args__ = (
        sa.UniqueConstraint(
            'reservation_id',
            name='uniq_pcloud_instance_reservations0reservation_id'),
        sa.Index('pcloud_instance_reservations_lease_id_idx', 'lease_id'),
        sa.Index('pcloud_instance_reservations_state_idx', 'state'),
        # Quota checks read one project's reservations at each admission.
        sa.Index('pcloud_instance_reservations_project_id_idx',
                 'project_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    reservation_id = sa.Column(sa.String(36), nullable=False)
    lease_id = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=True)
    # Blazar's reservations.resource_id for this reservation.
    resource_id = sa.Column(sa.String(36), nullable=True)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    disk_gb = sa.Column(sa.Integer, nullable=False)
    amount = sa.Column(sa.Integer, nullable=False)
    # True: one host, False: distinct hosts, None: packed.
    affinity = sa.Column(sa.Boolean, nullable=True)
    resource_properties = sa.Column(sa.Text, nullable=True)
    # None: any zone.
    availability_zone = sa.Column(sa.String(255), nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=False)
    end_time = sa.Column(sa.DateTime, nullable=False)
    # reserved -> active -> ending (clean-up left to retry) -> row deleted
    state = sa.Column(sa.String(16), nullable=False)
    resource_class = sa.Column(sa.String(255), nullable=False)
    flavor_id = sa.Column(sa.String(36), nullable=True)
    aggregate_id = sa.Column(sa.Integer, nullable=True)
    server_group_id = sa.Column(sa.String(36), nullable=True)


class InstanceReservationSlot(BASE):
    """How many slots of a reservation one host (root provider) holds."""
    __tablename__ = 'pcloud_instance_reservation_slots'
    __table_args__ = (
        sa.Index('pcloud_instance_reservation_slots_host_idx',
                 'host_uuid'),
    )

    reservation_id = sa.Column(
        sa.String(36),
        sa.ForeignKey('pcloud_instance_reservations.reservation_id'),
        primary_key=True)
    host_uuid = sa.Column(sa.String(36), primary_key=True)
    host_name = sa.Column(sa.Unicode(200), nullable=False)
    slots = sa.Column(sa.Integer, nullable=False)
    # Slots whose inventory Placement holds for the reservation's class.
    placed = sa.Column(sa.Integer, nullable=False, default=0)


class HostReservation(BASE, models.TimestampMixin):
    """A pcloud:host reservation: N whole hosts of a host flavor leased

    into a pcloud. Its ledger claim (every class of every provider of each
    host's tree, in full) has the reservation id as consumer.
    """
    __tablename__ = 'pcloud_host_reservations'
    __table_args__ = (
        sa.UniqueConstraint(
            'reservation_id',
            name='uniq_pcloud_host_reservations0reservation_id'),
        sa.Index('pcloud_host_reservations_lease_id_idx', 'lease_id'),
        sa.Index('pcloud_host_reservations_state_idx', 'state'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    reservation_id = sa.Column(sa.String(36), nullable=False)
    lease_id = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=True)
    pcloud_id = sa.Column(sa.String(36), nullable=False)
    host_flavor = sa.Column(sa.String(64), nullable=False)
    amount = sa.Column(sa.Integer, nullable=False)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    required_traits = sa.Column(sa.Text, nullable=True)
    # IMMEDIATE, SCHEDULE or BEST-EFFORT (seeds/001).
    lease_type = sa.Column(sa.String(16), nullable=False)
    # BEST-EFFORT only: minutes to wait, and the moment waiting ends.
    timeout = sa.Column(sa.Integer, nullable=True)
    deadline = sa.Column(sa.DateTime, nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=False)
    end_time = sa.Column(sa.DateTime, nullable=False)
    # INACTIVE, IN-PROGRESS, ACTIVE, TIMEDOUT or ENDED.
    state = sa.Column(sa.String(16), nullable=False)
    # The per-reservation Nova aggregate holding filter_lease_id.
    aggregate_id = sa.Column(sa.Integer, nullable=True)
    # BEST-EFFORT only: the live migrations of other projects' instances
    # off its hosts it started (JSON: [{'server', 'host', 'tries',
    # 'status'}]), awaited before its hosts join the pcloud.
    migrations = sa.Column(sa.Text, nullable=True)
    # seeds/001's host terms it asks of each host (JSON: {'vcpus',
    # 'memory_mb', 'disk_gb', 'hypervisor_properties',
    # 'resource_properties', 'capabilities', 'aggregate_metadata'}, those
    # asked only); NULL: none.
    host_terms = sa.Column(sa.Text, nullable=True)
    # The hand-over its lessee was warned of (JSON: {'warned_at',
    # 'next_from', 'hosts'}: when, from when another holder has which of
    # its hosts, by their names in the pcloud); NULL: none.
    hand_over = sa.Column(sa.Text, nullable=True)


class HostReservationHost(BASE):
    """One host a pcloud:host reservation holds."""
    __tablename__ = 'pcloud_host_reservation_hosts'
    __table_args__ = (
        sa.Index('pcloud_host_reservation_hosts_host_idx', 'host_uuid'),
    )

    reservation_id = sa.Column(
        sa.String(36),
        sa.ForeignKey('pcloud_host_reservations.reservation_id'),
        primary_key=True)
    # The host's root provider in the ledger (its compute node).
    host_uuid = sa.Column(sa.String(36), primary_key=True)
    # Its hypervisor_hostname, and Nova's service host (aggregates).
    host_name = sa.Column(sa.Unicode(200), nullable=False)
    service_host = sa.Column(sa.Unicode(255), nullable=False)
    # The host's name in the pcloud (pcloud:host:<name>).
    name = sa.Column(sa.String(64), nullable=False)
    # Whether it is in the pcloud's aggregate now.
    joined = sa.Column(sa.Boolean, nullable=False, default=False)


class Intent(BASE, models.TimestampMixin):
    """An operation on Nova and Placement under way: written before its

    first change and deleted after its last, so that whatever a crash or
    an unreachable service interrupts, the reconciler finds and finishes
    or undoes (pcloud_plugin.recovery).
    """
    __tablename__ = 'pcloud_intents'
    __table_args__ = (
        sa.Index('pcloud_intents_operation_idx', 'operation'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    # allocate, release, lease-start or lease-end.
    operation = sa.Column(sa.String(32), nullable=False)
    # What it acts on: a reservation id, or "<pcloud id>/<host name>".
    subject = sa.Column(sa.String(255), nullable=False)
    # JSON: what the reconciler needs to finish or undo it.
    details = sa.Column(sa.Text, nullable=False)
    # "<hostname>:<pid>:<process start>" of the process running it.
    owner = sa.Column(sa.String(255), nullable=False)
    # It raised: its own undo may have stopped halfway.
    failed = sa.Column(sa.Boolean, nullable=False, default=False)


class Lock(BASE):
    """A named lock for what must not run twice at once across processes

    (db.locks): a row locked for update, held until the transaction ends;
    on Galera multi-writer, the row's holder until it expires.
    """
    __tablename__ = 'pcloud_locks'

    name = sa.Column(sa.String(255), primary_key=True)
    created_at = sa.Column(sa.DateTime, nullable=False)
    holder = sa.Column(sa.String(36), nullable=True)
    expires_at = sa.Column(sa.DateTime, nullable=True)


class LeaseInstance(BASE):
    """An instance booted into a reservation of ours (seeds/001: it is

    registered with the lease when created, taken from it when destroyed)
    and, once it left (deleted, shelved away, moved off), when: the
    rows stay for usage records. One open row per instance at most.
    """
    __tablename__ = 'pcloud_lease_instances'
    __table_args__ = (
        sa.Index('pcloud_lease_instances_instance_idx', 'instance_uuid'),
        sa.Index('pcloud_lease_instances_reservation_idx',
                 'reservation_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)
    reservation_id = sa.Column(sa.String(36), nullable=False)
    lease_id = sa.Column(sa.String(36), nullable=False)
    # The host's root provider (admins' view: tenants never see it).
    host_uuid = sa.Column(sa.String(36), nullable=False)
    joined_at = sa.Column(sa.DateTime, nullable=False)
    left_at = sa.Column(sa.DateTime, nullable=True)


class MirrorPass(BASE):
    """When a mirror of another service into the ledger last completed a

    pass (cloud.mirror, mirror "placement"), for pcloud-status's
    freshness check.
    """
    __tablename__ = 'pcloud_mirror_passes'

    mirror = sa.Column(sa.String(32), primary_key=True)
    finished_at = sa.Column(sa.DateTime, nullable=False)


class Maintenance(BASE, models.TimestampMixin):
    """An operator's maintenance window on hosts (reservations.maintenance).

    Its ledger claim (what is free on the hosts' trees in the window) has
    the maintenance id as consumer, so nothing new is booked there.
    """
    __tablename__ = 'pcloud_maintenances'
    __table_args__ = (
        sa.Index('pcloud_maintenances_state_idx', 'state'),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    # JSON: [{'host_uuid', 'host_name', 'service_host', 'disabled'}]; the
    # hosts' root providers, names, Nova service hosts, and whether the
    # maintenance disabled the service (to enable it again at the end).
    hosts = sa.Column(sa.Text, nullable=False)
    start_time = sa.Column(sa.DateTime, nullable=False)
    end_time = sa.Column(sa.DateTime, nullable=False)
    reason = sa.Column(sa.String(255), nullable=True)
    # SCHEDULED, ACTIVE (its hosts disabled) or DONE.
    state = sa.Column(sa.String(16), nullable=False)
    # JSON: what it moved and what it could not, as answered at booking.
    report = sa.Column(sa.Text, nullable=False)
