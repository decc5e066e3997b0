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

"""What a pcloud:host reservation asks for, and which hosts may serve it.

Its parameters (validated, each error a 400 naming its field), the lease
types of seeds/001, the host flavor pools and pclouds as Nova's
aggregates say (Pools), the hosts eligible for a reservation, and the
earliest window in which one would be admitted, from the ledger.

seeds/001's host terms are honoured wherever hosts are picked for a
reservation (eligible_hosts), never accepted and ignored: ``vcpus``,
``memory_mb`` and ``disk_gb`` are the least a host's VCPU, MEMORY_MB and
DISK_GB totals must be; ``hypervisor_properties`` and
``resource_properties`` are Blazar's property syntax (host_properties),
as its physical:host plugin takes them; the host capabilities extra
specs are Nova's ComputeCapabilitiesFilter's, scoped
(``capabilities:cpu_arch``) or not (``cpu_arch``), over the same host
facts; the aggregate extra specs are Nova's
AggregateInstanceExtraSpecsFilter's, scoped only
(``aggregate_instance_extra_specs:ssd``), over the metadata of the
host's aggregates (Pools.metadata_of). Nova reads an unscoped key with
both filters; here it is a capability or no term at all: an unscoped
key names no one thing, and a lessee asking for metadata says so by its
scope.
"""

import collections
import datetime
import json
import math
import operator
import re

from oslo_utils import strutils
from oslo_utils import timeutils

from pcloud_plugin.capacity import host_windows
from pcloud_plugin import conf
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import partition
from pcloud_plugin.reservations import host_properties

CONF = conf.CONF

IMMEDIATE = 'IMMEDIATE'
SCHEDULE = 'SCHEDULE'
BEST_EFFORT = 'BEST-EFFORT'
LEASE_TYPES = (IMMEDIATE, SCHEDULE, BEST_EFFORT)

# The host terms: the least of a host fact (host_properties.facts) each
# host must have, and Blazar's property expressions.
MINIMUMS = {'vcpus': 'vcpus', 'memory_mb': 'memory_mb', 'disk_gb': 'local_gb'}
PROPERTIES = ('hypervisor_properties', 'resource_properties')
# Nova's capabilities extra specs: the scoped form names any host fact,
# the non-scoped one those facts that are no term of their own.
CAPABILITIES = 'capabilities'
SCOPE = CAPABILITIES + ':'
UNSCOPED = tuple(fact for fact in host_properties.FACTS
                 if fact not in MINIMUMS)
# Nova's aggregate extra specs: {metadata key: spec} of the host's
# aggregates.
AGGREGATE_METADATA = 'aggregate_metadata'
AGGREGATE_SCOPE = 'aggregate_instance_extra_specs:'
# The keys of our own bookkeeping in aggregates' metadata (pcloud.
# aggregates), which name real hosts: never a lessee's to ask about.
OWN_KEYS = 'pcloud:'
HOST_TERMS = tuple(MINIMUMS) + PROPERTIES + (CAPABILITIES,
                                             AGGREGATE_METADATA)

REQUIRED = ('amount', 'host_flavor', 'pcloud_id')
OPTIONAL = dict({'availability_zone': None, 'required_traits': None,
                 'lease_type': SCHEDULE, 'timeout': None},
                **{term: host_db.TERMS[term]
                   for term in tuple(MINIMUMS) + PROPERTIES})
# The parameters parsed (and a reservation's record of them):
# ``capabilities`` is {host fact: Nova's extra spec value},
# ``aggregate_metadata`` {metadata key: Nova's extra spec value}.
STORED = REQUIRED + tuple(OPTIONAL) + (CAPABILITIES, AGGREGATE_METADATA)
# The keys a request may carry (api.lease_guard); 'capabilities:*' is any
# key of that prefix.
PARAMS = (REQUIRED + tuple(OPTIONAL) + UNSCOPED
          + (SCOPE + '*', AGGREGATE_SCOPE + '*'))

