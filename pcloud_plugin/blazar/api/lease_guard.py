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

"""What Blazar's own lease routes must never see.

Blazar's v1 API hands a lease body to its manager nearly as it came: a
top-level field of the wrong type, a name its table cannot store, an
unknown resource type or malformed JSON is a 500; an ``events`` key on
an update replaces the lease's events (orphaning its start and end, which
then stop the manager's event loop for every lease); any other key on an
update is written onto the lease row as it is (its status, its project).
Before Blazar's view of ``POST /v1/leases`` and ``PUT|DELETE|GET
/v1/leases/<id>`` this answers such a request 400 naming the field, and
an id no lease can have 404. A reservation of one of our types that
carries a key which is none of its terms is a 400 too: Blazar hands the
plugin every key, and a term accepted and then ignored would be a lease
that silently means less than its request said; a ``region`` (any
type of ours) must be this cloud's, and an ``amount`` within the
operator's limit. seeds/003's ``start`` and ``end`` are read as
Blazar's ``start_date`` and ``end_date``. A creation that gives a
``duration`` (minutes) with ``earliest_start`` and ``latest_end``
instead of dates is a flexible lease (flexible): api.v1 books it.
What is left is Blazar's and our plugins'.
"""

import collections
import datetime
import functools
import importlib.metadata
import json
import re

import flask
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.blazar.api import schemas
from pcloud_plugin import exception
from pcloud_plugin.reservations import terms as terms_mod

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

_LEASES = re.compile(r'/v1/leases/?$')
_LEASE = re.compile(r'/v1/leases/([^/]*)/?$')
# Blazar makes every lease id a UUID (36 characters).
LEASE_ID = re.compile(r'^[A-Za-z0-9-]{1,36}$')
_UNSTORABLE = re.compile('[\U00010000-\U0010FFFF]')
# The option group of the operator's max_amount of each of our types.
AMOUNT_LIMITS = {'pcloud:host': 'pcloud_host',
                 'virtual:instance': 'pcloud_instance'}


def lease_route(path):
    """Whether ``path`` is one of Blazar's lease routes."""
    return bool(_LEASES.search(path) or _LEASE.search(path))


def resource_types():
    """{resource type: its terms} of the plugins blazar.conf [manager]

    plugins names (Blazar's manager refuses any other type with a 500);
    the terms are None for a plugin not ours (Blazar checks its own).
    """
    return _plugins_types(tuple(CONF.manager.plugins))


# Kept by the plugins named: a configuration read again (a test's, or a
# reload) may name others.
@functools.lru_cache(maxsize=8)
def _plugins_types(names):
    found = {}
    for entry in importlib.metadata.entry_points(
            group='blazar.resource.plugins'):
        if entry.name not in names:
            continue
        try:
            plugin = entry.load()
        except Exception:
            LOG.exception('Could not load Blazar resource plugin %s',
                          entry.name)
            continue
        terms = getattr(plugin, 'request_terms', None)
        # Ours take the region too (_check_region).
        found[plugin.resource_type] = (None if terms is None
                                       else tuple(terms) + (_WHERE,))
    return found


# What every reservation may carry beside its type's terms: its type, and
# on an update the id of the reservation it changes.
_ANY_RESERVATION = frozenset(('resource_type', 'id'))
_WHERE = terms_mod.REGION
# seeds/003 writes a lease's dates so; Blazar reads only its own names.
_DATE_ALIASES = (('start', 'start_date'), ('end', 'end_date'))


