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
"""An allocation-candidates request, in Placement's grammar (1.39).

A request is built in code (``CandidatesRequest(groups={...})``) or parsed
from a GET /allocation_candidates query string (``parse_qs``). Either way
it is validated the way Placement validates it, so a request we accept is
one Placement accepts and a refusal carries Placement's meaning (HTTP 400,
``exception.Invalid``). Names are checked against os-resource-classes and
os-traits; a CUSTOM_ name is accepted on its syntax alone since we keep no
registry of custom names (Placement refuses one it has never seen).
"""

import re
import urllib.parse

import os_resource_classes
import os_traits
from oslo_utils import uuidutils

from pcloud_plugin import exception

UNSUFFIXED = ''
GROUP_POLICIES = ('none', 'isolate')

_SUFFIX = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')
_GROUP_KEY = re.compile(
    r'^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$')
_LIMIT = re.compile(r'^[1-9][0-9]*$')
_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())


def _bad(reason):
    return exception.InvalidCandidatesRequest(reason=reason)


def _names(values):
    """A frozenset of names, from one name or an iterable of them."""
    return frozenset([values] if isinstance(values, str) else values)


def _one_or_any(values, what):
    """[name or iterable of names] -> [frozenset]: AND of any-of sets."""
    if isinstance(values, str):
        values = [values]
    sets = []
    for value in values:
        names = frozenset([value] if isinstance(value, str) else value)
        if not names:
            raise _bad('an empty any-of set in %s' % what)
        sets.append(names)
    return sets


class RequestGroup:
    """What one provider (suffixed) or one tree (unsuffixed) must offer.

    :param resources: {resource class: positive amount}
    :param required: trait names that must be present; an item that is an
        iterable of names is an any-of set (the ``in:`` syntax)
    :param forbidden: trait names that must be absent
    :param member_of: aggregate uuids the provider must be in; an item that
        is an iterable is an any-of set (``in:``)
    :param forbidden_aggregates: aggregate uuids the provider must not be in
    :param in_tree: uuid of a provider whose tree must serve the group
    """

    def __init__(self, resources=None, required=(), forbidden=(),
                 member_of=(), forbidden_aggregates=(), in_tree=None):
        self.resources = dict(resources or {})
        self.required = _one_or_any(required, 'required')
        self.forbidden = _names(forbidden)
        self.member_of = _one_or_any(member_of, 'member_of')
        self.forbidden_aggregates = _names(forbidden_aggregates)
        self.in_tree = in_tree

    def __repr__(self):
        return ('RequestGroup(resources=%r, required=%r, forbidden=%r, '
                'member_of=%r, forbidden_aggregates=%r, in_tree=%r)'
                % (self.resources, [sorted(s) for s in self.required],
                   sorted(self.forbidden),
                   [sorted(s) for s in self.member_of],
                   sorted(self.forbidden_aggregates), self.in_tree))

    def validate(self, suffix):
        where = 'resources%s' % suffix
        for rc, amount in self.resources.items():
            if rc not in _STANDARD_CLASSES and not (
                    isinstance(rc, str) and _CUSTOM.match(rc)):
                raise exception.UnknownResourceClass(
                    'Invalid resource class in %s: no such resource class '
                    '%r.' % (where, rc), name=rc)
            if (not isinstance(amount, int) or isinstance(amount, bool)
                    or amount < 1):
                raise exception.InvalidAmount(
                    resource_class=rc, amount=amount,
                    reason='%s needs a positive integer amount' % where)
        _check_traits(set().union(*self.required) | self.forbidden)
        conflicts = [s for s in self.required if s <= self.forbidden]
        if conflicts:
            raise _bad('conflicting required and forbidden traits in '
                       'required%s: %s' % (suffix, ', '.join(
                           '(%s)' % ', '.join(sorted(s))
                           for s in conflicts)))
        for agg in set().union(
                *self.member_of) | self.forbidden_aggregates:
            _check_uuid(agg, 'member_of%s' % suffix)
        if self.in_tree is not None:
            _check_uuid(self.in_tree, 'in_tree%s' % suffix)


