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
"""The ledger kept current with Placement, without an operator.

A pass lists Placement's providers (one request) and reads again only
those whose Placement generation moved since the pass that last read
them (inventories, traits, aggregates and allocations: four requests
each); Placement bumps a provider's generation on every change of those,
allocations included. Blazar's manager runs a pass every ``[pcloud]
placement_mirror_interval`` seconds (blazar.monitor), ``pcloud-manage
placement sync`` runs one, and admissions check the providers they are
about to claim the same way first (``refresh``).

What it writes to the ledger (db.placement_sync): providers, trees,
inventories (ratios and reserved included), traits and aggregates; a
provider gone from Placement while claims on it are live is kept,
logged and notified (notifications.usage ``PROVIDER_GONE``), never
dropped. And when a pass last completed, which pcloud-status checks.

And usage that is not ours: on every provider outside pclouds and host
flavor pools (whose hosts are held whole), what Placement allocates to
consumers other than our reservations' holds and promises
(cloud.promises) and the instances booted into reservations is held in
the ledger from now on, open-ended, under the consumer
``placement:<provider uuid>``, until it is gone from Placement: so
admission never promises capacity that running instances hold. It is a
fact, not a promise, so it is written without a capacity check.
"""

import dataclasses
import threading
import time

from oslo_log import log as logging

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import promises
from pcloud_plugin.cloud import resources
from pcloud_plugin import conf
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import placement_sync
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.db import reservations as res_db

LOG = logging.getLogger(__name__)
CONF = conf.CONF


def usage_consumer(provider_uuid):
    """The ledger consumer of what others use of a provider."""
    return db_claims.USAGE_PREFIX + provider_uuid


@dataclasses.dataclass
class PassReport:
    """What one pass did, and what it cost in Placement requests."""
    requests: int = 0
    read: list = dataclasses.field(default_factory=list)
    usage_written: list = dataclasses.field(default_factory=list)
    sync: placement_sync.SyncReport = None
    seconds: float = 0.0
    # Mirror.follow: {consumer: {provider: {class: n}}} in Placement now.
    consumers: dict = dataclasses.field(default_factory=dict)


class _Counting(object):
    """An adapter that counts the requests made through it."""

    def __init__(self, adapter):
        self._adapter = adapter
        self.count = 0

    def request(self, *args, **kwargs):
        self.count += 1
        return self._adapter.request(*args, **kwargs)


