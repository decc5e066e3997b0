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
"""Which hosts a virtual:instance reservation's resource_properties names

(pure, no I/O).

Users moving from Blazar write Blazar's requirement syntax, so it means
here what it means there: ``[op, "$name", value]`` with ``op`` one of
``=`` (same as ``==``), ``!=``, ``<``, ``<=``, ``>``, ``>=``, combined
with ``["and", ...]`` and (which Blazar only plans) ``["or", ...]``,
nested; as a JSON string or already parsed; ``''``, ``'[]'`` and None
mean any host. The names are the host facts Blazar's users know, taken
from what the ledger knows of a host (its provider tree, as Placement
reports it): ``hypervisor_hostname`` (the root provider's name),
``vcpus``, ``memory_mb`` and ``local_gb`` (the tree's VCPU, MEMORY_MB and
DISK_GB totals), ``cpu_arch`` (from its HW_ARCH_* trait, as Nova writes
it: ``x86_64``) and any Placement trait (true or false). As Blazar does,
numbers compare as numbers and names as strings, and a host without the
fact (no HW_ARCH_* trait) matches no comparison of it. A name that is no
fact is refused, never matched or ignored.

An expression that is only an ``and`` of trait tests is kept as
Placement's required and forbidden traits (what the slot index and
Placement itself answer fastest); any other is a predicate on a host's
provider tree that placing applies (reservations.slots).
"""

import collections
import json
import math
import operator

import numpy as np
import os_traits

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin import exception

# The host facts a name may be, with the Placement class of the numbers.
TOTALS = {'vcpus': 'VCPU', 'memory_mb': 'MEMORY_MB', 'local_gb': 'DISK_GB'}
STRINGS = ('hypervisor_hostname', 'cpu_arch')
FACTS = STRINGS[:1] + tuple(TOTALS) + STRINGS[1:]
COMPARISONS = {'=': operator.eq, '==': operator.eq, '!=': operator.ne,
               '<': operator.lt, '<=': operator.le, '>': operator.gt,
               '>=': operator.ge}
COMBINATIONS = ('and', 'or')
_COMBINE = {'and': np.logical_and, 'or': np.logical_or}
ALL_FACTS = frozenset(FACTS + ('traits',))
ARCH_PREFIX = 'HW_ARCH_'
_STANDARD_TRAITS = frozenset(os_traits.get_traits())
_ARCH_TRAITS = frozenset(os_traits.get_traits(ARCH_PREFIX))
_TRUE = ('true', 'yes', '1', 'required')
_FALSE = ('false', 'no', '0', 'forbidden')
_EMPTY = (None, '', '[]')
# Deeper nesting than anyone writes is refused before it costs a stack.
_MAX_DEPTH = 16


class HostProperties(collections.namedtuple(
        'HostProperties', ('required', 'forbidden', 'hosts_matching'))):
    """What resource_properties asks of hosts: traits a host must and

    must not have, and ``hosts_matching``, a HostsMatching (None: the
    traits say it all).
    """


ANY_HOST = HostProperties(frozenset(), frozenset(), None)


class HostsMatching:
    """Which hosts match an expression. Hosts are provider trees (their

    providers, root first, each with ``name``, ``inventories`` and
    ``traits``); ``mask`` answers for many at once from their facts as
    columns (``columns``), which a caller may keep while the hosts'
    inventories and traits stay (capacity.slot_index does). ``str()`` is
    the expression.
    """

    def __init__(self, test, text, names):
        self._test = test
        self.text = text
        # The facts the expression reads (traits for any trait test).
        self.names = frozenset(names)

    @staticmethod
    def columns(trees, names=ALL_FACTS):
        """The facts of trees (only those in names) as columns: the same

        for every expression when names are all of them.
        """
        return facts_columns([facts(tree, names) for tree in trees])

    def mask(self, columns):
        """Whether each host of columns matches, as a bool array."""
        return self._test(columns)

    def __call__(self, tree):
        """Whether one host (its tree) matches."""
        return bool(self.mask(self.columns([tree], self.names))[0])

    def matches(self, host_facts):
        """Whether one host, by its facts (facts()), matches."""
        return bool(self.mask(facts_columns([host_facts]))[0])

    def __str__(self):
        return self.text

    def __repr__(self):
        return 'HostsMatching(%s)' % self.text


