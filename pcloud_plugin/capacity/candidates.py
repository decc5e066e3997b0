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
"""Allocation candidates: Placement's GET /allocation_candidates (1.39)
answered from a ProviderForest snapshot of one time window (seeds/004).

The forest's usage is already the window's peak, so nothing here knows
about time. The answer has Placement's JSON shape and, for every request,
the same set of allocation requests and provider summaries.

How it works: every group becomes one or more search variables (a suffixed
group is one variable; the unsuffixed group is one per resource class, as
each class may come from a different provider of the tree or a sharing
provider). A variable's options are the providers that could serve it
alone, keyed by the root of the tree ("anchor") a candidate built on them
belongs to; a sharing provider is an option under every tree it shares
with. For each anchor that every variable can use, a depth-first search
picks one option per variable, pruning a branch as soon as summed amounts
overflow a provider, isolate is broken or a same_subtree set fails. So
work follows the valid candidates, not the product of all options, and
``max_candidates`` stops the search itself.
"""

import collections
import contextlib
import gc
import itertools
import math

from pcloud_plugin.capacity import request as request_mod
from pcloud_plugin import exception

UNSUFFIXED = request_mod.UNSUFFIXED


def allocation_candidates(forest, request, max_candidates=None):
    """Placement's GET /allocation_candidates answer, from a forest.

    :param forest: a capacity.forest.ProviderForest whose usage is the peak
        of the window asked about
    :param request: a capacity.request.CandidatesRequest or a query string
    :param max_candidates: stop generating after this many candidates
        (Placement's [placement]max_allocation_candidates); None for all.
        The request's limit caps generation the same way.
    :returns: {'allocation_requests': [...], 'provider_summaries': {...}},
        read-only: the summaries are the forest's own (Provider.summary),
        shared with every other answer from it
    """
    if isinstance(request, str):
        request = request_mod.parse_qs(request)
    if max_candidates is not None and (
            not isinstance(max_candidates, int)
            or isinstance(max_candidates, bool) or max_candidates < 1):
        raise exception.Invalid(
            reason='max_candidates must be a positive integer, got %r'
            % (max_candidates,))
    caps = [n for n in (request.limit, max_candidates) if n is not None]
    with gc_paused():
        return _Search(forest, request).run(min(caps) if caps else None)


