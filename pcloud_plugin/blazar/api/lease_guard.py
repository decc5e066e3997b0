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
an id no lease can have 404. What is left is Blazar's and our plugins'.
"""

import functools
import importlib.metadata
import json
import re

import flask
from oslo_config import cfg
from oslo_log import log as logging

from pcloud_plugin.blazar.api import schemas
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

_LEASES = re.compile(r'/v1/leases/?$')
_LEASE = re.compile(r'/v1/leases/([^/]*)/?$')
# Blazar makes every lease id a UUID (36 characters).
LEASE_ID = re.compile(r'^[A-Za-z0-9-]{1,36}$')
_UNSTORABLE = re.compile('[\U00010000-\U0010FFFF]')


@functools.lru_cache(maxsize=None)
def resource_types():
    """The resource types of the plugins blazar.conf [manager] plugins

    names (Blazar's manager refuses any other with a 500).
    """
    found = set()
    for entry in importlib.metadata.entry_points(
            group='blazar.resource.plugins'):
        if entry.name not in CONF.manager.plugins:
            continue
        try:
            found.add(entry.load().resource_type)
        except Exception:
            LOG.exception('Could not load Blazar resource plugin %s',
                          entry.name)
    return frozenset(found)


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


def check(validate):
    """Raise NotFound or exception.SchemaViolation for a request to

    Blazar's lease routes that must not reach Blazar; ``validate(schema,
    data, field)`` raises SchemaViolation. None for any other request.
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
    known = resource_types()
    for index, reservation in enumerate(data.get('reservations', ())):
        kind = reservation.get('resource_type')
        if kind is None and request.method == 'PUT':
            continue  # Blazar takes the reservation's own
        if kind not in known:
            raise exception.SchemaViolation(
                field='reservations.%d.resource_type' % index,
                reason='%r is not one of the resource types this cloud '
                       'runs: %s' % (kind, ', '.join(sorted(known))))


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