class CandidatesRequest:
    """GET /allocation_candidates as a value.

    :param groups: {suffix: RequestGroup}; '' is the unsuffixed group, which
        may be split across one tree and sharing providers, while every
        suffixed group is served by a single provider
    :param group_policy: 'none' or 'isolate'; required with more than one
        suffixed group
    :param limit: return at most this many candidates
    :param root_required: traits the root of each candidate's tree must have
    :param root_forbidden: traits it must not have
    :param same_subtree: iterables of suffixes; the providers serving each
        must include one that is an ancestor of (or is) all the others
    """

    def __init__(self, groups, group_policy=None, limit=None,
                 root_required=(), root_forbidden=(), same_subtree=()):
        self.groups = dict(groups)
        self.group_policy = group_policy
        self.limit = limit
        self.root_required = _names(root_required)
        self.root_forbidden = _names(root_forbidden)
        if isinstance(same_subtree, str) or any(
                isinstance(s, str) for s in same_subtree):
            raise _bad('same_subtree takes iterables of suffixes, got %r'
                       % (same_subtree,))
        self.same_subtree = [frozenset(s) for s in same_subtree]
        self.validate()

    def __repr__(self):
        return ('CandidatesRequest(groups=%r, group_policy=%r, limit=%r, '
                'root_required=%r, root_forbidden=%r, same_subtree=%r)'
                % (self.groups, self.group_policy, self.limit,
                   sorted(self.root_required), sorted(self.root_forbidden),
                   [sorted(s) for s in self.same_subtree]))

    @classmethod
    def from_qs(cls, query_string):
        return parse_qs(query_string)

    def validate(self):
        for suffix, group in self.groups.items():
            if suffix != UNSUFFIXED and not (
                    isinstance(suffix, str) and _SUFFIX.match(suffix)):
                raise _bad('group suffix %r is not 1-64 characters of '
                           '[a-zA-Z0-9_-]' % (suffix,))
            group.validate(suffix)
        if not any(g.resources for g in self.groups.values()):
            raise _bad('there must be at least one resources or '
                       'resources[$S] parameter')
        in_subtree = set().union(*self.same_subtree)
        if UNSUFFIXED in in_subtree:
            raise _bad('the unsuffixed group cannot be in same_subtree')
        unknown = sorted(in_subtree - set(self.groups))
        if unknown:
            raise _bad('same_subtree names suffixes no group has: %s'
                       % ', '.join(unknown))
        resourceless = sorted(s for s, g in self.groups.items()
                              if not g.resources and s not in in_subtree)
        if resourceless:
            raise _bad('a group without resources must be named in '
                       'same_subtree: %s' % ', '.join(
                           repr(s) for s in resourceless))
        if self.group_policy not in (None,) + GROUP_POLICIES:
            raise _bad('group_policy must be one of %s, got %r'
                       % (', '.join(GROUP_POLICIES), self.group_policy))
        if self.group_policy is None and len(
                [s for s in self.groups if s != UNSUFFIXED]) > 1:
            raise _bad('group_policy is required with more than one '
                       'suffixed group')
        if self.limit is not None and (
                not isinstance(self.limit, int)
                or isinstance(self.limit, bool) or self.limit < 1):
            raise _bad('limit must be a positive integer, got %r'
                       % (self.limit,))
        _check_traits(self.root_required | self.root_forbidden)
        conflicts = self.root_required & self.root_forbidden
        if conflicts:
            raise _bad('conflicting required and forbidden traits in '
                       'root_required: %s' % ', '.join(sorted(conflicts)))


def _check_traits(names):
    for name in sorted(names, key=str):
        if name not in _STANDARD_TRAITS and not (
                isinstance(name, str) and _CUSTOM.match(name)):
            raise exception.UnknownTrait(
                'No such trait(s): %s.' % (name,), name=name)


def _check_uuid(value, where):
    if not isinstance(value, str) or not uuidutils.is_uuid_like(value):
        raise _bad('%s expects uuid(s), got %r' % (where, value))


# --- the query string ------------------------------------------------------

def _parse_resources(value, key):
    if not value.strip():
        raise _bad('badly formed %s: empty' % key)
    resources = {}
    for item in value.split(','):
        try:
            rc, amount = item.split(':')
        except ValueError:
            raise _bad('badly formed %s: expected CLASS:AMOUNT, got %r'
                       % (key, item))
        try:
            amount = int(amount)
        except ValueError:
            raise exception.InvalidAmount(
                resource_class=rc, amount=amount,
                reason='%s expects a positive integer amount' % key)
        if amount < 1:
            raise exception.InvalidAmount(
                resource_class=rc, amount=amount,
                reason='%s requires amount >= 1' % key)
        # Like Placement, a class named twice keeps its last amount.
        resources[rc] = amount
    return resources