def facts(tree, names=ALL_FACTS):
    """A host's facts, from its provider tree (root first): the names an

    expression may use, and ``traits``, every trait of the tree. Only
    those in ``names``: placing asks them of every host.
    """
    if len(tree) == 1:
        traits = tree[0].traits
        # What a sharing provider offers is no host's own.
        own = () if forest_mod.SHARING_TRAIT in traits else tree
    else:
        traits = frozenset().union(*(p.traits for p in tree))
        own = [p for p in tree if forest_mod.SHARING_TRAIT not in p.traits]
    found = {}
    if 'hypervisor_hostname' in names:
        found['hypervisor_hostname'] = tree[0].name
    for name, rc in TOTALS.items():
        if name in names:
            found[name] = sum(p.inventories[rc].total for p in own
                              if rc in p.inventories)
    if 'cpu_arch' in names:
        # Nova names its trait after the arch it writes, upper-cased.
        arches = sorted(_ARCH_TRAITS.intersection(traits))
        found['cpu_arch'] = (arches[0][len(ARCH_PREFIX):].lower()
                             if arches else None)
    if 'traits' in names:
        found['traits'] = frozenset(traits)
    return found


def facts_columns(rows):
    """Facts of hosts (facts() of each) as {name: array over the hosts};

    ``traits`` stays a list of sets, and a fact a host lacks is None.
    """
    return {name: (np.fromiter((row[name] for row in rows), np.int64,
                               len(rows)) if name in TOTALS
                   else [row[name] for row in rows] if name == 'traits'
                   else np.array([row[name] for row in rows], dtype=object))
            for name in (rows[0] if rows else ())}


def _refuse(why):
    return exception.InvalidTerm(param='resource_properties (%s)' % why)


def _known():
    return ('it may name $%s or a Placement trait ($HW_CPU_X86_AVX2, '
            '$CUSTOM_...)' % ', $'.join(FACTS))


def parse(resource_properties):
    """The HostProperties of an expression (a JSON string or a list);

    InvalidTerm naming resource_properties if it is none.
    """
    if resource_properties in _EMPTY:
        return ANY_HOST
    expr = resource_properties
    if isinstance(expr, str):
        try:
            expr = json.loads(expr)
        except (ValueError, RecursionError) as e:
            raise _refuse('not JSON: %s' % e)
    if expr == []:
        return ANY_HOST
    tree = _node(expr, 0)
    traits = _traits_only(tree)
    if traits is None:
        return HostProperties(frozenset(), frozenset(), HostsMatching(
            _compiled(tree), json.dumps(expr),
            # One fact at least, for the count of hosts.
            _names(tree) | {'hypervisor_hostname'}))
    required = {trait for trait, wanted in traits if wanted}
    forbidden = {trait for trait, wanted in traits if not wanted}
    both = required & forbidden
    if both:
        raise _refuse('both requires and forbids %s'
                      % ', '.join(sorted(both)))
    return HostProperties(frozenset(required), frozenset(forbidden), None)


# A parsed expression is a tree of tuples: ('and' or 'or', [nodes]),
# ('trait', name, wanted) or ('fact', name, op, value).

