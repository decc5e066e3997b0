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
"""Where the slots of a virtual:instance reservation go (pure, no I/O).

The allocation-candidates engine says, for one slot, every way each host
(provider tree, with sharing providers) can serve it in the window; the
forest's usage is already each provider's peak in the window, which is what
a slot pinned to one host for the whole window needs. Slots are then laid
out one by one, each on a candidate that still fits beside the slots
already laid, as Nova would boot them:

* affinity True: all slots on one host;
* affinity False: each slot on a different host;
* affinity None: packed, so that as many hosts as possible stay empty.

Hosts that already carry load are used before empty ones, and among them
the tightest first, so whole hosts stay free for whoever needs a whole
host. The plan is only a proposal: the ledger claim that follows checks it
exactly, under a generation compare-and-swap.
"""

import collections
import dataclasses

import numpy as np

from pcloud_plugin.capacity import candidates as candidates_mod
from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity import request as request_mod
from pcloud_plugin import exception
from pcloud_plugin.reservations import host_properties

# What a virtual:instance reservation asks for (seeds/003), and the
# value of each term a request may leave out (seeds/003's example has no
# resource_properties; python-blazarclient sends affinity "None").
PARAMS = ('vcpus', 'memory_mb', 'disk_gb', 'amount', 'affinity',
          'resource_properties', 'availability_zone')
OPTIONAL = {'affinity': None, 'resource_properties': '',
            'availability_zone': None}


class SlotsUnavailable(exception.Conflict):
    """Fewer slots than requested fit; ``placed`` is how many did."""
    msg_fmt = ('Only %(placed)d of %(requested)d slots fit '
               '(%(constraint)s).')


class SlotRequest:
    """What one reservation asks for.

    :param resources: {resource class: amount} one slot (one instance of
        the reserved flavor) takes
    :param amount: how many slots
    :param affinity: True (one host), False (distinct hosts) or None
    :param required: traits a host must offer
    :param forbidden: traits a host must not offer
    :param forbidden_aggregates: aggregate uuids whose hosts are never
        used (pclouds and host flavor pools)
    :param excluded_hosts: host names or root provider uuids never used
    :param member_of: aggregate uuids one of which a host must be in
        (an availability zone's); empty: any host
    :param hosts_matching: (a host's providers, root first) -> whether
        slots may go there (host_properties.HostsMatching: what
        resource_properties says beyond traits); None: any host
    """

    def __init__(self, resources, amount, affinity=None, required=(),
                 forbidden=(), forbidden_aggregates=(), excluded_hosts=(),
                 member_of=(), hosts_matching=None):
        self.resources = {rc: n for rc, n in resources.items() if n}
        self.amount = amount
        self.affinity = affinity
        self.required = frozenset(required)
        self.forbidden = frozenset(forbidden)
        self.forbidden_aggregates = frozenset(forbidden_aggregates)
        self.excluded_hosts = frozenset(excluded_hosts)
        self.member_of = frozenset(member_of)
        self.hosts_matching = hosts_matching

    def candidates_request(self):
        """One slot, as Nova asks Placement for one instance (an

        availability zone as Nova's prefilter asks it: member_of).
        """
        return request_mod.CandidatesRequest(groups={
            request_mod.UNSUFFIXED: request_mod.RequestGroup(
                resources=self.resources, required=sorted(self.required),
                forbidden=self.forbidden,
                member_of=[self.member_of] if self.member_of else (),
                forbidden_aggregates=self.forbidden_aggregates)})

    def describe(self):
        described = '%d x (%s), affinity %s' % (
            self.amount, ', '.join('%s=%d' % kv for kv in
                                   sorted(self.resources.items())),
            {True: 'true', False: 'false'}.get(self.affinity, 'none'))
        if self.hosts_matching is not None:
            # A refusal says which hosts the slots were held to.
            described += ', on hosts of resource_properties %s' % (
                self.hosts_matching)
        return described


