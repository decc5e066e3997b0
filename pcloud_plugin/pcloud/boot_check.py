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

"""Why a boot would be refused: the part of the pcloud service

(pcloud.service.PcloudService) that answers a tenant's boot check.

Nova refuses every boot no host passes with the same "No valid host was
found", whatever filter refused it. The check asks, for a ``pcloud``
hint (or none) and a flavor, what nova-scheduler would: the PcloudFilter's
own rule (pcloud.boot_rule) on every hypervisor, whether Nova has its
compute service up and enabled, and Placement's allocation candidates
for the flavor. It counts the hosts each step leaves out, and why.
"""

import collections
import math

from oslo_utils import timeutils

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import boot_rule

# Beyond the filter's reasons (boot_rule's).
NO_SUCH_PCLOUD = 'no_such_pcloud'    # or not one the project may use
PCLOUD_NAMED = 'pcloud_named'        # the hint is a name, not an id
NO_HOSTS = 'no_hosts'                # the pcloud has none
COMPUTE_DOWN = 'compute_down'        # Nova's compute service down/disabled
NO_ROOM = 'no_room'                  # Placement has no room for the flavor

_WHY = {
    boot_rule.IN_PCLOUD_OR_POOL:
        'in a pcloud or a host flavor pool, where a boot without a '
        'pcloud hint does not go',
    boot_rule.BAD_HINT:
        'a boot takes one pcloud hint, the id of a pcloud',
    boot_rule.NOT_AUTHORIZED:
        'your project is not among the tenants of pcloud %(pcloud)s: its '
        'owner adds it with "openstack pcloud add project"',
    boot_rule.HOST_DISABLED:
        'disabled in pcloud %(pcloud)s: its owner enables it with '
        '"openstack pcloud host set --enable <pcloud> <host>"',
    boot_rule.LEASE_ELSEWHERE:
        'held by a lease, which does not hold it for pcloud %(pcloud)s '
        'now%(windows)s',
    NO_SUCH_PCLOUD:
        'no pcloud %(pcloud)s that your project may boot into',
    PCLOUD_NAMED:
        '%(pcloud)r is the name of pcloud %(id)s: the hint takes its id, '
        '--hint pcloud=%(id)s',
    NO_HOSTS:
        'pcloud %(pcloud)s has no hosts',
    COMPUTE_DOWN:
        'their compute service is down or disabled in Nova',
    NO_ROOM:
        'no room left for flavor %(flavor)s (%(resources)s) in Placement',
}


def flavor_resources(flavor, extra_specs):
    """(resources, required traits, forbidden traits) a boot of the

    flavor asks Placement for: its VCPU, MEMORY_MB and DISK_GB (root,
    ephemeral and swap), as its ``resources:<CLASS>`` extra specs
    override (0 drops a class), and its ``trait:<NAME>`` ones.
    """
    resources = {
        'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.ram,
        'DISK_GB': (flavor.disk + getattr(flavor, 'OS-FLV-EXT-DATA:ephemeral',
                                          0)
                    + int(math.ceil((flavor.swap or 0) / 1024.0)))}
    required, forbidden = set(), set()
    for key, value in extra_specs.items():
        if key.startswith('resources:'):
            resources[key[len('resources:'):]] = int(value)
        elif key.startswith('trait:'):
            {'required': required, 'forbidden': forbidden}.get(
                value, set()).add(key[len('trait:'):])
    return ({rc: n for rc, n in resources.items() if n > 0},
            sorted(required), sorted(forbidden))


def _refused(reason, hosts=0, **values):
    return {'reason': reason, 'hosts': hosts,
            'message': _WHY[reason] % values}


