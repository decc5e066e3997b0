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
"""Read capacity facts from Placement through a keystoneauth adapter."""

from urllib import parse

from keystoneauth1 import loading as ks_loading
import tenacity

from pcloud_plugin.capacity import forest as forest_mod
from pcloud_plugin.capacity import inventory as inv_mod
from pcloud_plugin import conf
from pcloud_plugin.conf import placement as placement_conf
from pcloud_plugin import exception

CONF = conf.CONF

# 1.14: parent and root provider uuids; 1.19: aggregates with generation.
MICROVERSION = '1.19'
_INVENTORY_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit',
                     'step_size', 'allocation_ratio')


def get_adapter(conf_=None):
    """A keystoneauth adapter for Placement built from [pcloud_placement]."""
    conf_ = conf_ or CONF
    group = placement_conf.GROUP
    auth = ks_loading.load_auth_from_conf_options(conf_, group)
    session = ks_loading.load_session_from_conf_options(
        conf_, group, auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf_, group, session=session, auth=auth)


class PlacementFailure(exception.PcloudException):
    msg_fmt = ('Placement answered %(status)s to %(method)s %(url)s: '
               '%(body)s')
    code = 502


def call(adapter, method, url, json=None, ok=(200, 201, 204),
         microversion=MICROVERSION):
    """Placement's response, or PlacementFailure if its status is not ok.

    The one way our code calls Placement's REST API.
    """
    response = adapter.request(url, method, json=json,
                               microversion=microversion, raise_exc=False)
    status = response.status_code
    if status not in ok:
        raise PlacementFailure(status=status, method=method, url=url,
                               body=response.text[:500])
    if status == 200 or (status == 201 and response.content):
        # Placement answers these with JSON. One that does not parse was
        # broken off (its process killed while answering, seen in the
        # soak): no answer, to try again, not a failure of ours.
        try:
            body = response.json()
        except ValueError as e:
            raise exception.PlacementUnreachable(
                action='%s %s' % (method, url),
                reason='its answer (%d) broke off: %s' % (status, e))
        response.json = lambda **kwargs: body
    return response


def _get(adapter, url):
    return call(adapter, 'GET', url).json()


def list_providers(adapter):
    """Placement's providers, one request: [{'uuid', 'name',

    'generation', 'parent_provider_uuid', 'root_provider_uuid', ...}].
    """
    return _get(adapter, '/resource_providers')['resource_providers']


def read_provider(adapter, rp):
    """A provider of list_providers with its inventories, traits and

    aggregates (three requests). Usage is left empty: Placement's
    allocations are not windowed, the ledger's are.
    """
    uuid = rp['uuid']
    inventories = _get(adapter, '/resource_providers/%s/inventories' % uuid)
    return forest_mod.Provider(
        uuid=uuid, name=rp['name'], generation=rp['generation'],
        parent_uuid=rp['parent_provider_uuid'],
        root_uuid=rp['root_provider_uuid'],
        inventories={
            rc: inv_mod.Inventory(**{f: inv[f] for f in _INVENTORY_FIELDS})
            for rc, inv in inventories['inventories'].items()},
        traits=frozenset(_get(
            adapter, '/resource_providers/%s/traits' % uuid)['traits']),
        aggregates=frozenset(_get(
            adapter, '/resource_providers/%s/aggregates' % uuid)[
                'aggregates']))


def read_allocations(adapter, uuid):
    """{consumer: {class: n}} of what Placement allocates on a provider."""
    found = _get(adapter, '/resource_providers/%s/allocations' % uuid)
    return {consumer: dict(held['resources'])
            for consumer, held in found['allocations'].items()}


def read_consumer(adapter, consumer):
    """{provider: {class: n}} Placement allocates to ``consumer`` now."""
    return {uuid: dict(held['resources']) for uuid, held in _get(
        adapter, '/allocations/%s' % consumer)['allocations'].items()}


def read_forest(adapter):
    """Every provider with its inventories, traits and aggregates."""
    return forest_mod.ProviderForest(
        [read_provider(adapter, rp) for rp in list_providers(adapter)])


def candidate_roots(adapter, resources, required=(), forbidden=()):
    """Names of the root providers (compute nodes) Placement has

    allocation candidates on for ``resources`` ({class: amount}) in one
    group, with the ``required`` traits and none of the ``forbidden``.
    """
    query = {'resources': ','.join('%s:%d' % item
                                   for item in sorted(resources.items()))}
    traits = list(required) + ['!' + trait for trait in forbidden]
    if traits:
        query['required'] = ','.join(traits)
    # 1.29: provider summaries name each provider's root.
    response = call(adapter, 'GET', '/allocation_candidates?'
                    + parse.urlencode(query), ok=(200, 400),
                    microversion='1.29')
    if response.status_code == 400:
        # A class or trait Placement does not know: no provider has it.
        return set()
    found = response.json()
    roots = {summary['root_provider_uuid']
             for summary in found['provider_summaries'].values()}
    return {rp['name'] for rp in list_providers(adapter)
            if rp['uuid'] in roots}


def provider_named(adapter, name):
    """The provider named ``name``, as list_providers gives it."""
    found = _get(adapter, '/resource_providers?name=%s' % parse.quote(name))
    if not found['resource_providers']:
        raise exception.ResourceProviderNotFound(provider=name)
    return found['resource_providers'][0]


def _named_provider(adapter, name):
    return provider_named(adapter, name)['uuid']


def set_allocation_ratios(adapter, provider_name, ratios, retries=10):
    """Set allocation_ratio on some inventories of a named provider.

    A compute node's provider is named by its hypervisor_hostname. ratios
    maps resource class to ratio. Returns the ratios replaced, so a
    caller can put them back. The whole inventory is written in one PUT
    against the generation read, and read again when nova-compute wrote
    the provider in between.
    """
    uuid = _named_provider(adapter, provider_name)
    url = '/resource_providers/%s/inventories' % uuid

    def write():
        current = _get(adapter, url)
        inventories = current['inventories']
        missing = set(ratios) - set(inventories)
        if missing:
            raise exception.InventoryNotFound(
                provider=provider_name, resource_class=sorted(missing)[0])
        previous = {rc: inventories[rc]['allocation_ratio'] for rc in ratios}
        for rc, ratio in ratios.items():
            inventories[rc]['allocation_ratio'] = ratio
        response = call(adapter, 'PUT', url, json={
            'resource_provider_generation':
                current['resource_provider_generation'],
            'inventories': inventories}, ok=(200, 409))
        if response.status_code == 409:
            raise exception.ConcurrentUpdateDetected(
                attempts=retries + 1, providers=provider_name)
        return previous

    # A conflict reads again at once; the last one is what is raised.
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(retries + 1),
        retry=tenacity.retry_if_exception_type(
            exception.ConcurrentUpdateDetected),
        sleep=lambda _seconds: None, reraise=True)(write)


def get_allocation_ratios(adapter, provider_name):
    """allocation_ratio of each inventory of a named provider."""
    uuid = _named_provider(adapter, provider_name)
    inventories = _get(
        adapter, '/resource_providers/%s/inventories' % uuid)['inventories']
    return {rc: inv['allocation_ratio'] for rc, inv in inventories.items()}