def parse_json(raw):
    """A request body's JSON; SchemaViolation naming the body if it is

    not JSON or nested past the interpreter's recursion limit.
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise exception.SchemaViolation(field='body',
                                        reason='nested too deeply')
    except ValueError as e:
        raise exception.SchemaViolation(field='body',
                                        reason='malformed JSON: %s' % e)


class NotFound(Exception):
    """No lease can have the id in the path."""


def check(validate, may_exceed_limits=lambda: False,
          type_of=lambda reservation_id: None):
    """Raise NotFound or exception.SchemaViolation for a request to

    Blazar's lease routes that must not reach Blazar; ``validate(schema,
    data, field)`` raises SchemaViolation. None for any other request.
    ``may_exceed_limits()``: whether the caller may ask past the
    operator's limits (AMOUNT_LIMITS); ``type_of(reservation id)``: the
    type of a reservation of ours an update names, else None. A lease
    creation leaves its Flexible (or None) in flask.g.pcloud_flexible.
    """
    request = flask.request
    one = _LEASE.search(request.path)
    if one is not None:
        if not LEASE_ID.match(one.group(1)):
            raise NotFound()
        if request.method != 'PUT':
            return
        schema = schemas.LEASE_UPDATE
    elif _LEASES.search(request.path) and request.method == 'POST':
        schema = schemas.LEASE_CREATE
    else:
        return
    data = parse_json(request.get_data(cache=True) or b'null')
    if isinstance(data, dict) and request.method == 'PUT' and \
            'events' in data:
        raise exception.SchemaViolation(
            field='events', reason="a lease's events are Blazar's own and "
            "follow its dates; they cannot be given")
    validate(schema, data, 'body')
    _storable(data, '', 0)
    if _dates_renamed(data):
        # Blazar's views read a body parsed already from here.
        request.parsed_data = data
    known = resource_types()
    for index, reservation in enumerate(data.get('reservations', ())):
        field = 'reservations.%d' % index
        kind = reservation.get('resource_type')
        if kind is None and request.method == 'PUT':
            # Blazar takes the reservation's own type: a key is unknown
            # when it is a term of no type of ours.
            terms = set().union(*(t for t in known.values() if t))
            _check_terms(reservation, terms, field,
                         'of any reservation type this cloud runs')
            kind = type_of(reservation.get('id'))
            _check_limit(reservation, kind, field, may_exceed_limits)
            if kind is not None and _WHERE in reservation:
                _check_region(reservation[_WHERE], field + '.' + _WHERE)
            continue
        if kind not in known:
            raise exception.SchemaViolation(
                field=field + '.resource_type',
                reason='%r is not one of the resource types this cloud '
                       'runs: %s' % (kind, ', '.join(sorted(known))))
        if known[kind] is not None:
            _check_terms(reservation, known[kind], field,
                         'of a %s reservation' % kind)
        _check_limit(reservation, kind, field, may_exceed_limits)
        if known[kind] is not None and _WHERE in reservation:
            _check_region(reservation[_WHERE], field + '.' + _WHERE)
    if request.method == 'POST':
        flask.g.pcloud_flexible = flexible(data, known)


def _dates_renamed(data):
    """Rename seeds/003's start and end to Blazar's names; whether any

    was. Both names of one date is a SchemaViolation.
    """
    renamed = False
    for alias, name in _DATE_ALIASES:
        if alias not in data:
            continue
        if name in data:
            raise exception.SchemaViolation(
                field=alias, reason='give %s or %s, not both' % (alias, name))
        data[name] = data.pop(alias)
        renamed = True
    return renamed


# A flexible lease: its duration in minutes, and the bounds of its window
# (seeds: "any time between Monday 08:00 and Friday 18:00"), for one
# reservation of ours; api.v1 books the earliest window that fits.
Flexible = collections.namedtuple(
    'Flexible', 'body reservation duration earliest latest_end')
_BOUNDS = ('earliest_start', 'latest_end')


def flexible(data, known):
    """The Flexible of a lease creation's body (checked against

    schemas.LEASE_CREATE) that gives a duration, its body without the
    flexible fields; None for any other. SchemaViolation naming the
    field of one that cannot be booked so. ``known``: resource_types().
    """
    if 'duration' not in data:
        for field in _BOUNDS:
            if field in data:
                raise exception.SchemaViolation(field=field, reason=(
                    'bounds a flexible lease: give its duration too'))
        return None
    for field in ('start_date', 'end_date'):
        if field in data:
            raise exception.SchemaViolation(field=field, reason=(
                'a flexible lease (one with a duration) gives '
                'earliest_start and latest_end; its dates are chosen'))
    reservations = data.get('reservations') or []
    if len(reservations) != 1 or known.get(
            reservations[0].get('resource_type')) is None:
        raise exception.SchemaViolation(field='reservations', reason=(
            'a flexible lease books one reservation of %s' % ', '.join(
                sorted(k for k, terms in known.items() if terms))))
    body = {k: v for k, v in data.items()
            if k not in _BOUNDS and k != 'duration'}
    duration = datetime.timedelta(minutes=data['duration'])
    now = timeutils.utcnow().replace(microsecond=0)
    text = data.get('earliest_start', 'now')
    earliest = now if text == 'now' else max(
        now, terms_mod.moment(text, 'earliest_start'))
    latest_end = None
    if 'latest_end' in data:
        latest_end = terms_mod.moment(data['latest_end'], 'latest_end')
        if latest_end - earliest < duration:
            raise exception.SchemaViolation(field='latest_end', reason=(
                'leaves less than the duration after %s' % earliest))
    return Flexible(body, reservations[0], duration, earliest, latest_end)


def _check_terms(reservation, terms, field, whose):
    """SchemaViolation naming the first key of the reservation that is

    none of ``terms`` (``whose`` they are, for the message); a term
    ending in ``*`` is every key of its prefix (``capabilities:*``,
    ``aggregate_instance_extra_specs:*``: Nova's scoped extra specs).
    """
    prefixes = tuple(t[:-1] for t in terms if t.endswith('*'))
    for key in sorted(set(reservation) - _ANY_RESERVATION - set(terms)):
        if any(key.startswith(p) and len(key) > len(p) for p in prefixes):
            continue
        raise exception.SchemaViolation(
            field='%s.%s' % (field, key),
            reason='not a term %s; its terms are: %s' % (
                whose, ', '.join(sorted(terms))))


def this_region():
    """This cloud's region: Blazar's ([DEFAULT] os_region_name), else

    the one region of the caller's catalog (keystonemiddleware's
    X-Service-Catalog), else None.
    """
    if CONF.os_region_name:
        return CONF.os_region_name
    try:
        catalog = json.loads(
            flask.request.headers.get('X-Service-Catalog') or '[]')
        regions = {endpoint.get('region_id') or endpoint.get('region')
                   for service in catalog
                   for endpoint in service.get('endpoints', ())}
    except (ValueError, AttributeError, TypeError):
        regions = set()
    regions.discard(None)
    return regions.pop() if len(regions) == 1 else None


def _check_region(region, field):
    """SchemaViolation naming the region unless it is this cloud's."""
    here = this_region()
    if region != here:
        raise exception.SchemaViolation(field=field, reason=(
            '%r is not the region of this cloud: %r' % (region, here)
            if here else '%r cannot be checked: this cloud names no region '
            '(blazar.conf [DEFAULT] os_region_name)' % (region,)))


