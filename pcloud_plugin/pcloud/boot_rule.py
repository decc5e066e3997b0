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

"""Which hosts a boot may take, and if not, why: seeds/000's rule.

One rule for two readers: the PcloudFilter in nova-scheduler asks it of
every host (None: the host passes), and the boot check of the Pcloud API
asks it to tell a tenant why a boot was refused. A host is seen as its
aggregates (anything with ``id``, ``name`` and ``metadata``: Nova's
objects in the scheduler, novaclient's in the API) and its hypervisor
hostname. Pure: no I/O, no config.

* no ``pcloud`` hint: only hosts in no pcloud, pool or lease aggregate;
* ``pcloud=<uuid>``: only hosts in that pcloud, enabled there, for a
  project it authorizes, and not held by a lease for another pcloud or
  outside the lease's window;
* anything else (several ``pcloud`` hints, no project): no host.
"""

from oslo_utils import timeutils

from pcloud_plugin.pcloud import aggregates as codec

# Why a host does not take the boot (what the rule returns).
IN_PCLOUD_OR_POOL = 'in_pcloud_or_pool'    # and the boot names no pcloud
BAD_HINT = 'bad_hint'                      # several hints, or no project
NOT_IN_PCLOUD = 'not_in_pcloud'            # not a host of the pcloud named
NOT_AUTHORIZED = 'not_authorized'          # the project is not a tenant
HOST_DISABLED = 'host_disabled'            # disabled in its pcloud
LEASE_ELSEWHERE = 'lease_elsewhere'        # a lease holds it, not for now

_POOL_OR_PCLOUD = frozenset((codec.TYPE_POOL, codec.TYPE_PCLOUD))


def _outside_pclouds(aggregates, nodename):
    for agg in aggregates:
        md = agg.metadata
        if md.get(codec.TYPE) in _POOL_OR_PCLOUD or codec.is_lease(md):
            return IN_PCLOUD_OR_POOL
    return None


def _nowhere(aggregates, nodename):
    return BAD_HINT


def _in_pcloud(pcloud_id, project_id, now):
    """The rule for a boot naming a pcloud, made once per request."""
    name = codec.pcloud_name(pcloud_id)
    tenant_key = codec.tenant_key(project_id)
    holds = {}  # lease aggregate id: whether it holds its hosts now

    def lease_allows(aggregates):
        """False if a lease aggregate has the host and none holds it."""
        found = False
        for agg in aggregates:
            if codec.is_lease(agg.metadata):
                if agg.id not in holds:
                    holds[agg.id] = codec.lease_holds(agg.metadata,
                                                      pcloud_id, now)
                if holds[agg.id]:
                    return True
                found = True
        return not found

    def refusal(aggregates, nodename):
        for agg in aggregates:
            if agg.name == name:
                md = agg.metadata
                if md.get(codec.TYPE) != codec.TYPE_PCLOUD:
                    return NOT_IN_PCLOUD
                if md.get(tenant_key) != codec.TENANT:
                    return NOT_AUTHORIZED
                if (md.get(codec.HOST_STATE_PREFIX + nodename)
                        != codec.ENABLED):
                    return HOST_DISABLED
                return None if lease_allows(aggregates) else LEASE_ELSEWHERE
        return NOT_IN_PCLOUD
    return refusal


def refusal(hint, project_id, now=None):
    """``refusal(aggregates, nodename)``: None where a boot with ``hint``

    (the ``pcloud`` scheduler hint's value, None without one) by
    ``project_id`` may go, else one of the reasons above. ``now``: a
    naive UTC datetime (the time of the request by default).
    """
    if hint is None:
        return _outside_pclouds
    if not isinstance(hint, str) or not project_id:
        return _nowhere
    return _in_pcloud(hint, project_id, now or timeutils.utcnow())
