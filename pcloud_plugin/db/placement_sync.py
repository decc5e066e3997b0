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
"""Mirror Placement's providers into the ledger, idempotently."""

import dataclasses

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)

_PASS = models.MirrorPass.__table__
# The pcloud_mirror_passes row of cloud.mirror.
PLACEMENT_MIRROR = 'placement'


@dataclasses.dataclass
class SyncReport:
    created: list = dataclasses.field(default_factory=list)
    updated: list = dataclasses.field(default_factory=list)
    deleted: list = dataclasses.field(default_factory=list)
    # (uuid, why) of what could not be mirrored and needs an operator:
    # providers gone from Placement but holding live claims, inventories
    # that shrank below what is claimed, re-parenting.
    problems: list = dataclasses.field(default_factory=list)
    # uuids gone from Placement but kept: live claims hold them.
    kept: list = dataclasses.field(default_factory=list)

    @property
    def changed(self):
        return bool(self.created or self.updated or self.deleted)


def _depth_first(forest):
    """Parents before children, so a child's parent always exists."""
    ordered = []

    def visit(uuid):
        ordered.append(forest[uuid])
        for child in sorted(forest.children[uuid]):
            visit(child)
    for provider in sorted(forest, key=lambda p: p.uuid):
        if provider.parent_uuid is None:
            visit(provider.uuid)
    return ordered


def sync(context, forest, changed=None):
    """Make the ledger's providers match forest (read from Placement).

    :param changed: if given, only these providers' facts (inventories,
        traits, aggregates) are compared and written; forest's other
        providers give only their name and parent (cloud.mirror reads
        facts only for providers whose Placement generation moved)
    """
    report = SyncReport()
    changed_ids = None if changed is None else set(changed)
    ours = {p['uuid']: p for p in db_providers.list_providers(context)}
    # The gone first, children before parents (a parent is empty when its
    # turn comes): a compute made again under a new uuid takes its name.
    gone = [uuid for uuid in reversed(list(ours)) if uuid not in
            forest.providers]
    for uuid in gone:
        try:
            db_providers.delete_provider(context, uuid)
            report.deleted.append(uuid)
        except exception.Conflict as e:
            LOG.warning('Provider %s is gone from Placement but kept: %s',
                        uuid, e.message)
            report.problems.append((uuid, 'gone from Placement but kept: '
                                    + e.message))
            report.kept.append(uuid)
    skipped = set()
    for provider in _depth_first(forest):
        uuid = provider.uuid
        if provider.parent_uuid in skipped:
            skipped.add(uuid)
            continue
        mine = ours.get(uuid)
        if mine is None:
            mine = _create(context, provider, report)
            if mine is None:
                skipped.add(uuid)
                continue
            differs = False
        else:
            differs = _sync_identity(context, provider, mine, report)
        if changed_ids is None or uuid in changed_ids:
            differs |= sync_facts(context, provider, report)
        if differs and uuid in ours:
            report.updated.append(uuid)
    return report


def _create(context, provider, report):
    """Add a provider new to the ledger: its record, or None if its name

    is still held by another the ledger keeps (reported). Another mirror
    (a second blazar-manager, pcloud-manage placement sync) may have just
    added it: then its record, and nothing more to do.
    """
    try:
        created = db_providers.create_provider(
            context, provider.uuid, provider.name,
            parent_uuid=provider.parent_uuid)
        report.created.append(provider.uuid)
        return created
    except exception.Conflict as e:
        try:
            return db_providers.get_provider(context, provider.uuid)
        except exception.ResourceProviderNotFound:
            LOG.warning('Provider %s (%s) not mirrored: %s', provider.uuid,
                        provider.name, e.message)
            report.problems.append((provider.uuid, 'not mirrored: '
                                    + e.message))
            return None


def _sync_identity(context, provider, mine, report):
    changed = False
    if mine['name'] != provider.name:
        db_providers.rename_provider(context, provider.uuid, provider.name)
        changed = True
    if mine['parent_provider_uuid'] != provider.parent_uuid:
        if mine['parent_provider_uuid'] is None:
            db_providers.set_parent(context, provider.uuid,
                                    provider.parent_uuid)
            changed = True
        else:
            report.problems.append((provider.uuid, 'moved to parent %s in '
                                    'Placement; re-parenting is not '
                                    'mirrored' % provider.parent_uuid))
    return changed


def sync_facts(context, provider, report):
    """Inventories, traits and aggregates of a provider the ledger has;

    True if any changed. An inventory that would put claims over capacity
    is refused and recorded in the report's problems.
    """
    try:
        return _sync_facts(context, provider)
    except exception.InventoryInUse as e:
        report.problems.append((provider.uuid, e.message))
        return False


def _sync_facts(context, provider):
    changed = False
    inventories = db_providers.get_inventories(context, provider.uuid)
    if inventories != provider.inventories:
        db_providers.set_inventories(context, provider.uuid,
                                     provider.inventories)
        changed = True
    if db_providers.get_traits(context, provider.uuid) != set(provider.traits):
        db_providers.set_traits(context, provider.uuid, provider.traits)
        changed = True
    aggregates = db_providers.get_aggregates(context, provider.uuid)
    if aggregates != set(provider.aggregates):
        db_providers.set_aggregates(context, provider.uuid,
                                    provider.aggregates)
        changed = True
    return changed


@db_api.retry_on_deadlock
def record_pass(context, finished_at=None):
    """Note that a pass of the Placement mirror (cloud.mirror) has just

    completed: pcloud-status reads it back (last_pass) to tell a ledger
    whose mirror has stopped.
    """
    finished_at = finished_at or timeutils.utcnow()
    try:
        with db_api.writer(context) as session:
            where = _PASS.c.mirror == PLACEMENT_MIRROR
            if session.execute(sa.select(_PASS.c.mirror).where(
                    where)).first():
                session.execute(_PASS.update().where(where).values(
                    finished_at=finished_at))
            else:
                session.execute(_PASS.insert().values(
                    mirror=PLACEMENT_MIRROR, finished_at=finished_at))
    except db_exc.DBDuplicateEntry:
        pass  # another manager's first pass, at the same moment


def last_pass(context):
    """When the Placement mirror last completed a pass, or None."""
    with db_api.reader(context) as session:
        return session.execute(sa.select(_PASS.c.finished_at).where(
            _PASS.c.mirror == PLACEMENT_MIRROR)).scalar()
