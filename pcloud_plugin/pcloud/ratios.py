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
"""A pcloud's allocation ratios, through Placement: the part of the

pcloud service (pcloud.service.PcloudService) that sets and unsets
them on the pcloud's hosts, lends them to leased hosts and gives each
host its own back. Imports clients, db.placement_sync, aggregates and
cloud of ours.
"""

from oslo_log import log as logging

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import placement_sync
from pcloud_plugin import exception
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.pcloud import cloud as cloud_mod

LOG = logging.getLogger(__name__)

VCPU = 'VCPU'
MEMORY_MB = 'MEMORY_MB'
# A pcloud's ratio fields: their metadata keys and resource classes.
RATIO_FIELDS = {'cpu_allocation_ratio': (codec.CPU_RATIO, VCPU),
                'ram_allocation_ratio': (codec.RAM_RATIO, MEMORY_MB)}


class AllocationRatios(object):
    """Mixed into PcloudService, whose helpers (_cloud, _pcloud,

    _set_metadata, _placement_call, _pcloud_dict, placement) it uses.
    """

    def set_allocation_ratios(self, ctx, pcloud_id, cpu_allocation_ratio=None,
                              ram_allocation_ratio=None, unset=()):
        """Record the pcloud's ratios, then set them on each of its hosts'

        VCPU / MEMORY_MB inventories in Placement (the host's own ratios
        are kept, to be put back when it is released). The ratios named
        in ``unset`` (their fields) are forgotten, and each host gets its
        own back. Setting, or unsetting, the same ratios again finishes a
        run that stopped halfway.
        """
        given = {'cpu_allocation_ratio': cpu_allocation_ratio,
                 'ram_allocation_ratio': ram_allocation_ratio}
        for field in unset:
            if field not in given or given[field] is not None:
                raise exception.InvalidField(
                    field=field, value=given.get(field),
                    reason='only a ratio not also set can be unset')
        if all(v is None for v in given.values()) and not unset:
            raise exception.InvalidField(
                field='cpu_allocation_ratio', value=None,
                reason='give cpu_allocation_ratio, ram_allocation_ratio or '
                'both')
        ratios = {}
        metadata = {}
        for field, value in given.items():
            key, resource_class = RATIO_FIELDS[field]
            if value is not None:
                ratios[resource_class] = codec.validate_ratio(field, value)
                metadata[key] = repr(ratios[resource_class])
            elif field in unset:
                metadata[key] = None
        unset_classes = [RATIO_FIELDS[field][1] for field in unset]
        with cloud_mod.pcloud_lock(pcloud_id):
            cloud = self._cloud()
            agg, view = self._pcloud(ctx, cloud, pcloud_id)
            self._set_metadata(agg, metadata)
            after = codec.Pcloud({
                k: v for k, v in dict(agg.metadata, **metadata).items()
                if v is not None})
            none_left = (after.cpu_allocation_ratio is None
                         and after.ram_allocation_ratio is None)
            for hostname in sorted(
                    view.hosts(cloud.member_nodes(agg)).values()):
                if ratios:
                    self._apply_ratios(agg, view, hostname, ratios)
                if not unset_classes:
                    continue
                # Even when the pcloud no longer has these ratios: a run
                # that stopped halfway forgot them before every host had
                # its own back.
                if self._restore_ratios(view, hostname,
                                        unset_classes) and none_left:
                    self._set_metadata(
                        agg, {codec.saved_ratios_key(hostname): None})
            return self._pcloud_dict(cloud, agg, after)

    def _apply_ratios(self, agg, view, hostname, ratios):
        if hostname not in view.saved_ratios:
            own = self._placement_call(
                'read the allocation ratios of a host',
                placement_client.get_allocation_ratios, self.placement,
                hostname)
            self._set_metadata(agg, {
                codec.saved_ratios_key(hostname): codec.format_ratios(
                    own.get(VCPU, 1.0), own.get(MEMORY_MB, 1.0))})
        self._placement_call(
            'set the allocation ratios of a host',
            placement_client.set_allocation_ratios, self.placement,
            hostname, ratios)
        self._mirror_host(hostname)

    def _restore_ratios(self, view, hostname,
                        resource_classes=(VCPU, MEMORY_MB)):
        """The host's own ratios (saved in the pcloud) back in Placement,

        for ``resource_classes``.
        """
        saved = view.saved_ratios.get(hostname)
        if saved:
            own = dict(zip((VCPU, MEMORY_MB), saved))
            self._placement_call(
                'put back the allocation ratios of a host',
                placement_client.set_allocation_ratios, self.placement,
                hostname, {rc: own[rc] for rc in resource_classes})
            self._mirror_host(hostname)
        return saved

    def _mirror_host(self, hostname):
        """The host's new ratios in the ledger now, not at the mirror's

        next pass (cloud.mirror), so admissions see them at once.
        """
        try:
            provider = placement_client.read_provider(
                self.placement, placement_client.provider_named(
                    self.placement, hostname))
            placement_sync.sync_facts(context_mod.get_admin_context(),
                                      provider, placement_sync.SyncReport())
        except Exception:
            LOG.warning('Could not mirror host %s into the ledger now; the '
                        'Placement mirror will', hostname, exc_info=True)

    # Leased hosts (the pcloud:host plugin): the pcloud's ratios while
    # they are in it, their own back when they leave.

    def lend_ratios(self, agg, hostname):
        """A host joining the pcloud of ``agg`` takes its ratios."""
        view = codec.Pcloud(agg.metadata)
        ratios = ratios_of(view.cpu_allocation_ratio,
                           view.ram_allocation_ratio)
        if ratios:
            self._apply_ratios(agg, view, hostname, ratios)

    def restore_ratios(self, agg, hostname):
        """A host leaving the pcloud of ``agg`` gets its own ratios back;

        the saved ones are forgotten. Safe to run again.
        """
        if self._restore_ratios(codec.Pcloud(agg.metadata), hostname):
            self._set_metadata(agg, {codec.saved_ratios_key(hostname): None})


def ratios_of(cpu, ram):
    """{class: ratio} of the ratios given (not None)."""
    ratios = {}
    if cpu is not None:
        ratios[VCPU] = cpu
    if ram is not None:
        ratios[MEMORY_MB] = ram
    return ratios
