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
"""A small client of the Pcloud API over a keystoneauth session."""

from urllib import parse

from keystoneauth1 import adapter
from osc_lib import exceptions
from oslo_utils import uuidutils

SERVICE_TYPE = 'reservation'
USER_AGENT = 'pcloud-osc'
FLAVORS = 'pcloud-host-flavors'
PCLOUDS = 'pclouds'
RATIOS = 'allocation-ratios'
OFFERINGS = 'pcloud-offerings'
AVAILABILITY = 'pcloud-availability'
ALLOCATIONS = 'pcloud-allocations'
LEASE_STATES = 'pcloud-leases'
HINTS = 'pcloud-hints'
MAINTENANCES = 'pcloud-maintenances'
BOOT_CHECK = 'pcloud-boot-check'
HOST_RESOURCE_TYPE = 'pcloud:host'
INSTANCE_RESOURCE_TYPE = 'virtual:instance'


def _path(*parts):
    """A URL path of quoted parts."""
    return ''.join('/' + parse.quote(str(p), safe='') for p in parts)


def _v1(endpoint):
    endpoint = endpoint.rstrip('/')
    return endpoint if endpoint.endswith('/v1') else endpoint + '/v1'


class PcloudError(exceptions.ClientException):
    """The API refused a call; message is its error_message."""
    http_status = 400
    message = 'The Pcloud API refused the request'


