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
"""JSON schemas of every body and query the Pcloud API takes.

Patterns end in ``(?![\\s\\S])`` rather than ``$``, which would let a
trailing newline through; both Python and ECMA-262 regexes read it.
"""

_END = r'(?![\s\S])'
# No character beyond the Basic Multilingual Plane: those are 4 bytes in
# UTF-8, which MySQL's utf8 (utf8mb3) tables, Nova's and Blazar's among
# them, cannot store.
STORABLE = '^[^\U00010000-\U0010FFFF]*' + _END

IDENTIFIER = {
    'type': 'string',
    'pattern': r'^[A-Za-z0-9][A-Za-z0-9._-]{0,63}' + _END,
}
TEXT = {'type': 'string', 'maxLength': 255}
NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': STORABLE}
HOSTNAME = {
    'type': 'string', 'minLength': 1, 'maxLength': 200,
    'pattern': r'^[A-Za-z0-9_.-]+' + _END,
}
PROJECT_ID = {'type': 'string', 'pattern': r'^[A-Za-z0-9_-]{1,64}' + _END}
UNITS = {'type': 'integer', 'minimum': 0, 'maximum': 1000000}
RATIO = {'type': 'number', 'exclusiveMinimum': 0, 'maximum': 1000000}
# null: back to each host's own ratio.
RATIO_OR_NULL = dict(RATIO, type=['number', 'null'])
HOST_STATE = {'type': 'string', 'enum': ['enabled', 'disabled']}


def _object(required=(), **properties):
    schema = {'type': 'object', 'properties': properties,
              'additionalProperties': False}
    if required:
        schema['required'] = list(required)
    return schema


# Bodies.

HOST_FLAVOR_CREATE = _object(('id', 'units'), id=IDENTIFIER,
                             description=TEXT, units=UNITS)
POOL_HOST_ADD = _object(('host',), host=HOSTNAME)
PCLOUD_CREATE = _object(('name',), name=NAME)
HOST_ALLOCATE = _object(('name', 'flavor_id'), name=IDENTIFIER,
                        flavor_id=IDENTIFIER, availability_zone=NAME)
HOST_UPDATE = _object(('state',), state=HOST_STATE)
# A project's id or, resolved by the service in Keystone, its name
# (Keystone's are up to 64 characters).
PROJECT_NAME_OR_ID = {'type': 'string', 'minLength': 1, 'maxLength': 64,
                      'pattern': STORABLE}
TENANT_ADD = _object(('tenant_id',), tenant_id=PROJECT_NAME_OR_ID)
ALLOCATION_RATIOS = dict(
    _object(cpu_allocation_ratio=RATIO_OR_NULL,
            ram_allocation_ratio=RATIO_OR_NULL),
    minProperties=1)

# A maintenance window on compute hosts (operators).
MOMENT = {'type': 'string', 'minLength': 1, 'maxLength': 64}
# The hosts, or every host of a host flavor's pool.
MAINTENANCE_CREATE = _object(
    ('start_date', 'end_date'),
    hosts={'type': 'array', 'items': HOSTNAME, 'minItems': 1,
           'maxItems': 1000, 'uniqueItems': True},
    host_flavor=IDENTIFIER,
    start_date=MOMENT, end_date=MOMENT,
    reason=dict(TEXT, pattern=STORABLE),
    accept_unmovable={'type': 'boolean'})

# Queries: every value is a string, as it came in the URL.

NO_QUERY = _object()
PCLOUD_LIST_QUERY = _object(project_id=PROJECT_ID)
HOST_LIST_QUERY = _object(state=HOST_STATE)

# Numbers in a query are strings; handlers check their ranges, naming the
# field.
INTEGER_TEXT = {'type': 'string', 'pattern': r'^-?[0-9]{1,9}' + _END}
MOMENT = {'type': 'string', 'minLength': 1, 'maxLength': 64}
FLAG_TEXT = {'type': 'string', 'maxLength': 16}
OFFERING_COMMON = {'amount': INTEGER_TEXT, 'duration': INTEGER_TEXT,
                   'start': MOMENT, 'count': INTEGER_TEXT}
HOST_OFFERINGS_QUERY = _object(
    ('host_flavor', 'amount', 'duration'), host_flavor=IDENTIFIER,
    availability_zone=NAME, required_traits=TEXT, **OFFERING_COMMON)
INSTANCE_OFFERINGS_QUERY = _object(
    ('vcpus', 'memory_mb', 'disk_gb', 'amount', 'duration'),
    vcpus=INTEGER_TEXT, memory_mb=INTEGER_TEXT, disk_gb=INTEGER_TEXT,
    affinity=FLAG_TEXT, resource_properties={'type': 'string',
                                             'maxLength': 4096},
    **OFFERING_COMMON)
HOST_AVAILABILITY_QUERY = _object(
    ('host_flavor',), host_flavor=IDENTIFIER, availability_zone=NAME,
    required_traits=TEXT, start=MOMENT, hours=INTEGER_TEXT)
INSTANCE_AVAILABILITY_QUERY = _object(
    ('vcpus', 'memory_mb', 'disk_gb'),
    vcpus=INTEGER_TEXT, memory_mb=INTEGER_TEXT, disk_gb=INTEGER_TEXT,
    affinity=FLAG_TEXT, resource_properties={'type': 'string',
                                             'maxLength': 4096},
    start=MOMENT, hours=INTEGER_TEXT)
ALLOCATIONS_QUERY = _object(start=MOMENT, end=MOMENT, host=HOSTNAME)
LEASE_LIST_QUERY = _object(project_id=PROJECT_ID)
# A boot's pcloud hint as given (an id, or a name the check points out)
# and its flavor's id or name.
BOOT_CHECK_QUERY = _object(pcloud=NAME, flavor=NAME)


# Blazar's own lease routes (POST /leases, PUT /leases/<id>; see
# lease_guard): what Blazar would answer with a 500, or write onto the
# lease row as it came, is refused here; the rest is Blazar's and our
# plugins' to check.
_LEASE_DATE = {'type': 'string', 'maxLength': 64}
# The longest window an offering or a flexible lease looks for, in
# minutes: a year.
MAX_DURATION = 366 * 24 * 60
_LEASE_FIELDS = {
    # Blazar's leases.name is VARCHAR(80).
    'name': {'type': 'string', 'minLength': 1, 'maxLength': 80,
             'pattern': STORABLE},
    'start_date': _LEASE_DATE,
    'end_date': _LEASE_DATE,
    # seeds/003's names of the two (lease_guard renames them).
    'start': _LEASE_DATE,
    'end': _LEASE_DATE,
    # python-blazarclient sends null when it is not given.
    'before_end_date': dict(_LEASE_DATE, type=['string', 'null']),
    'reservations': {'type': 'array', 'items': {
        'type': 'object',
        'properties': {'resource_type': {'type': 'string'},
                       'id': {'type': 'string', 'maxLength': 36}}}},
}
# Clients send the empty list of events; Blazar makes them. A flexible
# lease gives its duration in minutes (at most a year) and its bounds
# instead of its dates (lease_guard.flexible).
LEASE_CREATE = _object(events={'type': 'array', 'maxItems': 0},
                       duration={'type': 'integer', 'minimum': 1,
                                 'maximum': MAX_DURATION},
                       earliest_start=_LEASE_DATE, latest_end=_LEASE_DATE,
                       **_LEASE_FIELDS)
LEASE_UPDATE = _object(**_LEASE_FIELDS)
