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
"""What a project may ask a lease for (seeds/001's hints).

"An API call allows a user to retrieve the list and combination of
applicable hints": for each of our reservation types, its terms (the
very ones api.lease_guard lets through, each with what it takes), and
the values this cloud offers for them: host flavors and the zones of
their pools' hosts, the pclouds the project may lease into, the traits
some host has, the property syntax (host_properties), and the limits
the project is held to. Pure: the caller reads the cloud.
"""

from pcloud_plugin.reservations import host_properties
from pcloud_plugin.reservations import host_requests
from pcloud_plugin.reservations import slots
from pcloud_plugin.reservations import terms

# Blazar's property syntax over host facts (host_properties).
_PROPERTIES = ('the hosts, in Blazar\'s syntax: [op, "$name", value] (op: '
               '%s), combined with ["and", ...] and ["or", ...]; a name is '
               'one of %s or a Placement trait ("$TRAIT", "true"|"false"; '
               'traits); default any host' % (
                   ' '.join(host_properties.COMPARISONS),
                   ', '.join('$' + fact for fact in host_properties.FACTS)))
# seeds/001's region, a term of both types (api.lease_guard).
_REGION = "this cloud's region (regions); any other is refused"
# What each term takes; the keys are exactly the types' terms.
HOST_TERMS = {
    'amount': 'number of whole hosts (at least 1)',
    'host_flavor': 'a host flavor id (host_flavors)',
    'pcloud_id': 'the pcloud the hosts join (pclouds)',
    'lease_type': 'IMMEDIATE (now or refused), SCHEDULE (the window or '
                  'refused) or BEST-EFFORT (wait for hosts until timeout)',
    'timeout': 'BEST-EFFORT: minutes after the start it gives up',
    'availability_zone': "only hosts of this zone (the host flavor's "
                         'availability_zones)',
    'required_traits': 'Placement traits, e.g. HW_CPU_X86_AVX2,'
                       '!CUSTOM_SLOW (traits)',
    terms.REGION: _REGION,
    'vcpus': 'the least VCPUs (Placement total) each host has; 0: any',
    'memory_mb': 'the least MiB of memory (Placement total) each host '
                 'has; 0: any',
    'disk_gb': 'the least GiB of disk (Placement DISK_GB total) each host '
               'has; 0: any',
    'hypervisor_properties': 'the hosts, in Blazar\'s syntax as its '
                             'physical:host takes it (see '
                             'resource_properties); default any host',
    'resource_properties': _PROPERTIES,
    'capabilities:*': 'Nova\'s capabilities extra specs: '
                      'capabilities:<fact> with <fact> one of %s, its '
                      'value plain (equal as a string) or "<op> value", '
                      '<op> one of %s ("=": at least; "<or> a <or> b": '
                      'any of)' % (', '.join(host_properties.FACTS),
                                   ' '.join(host_requests.CAPABILITY_OPS)),
    **{fact: 'capabilities:%s without the prefix (capabilities:*)'
        % fact for fact in host_requests.UNSCOPED},
    'aggregate_instance_extra_specs:*': (
        "Nova's aggregate extra specs: aggregate_instance_extra_specs:<key> "
        "with <key> a key of the metadata of the aggregates a host is in; "
        'some value of it meets the value given, which takes what '
        'capabilities:* takes; a host without the key does not'),
}
INSTANCE_TERMS = {
    'vcpus': 'VCPUs of one instance (at least 1)',
    'memory_mb': 'MiB of memory of one instance (at least 1)',
    'disk_gb': 'GiB of root disk of one instance (0 or more)',
    'amount': 'number of instances (slots)',
    'affinity': 'true: one host; false: distinct hosts; none (default): '
                'packed',
    'resource_properties': _PROPERTIES,
    'availability_zone': 'only hosts of this zone (availability_zones); '
                         'default any',
    terms.REGION: _REGION,
}

LEASE_TERMS = {
    'start_date': '"YYYY-MM-DD HH:MM" (UTC) or "now"; alias start',
    'end_date': '"YYYY-MM-DD HH:MM" (UTC); alias end',
}


def _terms(described, required, defaults):
    return {term: {'takes': text, 'required': term in required,
                   'default': defaults.get(term)}
            for term, text in sorted(described.items())}


def hints(pools, host_flavors, pclouds, traits, limits, regions=()):
    """The hints answer.

    :param pools: host_requests.Pools of the cloud's aggregates
    :param host_flavors: [{'id', 'units', ...}] the API lists
    :param pclouds: [{'id', 'name', 'owner'}] the project may see
    :param traits: names of the traits some host has
    :param limits: {name: limit (below 0: none)} the project is held to
    :param regions: this cloud's region, if it names one
    """
    flavors = []
    zones = set()
    for flavor in sorted(host_flavors, key=lambda f: f['id']):
        pool = pools.pools.get(flavor['id'])
        hosts = sorted(getattr(pool, 'hosts', None) or ())
        flavor_zones = sorted({pools.az_of(h) for h in hosts} - {None})
        zones.update(flavor_zones)
        flavors.append({'id': flavor['id'], 'units': flavor['units'],
                        'hosts': len(hosts),
                        'availability_zones': flavor_zones})
    return {
        'lease': _terms(LEASE_TERMS, ('start_date', 'end_date'), {}),
        'pcloud:host': {
            'terms': _terms(HOST_TERMS, host_requests.REQUIRED,
                            host_requests.OPTIONAL),
            'lease_types': list(host_requests.LEASE_TYPES),
            'host_flavors': flavors,
            'pclouds': [{'id': p['id'], 'name': p['name'],
                         'own': p.get('own', True)}
                        for p in sorted(pclouds, key=lambda p: p['id'])],
        },
        'virtual:instance': {
            'terms': _terms(INSTANCE_TERMS,
                            set(slots.PARAMS) - set(slots.OPTIONAL),
                            slots.OPTIONAL),
        },
        'regions': sorted(regions),
        'availability_zones': sorted(zones),
        'traits': sorted(traits),
        'limits': {name: limit for name, limit in sorted(limits.items())},
    }