# Nova's extra_specs_ops, as far as host facts answer them: for numbers
# '=' is "at least", as there; <in>, <all-in> and the string orderings
# have no fact to mean something on (and are refused for aggregate
# metadata too: one set of operators for both extra specs).
NUMBER_OPS = {'=': operator.ge, '==': operator.eq, '!=': operator.ne,
              '>=': operator.ge, '<=': operator.le}
STRING_OPS = {'s==': operator.eq, 's!=': operator.ne}
ANY_OF = '<or>'
CAPABILITY_OPS = tuple(NUMBER_OPS) + tuple(STRING_OPS) + (ANY_OF,)
# A first word like these is an operator, never part of a plain value: one
# not supported is refused rather than compared as a string (as Nova
# would compare "> 8").
_OPERATOR = re.compile(r'^(<[^<>]*>|s?[<>=!]{1,2})$')

_NONE = ('', 'none', 'null')


def malformed(field, reason):
    return exception.InvalidTerm(param='%s (%s)' % (field, reason))


def _int(value, field, minimum):
    try:
        return strutils.validate_integer(value, field, minimum, 2 ** 31 - 1)
    except ValueError as e:
        raise malformed(field, e)


def _traits_text(value):
    """The stored form of required_traits: a string, or a list of strings

    joined by '&'; anything else is a 400.
    """
    if isinstance(value, (list, tuple)):
        if not all(isinstance(group, str) for group in value):
            raise malformed('required_traits',
                            'a string or a list of strings')
        return '&'.join(value)
    return value


def _traits(text):
    """Parsed required_traits as stored ('&' joins several groups)."""
    if not text:
        return [], set()
    return host_windows.parse_traits(text.split('&'))


def _values_text():
    return ('its value plain (equal as a string) or "<op> value" with '
            '<op> one of %s ("<or> a <or> b": any of)'
            % ' '.join(CAPABILITY_OPS))


def _supported():
    return ('a capability is one of %s (capabilities:<fact>; %s also '
            'without the prefix), %s'
            % (', '.join(host_properties.FACTS), ', '.join(UNSCOPED),
               _values_text()))


def _metadata_supported():
    return ('%s<key> is a key of the metadata of the host\'s aggregates '
            '(not %s...), %s' % (AGGREGATE_SCOPE, OWN_KEYS, _values_text()))


