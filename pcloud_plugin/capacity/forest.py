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
"""A read-only snapshot of provider trees with usage for one window.

The ledger builds it (db.snapshots.load_forest) and the allocation-candidates
engine reads it; neither this module nor the engine does any I/O.

Snapshots share what has not changed: the ledger hands the same Provider
object to every snapshot while nothing about the provider moved, and the
same ProviderForest while nothing in it did. So neither is ever modified
once built (make a new one, e.g. with dataclasses.replace), and what is
derived from one may be kept on it.
"""

import collections
import dataclasses
import functools

import os_traits

SHARING_TRAIT = os_traits.MISC_SHARES_VIA_AGGREGATE


# Slotted: a load makes thousands, and fewer objects mean cheaper garbage
# collections in the services that hold them.
@dataclasses.dataclass(slots=True)
class Provider:
    uuid: str
    name: str
    parent_uuid: str = None
    root_uuid: str = None
    generation: int = 0
    # resource class name -> capacity.inventory.Inventory
    inventories: dict = dataclasses.field(default_factory=dict)
    # resource class name -> peak usage during the snapshot's window
    usage: dict = dataclasses.field(default_factory=dict)
    traits: frozenset = frozenset()
    # aggregate uuids the provider itself is a member of
    aggregates: frozenset = frozenset()
    # summary(), built on first use
    _summary: dict = dataclasses.field(
        default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.root_uuid is None:
            self.root_uuid = self.uuid if self.parent_uuid is None else None

    def free(self, resource_class):
        """Capacity of the class left over by the window's peak usage."""
        inventory = self.inventories.get(resource_class)
        if inventory is None:
            return 0
        return inventory.capacity - self.usage.get(resource_class, 0)

    def summary(self):
        """This provider's entry in the provider_summaries of Placement's

        GET /allocation_candidates (1.39). Built once and shared by every
        answer that lists the provider: read-only, like the provider.
        """
        if self._summary is None:
            usage = self.usage
            self._summary = {
                'resources': {
                    rc: {'capacity': inv.capacity, 'used': usage.get(rc, 0)}
                    for rc, inv in self.inventories.items()},
                'traits': sorted(self.traits),
                'parent_provider_uuid': self.parent_uuid,
                'root_provider_uuid': self.root_uuid,
            }
        return self._summary


class ProviderForest:
    """Providers by uuid, with the tree links and indexes the engine uses.

    The indexes are built on first use and kept as long as the forest.
    """

    def __init__(self, providers):
        self.providers = {p.uuid: p for p in providers}
        self.children = {uuid: [] for uuid in self.providers}
        # root uuid -> the tree's providers, root first: answers and
        # whole-host claims read trees at a time.
        self.trees = {}
        for provider in self.providers.values():
            if provider.parent_uuid is not None:
                self.children[provider.parent_uuid].append(provider.uuid)
        for provider in self.providers.values():
            # Fill in roots given only parents (handy for hand-built
            # forests).
            if provider.root_uuid is None:
                node = provider
                while node.parent_uuid is not None:
                    node = self.providers[node.parent_uuid]
                provider.root_uuid = node.uuid
            tree = self.trees.get(provider.root_uuid)
            if tree is None:
                tree = self.trees[provider.root_uuid] = []
            if provider.parent_uuid is None:
                tree.insert(0, provider)
            else:
                tree.append(provider)

    def __iter__(self):
        return iter(self.providers.values())

    def __len__(self):
        return len(self.providers)

    def __getitem__(self, uuid):
        return self.providers[uuid]

    def replaced(self, providers):
        """A new forest with providers in place of those of the same uuid

        (and the same place in their tree).
        """
        new = {p.uuid: p for p in providers}
        return ProviderForest(new.get(p.uuid, p) for p in self)

    @functools.cached_property
    def by_class(self):
        """resource class -> the providers with an inventory of it."""
        found = collections.defaultdict(list)
        for p in self.providers.values():
            for rc in p.inventories:
                found[rc].append(p)
        return dict(found)

    @functools.cached_property
    def sharing(self):
        """The uuids of the providers that share via aggregates."""
        return frozenset(p.uuid for p in self.providers.values()
                         if SHARING_TRAIT in p.traits)

    @functools.cached_property
    def members(self):
        """aggregate uuid -> uuids of the providers directly in it."""
        found = collections.defaultdict(set)
        for p in self.providers.values():
            for agg in p.aggregates:
                found[agg].add(p.uuid)
        return dict(found)

    def tree_of(self, uuid):
        """Every provider uuid in the tree holding uuid, root first."""
        return [p.uuid for p in self.trees[self.providers[uuid].root_uuid]]

    def ancestors(self, uuid):
        """uuid and its ancestors up to the root, nearest first."""
        chain = []
        node = self.providers.get(uuid)
        while node is not None:
            chain.append(node.uuid)
            node = self.providers.get(node.parent_uuid)
        return chain