class Plan:
    """Slots laid out: ``allocations`` is one {provider: {class: n}} per

    slot, ``hosts`` how many slots each host (root provider uuid) holds,
    ``names`` each host's name and ``roots`` the host of each provider
    the slots use.
    """

    def __init__(self, allocations, hosts, names, roots):
        self.allocations = allocations
        self.hosts = hosts
        self.names = names
        self.roots = roots

    @classmethod
    def on(cls, forest, allocations, hosts):
        """A plan of slots laid on forest's providers."""
        return cls(allocations, hosts,
                   {h: forest[h].name for h in hosts},
                   {rp: forest[rp].root_uuid
                    for alloc in allocations for rp in alloc})

    @property
    def amounts(self):
        """What the ledger claim of these slots is: summed per provider."""
        summed = collections.defaultdict(collections.Counter)
        for alloc in self.allocations:
            for rp, resources in alloc.items():
                summed[rp].update(resources)
        return {rp: dict(res) for rp, res in summed.items()}

    def slots(self):
        return [{'host_uuid': host, 'host_name': self.names[host],
                 'slots': n} for host, n in sorted(self.hosts.items())]


def parse_properties(resource_properties):
    """(required, forbidden) traits from Blazar's requirement syntax.

    ``["=", "$HW_CPU_X86_AVX2", "true"]`` requires a Placement trait,
    ``["=", "$CUSTOM_SLOW", "false"]`` (or ``"!="`` with true) forbids
    one, and an ``["and", ...]`` of those combines them. Any other
    expression of host facts (host_properties) has no traits here: it is
    the request's hosts_matching. A malformed one is refused
    (exception.InvalidTerm) rather than silently ignored.
    """
    properties = host_properties.parse(resource_properties)
    return properties.required, properties.forbidden


def host_of(forest, alloc, sharing):
    """The host (root provider uuid) a slot's allocation runs on."""
    for rp in alloc:
        if rp not in sharing:
            return forest[rp].root_uuid
    return forest[next(iter(alloc))].root_uuid


def discount(forest, amounts):
    """A copy of forest with a consumer's own claim taken out of its usage,

    so that it can be placed again. The peak of the others is at least
    this, so a plan may be optimistic; the ledger's exact check has the
    last word. (A new forest: the ledger shares the one it gave.)
    """
    changed = []
    for rp, resources in amounts.items():
        provider = forest.providers.get(rp)
        if provider is None:
            continue
        usage = dict(provider.usage)
        for rc, n in resources.items():
            if rc in usage:
                usage[rc] = max(0, usage[rc] - n)
        changed.append(dataclasses.replace(provider, usage=usage))
    return forest.replaced(changed)


class _Packer:
    """Lays slots on providers, keeping the sums it has added."""

    def __init__(self, forest, held):
        self.forest = forest
        self.held = held or {}
        self.added = collections.Counter()

    def room(self, rp, rc):
        # N slots are N instances: each slot's allocation is within
        # min_unit, max_unit and step_size (the candidates say so), and
        # only their sum is within capacity.
        held = self.held.get(rp, {}).get(rc, 0)
        return self.forest[rp].free(rc) - held - self.added[rp, rc]

    def fits(self, alloc):
        return all(self.room(rp, rc) >= n
                   for rp, resources in alloc.items()
                   for rc, n in resources.items())

    def add(self, alloc, sign=1):
        for rp, resources in alloc.items():
            for rc, n in resources.items():
                self.added[rp, rc] += sign * n

    def take(self, options, count):
        """Up to count slots from one host's options; what was laid."""
        laid = []
        while len(laid) < count:
            for alloc in options:
                if self.fits(alloc):
                    self.add(alloc)
                    laid.append(alloc)
                    break
            else:
                break
        return laid

    def count(self, options, limit):
        """How many slots (up to limit) one host could still take."""
        laid = self.take(options, limit)
        for alloc in laid:
            self.add(alloc, -1)
        return len(laid)

    def estimate(self, options, need, room):
        """Upper bound on the slots a host can take.

        The room (as room() was before any slot was laid) of every
        provider its options use, class by class, over what a slot needs.
        """
        providers = collections.defaultdict(set)
        for alloc in options:
            for rp, resources in alloc.items():
                for rc in resources:
                    providers[rc].add(rp)
        return min(sum(max(0, room[rp, rc]) for rp in rps) // need[rc]
                   for rc, rps in providers.items())