def _parse_traits(value, key, any_of_allowed=True):
    """(required any-of sets, forbidden names) of one required value."""
    if value.startswith('in:'):
        if not any_of_allowed:
            raise _bad('%s does not support the in: syntax' % key)
        names = {name.strip() for name in value[3:].split(',')}
        if not all(names):
            raise _bad('an empty trait in %s=%s' % (key, value))
        if any(name.startswith('!') for name in names):
            raise _bad('%s=in:... cannot forbid traits: %s' % (key, value))
        return [frozenset(names)], set()
    names = [name.strip() for name in value.split(',')]
    # Placement strips any run of '!' (so !!FOO forbids FOO); keep that.
    forbidden = {name.lstrip('!') for name in names if name.startswith('!')}
    if not all(names) or not all(forbidden):
        raise _bad('an empty trait in %s=%s' % (key, value))
    required = [frozenset([name]) for name in names
                if not name.startswith('!')]
    return required, forbidden


def _parse_member_of(value, key):
    """(any-of set or None, forbidden set) of one member_of value."""
    if ',' in value and not value.startswith(('in:', '!in:')):
        raise _bad('several aggregates in %s need the in: or !in: prefix, '
                   'got %s' % (key, value))
    required, forbidden = None, set()
    if value.startswith('!in:'):
        forbidden = set(value[4:].split(','))
    elif value.startswith('!'):
        forbidden = {value[1:]}
    elif value.startswith('in:'):
        required = frozenset(value[3:].split(','))
    else:
        required = frozenset([value])
    for agg in (required or set()) | forbidden:
        _check_uuid(agg, key)
    return required, forbidden


def parse_qs(query_string):
    """A validated CandidatesRequest from a query string.

    The query string of GET /allocation_candidates, with or without its
    leading '?'.
    """
    params = urllib.parse.parse_qsl(query_string.lstrip('?'),
                                    keep_blank_values=True)
    groups = {}
    wide = {'limit': [], 'group_policy': [], 'root_required': [],
            'same_subtree': []}
    for key, value in params:
        if key in wide:
            wide[key].append(value)
            continue
        match = _GROUP_KEY.match(key)
        if not match:
            raise _bad('unknown query parameter %r' % key)
        prefix, suffix = match.groups()
        group = groups.setdefault(suffix or UNSUFFIXED, RequestGroup())
        if prefix == 'resources':
            # Placement keeps the last of repeated resources[$S] ...
            group.resources = _parse_resources(value, key)
        elif prefix == 'required':
            # ... but ANDs repeated required[$S] and member_of[$S].
            required, forbidden = _parse_traits(value, key)
            group.required.extend(required)
            group.forbidden |= forbidden
        elif prefix == 'member_of':
            required, forbidden = _parse_member_of(value, key)
            if required:
                group.member_of.append(required)
            group.forbidden_aggregates |= forbidden
        else:
            group.in_tree = value.strip()
            _check_uuid(group.in_tree, key)

    for value in wide['limit']:
        if not _LIMIT.match(value):
            raise _bad('limit must be a positive integer, got %r' % value)
    for value in wide['group_policy']:
        if value not in GROUP_POLICIES:
            raise _bad('group_policy must be one of %s, got %r'
                       % (', '.join(GROUP_POLICIES), value))
    if len(wide['root_required']) > 1:
        raise _bad('root_required may be given only once')
    root_required, root_forbidden = [], set()
    if wide['root_required']:
        root_required, root_forbidden = _parse_traits(
            wide['root_required'][0], 'root_required', any_of_allowed=False)
    same_subtree = []
    for value in wide['same_subtree']:
        suffixes = {s.strip() for s in value.split(',')}
        if UNSUFFIXED in suffixes:
            raise _bad('same_subtree cannot name the unsuffixed group (an '
                       'empty suffix)')
        same_subtree.append(suffixes)
    for group in groups.values():
        group.forbidden = frozenset(group.forbidden)
        group.forbidden_aggregates = frozenset(group.forbidden_aggregates)

    return CandidatesRequest(
        groups,
        group_policy=(wide['group_policy'] or [None])[0],
        limit=int(wide['limit'][0]) if wide['limit'] else None,
        root_required={name for (name,) in root_required},
        root_forbidden=root_forbidden,
        same_subtree=same_subtree)
