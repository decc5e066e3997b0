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

"""Capture the api-ref's request and response samples from a sandbox.

Starts the sandbox (pcloud_plugin.tests.functional.sandbox.fixture), runs
every route of the Pcloud API once as its admin or demo member would,
writes each request body and each response body to
api-ref/source/samples/<name>.json, and cleans up what it made. Run it
in the functional environment, from the repository's root::

    .tox/functional/bin/python api-ref/tools/capture_samples.py

A call that does not answer the status the api-ref documents stops it.
"""

import datetime
import json
import os
import sys
from urllib import parse

from keystoneauth1 import adapter
from novaclient import client as nova_client

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests.functional.sandbox import fixture

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       os.pardir, 'source', 'samples')
FLAVOR = 'c16'
HOST_NAME = 'rack-a'


class Api(object):
    """One user's calls to the Pcloud API, written down as samples."""

    def __init__(self, session):
        endpoint = pcloud_client.Client(session).endpoint
        self.adapter = adapter.Adapter(session, endpoint_override=endpoint,
                                       service_type='reservation')

    def call(self, method, path, status, body=None, sample=None):
        """The response's JSON (None for a 204); ``sample`` names the

        files of the request body (``<sample>-req.json``) and of the
        response body (``<sample>-resp.json``).
        """
        response = self.adapter.request(path, method, json=body,
                                        raise_exc=False)
        if response.status_code != status:
            sys.exit('%s %s answered %s, not %s: %s' % (
                method, path, response.status_code, status, response.text))
        result = response.json() if response.content else None
        if sample:
            if body is not None:
                _write(sample + '-req', body)
            if result is not None:
                _write(sample + '-resp', result)
        return result


def _write(name, data):
    with open(os.path.join(SAMPLES, name + '.json'), 'w') as f:
        json.dump(data, f, indent=4, sort_keys=True)
        f.write('\n')


def _in(hours):
    return (datetime.datetime.now(datetime.timezone.utc)
            + datetime.timedelta(hours=hours)).strftime('%Y-%m-%d %H:%M')


def host_flavors(admin, demo, host):
    """Make a host flavor with one host in its pool; samples of each."""
    admin.call('POST', '/pcloud-host-flavors', 201,
               sample='host-flavor-create',
               body={'id': FLAVOR, 'units': 2,
                     'description': '2 sockets, 512 GB'})
    admin.call('POST', '/pcloud-host-flavors/%s/hosts' % FLAVOR, 201,
               body={'host': host}, sample='host-flavor-host-add')
    demo.call('GET', '/pcloud-host-flavors', 200, sample='host-flavors-list')
    admin.call('GET', '/pcloud-host-flavors/%s' % FLAVOR, 200,
               sample='host-flavor-show')
    admin.call('GET', '/pcloud-host-flavors/%s/hosts' % FLAVOR, 200,
               sample='host-flavor-hosts-list')
    admin.call('POST', '/os-hosts', 409, body={'name': host},
               sample='os-hosts-refused')


def pclouds(demo, alt_project):
    """A pcloud through every route; its id."""
    pcloud = demo.call('POST', '/pclouds', 201, body={'name': 'mine'},
                       sample='pcloud-create')['pcloud']['id']
    base = '/pclouds/%s' % pcloud
    demo.call('POST', base + '/hosts', 201, sample='pcloud-host-add',
              body={'name': HOST_NAME, 'flavor_id': FLAVOR})
    # Its host is disabled until its owner enables it: why a boot fails.
    demo.call('GET', '/pcloud-boot-check?' + parse.urlencode(
        {'pcloud': pcloud, 'flavor': 'm1.tiny'}), 200, sample='boot-check')
    demo.call('PUT', '%s/hosts/%s' % (base, HOST_NAME), 200,
              body={'state': 'enabled'}, sample='pcloud-host-update')
    demo.call('GET', base + '/hosts', 200, sample='pcloud-hosts-list')
    demo.call('GET', '%s/hosts/%s' % (base, HOST_NAME), 200,
              sample='pcloud-host-show')
    demo.call('POST', base + '/tenants', 201,
              body={'tenant_id': alt_project}, sample='pcloud-tenant-add')
    demo.call('GET', base + '/tenants', 200, sample='pcloud-tenants-list')
    demo.call('PUT', base + '/allocation-ratios', 200,
              body={'cpu_allocation_ratio': 4.0},
              sample='pcloud-allocation-ratios-set')
    demo.call('GET', base + '/allocation-ratios', 200,
              sample='pcloud-allocation-ratios-show')
    demo.call('GET', '/pclouds', 200, sample='pclouds-list')
    demo.call('GET', base, 200, sample='pcloud-show')
    demo.call('DELETE', base, 409, sample='pcloud-delete-refused')
    demo.call('DELETE', '%s/tenants/%s' % (base, alt_project), 204)
    demo.call('PUT', '%s/hosts/%s' % (base, HOST_NAME), 200,
              body={'state': 'disabled'})
    demo.call('DELETE', '%s/hosts/%s' % (base, HOST_NAME), 204)
    return pcloud


def host_lease(demo, pcloud):
    """A pcloud:host lease through Blazar's POST /v1/leases."""
    lease = demo.call('POST', '/leases', 201, sample='lease-create', body={
        'name': 'my-hosts', 'start_date': _in(1), 'end_date': _in(2),
        'events': [], 'reservations': [{
            'resource_type': 'pcloud:host', 'amount': 1,
            'host_flavor': FLAVOR, 'pcloud_id': pcloud,
            'lease_type': 'SCHEDULE'}]})['lease']
    return lease