def _number(value):
    """value as a finite float, else None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def capability_test(key, fact, spec):
    """(value of the host fact) -> whether it meets ``spec``, a value of

    Nova's ComputeCapabilitiesFilter extra spec ``key``; InvalidTerm
    naming the key for what this cloud cannot answer.
    """
    if fact not in host_properties.FACTS:
        raise malformed(key, 'no host fact %s; %s' % (fact, _supported()))
    name = None if fact in host_properties.TOTALS else fact
    return spec_test(key, spec, _supported(), name)


def metadata_test(key, name, spec):
    """(one value of the host's aggregates' metadata key ``name``) ->

    whether it meets ``spec``, a value of Nova's
    AggregateInstanceExtraSpecsFilter extra spec ``key``; InvalidTerm
    naming the key for what this cloud cannot answer.
    """
    if not name or name.startswith(OWN_KEYS):
        raise malformed(key, 'no metadata key %r; %s'
                        % (name, _metadata_supported()))
    return spec_test(key, spec, _metadata_supported())


def spec_test(key, spec, supported, name=None):
    """(a value) -> whether it meets ``spec``, the value of the extra spec

    ``key`` (Nova's extra_specs_ops, CAPABILITY_OPS of them); InvalidTerm
    naming the key, saying what is ``supported``, for what this cloud
    cannot answer. ``name``: the values are that fact's, names, which no
    number operator compares; else a value that is no number meets no
    number comparison.
    """
    if isinstance(spec, bool) or not isinstance(spec, (str, int, float)):
        raise malformed(key, 'a string, got %r; %s' % (spec, supported))
    spec = str(spec)
    words = spec.split()
    op = words[0] if words else None
    if op == ANY_OF:
        options = words[1::2]
        if len(words) % 2 or any(w != ANY_OF for w in words[::2]):
            raise malformed(key, '"<or> a <or> b" takes one value after '
                            'each <or>, got %r' % spec)
        return lambda value: str(value) in options
    if op in STRING_OPS or op in NUMBER_OPS:
        if len(words) != 2:
            raise malformed(key, '%s takes one value, got %r' % (op, spec))
        operand = words[1]
        if op in STRING_OPS:
            compare = STRING_OPS[op]
            return lambda value: compare(str(value), operand)
        if name is not None:
            raise malformed(key, '%s is a name: compare it with s==, s!=, '
                            '<or> or a plain value, not %s' % (name, op))
        number = _number(operand)
        if number is None:
            raise malformed(key, '%s compares numbers, got %r' % (op, spec))
        compare = NUMBER_OPS[op]

        def test(value):
            value = _number(value)
            return value is not None and compare(value, number)
        return test
    if op is not None and _OPERATOR.match(op):
        raise malformed(key, '%s is no operator this cloud supports; %s'
                        % (op, supported))
    return lambda value: str(value) == spec


def _capability_key(key):
    """The host fact a request key names as a capability, else None."""
    if key.startswith(SCOPE):
        return key[len(SCOPE):]
    return key if key in UNSCOPED else None


def _metadata_key(key):
    """The metadata key a request key names, else None."""
    return key[len(AGGREGATE_SCOPE):] if key.startswith(
        AGGREGATE_SCOPE) else None


def _extra_specs(values, current, name_of, test):
    """{name: spec}: ``current``'s changed by the keys of ``values`` that

    ``name_of`` names (None: not one of these; None or '' drops one),
    each checked by ``test(key, name, spec)``.
    """
    found = dict(current or {})
    named = {}
    for key in sorted(values):
        name = name_of(key)
        if name is None:
            continue
        if name in named:
            raise malformed(key, 'give %s or %s, not both'
                            % (named[name], key))
        named[name] = key
        spec = values[key]
        if spec is None or (isinstance(spec, str) and not spec.strip()):
            found.pop(name, None)
            continue
        test(key, name, spec)
        found[name] = str(spec)
    return found


def capabilities_of(values, current=None):
    """{host fact: spec}: ``current``'s changed by the capabilities of

    ``values`` (scoped or not; None or '' drops one), each checked.
    """
    return _extra_specs(values, current, _capability_key, capability_test)


def aggregate_metadata_of(values, current=None):
    """{metadata key: spec}: ``current``'s changed by the aggregate extra

    specs of ``values`` (None or '' drops one), each checked.
    """
    return _extra_specs(values, current, _metadata_key, metadata_test)


# The extra specs terms: (term, its scope, its parser).
EXTRA_SPECS = ((CAPABILITIES, SCOPE, capabilities_of),
               (AGGREGATE_METADATA, AGGREGATE_SCOPE, aggregate_metadata_of))


def _properties(term, expr):
    """Blazar's expression as stored (a JSON string), and parsed."""
    if isinstance(expr, list):
        expr = json.dumps(expr)
    if expr is None:
        expr = ''
    if not isinstance(expr, str):
        raise malformed(term, 'a JSON string or a list, got %r' % (expr,))
    try:
        return expr, host_properties.parse(expr)
    except exception.InvalidTerm as e:
        # host_properties names resource_properties: say which it was.
        named = e.kwargs.get('param', '')
        prefix = 'resource_properties ('
        why = (named[len(prefix):-1] if named.startswith(prefix)
               else e.message)
        raise malformed(term, why)


def parse_host_terms(merged):
    """The host terms of ``merged`` (those it lacks ask nothing),

    validated: {term: value} as stored (db.host_reservations.TERMS).
    """
    params = {}
    for term in MINIMUMS:
        value = merged.get(term)
        params[term] = (0 if value is None or value == ''
                        else _int(value, term, 0))
    for term in PROPERTIES:
        params[term] = _properties(term, merged.get(term))[0]
    for term, scope, specs_of in EXTRA_SPECS:
        current = merged.get(term) or {}
        if not isinstance(current, dict):
            raise malformed(term, '{name: value}, got %r' % (current,))
        params[term] = specs_of(
            {scope + name: spec for name, spec in current.items()})
    return params


def parse_terms(merged):
    """amount, host_flavor, availability_zone, required_traits and the

    host terms (parse_host_terms).
    """
    params = {'amount': _int(merged['amount'], 'amount', 1)}
    try:
        params['host_flavor'] = codec.validate_flavor_id(
            merged['host_flavor'])
    except exception.InvalidField as e:
        raise malformed('host_flavor', e.kwargs['reason'])
    az = merged['availability_zone']
    if az is None or (isinstance(az, str) and az.strip().lower() in _NONE):
        params['availability_zone'] = None
    else:
        try:
            params['availability_zone'] = codec.validate_text(
                'availability_zone', az)
        except exception.InvalidField as e:
            raise malformed('availability_zone', e.kwargs['reason'])
    traits = _traits_text(merged['required_traits']) or None
    if traits is not None and not isinstance(traits, str):
        raise malformed('required_traits', 'a string or a list of strings')
    try:
        _traits(traits)
    except exception.Invalid as e:
        raise malformed('required_traits', e.message)
    params['required_traits'] = traits
    params.update(parse_host_terms(merged))
    return params


def parse_params(values, current=None):
    """The reservation parameters of values, validated, each error naming

    its field; those missing come from ``current`` (an update), or their
    default, or are an error.
    """
    missing = [p for p in REQUIRED if p not in values
               and (current is None or p not in current)]
    if missing:
        raise exception.MissingTerm(param=','.join(missing))
    merged = dict(OPTIONAL)
    merged.update((p, current[p]) for p in STORED
                  if current is not None and p in current)
    merged.update((p, values[p]) for p in REQUIRED + tuple(OPTIONAL)
                  if p in values)
    for term, _scope, specs_of in EXTRA_SPECS:
        merged[term] = specs_of(values, merged.get(term))
    params = parse_terms(merged)
    try:
        params['pcloud_id'] = codec.validate_pcloud_id(merged['pcloud_id'])
    except exception.InvalidField as e:
        raise malformed('pcloud_id', e.kwargs['reason'])
    lease_type = merged['lease_type']
    lease_type = (lease_type.strip().upper().replace('_', '-')
                  if isinstance(lease_type, str) else lease_type)
    if lease_type not in LEASE_TYPES:
        raise malformed('lease_type', 'one of %s, got %r'
                        % (', '.join(LEASE_TYPES), merged['lease_type']))
    params['lease_type'] = lease_type
    timeout = merged['timeout']
    if lease_type != BEST_EFFORT and 'timeout' not in values:
        timeout = None  # left from a BEST-EFFORT lease being updated
    if timeout is not None and not (isinstance(timeout, str)
                                    and timeout.lower() in _NONE):
        if lease_type != BEST_EFFORT:
            raise malformed('timeout', 'only a BEST-EFFORT lease waits')
        params['timeout'] = _int(timeout, 'timeout', 1)
    elif lease_type == BEST_EFFORT:
        params['timeout'] = CONF.pcloud_host.best_effort_timeout
    else:
        params['timeout'] = None
    return params


def params_of(row):
    return {p: row[p] for p in STORED}


def check_type(params, start, now=None):
    """An IMMEDIATE lease starts now ([pcloud_host] immediate_tolerance)."""
    if params['lease_type'] == IMMEDIATE:
        now = now or timeutils.utcnow()
        latest = now + datetime.timedelta(
            seconds=CONF.pcloud_host.immediate_tolerance)
        if start > latest:
            raise malformed(
                'lease_type', 'an IMMEDIATE lease starts now, not at '
                '%s: use SCHEDULE' % start)


def check_pcloud(pools, pcloud_id, project_id):
    """The aggregate of the project's pcloud ``pcloud_id``."""
    agg = pools.pclouds.get(pcloud_id)
    # Others' pclouds do not exist, as far as a user can tell.
    if agg is None or codec.Pcloud(agg.metadata).owner != project_id:
        raise malformed('pcloud_id', 'no pcloud %s of project %s'
                        % (pcloud_id, project_id))
    return agg


def deadline(params, start):
    if params['lease_type'] != BEST_EFFORT:
        return None
    return start + datetime.timedelta(minutes=params['timeout'])


# --- what Nova's aggregates say about hosts --------------------------------

class Pools:
    """Host flavor pools and pclouds, from one list of Nova's aggregates

    (seeds/000's names and metadata), and what their metadata says of
    each host.
    """

    def __init__(self, aggregates, default_az):
        self.pools = {}
        self.pclouds = {}
        self.node_of = {}
        self.holders = collections.defaultdict(list)
        self._az = {}
        self._metadata = collections.defaultdict(
            lambda: collections.defaultdict(set))
        self.default_az = default_az
        # Blazar's physical:host plugin's: never ours (pcloud.partition).
        self.blazars = partition.blazar_hosts(
            aggregates, CONF.pcloud.blazar_freepool_name)
        for agg in aggregates:
            md = getattr(agg, 'metadata', None) or {}
            hosts = getattr(agg, 'hosts', None) or ()
            if codec.is_pool(md):
                self.pools[md.get(codec.FLAVOR_ID)] = agg
                self.node_of.update(codec.pool_nodes(md))
            elif codec.is_pcloud(md):
                pcloud_id = md.get(codec.ID)
                if pcloud_id:
                    self.pclouds[pcloud_id] = agg
                for host in hosts:
                    self.holders[host].append(pcloud_id or agg.name)
            # A pcloud's or a lease's aggregate holds a host while it is
            # leased: its metadata says nothing of the host's own.
            if not (codec.is_pcloud(md) or codec.is_lease(md)):
                self._add_metadata(md, hosts)
            zone = getattr(agg, 'availability_zone', None)
            if zone:
                for host in hosts:
                    self._az[host] = zone

    def _add_metadata(self, md, hosts):
        # As Nova reads them: a value is a comma separated list, and a
        # host has a key's values of every aggregate it is in. Our own
        # keys (a pool's name one per host) are never asked: left out,
        # or a pool of N hosts costs N x N here on every pick.
        for key, value in md.items():
            if key.startswith(OWN_KEYS):
                continue
            values = {v.strip() for v in str(value).split(',')}
            for host in hosts:
                self._metadata[host][key] |= values

    def az_of(self, host):
        return self._az.get(host, self.default_az)

    def metadata_of(self, host):
        """{key: set of values} of the metadata of the aggregates the

        service host ``host`` is in, pclouds' and leases' aside.
        """
        return self._metadata.get(host, {})


def eligible_hosts(forest, pools, params, leased):
    """Hosts a reservation may use, in name order:

    [{'host_uuid', 'host_name', 'service_host'}]. ``leased``: service
    hosts in a pcloud through a lease (others in a pcloud are its own).
    """
    pool = pools.pools.get(params['host_flavor'])
    if pool is None:
        raise malformed('host_flavor',
                        'no host flavor %s' % params['host_flavor'])
    roots = {p.name: p.uuid for p in forest if p.parent_uuid is None}
    found = {}
    for host in getattr(pool, 'hosts', None) or ():
        if (pools.holders.get(host) and host not in leased
                or host in pools.blazars):
            continue
        zone = params['availability_zone']
        if zone is not None and pools.az_of(host) != zone:
            continue
        node = pools.node_of.get(host, host)
        if node in roots:
            found[roots[node]] = (node, host)
    required, forbidden = _traits(params['required_traits'])
    meets = host_test(params)
    return [{'host_uuid': root, 'host_name': found[root][0],
             'service_host': found[root][1]}
            for root in host_windows.qualifying(forest, found, required,
                                                forbidden)
            if meets is None or meets(host_tree(forest, root),
                                      pools.metadata_of(found[root][1]))]


def host_tree(forest, root):
    """The providers of a host's tree, root first (host_properties.facts

    reads the root's name as the hypervisor_hostname).
    """
    return forest.trees[root]


def _holds(properties, host):
    return (properties.required <= host['traits']
            and not properties.forbidden & host['traits']
            and (properties.hosts_matching is None
                 or properties.hosts_matching.matches(host)))


def host_test(params):
    """One predicate of a host's provider tree (root first) and the

    metadata of its aggregates (Pools.metadata_of) for the host terms of
    ``params``, or None when they ask nothing (params without them, as
    offerings and the earliest window give, ask nothing).
    """
    tests = []
    for term, fact in MINIMUMS.items():
        least = params.get(term) or 0
        if least:
            tests.append(lambda host, fact=fact, least=least:
                         host[fact] >= least)
    for term in PROPERTIES:
        properties = _properties(term, params.get(term))[1]
        if properties != host_properties.ANY_HOST:
            tests.append(lambda host, p=properties: _holds(p, host))
    for fact, spec in sorted((params.get(CAPABILITIES) or {}).items()):
        test = capability_test(SCOPE + fact, fact, spec)
        tests.append(lambda host, fact=fact, test=test:
                     host[fact] is not None and test(host[fact]))
    metadata_tests = [
        (name, metadata_test(AGGREGATE_SCOPE + name, name, spec))
        for name, spec in sorted(
            (params.get(AGGREGATE_METADATA) or {}).items())]
    if not tests and not metadata_tests:
        return None

    def meets(tree, metadata):
        host = host_properties.facts(tree)
        # As Nova: some aggregate's value of the key meets the spec (a
        # host without the key meets none).
        return (all(test(host) for test in tests)
                and all(any(test(value) for value in metadata.get(name, ()))
                        for name, test in metadata_tests))
    return meets


def terms_asked(params):
    """The host terms ``params`` asks, as text, each by its name."""
    asked = ['%s at least %d' % (term, params[term])
             for term in MINIMUMS if params.get(term)]
    asked.extend('%s %s' % (term, params[term])
                 for term in PROPERTIES if params.get(term))
    for term, scope, _specs_of in EXTRA_SPECS:
        asked.extend('%s%s "%s"' % (scope, name, spec) for name, spec in
                     sorted((params.get(term) or {}).items()))
    return asked


def describe(params):
    where = []
    if params['availability_zone']:
        where.append('in availability zone %s' % params['availability_zone'])
    if params['required_traits']:
        where.append('with traits %s' % params['required_traits'])
    asked = terms_asked(params)
    if asked:
        where.append('with host terms %s' % ', '.join(asked))
    return '%d host(s) of host flavor %s%s' % (
        params['amount'], params['host_flavor'],
        ''.join(' ' + w for w in where))


def left_out(forest, pools, params, leased, eligible):
    """Why fewer hosts than asked could ever serve a reservation, when its

    host terms are why: which terms and how many hosts they leave out of
    those otherwise eligible ('' when it asks none, or they leave none).
    """
    asked = terms_asked(params)
    if not asked:
        return ''
    without = dict(params, **{term: host_db.TERMS[term]
                              for term in HOST_TERMS})
    others = len(eligible_hosts(forest, pools, without, leased))
    if others == len(eligible):
        return ''
    if not eligible:
        return (' No host of host flavor %s meets its host terms (%s), '
                'whatever the window: %d host(s) would be eligible without '
                'them.' % (params['host_flavor'], ', '.join(asked), others))
    return (' Its host terms (%s) leave %d of the %d host(s) otherwise '
            'eligible.' % (', '.join(asked), len(eligible), others))


def find_earliest_window(context, forest, pools, params, duration,
                         not_before=None, latest_start=None):
    """The earliest window of ``duration`` in which the reservation of

    ``params`` (amount, host_flavor, availability_zone, required_traits)
    would be admitted, from the ledger: {'start', 'end', 'amount'}, or
    None if no such window starts by latest_start (or at all).
    """
    leased = host_db.joined_service_hosts(context)
    hosts = eligible_hosts(forest, pools, params, leased)
    not_before = (not_before or timeutils.utcnow()).replace(microsecond=0)
    order = [h['host_uuid'] for h in hosts]
    busy = host_db.busy_intervals(context, order, not_before)
    found = host_windows.earliest_window(
        busy, params['amount'], duration, not_before,
        latest_start=latest_start, order=order)
    if found is None:
        return None
    start, end, _roots = found
    return {'start': start, 'end': end, 'amount': params['amount']}