class Client(object):

    def __init__(self, session, endpoint=None, region_name=None,
                 interface=None):
        if endpoint is None:
            endpoint = session.get_endpoint(
                service_type=SERVICE_TYPE, region_name=region_name,
                interface=interface or 'public')
        if not endpoint:
            raise exceptions.EndpointNotFound(
                'No %s endpoint in the catalog: the Pcloud API is served '
                'by Blazar.' % SERVICE_TYPE)
        self.endpoint = _v1(endpoint)
        self._adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, region_name=region_name,
            interface=interface, endpoint_override=self.endpoint,
            user_agent=USER_AGENT)

    def _request(self, method, path, body=None, params=None):
        kwargs = {'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        resp = self._adapter.request(path, method, **kwargs)
        if resp.status_code >= 400:
            try:
                message = resp.json()['error_message']
            except (ValueError, KeyError, TypeError):
                message = resp.text
            raise PcloudError(resp.status_code, message)
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    # Host flavors.

    def list_host_flavors(self):
        return self._request('GET', _path(FLAVORS))['host_flavors']

    def show_host_flavor(self, flavor_id):
        return self._request('GET', _path(FLAVORS, flavor_id))['host_flavor']

    def create_host_flavor(self, flavor_id, units, description=None):
        body = {'id': flavor_id, 'units': units}
        if description is not None:
            body['description'] = description
        return self._request('POST', _path(FLAVORS), body)['host_flavor']

    def delete_host_flavor(self, flavor_id):
        self._request('DELETE', _path(FLAVORS, flavor_id))

    def list_pool_hosts(self, flavor_id):
        return self._request('GET', _path(FLAVORS, flavor_id, 'hosts'))[
            'hosts']

    def add_pool_host(self, flavor_id, host):
        return self._request('POST', _path(FLAVORS, flavor_id, 'hosts'),
                             {'host': host})['host']

    def remove_pool_host(self, flavor_id, host):
        self._request('DELETE', _path(FLAVORS, flavor_id, 'hosts', host))

    # Pclouds.

    def list_pclouds(self, project_id=None):
        params = {'project_id': project_id} if project_id else None
        return self._request('GET', _path(PCLOUDS), params=params)[
            'pclouds']

    def create_pcloud(self, name):
        return self._request('POST', _path(PCLOUDS), {'name': name})[
            'pcloud']

    def show_pcloud(self, pcloud_id):
        return self._request('GET', _path(PCLOUDS, pcloud_id))['pcloud']

    def delete_pcloud(self, pcloud_id):
        self._request('DELETE', _path(PCLOUDS, pcloud_id))

    def find_pcloud(self, name_or_id):
        """A pcloud's id from its id or its (unique) name."""
        if uuidutils.is_uuid_like(name_or_id):
            return name_or_id
        found = [p['id'] for p in self.list_pclouds()
                 if p['name'] == name_or_id]
        if len(found) == 1:
            return found[0]
        if not found:
            raise exceptions.CommandError(
                'No pcloud with a name or id of %s.' % name_or_id)
        raise exceptions.CommandError(
            'More than one pcloud is named %s: give its id.' % name_or_id)

    # The hosts of a pcloud.

    def list_hosts(self, pcloud_id, state=None):
        params = {'state': state} if state else None
        return self._request('GET', _path(PCLOUDS, pcloud_id, 'hosts'),
                             params=params)['hosts']

    def show_host(self, pcloud_id, name):
        return self._request('GET', _path(PCLOUDS, pcloud_id, 'hosts',
                                          name))['host']

    def allocate_host(self, pcloud_id, name, flavor_id,
                      availability_zone=None):
        body = {'name': name, 'flavor_id': flavor_id}
        if availability_zone:
            body['availability_zone'] = availability_zone
        return self._request('POST', _path(PCLOUDS, pcloud_id, 'hosts'),
                             body)['host']

    def set_host_state(self, pcloud_id, name, state):
        return self._request('PUT', _path(PCLOUDS, pcloud_id, 'hosts', name),
                             {'state': state})['host']

    def release_host(self, pcloud_id, name):
        self._request('DELETE', _path(PCLOUDS, pcloud_id, 'hosts', name))

    # Tenants and allocation ratios.

    def list_tenants(self, pcloud_id):
        return self._request('GET', _path(PCLOUDS, pcloud_id, 'tenants'))[
            'tenants']

    def add_tenant(self, pcloud_id, tenant_id):
        return self._request('POST', _path(PCLOUDS, pcloud_id, 'tenants'),
                             {'tenant_id': tenant_id})['tenants']

    def remove_tenant(self, pcloud_id, tenant_id):
        self._request('DELETE',
                      _path(PCLOUDS, pcloud_id, 'tenants', tenant_id))

    def show_allocation_ratios(self, pcloud_id):
        return self._request('GET', _path(PCLOUDS, pcloud_id, RATIOS))[
            'allocation_ratios']

    def set_allocation_ratios(self, pcloud_id, cpu=None, ram=None,
                              unset=()):
        """Set the ratios given; those named in ``unset`` ('cpu', 'ram')

        go back to each host's own (null in the body).
        """
        body = {}
        for name, value in (('cpu', cpu), ('ram', ram)):
            if value is not None:
                body['%s_allocation_ratio' % name] = value
            elif name in unset:
                body['%s_allocation_ratio' % name] = None
        return self._request('PUT', _path(PCLOUDS, pcloud_id, RATIOS),
                             body)['allocation_ratios']

    # Maintenance windows on compute hosts (cloud admins).

    def create_maintenance(self, hosts, start, end, reason=None,
                           accept_unmovable=False, host_flavor=None):
        """Book one: the reservations holding ``hosts`` (or every host

        of ``host_flavor``'s pool) then move off; a 409 (PcloudError)
        lists those that cannot, unless ``accept_unmovable``.
        """
        body = {'start_date': start, 'end_date': end}
        if hosts:
            body['hosts'] = list(hosts)
        if host_flavor is not None:
            body['host_flavor'] = host_flavor
        if reason is not None:
            body['reason'] = reason
        if accept_unmovable:
            body['accept_unmovable'] = True
        return self._request('POST', _path(MAINTENANCES), body)[
            'maintenance']

    def list_maintenances(self):
        return self._request('GET', _path(MAINTENANCES))['maintenances']

    def show_maintenance(self, maintenance_id):
        return self._request('GET', _path(MAINTENANCES, maintenance_id))[
            'maintenance']

    def delete_maintenance(self, maintenance_id):
        self._request('DELETE', _path(MAINTENANCES, maintenance_id))

    # Whole-host leases: Blazar's own lease API, resource_type pcloud:host.

    def create_host_lease(self, name, start, end, reservation,
                          duration=None):
        """POST /v1/leases with one pcloud:host reservation.

        ``reservation`` holds the pcloud:host fields (amount, host_flavor,
        pcloud_id, ...); start and end are 'YYYY-MM-DD HH:MM' or 'now'.
        With a duration (minutes), a flexible lease: the earliest window
        that long from start, ending by end (None: any).
        """
        reservations = [dict(reservation, resource_type=HOST_RESOURCE_TYPE)]
        if duration is None:
            return self.create_lease(name, start, end, reservations)
        return self.create_flexible_lease(name, duration, start, end,
                                          reservations)

    def create_flexible_lease(self, name, duration, earliest, latest_end,
                              reservations):
        """POST /v1/leases of a flexible lease: Blazar's lease API, which

        the Pcloud API books at the earliest window that fits.
        """
        body = {'name': name, 'duration': duration, 'events': [],
                'earliest_start': earliest, 'reservations': reservations}
        if latest_end is not None:
            body['latest_end'] = latest_end
        return self._request('POST', _path('leases'), body)['lease']

    def create_lease(self, name, start, end, reservations):
        """POST /v1/leases: Blazar's lease API, any reservations."""
        body = {'name': name, 'start_date': start, 'end_date': end,
                'events': [], 'reservations': reservations}
        return self._request('POST', _path('leases'), body)['lease']

    def delete_lease(self, lease_id):
        self._request('DELETE', _path('leases', lease_id))

    def list_leases(self):
        return self._request('GET', _path('leases'))['leases']

    def show_lease(self, lease_id):
        return self._request('GET', _path('leases', lease_id))['lease']

    def find_lease(self, name_or_id):
        """A lease's id from its id or its (unique) name."""
        if uuidutils.is_uuid_like(name_or_id):
            return name_or_id
        found = [lease['id'] for lease in self.list_leases()
                 if lease['name'] == name_or_id]
        if len(found) == 1:
            return found[0]
        if not found:
            raise exceptions.CommandError(
                'No lease with a name or id of %s.' % name_or_id)
        raise exceptions.CommandError(
            'More than one lease is named %s: give its id.' % name_or_id)

    def update_lease(self, lease_id, body):
        """PUT /v1/leases/<id>: Blazar's lease update, body as given.

        A reservation to change is ``{'id': <reservation id>, <field>:
        <value>, ...}`` in body['reservations'].
        """
        return self._request('PUT', _path('leases', lease_id), body)['lease']

    def list_lease_states(self, project_id=None):
        """The project's leases with reservations of ours, each with its

        state as seeds/001 names it and its reservations' terms.
        """
        params = {'project_id': project_id} if project_id else None
        return self._request('GET', _path(LEASE_STATES),
                             params=params)['leases']

    def show_lease_state(self, lease_id):
        return self._request('GET', _path(LEASE_STATES, lease_id))['lease']

    def show_lease_hints(self):
        """What a lease of the caller's project may ask for."""
        return self._request('GET', _path(HINTS))['hints']

    def check_boot(self, params):
        """Why a boot with ``params``' pcloud hint and flavor would be

        refused.
        """
        return self._request('GET', _path(BOOT_CHECK), params=params)[
            'boot_check']

    # Offerings and allocations.

    def list_offerings(self, kind, params):
        """Windows of ``kind`` ('hosts' or 'instances') for the query."""
        return self._request('GET', _path(OFFERINGS, kind), params=params)

    def show_host_availability(self, params):
        """How many whole hosts of ``params``' host flavor are free each

        hour (host_flavor, and optionally availability_zone,
        required_traits, start, hours).
        """
        return self._request('GET', _path(AVAILABILITY, 'hosts'),
                             params=params)['availability']

    def show_instance_availability(self, params):
        """How many instance slots of ``params``' shape (vcpus,

        memory_mb, disk_gb; affinity, resource_properties, start, hours)
        could be reserved each hour.
        """
        return self._request('GET', _path(AVAILABILITY, 'instances'),
                             params=params)['availability']

    def list_allocations(self, params=None):
        return self._request('GET', _path(ALLOCATIONS), params=params)[
            'allocations']