def amount_limits():
    """{resource type: (its [group] max_amount option's name, the limit)}

    of the operator's limits set (seeds/001: "an operator can refuse a
    lease with invalid or too strict hints").
    """
    found = {}
    for kind, group in AMOUNT_LIMITS.items():
        limit = getattr(CONF, group).max_amount
        if limit:
            found[kind] = ('[%s] max_amount' % group, limit)
    return found


def _check_limit(reservation, kind, field, may_exceed_limits):
    """SchemaViolation naming the amount over the operator's limit of

    the reservation's type.
    """
    amount = reservation.get('amount')
    if isinstance(amount, str) and amount.strip().isdigit():
        amount = int(amount)
    if not isinstance(amount, int) or isinstance(amount, bool):
        return  # the plugin says what is wrong with it
    option, limit = amount_limits().get(kind, (None, None))
    if limit is not None and amount > limit and not may_exceed_limits():
        raise exception.SchemaViolation(
            field=field + '.amount',
            reason='%d is over the most a %s reservation may ask for in '
                   'this cloud: %d (%s)' % (amount, kind, limit, option))


# Deeper than any lease body: Blazar's and our code recurse on them.
_MAX_DEPTH = 16


def _storable(value, field, depth):
    """Every string of the body storable (schemas.STORABLE), not nested

    deeper than _MAX_DEPTH.
    """
    if depth > _MAX_DEPTH:
        raise exception.SchemaViolation(field=field or 'body',
                                        reason='nested too deeply')
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        items = ()
    for key, item in items:
        path = '%s.%s' % (field, key) if field else str(key)
        for text in (key, item):
            if isinstance(text, str) and _UNSTORABLE.search(text):
                raise exception.SchemaViolation(
                    field=path,
                    reason='characters beyond U+FFFF cannot be stored')
        _storable(item, path, depth + 1)