@contextlib.contextmanager
def gc_paused():
    """Hold the cyclic garbage collector while many objects are made.

    An answer is tens of thousands of small dicts (and a first snapshot
    of the ledger as many steps), none of them in cycles; letting the
    collector rescan the caller's whole heap while we build them triples
    the time on a big forest.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Var:
    """One pick of a provider.

    A suffixed group, or one resource class of the unsuffixed group.
    """

    __slots__ = ('suffix', 'amounts', 'resources', 'options', 'granular',
                 'summed')

    def __init__(self, suffix, amounts, options):
        self.suffix = suffix
        self.amounts = amounts      # ((resource class, amount), ...)
        self.resources = dict(amounts)  # copied into each candidate
        self.options = options      # {anchor root: [provider uuid, ...]}
        self.granular = suffix != UNSUFFIXED
        self.summed = ()            # the amounts other variables share


class _Search:
    """One request against one forest; indexes live as long as it."""

    def __init__(self, forest, request):
        self.forest = forest
        self.providers = forest.providers
        self.request = request
        self.isolate = request.group_policy == 'isolate'
        self.sharing = forest.sharing
        self._anchors = {}
        self._room = {}
        self._lines = {}    # uuid -> (uuid, parent, ..., root)
        # Whether summed amounts or isolate tie the variables together.
        self.constrained = False

    # --- indexes (beside the forest's own), built when needed ---------------

    def by_class(self, rc):
        return self.forest.by_class.get(rc, ())

    def members(self, aggregate):
        return self.forest.members.get(aggregate, ())

    def in_all(self, member_of):
        """Providers directly in one aggregate of every any-of set."""
        found = None
        for any_of in member_of:
            these = set().union(*(self.members(a) for a in any_of))
            found = these if found is None else found & these
        return found

    def sharing_anchors(self, uuid):
        """The trees a sharing provider serves.

        Its own root and the root of every provider it shares an aggregate
        with.
        """
        anchors = self._anchors.get(uuid)
        if anchors is None:
            anchors = {self.providers[uuid].root_uuid}
            for agg in self.providers[uuid].aggregates:
                anchors.update(self.providers[m].root_uuid
                               for m in self.members(agg))
            # Sorted, so that the same forest always gives the same order.
            anchors = self._anchors[uuid] = sorted(anchors)
        return anchors

    def room(self, key):
        """What amounts summed on one (provider, class) may reach.

        Its free capacity and its max_unit: min_unit and step_size bind
        each amount alone, as in Placement.
        """
        found = self._room.get(key)
        if found is None:
            p = self.providers[key[0]]
            found = self._room[key] = min(
                p.free(key[1]), p.inventories[key[1]].max_unit)
        return found

    # --- groups to variables ----------------------------------------------

    def allowed_roots(self):
        required = self.request.root_required
        forbidden = self.request.root_forbidden
        if not (required or forbidden):
            return None
        return {p.uuid for p in self.forest
                if p.parent_uuid is None and required <= p.traits
                and not forbidden & p.traits}

    @staticmethod
    def serving(pool, amounts, traits, in_tree=None):
        """The providers of pool that alone can take every amount.

        Their traits pass ``traits`` (a _trait_rule) and, if in_tree is
        set, they are in that root's tree. min_unit, max_unit and step_size
        bind each amount alone, as in Placement. The engine's innermost
        filter: one loop, no calls per provider.
        """
        every, any_of, forbidden = traits
        for p in pool:
            names = p.traits
            if (not every <= names or not forbidden.isdisjoint(names)
                    or (in_tree is not None and p.root_uuid != in_tree)
                    or (any_of and not all(
                        not s.isdisjoint(names) for s in any_of))):
                continue
            inventories, usage = p.inventories, p.usage
            for rc, amount in amounts:
                inv = inventories.get(rc)
                if (inv is None or amount < inv.min_unit
                        or amount > inv.max_unit or amount % inv.step_size
                        or usage.get(rc, 0) + amount > inv.capacity):
                    break
            else:
                yield p

    def suffixed_var(self, suffix, group, allowed):
        """The providers that alone serve a suffixed group, by anchor."""
        amounts = tuple(group.resources.items())
        in_tree = self.tree_of(group.in_tree)
        member = self.in_all(group.member_of)
        if in_tree is False or member == set():
            return None
        # Placement finds a resourceless group's providers by traits and
        # aggregates alone: with neither it finds none, and in_tree (the
        # provider must exist) does not narrow it.
        if not amounts:
            if not (group.required or group.member_of):
                return None
            in_tree = None
            pool = self.forest
        else:
            pool = min((self.by_class(rc) for rc, _ in amounts), key=len)
        if member is not None:
            pool = [p for p in pool if p.uuid in member]
        banned = set().union(*(self.members(a)
                               for a in group.forbidden_aggregates))
        traits = _trait_rule(group.required, group.forbidden)
        options = collections.defaultdict(list)
        sharing = self.sharing
        for p in self.serving(pool, amounts, traits, in_tree):
            uuid = p.uuid
            if uuid in banned:
                continue
            if uuid in sharing:
                for anchor in self.sharing_anchors(uuid):
                    if allowed is None or anchor in allowed:
                        options[anchor].append(uuid)
            elif allowed is None or p.root_uuid in allowed:
                options[p.root_uuid].append(uuid)
        return options and [_Var(suffix, amounts, options)]

    def unsuffixed_vars(self, group, allowed):
        """One variable per class of the unsuffixed group.

        Any provider of the anchor's tree, or a sharing provider, may serve
        each class.
        """
        in_tree = self.tree_of(group.in_tree)
        member = self.in_all(group.member_of)
        if in_tree is False or member == set():
            return None
        shared = self.sharing if member is None else self.sharing & member
        banned = set().union(*(self.members(a)
                               for a in group.forbidden_aggregates))
        # Only the providers in the aggregates, and the trees of the roots
        # in them, can pass member_of: look at those alone.
        pool = None if member is None else self.with_trees(member)
        # A provider with a forbidden trait can serve no class of the
        # group, so drop it here rather than per combination; required
        # traits may come from the providers of the classes together
        # (checks_after), unless there is one class.
        traits = _trait_rule(
            group.required if len(group.resources) == 1 else (),
            group.forbidden)
        result = []
        for rc, amount in group.resources.items():
            options = collections.defaultdict(list)
            for p in self.serving(self.by_class(rc) if pool is None else pool,
                                  ((rc, amount),), traits, in_tree):
                anchors = (p.root_uuid,)
                if in_tree is None and p.uuid in shared:
                    anchors = self.sharing_anchors(p.uuid)
                for anchor in anchors:
                    # An aggregate on the root spans the tree here (but not
                    # for suffixed groups): provider or anchor must be in it.
                    if ((allowed is not None and anchor not in allowed)
                            or (member is not None and p.uuid not in member
                                and anchor not in member)
                            or p.uuid in banned or anchor in banned):
                        continue
                    options[anchor].append(p.uuid)
            if not options:
                return None
            result.append(_Var(UNSUFFIXED, ((rc, amount),), options))
        return result

    def with_trees(self, uuids):
        """The providers uuids name, with the whole tree of each root."""
        found = {}
        for uuid in sorted(uuids):
            if self.providers[uuid].parent_uuid is not None:
                found[uuid] = self.providers[uuid]
                continue
            stack = [uuid]
            while stack:
                uuid = stack.pop()
                found[uuid] = self.providers[uuid]
                stack.extend(self.forest.children[uuid])
        return found.values()

    def tree_of(self, in_tree):
        """Root of in_tree's tree; None if unset; False if no provider."""
        if in_tree is None:
            return None
        p = self.providers.get(in_tree)
        return False if p is None else p.root_uuid

    def plan(self):
        """Variables in search order, or None if a group has no options."""
        allowed = self.allowed_roots()
        if allowed is not None and not allowed:
            return None
        unsuffixed, suffixed = [], []
        for suffix, group in self.request.groups.items():
            if suffix == UNSUFFIXED:
                found = self.unsuffixed_vars(group, allowed)
                unsuffixed = found
            else:
                found = self.suffixed_var(suffix, group, allowed)
                suffixed.extend(found or ())
            if not found:
                return None
        # Most constrained first, with each same_subtree set together so
        # that its check prunes as early as possible.
        subtree_rank = {}
        for rank, suffixes in enumerate(self.request.same_subtree):
            for suffix in suffixes:
                subtree_rank.setdefault(suffix, rank)
        suffixed.sort(key=lambda v: (
            subtree_rank.get(v.suffix, len(subtree_rank)),
            sum(map(len, v.options.values())) / len(v.options)))
        plan = unsuffixed + suffixed
        # The unsuffixed group's variables, first in the plan, and its
        # amounts together.
        self.n_unsuffixed = len(unsuffixed)
        self.unsuffixed = {rc: n for v in unsuffixed for rc, n in v.amounts}
        counts = collections.Counter(rc for v in plan for rc, _ in v.amounts)
        for var in plan:
            var.summed = tuple((rc, n) for rc, n in var.amounts
                               if counts[rc] > 1)
        return plan

    # --- the search ------------------------------------------------------

    def checks_after(self, plan):
        """{index: check(chosen)}: what to test once plan[index] is set.

        That is, as soon as the last variable a rule looks at is known.
        """
        checks = collections.defaultdict(list)
        group = self.request.groups.get(UNSUFFIXED)
        required = group.required if group else ()
        n_unsuffixed = self.n_unsuffixed
        # With one class, unsuffixed_vars has filtered its options.
        if required and n_unsuffixed > 1:
            providers = self.providers

            # The unsuffixed group's traits may come from any provider that
            # serves one of its classes, together (Placement 1.39).
            def traits_ok(chosen):
                traits = providers[chosen[0]].traits
                for uuid in chosen[1:n_unsuffixed]:
                    traits = traits | providers[uuid].traits
                return all(s & traits for s in required)
            checks[n_unsuffixed - 1].append(traits_ok)
        index = {v.suffix: i for i, v in enumerate(plan) if v.granular}
        for suffixes in self.request.same_subtree:
            at = [index[s] for s in suffixes]
            checks[max(at)].append(self.same_subtree(at))
        return {i: _all_of(tests) for i, tests in checks.items()}

    def same_subtree(self, at):
        """check(chosen): one of the providers at indexes ``at`` is an

        ancestor of (or is) all the others. Only the highest of them (the
        shortest line) can be.
        """
        line = self.line

        def check(chosen):
            lines = [line(chosen[i]) for i in at]
            top = min(lines, key=len)[0]
            for other in lines:
                if top not in other:
                    return False
            return True
        return check

    def line(self, uuid):
        """(uuid, its parent, ..., its root), each built once."""
        found = self._lines.get(uuid)
        if found is None:
            found = self._lines[uuid] = tuple(self.forest.ancestors(uuid))
        return found

    def enough_in_tree(self, plan, options):
        """Cheap bound before searching an anchor.

        For each class several variables ask for, the providers they can
        use must have enough room in total (else a wide tree short by one
        device would be searched to exhaustion).
        """
        demand = collections.Counter()
        offered = collections.defaultdict(set)
        for var, opts in zip(plan, options):
            for rc, amount in var.summed:
                demand[rc] += amount
                offered[rc].update(opts)
        for rc, wanted in demand.items():
            if sum(self.room((u, rc)) for u in offered[rc]) < wanted:
                return False
        return True

    def walk_anchor(self, anchor, plan, checks, test):
        """The choices (a provider per variable) of one tree.

        test is every check of checks in one, None if there are none.
        """
        options = [var.options[anchor] for var in plan]
        if not self.constrained:
            # Nothing ties the variables together: every combination is
            # a candidate, or few enough to test one by one.
            if test is None:
                return itertools.product(*options)
            if math.prod(map(len, options)) <= 64:
                return [chosen for chosen in itertools.product(*options)
                        if test(chosen)]
        elif not self.enough_in_tree(plan, options):
            return ()
        return self.search(plan, options, checks)

    def search(self, plan, options, checks):
        """Depth-first over the variables of one tree.

        A branch is pruned as soon as a sum overflows, isolate is broken or
        a check fails.
        """
        n = len(plan)
        chosen = [None] * n
        summed = collections.Counter()
        taken = set()
        isolate = self.isolate

        def walk(i):
            if i == n:
                yield tuple(chosen)
                return
            var = plan[i]
            isolated = isolate and var.granular
            after = checks.get(i)
            for uuid in options[i]:
                if isolated and uuid in taken:
                    continue
                if var.summed and not self.add(summed, uuid, var.summed):
                    continue
                chosen[i] = uuid
                if after is None or after(chosen):
                    if isolated:
                        taken.add(uuid)
                    yield from walk(i + 1)
                    if isolated:
                        taken.discard(uuid)
                for rc, amount in var.summed:
                    summed[(uuid, rc)] -= amount

        yield from walk(0)

    def add(self, summed, uuid, amounts):
        """Add amounts to a provider's running sums if they still fit.

        Change nothing if they do not.
        """
        for rc, amount in amounts:
            key = (uuid, rc)
            if summed[key] + amount > self.room(key):
                return False
        for rc, amount in amounts:
            summed[(uuid, rc)] += amount
        return True

    def candidate(self, plan, chosen):
        """The allocation request of one choice, in Placement's shape."""
        k = self.n_unsuffixed
        first = chosen[0] if k else None
        if k > 1 and chosen[:k].count(first) == k:
            # Every class of the unsuffixed group from one provider (a
            # flat host, say): its amounts in one go.
            allocations = {first: {'resources': self.unsuffixed.copy()}}
            mappings = {UNSUFFIXED: [first]}
            i = k
        else:
            allocations, mappings, i = {}, {}, 0
            if k:
                mappings[UNSUFFIXED] = (
                    [first] if k == 1 else sorted(set(chosen[:k])))
        for i in range(i, len(plan)):
            var, uuid = plan[i], chosen[i]
            if var.granular:
                mappings[var.suffix] = [uuid]
            if var.amounts:
                alloc = allocations.get(uuid)
                if alloc is None:
                    allocations[uuid] = {'resources': var.resources.copy()}
                else:
                    resources = alloc['resources']
                    for rc, amount in var.amounts:
                        resources[rc] = resources.get(rc, 0) + amount
        return {'allocations': allocations, 'mappings': mappings}

    def run(self, cap):
        plan = self.plan()
        if plan is None:
            return {'allocation_requests': [], 'provider_summaries': {}}
        checks = self.checks_after(plan)
        self.constrained = any(v.summed for v in plan) or (
            self.isolate and sum(v.granular for v in plan) > 1)
        fewest = min(plan, key=lambda v: len(v.options))
        anchors = [a for a in fewest.options
                   if all(a in v.options for v in plan)]
        test = _all_of(list(checks.values())) if checks else None
        walks = (self.walk_anchor(a, plan, checks, test) for a in anchors)
        # Under a cap, take candidates from the trees in turn so that a
        # capped answer still spreads over every tree that fits.
        found = (_round_robin(walks) if cap
                 else itertools.chain.from_iterable(walks))
        sharing = self.sharing
        requests, seen = [], set()
        giving = {}     # providers giving resources, in answer order
        for chosen in found:
            # Only a choice made of sharing providers alone can be found
            # again under another anchor; Placement lists it once.
            if sharing and sharing.issuperset(chosen):
                key = tuple(sorted(zip(
                    (v.suffix for v in plan), (v.amounts for v in plan),
                    chosen)))
                if key in seen:
                    continue
                seen.add(key)
            areq = self.candidate(plan, chosen)
            requests.append(areq)
            giving.update(areq['allocations'])
            if len(requests) == cap:
                break
        # A provider only in mappings does not bring its tree (Placement).
        roots = dict.fromkeys(self.providers[uuid].root_uuid
                              for uuid in giving)
        return {'allocation_requests': requests,
                'provider_summaries': self.summaries(roots)}

    def summaries(self, roots):
        """Every provider of the trees of roots, in Placement's shape."""
        return {p.uuid: p.summary()
                for root in roots for p in self.forest.trees[root]}


def _trait_rule(required, forbidden):
    """(every, any_of, forbidden) for _Search.serving: required's single

    names, the common case, as one set to test at once, and its any-of
    sets of several names.
    """
    every = frozenset().union(*(s for s in required if len(s) == 1))
    any_of = [s for s in required if len(s) > 1]
    return every, any_of, frozenset(forbidden)


def _all_of(tests):
    """One test passing when every one of tests does."""
    if len(tests) == 1:
        return tests[0]
    return lambda chosen: all(test(chosen) for test in tests)


def _round_robin(iterables):
    active = [iter(it) for it in iterables]
    while active:
        still = []
        for gen in active:
            for item in gen:
                yield item
                still.append(gen)
                break
        active = still