class Mirror(object):
    """Mirrors Placement into the ledger (see the module docstring).

    :param adapter: a keystoneauth adapter for Placement
    :param exclusions: a callable returning (aggregate uuids, host names)
        of pclouds and host flavor pools (resources.NovaObjects)
    :param notifier: a notifications.usage.UsageNotifier, or None
    """

    def __init__(self, adapter, exclusions, notifier=None):
        self._adapter = adapter
        self._exclusions = exclusions
        self._notifier = notifier
        # provider uuid -> the Placement generation last mirrored.
        self._seen = {}
        # reservation child provider -> consumers of reserved instances.
        self._reserved = {}
        # consumer -> providers it was last read on, and the converse:
        # where an instance was, once Nova says it is gone or moved.
        self._where = {}
        self._consumers = {}
        self._lock = threading.Lock()
        self._recheck_from = 0

    @property
    def adapter(self):
        """Its Placement adapter (keystoneauth)."""
        return self._adapter

    def run(self, context):
        """One pass over every provider; a PassReport."""
        with self._lock:
            began = time.monotonic()
            adapter = _Counting(self._adapter)
            listing = placement_client.list_providers(adapter)
            changed = [rp for rp in listing
                       if self._seen.get(rp['uuid']) != rp['generation']]
            report = self._mirror(context, adapter, listing, changed)
            self._recheck(context, adapter, report)
            gone = set(self._seen) - {rp['uuid'] for rp in listing}
            for uuid in gone:
                self._seen.pop(uuid, None)
                self._reserved.pop(uuid, None)
                self._remember(uuid, set())
                if db_claims.record_usage(context, usage_consumer(uuid), {}):
                    report.usage_written.append(uuid)
            report.requests = adapter.count
            report.seconds = time.monotonic() - began
            if report.usage_written:
                # What Nova's events (cloud.nova_events) did not bring.
                LOG.info('Placement mirror: usage repaired on %d '
                         'provider(s): %s', len(report.usage_written),
                         ', '.join(sorted(report.usage_written)))
                if self._notifier is not None:
                    self._notifier.ledger_repaired(report.usage_written)
            # For pcloud-status: a ledger whose mirror stopped is stale.
            placement_sync.record_pass(context)
            return report

    def refresh(self, context, uuids):
        """Read again those of ``uuids`` whose Placement generation moved.

        True when the ledger changed (a caller then places again).
        """
        with self._lock:
            adapter = _Counting(self._adapter)
            changed = []
            for uuid in sorted(set(uuids)):
                response = placement_client.call(
                    adapter, 'GET', '/resource_providers/%s' % uuid,
                    ok=(200, 404))
                if response.status_code != 200:
                    continue  # gone: the next pass reports it
                rp = response.json()
                if self._seen.get(uuid) != rp['generation']:
                    changed.append(rp)
            if not changed:
                return False
            report = self._mirror(context, adapter, None, changed)
            return bool(report.usage_written or report.sync.changed)

    def follow(self, context, uuids=(), consumers=()):
        """Read again now the usage of ``uuids`` (ledger providers, their

        reservation children with them) and of the providers where
        ``consumers`` are or were last read, whatever their generation,
        and their facts where it moved: Nova said something changed
        there (cloud.nova_events). A PassReport.
        """
        with self._lock:
            began = time.monotonic()
            adapter = _Counting(self._adapter)
            wanted = set(uuids)
            now = {}
            for consumer in consumers:
                now[consumer] = placement_client.read_consumer(adapter,
                                                               consumer)
                wanted |= self._where.get(consumer, set()) | set(
                    now[consumer])
            wanted = {uuid for root in wanted
                      for uuid in db_providers.tree_uuids(context, root)}
            report = PassReport(sync=placement_sync.SyncReport(),
                                consumers=now)
            for uuid in sorted(wanted):
                response = placement_client.call(
                    adapter, 'GET', '/resource_providers/%s' % uuid,
                    ok=(200, 404))
                rp = response.json() if response.status_code == 200 else {}
                if rp and self._seen.get(uuid) != rp['generation']:
                    placement_sync.sync_facts(context, placement_client.
                                              read_provider(adapter, rp),
                                              report.sync)
                    self._seen[uuid] = rp['generation']
            # One _usage over the trees: children first, as it reads them.
            self._usage(context, adapter, report,
                        self._ledger_facts(context, sorted(wanted)))
            report.read = sorted(wanted)
            report.requests = adapter.count
            report.seconds = time.monotonic() - began
            return report

    def _mirror(self, context, adapter, listing, changed):
        """Mirror the ``changed`` providers (read again now) and their

        usage; ``listing``: every provider (a pass), or None (refresh:
        only facts of providers the ledger has already).
        """
        report = PassReport()
        read = {rp['uuid']: placement_client.read_provider(adapter, rp)
                for rp in changed}
        if listing is not None:
            report.sync = placement_sync.sync(
                context, forest_mod.ProviderForest(
                    [read.get(rp['uuid']) or _identity(rp)
                     for rp in listing]), changed=set(read))
        else:
            report.sync = placement_sync.SyncReport()
            for uuid, provider in read.items():
                if db_providers.provider_exists(context, uuid):
                    placement_sync.sync_facts(context, provider,
                                              report)
        for uuid, why in report.sync.problems:
            LOG.warning('Placement mirror: provider %s: %s', uuid, why)
            if self._notifier is not None and uuid in report.sync.kept:
                self._notifier.provider_gone(uuid, why)
        self._usage(context, adapter, report, {
            uuid: (provider.name, provider.root_uuid, provider.aggregates,
                   provider.inventories) for uuid, provider in read.items()})
        for uuid, provider in read.items():
            self._seen[uuid] = provider.generation
        report.read = sorted(read)
        return report

    def _recheck(self, context, adapter, report):
        """Read again the usage of up to placement_mirror_usage_rechecks

        providers holding usage in the ledger, in turn: Placement does not
        move a provider's generation when allocations are deleted, so an
        instance gone would otherwise stay counted (never too little).
        """
        prefix = db_claims.USAGE_PREFIX
        held = sorted(c[len(prefix):] for c in db_claims.list_consumers(
            context) if c.startswith(prefix))
        held = [uuid for uuid in held if uuid not in report.read]
        if not held:
            return
        count = min(len(held), CONF.pcloud.placement_mirror_usage_rechecks)
        begin = self._recheck_from % len(held)
        turn = (held + held)[begin:begin + count]
        self._recheck_from = begin + count
        self._usage(context, adapter, report,
                    self._ledger_facts(context, turn))

    @staticmethod
    def _ledger_facts(context, uuids):
        """What _usage takes of ``uuids``, from the ledger."""
        return {
            uuid: (db_providers.provider_name(context, uuid),
                   _ledger_root(context, uuid),
                   frozenset(db_providers.get_aggregates(context, uuid)),
                   db_providers.get_inventories(context, uuid))
            for uuid in uuids if db_providers.provider_exists(context, uuid)}

    def _usage(self, context, adapter, report, providers):
        """Hold in the ledger what others use of ``providers``

        ({uuid: (name, root uuid, aggregates, inventories)}).
        """
        allocations = {uuid: placement_client.read_allocations(adapter, uuid)
                       for uuid in providers}
        for uuid, held in allocations.items():
            self._remember(uuid, set(held))
        # Instances booted into reservations take a slot on our child
        # provider of their host: read those first.
        for uuid, (name, _root, _aggs, _inv) in providers.items():
            if name.startswith(resources.CHILD_PREFIX):
                self._reserved[uuid] = set(allocations[uuid])
        ours = (set().union(*self._reserved.values())
                | res_db.reservation_ids(context))
        aggregates, hosts = self._exclusions()
        for uuid, (name, root, aggs, inventories) in providers.items():
            if name.startswith(resources.CHILD_PREFIX):
                continue
            used = {}
            root_name = name if root in (None, uuid) else (
                db_providers.provider_name(context, root))
            if not (aggs & set(aggregates) or root_name in hosts):
                # Two lookups: ours | pieces would copy every reservation
                # id for each provider.
                pieces = promises.pieces_there(uuid, allocations[uuid])
                for consumer, amounts in allocations[uuid].items():
                    if consumer in ours or consumer in pieces:
                        continue
                    for rc, n in amounts.items():
                        if rc in inventories:
                            used[rc] = used.get(rc, 0) + n
            if db_claims.record_usage(context, usage_consumer(uuid),
                                      {uuid: used} if used else {}):
                report.usage_written.append(uuid)

    def _remember(self, uuid, consumers):
        """``consumers`` are on provider ``uuid`` now, and no others."""
        for consumer in self._consumers.get(uuid, set()) - consumers:
            where = self._where.get(consumer)
            if where is not None:
                where.discard(uuid)
                if not where:
                    del self._where[consumer]
        for consumer in consumers:
            self._where.setdefault(consumer, set()).add(uuid)
        if consumers:
            self._consumers[uuid] = consumers
        else:
            self._consumers.pop(uuid, None)


def _identity(rp):
    """A provider of the listing, without its facts."""
    return forest_mod.Provider(
        uuid=rp['uuid'], name=rp['name'], generation=rp['generation'],
        parent_uuid=rp['parent_provider_uuid'],
        root_uuid=rp['root_provider_uuid'])


def _ledger_root(context, uuid):
    return db_providers.get_provider(context, uuid)['root_provider_uuid']


_MIRROR = None
_MIRROR_LOCK = threading.Lock()


def get_mirror(exclusions, notifier=None):
    """This process's Mirror: both plugins share it (made on first use)."""
    global _MIRROR
    with _MIRROR_LOCK:
        if _MIRROR is None:
            _MIRROR = Mirror(placement_client.get_adapter(), exclusions,
                             notifier)
        return _MIRROR


def reset():
    """Forget this process's Mirror (tests: a new Placement each)."""
    global _MIRROR
    with _MIRROR_LOCK:
        _MIRROR = None