def _node(expr, depth):
    if depth > _MAX_DEPTH:
        raise _refuse('nested deeper than %d' % _MAX_DEPTH)
    if not isinstance(expr, list) or not expr:
        raise _refuse('a list like ["=", "$vcpus", "8"] or ["and", ...], '
                      'got %s' % _shown(expr))
    head = expr[0]
    if isinstance(head, str) and head in COMBINATIONS:
        if head == 'or' and len(expr) < 2:
            raise _refuse('"or" of nothing matches no host')
        return (head, [_node(sub, depth + 1) for sub in expr[1:]])
    if not (isinstance(head, str) and head in COMPARISONS):
        raise _refuse('%s is no operator: "and", "or" or one of %s'
                      % (_shown(head), ' '.join(COMPARISONS)))
    if len(expr) != 3:
        raise _refuse('a comparison is [operator, "$name", value], got %s'
                      % _shown(expr))
    op, name, value = expr
    if not (isinstance(name, str) and name[:1] == '$'):
        raise _refuse('%s is no "$name"; %s' % (_shown(name), _known()))
    name = name[1:]
    if name in FACTS:
        return ('fact', name, op, _fact_value(name, value))
    if name in _STANDARD_TRAITS or (
            name.startswith('CUSTOM_') and len(name) > len('CUSTOM_')):
        if op not in ('=', '==', '!='):
            raise _refuse('trait %s is true or false: compare it with = '
                          'or !=, not %s' % (name, op))
        wanted = str(value).lower()
        if wanted not in _TRUE + _FALSE:
            raise _refuse('trait %s is true or false, got %s'
                          % (name, _shown(value)))
        return ('trait', name, (wanted in _TRUE) == (op != '!='))
    raise _refuse('no host fact $%s; %s' % (name, _known()))


def _fact_value(name, value):
    """The value a fact is compared with: a number for the totals."""
    if name not in TOTALS:
        if not isinstance(value, str) or not value:
            raise _refuse('$%s is compared with a non-empty string, got %s'
                          % (name, _shown(value)))
        return value
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                number = None
    if number is None or (isinstance(number, float)
                          and not math.isfinite(number)):
        raise _refuse('$%s is a number, got %s' % (name, _shown(value)))
    return number


def _shown(value):
    text = json.dumps(value, default=repr)
    return text if len(text) <= 80 else text[:77] + '...'


def _traits_only(node):
    """[(trait, wanted)] if node is only an "and" of trait tests, else

    None.
    """
    kind = node[0]
    if kind == 'trait':
        return [node[1:]]
    if kind != 'and':
        return None
    found = []
    for sub in node[1]:
        traits = _traits_only(sub)
        if traits is None:
            return None
        found.extend(traits)
    return found


def _names(node):
    """The facts node reads."""
    kind = node[0]
    if kind in COMBINATIONS:
        return set().union(*(_names(sub) for sub in node[1]))
    return {'traits' if kind == 'trait' else node[1]}


def _compiled(node):
    """A function of hosts' facts (facts_columns()) saying, as a bool

    array, for which hosts node holds.
    """
    kind = node[0]
    if kind in COMBINATIONS:
        combine = _COMBINE[kind]
        tests = [_compiled(sub) for sub in node[1]]

        def test(hosts):
            found = np.full(_count(hosts), kind == 'and')
            for sub in tests:
                combine(found, sub(hosts), out=found)
            return found
        return test
    if kind == 'trait':
        _kind, trait, wanted = node
        return lambda hosts: np.fromiter(
            ((trait in traits) == wanted for traits in hosts['traits']),
            bool, _count(hosts))
    _kind, name, op, value = node
    compare = COMPARISONS[op]
    if name in TOTALS:
        return lambda hosts: compare(hosts[name], value)

    def test(hosts):
        # A host without the fact matches no comparison of it, as a host
        # without an extra capability matches none in Blazar.
        facts = hosts[name]
        known = facts != None  # noqa: E711 (elementwise)
        found = np.zeros(len(facts), dtype=bool)
        found[known] = compare(facts[known], value).astype(bool)
        return found
    return test


def _count(hosts):
    return len(next(iter(hosts.values()))) if hosts else 0