def _host_options(forest, request, max_candidates=None, only_hosts=None,
                  avoid_hosts=()):
    """(forest of the hosts request may use, {host: [allocation of one

    slot]}): the allocation candidates of one slot, by host.
    """
    forest = matching_hosts(forest, request.hosts_matching)
    answer = candidates_mod.allocation_candidates(
        forest, request.candidates_request(), max_candidates)
    sharing = forest.sharing
    excluded = set(avoid_hosts)
    for p in forest:
        if p.parent_uuid is None and (p.uuid in request.excluded_hosts or
                                      p.name in request.excluded_hosts):
            excluded.add(p.uuid)
    options = collections.defaultdict(list)
    for areq in answer['allocation_requests']:
        alloc = {rp: dict(a['resources'])
                 for rp, a in areq['allocations'].items()}
        host = host_of(forest, alloc, sharing)
        if host in excluded or (only_hosts is not None
                                and host not in only_hosts):
            continue
        options[host].append(alloc)
    return forest, options


def host_counts(forest, request, max_candidates=None):
    """{host: how many slots of request's shape it takes alone}, for the

    hosts that take any (its amount left aside): what SlotIndex.counts
    answers where it can, from the engine.
    """
    forest, options = _host_options(forest, request, max_candidates)
    packer = _Packer(forest, None)
    found = {}
    for host, opts in options.items():
        room = {(rp, rc): packer.room(rp, rc) for alloc in opts
                for rp, resources in alloc.items() for rc in resources}
        found[host] = packer.count(
            opts, packer.estimate(opts, request.resources, room))
    return {host: n for host, n in found.items() if n}


def total_slots(counts, affinity):
    """How many slots a reservation could have of hosts taking ``counts``

    (each host's, alone): all of them; with affinity, the most one host
    takes; against it, one a host.
    """
    counts = [int(n) for n in counts if n]
    if affinity is True:
        return max(counts, default=0)
    if affinity is False:
        return len(counts)
    return sum(counts)


def place(forest, request, max_candidates=None, preferred=(), held=None,
          only_hosts=None, avoid_hosts=()):
    """Lay out request.amount slots; a Plan, or SlotsUnavailable.

    :param preferred: hosts to use first (where the reservation already
        has slots), in order
    :param held: {provider: {class: n}} the consumer keeps beside the new
        slots (growing an active reservation), already discounted from
        the forest: it counts against free capacity
    :param only_hosts: if set, the only hosts slots may go to
    :param avoid_hosts: hosts slots must not go to
    """
    forest, options = _host_options(forest, request, max_candidates,
                                    only_hosts, avoid_hosts)
    sharing = forest.sharing
    packer = _Packer(forest, held)
    need = request.resources
    room = {}
    for opts in options.values():
        for alloc in opts:
            for rp, resources in alloc.items():
                for rc in resources:
                    if (rp, rc) not in room:
                        room[rp, rc] = packer.room(rp, rc)
    estimates = {h: packer.estimate(opts, need, room)
                 for h, opts in options.items()}
    busy = {p.root_uuid for p in forest
            if p.uuid not in sharing and any(p.usage.values())}
    first = [h for h in preferred if h in options]
    rest = sorted((h for h in options if h not in first),
                  key=lambda h: (h not in busy, estimates[h],
                                 forest[h].name))
    order = first + rest

    allocations = []

    def lay(host, count):
        laid = packer.take(options[host], count)
        allocations.extend(laid)
        return len(laid)

    hosts = _lay_out(request, order, busy, first, estimates, lay,
                     lambda host, limit: packer.count(options[host], limit))
    return Plan.on(forest, allocations, hosts)