class BootCheck(object):
    """Mixed into PcloudService, whose helpers (_call, _hypervisors,

    _placement_call, nova, placement) it uses.
    """

    def check_boot(self, ctx, pcloud_hint=None, flavor_ref=None,
                   visible=lambda pcloud: True):
        """Whether a boot by ctx's project with ``pcloud_hint`` (the

        hint's value, a list if several, None without) and flavor
        ``flavor_ref`` (an id or a name; None: any) has a host, and why
        not: {'pcloud', 'flavor', 'bootable', 'hosts', 'refused': [{
        'reason', 'hosts', 'message'}]}, ``hosts`` counting the hosts
        left. ``visible(pcloud dict)``: whether ctx may know the pcloud.
        """
        aggregates = self._call('list aggregates', self.nova.aggregates.list)
        flavor = self._flavor(ctx, flavor_ref) if flavor_ref else None
        answer = {'pcloud': pcloud_hint, 'bootable': False, 'hosts': 0,
                  'flavor': flavor.id if flavor else None, 'refused': []}
        refused = answer['refused']
        pcloud = self._hinted_pcloud(aggregates, pcloud_hint, visible,
                                     refused)
        if refused:
            return answer
        hosts = self._passing(aggregates, pcloud, pcloud_hint, ctx, refused)
        if hosts and flavor is not None:
            hosts = self._with_room(hosts, flavor, refused)
        answer.update(bootable=bool(hosts), hosts=len(hosts))
        return answer

    def _hinted_pcloud(self, aggregates, hint, visible, refused):
        """The pcloud aggregate a str hint names, if ctx may know it;

        else what is wrong with the hint is added to ``refused``.
        """
        if hint is None:
            return None
        if not isinstance(hint, str):
            refused.append(_refused(boot_rule.BAD_HINT))
            return None
        pclouds = [agg for agg in aggregates if codec.is_pcloud(agg.metadata)]
        for agg in pclouds:
            if agg.metadata.get(codec.ID) == hint and visible(
                    self._pcloud_seen(agg)):
                if not agg.hosts:
                    refused.append(_refused(NO_HOSTS, pcloud=hint))
                return agg
        named = [agg.metadata.get(codec.ID) for agg in pclouds
                 if agg.metadata.get(codec.NAME) == hint
                 and visible(self._pcloud_seen(agg))]
        if len(named) == 1:
            refused.append(_refused(PCLOUD_NAMED, pcloud=hint,
                                    id=named[0]))
        else:
            refused.append(_refused(NO_SUCH_PCLOUD, pcloud=hint))
        return None

    @staticmethod
    def _pcloud_seen(agg):
        view = codec.Pcloud(agg.metadata)
        return {'id': view.id, 'owner': view.owner,
                'tenants': sorted(view.tenants)}

    def _passing(self, aggregates, pcloud, hint, ctx, refused):
        """Hypervisor hostnames the PcloudFilter and Nova's compute

        service states let the boot onto; who left out why in ``refused``.
        """
        rule = boot_rule.refusal(hint, ctx.project_id,
                                 timeutils.utcnow())
        of_host = collections.defaultdict(list)
        for agg in aggregates:
            for host in agg.hosts:
                of_host[host].append(agg)
        left_out = collections.Counter()
        windows = set()
        passing = []
        for node in self._hypervisors():
            host = node.service['host']
            if pcloud is not None and host not in pcloud.hosts:
                continue  # another's: not the tenant's business
            why = rule(of_host[host], node.hypervisor_hostname)
            if why is None and (node.state != 'up'
                                or node.status != 'enabled'):
                why = COMPUTE_DOWN
            if why is None:
                passing.append(node.hypervisor_hostname)
                continue
            left_out[why] += 1
            if why == boot_rule.LEASE_ELSEWHERE:
                windows.update(
                    (agg.metadata[codec.LEASE_ID],
                     agg.metadata.get(codec.LEASE_START),
                     agg.metadata.get(codec.LEASE_END))
                    for agg in of_host[host]
                    if codec.is_lease(agg.metadata)
                    and agg.metadata.get(codec.LEASE_PCLOUD) == hint)
        said = '' if not windows else ': ' + ', '.join(
            'lease %s holds it from %s to %s' % window
            for window in sorted(windows))
        for why, count in sorted(left_out.items()):
            refused.append(_refused(why, count, pcloud=hint, windows=said))
        return passing

    def _flavor(self, ctx, ref):
        """The flavor with id (else name) ``ref`` ctx's project may use."""
        # Not _call: a flavor not found by id may be one by name.
        try:
            found = [self.nova.flavors.get(ref)]
        except nova_client.NotFound:
            found = [f for f in self._call(
                'list flavors', self.nova.flavors.list, is_public=None)
                if f.name == ref]
        for flavor in found:
            if getattr(flavor, 'os-flavor-access:is_public', True) or (
                    ctx.project_id in {a.tenant_id for a in self._call(
                        'list flavor access', self.nova.flavor_access.list,
                        flavor=flavor.id)}):
                return flavor
        raise exception.FlavorNotFound(flavor=ref)

    def _with_room(self, nodes, flavor, refused):
        """Those of ``nodes`` where Placement has room for the flavor."""
        extra_specs = self._call('show flavor extra specs', flavor.get_keys)
        resources, required, forbidden = flavor_resources(flavor,
                                                          extra_specs)
        if not resources:
            return nodes
        roots = self._placement_call(
            'ask Placement for allocation candidates',
            placement_client.candidate_roots, self.placement, resources,
            required, forbidden)
        fitting = [node for node in nodes if node in roots]
        if len(fitting) < len(nodes):
            refused.append(_refused(
                NO_ROOM, len(nodes) - len(fitting), flavor=flavor.name,
                resources=', '.join('%s %d' % item
                                    for item in sorted(resources.items()))))
        return fitting