def allocations(admin, demo, pcloud, host):
    """What holds each host over the next three hours: besides the host

    lease, the pcloud holding a second host of the pool (``host``) for
    good, and an instance reservation's slot; all undone after.
    """
    admin.call('POST', '/pcloud-host-flavors/%s/hosts' % FLAVOR, 201,
               body={'host': host})
    base = '/pclouds/%s/hosts' % pcloud
    demo.call('POST', base, 201, body={'name': 'rack-b',
                                       'flavor_id': FLAVOR})
    slots = demo.call('POST', '/leases', 201, body={
        'name': 'my-slots', 'start_date': _in(1), 'end_date': _in(2),
        'events': [], 'reservations': [{
            'resource_type': 'virtual:instance', 'amount': 1, 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1, 'affinity': None,
            'resource_properties': ''}]})['lease']
    admin.call('GET', '/pcloud-allocations?' + parse.urlencode(
        {'start': _in(0), 'end': _in(3)}), 200, sample='allocations-list')
    demo.call('DELETE', '/leases/%s' % slots['id'], 204)
    demo.call('DELETE', base + '/rack-b', 204)
    admin.call('DELETE', '/pcloud-host-flavors/%s/hosts/%s'
               % (FLAVOR, host), 204)


def maintenances(admin, demo, computes):
    """A maintenance window on the compute that holds a demo slot (the

    slot moves off it), and one refused on another of ``computes`` (their
    names), which a pinned slot needs, then booked accepting that; all
    undone after.
    """
    slot = {'resource_type': 'virtual:instance', 'amount': 1, 'vcpus': 1,
            'memory_mb': 512, 'disk_gb': 1, 'affinity': None,
            'resource_properties': ''}
    leases = [demo.call('POST', '/leases', 201, body={
        'name': 'my-slot', 'start_date': _in(1), 'end_date': _in(2),
        'events': [], 'reservations': [slot]})['lease']]
    rid = leases[0]['reservations'][0]['id']
    held = admin.call('GET', '/pcloud-allocations?' + parse.urlencode(
        {'start': _in(0), 'end': _in(3)}), 200)['allocations']
    (host,) = [h['host'] for h in held
               for a in h['allocations'] if a['id'] == rid]
    # One that cannot move: pinned to another compute.
    other = [c for c in computes if c != host][0]
    leases.append(demo.call('POST', '/leases', 201, body={
        'name': 'my-pinned-slot', 'start_date': _in(1),
        'end_date': _in(2), 'events': [], 'reservations': [dict(
            slot, resource_properties=json.dumps(
                ['=', '$hypervisor_hostname', other]))]})['lease'])
    admin.call('POST', '/pcloud-maintenances', 409,
               sample='maintenance-create-refused',
               body={'hosts': [other], 'start_date': _in(1),
                     'end_date': _in(3)})
    # Booked all the same: the pinned slot stays.
    accepted = admin.call('POST', '/pcloud-maintenances', 201,
                          body={'hosts': [other], 'start_date': _in(1),
                                'end_date': _in(3),
                                'accept_unmovable': True})['maintenance']
    maintenance = admin.call('POST', '/pcloud-maintenances', 201,
                             sample='maintenance-create',
                             body={'hosts': [host], 'start_date': _in(1),
                                   'end_date': _in(3),
                                   'reason': 'firmware upgrade',
                                   'accept_unmovable': False})['maintenance']
    admin.call('GET', '/pcloud-maintenances', 200,
               sample='maintenances-list')
    admin.call('GET', '/pcloud-maintenances/%s' % maintenance['id'], 200,
               sample='maintenance-show')
    for found in (maintenance, accepted):
        admin.call('DELETE', '/pcloud-maintenances/%s' % found['id'], 204)
    for lease in leases:
        demo.call('DELETE', '/leases/%s' % lease['id'], 204)


def main():
    sandbox = fixture.get_sandbox()
    admin_session = fixture.session(sandbox, 'admin')
    admin = Api(admin_session)
    demo = Api(fixture.session(sandbox, common.DEMO_USER))
    alt_project = fixture.session(sandbox, common.ALT_USER).get_project_id()
    nova = nova_client.Client('2.53', session=admin_session)
    computes = sorted(c['name'] for c in sandbox.computes)
    maintenances(admin, demo, computes)
    second, host = computes[-2:]
    # A host joins a pool empty, with its compute service disabled.
    services = [nova.services.list(host=name, binary='nova-compute')[0]
                for name in (host, second)]
    for service in services:
        nova.services.disable(service.id)
    host_flavors(admin, demo, host)
    pcloud = pclouds(demo, alt_project)
    lease = host_lease(demo, pcloud)
    allocations(admin, demo, pcloud, second)
    demo.call('DELETE', '/leases/%s' % lease['id'], 204)
    demo.call('DELETE', '/pclouds/%s' % pcloud, 204)
    admin.call('DELETE', '/pcloud-host-flavors/%s/hosts/%s'
               % (FLAVOR, host), 204)
    admin.call('DELETE', '/pcloud-host-flavors/%s' % FLAVOR, 204)
    for service in services:
        nova.services.enable(service.id)
    print('Samples written to %s' % os.path.normpath(SAMPLES))


if __name__ == '__main__':
    main()