def place_indexed(index, request, start, end, max_candidates=None,
                  avoid_hosts=()):
    """Lay out request.amount slots from a capacity.slot_index.SlotIndex:

    the Plan place() would make on the forest of [start, end), or
    SlotsUnavailable; None where the index cannot tell (see
    SlotIndex.counts) and place() must decide.
    """
    counts = index.counts(request, start, end, max_candidates, avoid_hosts)
    if counts is None:
        return None
    # Only the root serves a slot, so a host's count is exact: laying
    # slots on it needs no check beyond that count.
    count, uuids, allocations = counts.count, index.uuids, []

    def lay(host, wanted):
        laid = min(int(count[host]), wanted)
        allocations.extend({uuids[host]: dict(request.resources)}
                           for _n in range(laid))
        return laid

    order = counts.order()
    busy = set(np.flatnonzero(counts.busy).tolist())
    laid = _lay_out(request, order, busy, (), count, lay,
                    lambda host, limit: min(int(count[host]), limit))
    hosts = {uuids[h]: n for h, n in laid.items()}
    return Plan(allocations, hosts,
                {uuids[h]: index.names[h] for h in laid},
                {uuid: uuid for uuid in hosts})


def _lay_out(request, order, busy, first, estimates, lay, could):
    """{host: slots laid} of request.amount slots over hosts in order, by

    its affinity, or SlotsUnavailable. lay(host, n) lays up to n slots on
    a host and says how many; could(host, n) says how many it would.
    """
    hosts = collections.Counter()

    def lay_on(host, count):
        laid = lay(host, count)
        if laid:
            hosts[host] += laid
        return laid

    wanted = request.amount
    if request.affinity is True:
        for host in order:
            if estimates[host] >= wanted and could(host, wanted) == wanted:
                lay_on(host, wanted)
                break
        else:
            best = max((could(h, wanted) for h in order), default=0)
            raise SlotsUnavailable(
                placed=best, requested=wanted,
                constraint='affinity true: no single host takes them all')
    elif request.affinity is False:
        for host in order:
            if sum(hosts.values()) == wanted:
                break
            lay_on(host, 1)
        if sum(hosts.values()) < wanted:
            raise SlotsUnavailable(
                placed=sum(hosts.values()), requested=wanted,
                constraint='affinity false: each on a different host')
    else:
        _pack(order, busy, first, estimates, wanted, lay_on)
        if sum(hosts.values()) < wanted:
            raise SlotsUnavailable(placed=sum(hosts.values()),
                                   requested=wanted,
                                   constraint='affinity none')
    return hosts


def _pack(order, busy, first, estimates, wanted, lay):
    """Fill hosts already in use, then open as few empty hosts as can be:

    the tightest empty host that takes all that is left, else the
    roomiest, and so on.
    """
    left = wanted
    empty = []
    for host in order:
        if host in first or host in busy:
            left -= lay(host, left)
            if not left:
                return
        else:
            empty.append(host)
    while left and empty:
        whole = [h for h in empty if estimates[h] >= left]
        host = (min(whole, key=lambda h: estimates[h]) if whole
                else max(empty, key=lambda h: estimates[h]))
        empty.remove(host)
        left -= lay(host, left)


def matching_hosts(forest, hosts_matching):
    """forest without the trees of the hosts hosts_matching refuses (all

    of it if None), sharing providers kept: the engine then lists only
    hosts the slots may use, as the slot index counts only those.
    """
    if hosts_matching is None:
        return forest
    sharing = forest.sharing
    hosts = [root for root in forest.trees if root not in sharing]
    matching = hosts_matching.mask(hosts_matching.columns(
        [forest.trees[host] for host in hosts], hosts_matching.names))
    if matching.all():
        return forest
    kept = sharing.union(np.array(hosts, dtype=object)[matching])
    return forest_mod.ProviderForest(p for p in forest
                                     if p.root_uuid in kept)


def _eligible(forest, request):
    """The providers of the hosts the request may use, and the sharing

    providers.
    """
    sharing = forest.sharing
    eligible = set()
    for root, members in forest.trees.items():
        top = forest[root]
        traits = frozenset().union(*(p.traits for p in members))
        aggregates = frozenset().union(*(p.aggregates for p in members))
        if (root in request.excluded_hosts
                or top.name in request.excluded_hosts
                or aggregates & request.forbidden_aggregates
                or (request.member_of
                    and not aggregates & request.member_of)
                or not request.required <= traits
                or traits & request.forbidden
                or (request.hosts_matching is not None
                    and not request.hosts_matching(members))):
            continue
        eligible.update(p.uuid for p in members if p.uuid not in sharing)
    return eligible | sharing


@dataclasses.dataclass(frozen=True)
class Shortage:
    """The class that leaves room for the fewest of a request's slots.

    per_slot: what one slot takes of it; largest: the most any one of the
    providers has free at its peak in the window; fits: how many slots
    it leaves room for, each whole on one provider (all on one with
    affinity), as amount asks; providers: the uuids offering it on the
    hosts the request may use.
    """

    rc: str
    per_slot: int
    largest: int
    fits: int
    amount: int
    providers: frozenset

    def describe(self):
        return ('%s: a slot takes %d, and the most free on any one host '
                '(or NUMA node) is %d: room for %d of the %d slots by %s '
                'alone.' % (self.rc, self.per_slot, self.largest, self.fits,
                            self.amount, self.rc))


def slot_shortage(forest, request):
    """A Shortage for a refusal message: free capacity is never added up

    across providers, as a slot's class comes whole from one of them.
    """
    eligible = _eligible(forest, request)
    worst = None
    for rc, per_slot in sorted(request.resources.items()):
        providers = frozenset(p.uuid for p in forest
                              if p.uuid in eligible and rc in p.inventories)
        free = [max(0, forest[u].free(rc)) for u in providers]
        each = [int(f // per_slot) for f in free]
        fits = (max(each, default=0) if request.affinity is True
                else sum(each))
        found = Shortage(rc, per_slot, int(max(free, default=0)),
                         min(fits, request.amount), request.amount,
                         providers)
        key = (found.fits, found.largest / per_slot)
        if worst is None or key < worst[0]:
            worst = (key, found)
    return worst[1]


def zone_aggregates(aggregate_zones, zone, default_zone):
    """(member_of, forbidden) aggregate uuids for slots in ``zone``.

    ``aggregate_zones``: (uuid, zone or None) of Nova's aggregates. A host
    is in the zone of its aggregate that has one, else in the default
    zone: a named zone's hosts are those of its aggregates (as Nova's
    availability-zone prefilter asks Placement), the default zone's
    those in no aggregate of another zone. InvalidTerm for a zone no
    aggregate has (but the default).
    """
    zones = collections.defaultdict(set)
    for uuid, its_zone in aggregate_zones:
        if its_zone and uuid:
            zones[its_zone].add(uuid)
    if zone == default_zone:
        return frozenset(), frozenset().union(
            *(uuids for z, uuids in zones.items() if z != default_zone))
    if zone not in zones:
        raise exception.InvalidTerm(
            param='availability_zone (no availability zone %r in this '
                  'cloud; its zones: %s)' % (
                      zone, ', '.join(sorted(set(zones) | {default_zone}))))
    return frozenset(zones[zone]), frozenset()


def per_slot(params):
    """{resource class: amount} one slot of reservation ``params`` takes."""
    return {'VCPU': params['vcpus'], 'MEMORY_MB': params['memory_mb'],
            'DISK_GB': params['disk_gb']}


def merged_amounts(*amounts):
    """Claims' {provider: {class: amount}} added together."""
    merged = collections.defaultdict(collections.Counter)
    for each in amounts:
        for rp, res in each.items():
            merged[rp].update(res)
    return {rp: dict(res) for rp, res in merged.items()}


def grown(slots, plan):
    """Slot rows with the plan's added; placed counts are kept."""
    rows = {s['host_uuid']: dict(s) for s in slots}
    for host, n in plan.hosts.items():
        slot = rows.setdefault(host, {'host_uuid': host, 'slots': 0,
                                      'host_name': plan.names[host],
                                      'placed': 0})
        slot['slots'] += n
    return [rows[h] for h in sorted(rows)]
