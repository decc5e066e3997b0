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

"""The demo's cloud chapter, with the real clients: the fake computes,

a server, Blazar's own hosts and a physical:host lease, virtual:instance
slots; then it tells pcloud_story and added_compute_story.
"""

import json
import sys
import time

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import added_compute_story
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox.demo import pcloud_story
from pcloud_plugin.sandbox.demo import placement


def tell(story, sandbox):
    """The cloud through the real clients, then pclouds and an added

    compute (the chapters of pcloud_story and added_compute_story).
    """
    cli = commands.Cli(sandbox)
    demo = common.DEMO_USER
    names = [c['name'] for c in sandbox.computes]

    story.step('openstack hypervisor list: the fake computes are up',
               lambda: _hypervisors(cli, names))
    story.step('pcloud-manage placement sync: the ledger already mirrors '
               'Placement (synced at start), nothing to change',
               lambda: _placement_sync(sandbox, cli))
    story.step('the demo member boots a server: openstack server create',
               lambda: _boot(cli, 'demo-vm', 'm1.small'))
    story.step('nova list (python-novaclient) sees it',
               lambda: _nova_list(cli))

    # The two smallest: the plain server went to the emptiest, the largest.
    blazar_hosts = names[:2]

    story.step('the admin gives Blazar hosts: openstack reservation host '
               'create', lambda: _add_hosts(cli, blazar_hosts))
    story.step('blazar host-list (the blazar client) shows them',
               lambda: ' '.join(_host_list(cli, blazar_hosts)))
    story.step('the demo member leases a whole host with 8+ vCPUs: '
               'openstack reservation lease create', lambda: 'ACTIVE, id %s'
               % _lease(cli, 'demo-host-lease',
                        'resource_type=physical:host,'
                        'min=1,max=1,hypervisor_properties=[">=", "$vcpus", '
                        '"8"]')['id'])
    story.step('servers outside reservations count: a slot 1 GB more than '
               'demo-vm leaves free on its host is refused',
               lambda: _usage_counts(sandbox, cli, names))

    slots = {}

    story.step('the demo member reserves 2 instance slots on one host '
               '(virtual:instance) that fill its disk',
               lambda: _instance_lease(sandbox, cli, slots))
    story.step('the demo member boots both slots, on one host',
               lambda: _boot_reserved(cli, slots))
    story.step('a third server with the reserved flavor does not fit',
               lambda: commands.boot_fails(cli, 'demo-reserved-vm3',
                                           slots['flavor'], demo))
    story.step('another project cannot use the reserved flavor',
               lambda: commands.boot_fails(cli, 'alt-vm', slots['flavor'],
                                           common.ALT_USER))
    # An admin may ask for a host (2.74), and the scheduler still checks
    # it. The host has room for this server but for what the slots hold
    # (they leave less than 1 GB of its disk).
    story.step('another project\'s plain boot onto the slots\' host is '
               'refused, the reservation holds it: openstack server create '
               '--host',
               lambda: commands.boot_fails(
                   cli, 'admin-on-slots-host', 'm1.small', 'admin',
                   '--os-compute-api-version', '2.74', '--host',
                   slots['host']))
    story.step('ending the slots lease removes what it made, and kills '
               'nothing', lambda: _end_slots(cli, slots))
    story.step('once the member deletes those servers, their host is free '
               'again', lambda: _slots_freed(sandbox, cli, slots))
    story.step('deleting the host lease gives its host back',
               lambda: _end_lease(cli, blazar_hosts))

    pcloud_story.tell(story, sandbox, cli, names[2:])
    added_compute_story.tell(story, sandbox, cli)


# The steps of tell, in the order it tells them.

def _hypervisors(cli, names):
    if len(names) < 3:
        raise AssertionError('the demo needs 3 computes or more, not '
                             '%d (--computes)' % len(names))
    found = sorted(h['Hypervisor Hostname'] for h in cli.json(
        'openstack', 'hypervisor', 'list'))
    if found != sorted(names):
        raise AssertionError('hypervisors %s, expected %s'
                             % (found, names))
    return ', '.join(found)


def _placement_sync(sandbox, cli):
    output = cli.run(sys.executable, '-m', 'pcloud_plugin.cmd.manage',
                     '--config-file', sandbox.path('pcloud.conf'),
                     'placement', 'sync')
    if 'PROBLEM' in output or 'created: 0' not in output:
        raise AssertionError(output)
    return ' '.join(output.split())


def _boot(cli, name, flavor):
    server = cli.json('openstack', 'server', 'create', '--flavor',
                      flavor, '--image', 'cirros', '--nic', 'none',
                      '--wait', name, user=common.DEMO_USER)
    if server['status'] != 'ACTIVE':
        raise AssertionError('%s is %s' % (name, server['status']))
    # The host is for admins' eyes only.
    host = cli.json('openstack', 'server', 'show', server['id'])[
        'OS-EXT-SRV-ATTR:host']
    return '%s ACTIVE on %s' % (name, host)


def _nova_list(cli):
    output = cli.run('nova', 'list', user=common.DEMO_USER)
    if 'demo-vm' not in output or 'ACTIVE' not in output:
        raise AssertionError(output)
    return 'demo-vm ACTIVE'


def _add_hosts(cli, blazar_hosts):
    for name in blazar_hosts:
        cli.run('openstack', 'reservation', 'host', 'create', name)
    return '%s now reservable' % ' and '.join(blazar_hosts)


def _host_list(cli, blazar_hosts):
    output = cli.run('blazar', 'host-list')
    missing = [n for n in blazar_hosts if n not in output]
    if missing:
        raise AssertionError('%s missing: %s' % (missing, output))
    return ' '.join(output.split('\n')[3:-2]).replace('|', ' ').split()


def _lease(cli, name, reservation):
    demo = common.DEMO_USER
    cli.run('openstack', 'reservation', 'lease', 'create',
            '--reservation', reservation, '--start-date', 'now',
            '--end-date', commands.in_an_hour(), name, user=demo)
    found = cli.wait('lease %s' % name,
                     ('openstack', 'reservation', 'lease', 'show', name),
                     lambda lease: lease['status'] in ('ACTIVE', 'ERROR'),
                     user=demo)
    if found['status'] != 'ACTIVE':
        raise AssertionError('lease %s is %s' % (name, found['status']))
    return found


def _usage_counts(sandbox, cli, names):
    # A slot 1 GB more than demo-vm leaves free on its host (the
    # roomiest of ours) fits there only if demo-vm's disk were free.
    (server,) = cli.json('openstack', 'server', 'list', '--long',
                         '--all-projects', '--name', '^demo-vm$')
    host = server['Host']
    ours = names[2:]
    free = placement.free(sandbox, 'DISK_GB')
    disk = free[host] + 1
    if host not in ours or max(free[h] for h in ours if h != host) >= disk:
        raise AssertionError('demo-vm is on %s, free disk %s: this step '
                             'needs it on the roomiest of %s'
                             % (host, free, ours))
    # Blazar's client does not print the HTTP status.
    return commands.refused(cli, (
        'openstack', 'reservation', 'lease', 'create', '--reservation',
        'resource_type=virtual:instance,vcpus=1,memory_mb=512,'
        'disk_gb=%d,amount=1,affinity=None' % disk,
        '--start-date', 'now', '--end-date', commands.in_an_hour(),
        'demo-too-big'), common.DEMO_USER, 'Cannot reserve', 'DISK_GB')


def _instance_lease(sandbox, cli, slots):
    # Two slots that take all the free disk of the roomiest host
    # (disk: it has no quota to lift): only such a host can take
    # them, and the reservation then holds it full.
    free = placement.free(sandbox, 'DISK_GB')
    disk = max(free.values()) // 2
    slots['hosts'] = sorted(h for h, n in free.items() if n >= 2 * disk)
    found = _lease(cli, 'demo-slots', 'resource_type=virtual:instance,'
                   'vcpus=1,memory_mb=512,disk_gb=%d,amount=2,'
                   'affinity=True' % disk)
    reservation = found['reservations']
    if isinstance(reservation, str):
        reservation = json.loads(reservation)
    if isinstance(reservation, list):
        reservation = reservation[0]
    slots['flavor'] = reservation['id']
    slots['disk'] = disk
    return ('ACTIVE, reserved flavor %s, %d GB of disk each: all that '
            '%s has free' % (slots['flavor'], disk,
                             ' or '.join(slots['hosts'])))


def _boot_reserved(cli, slots):
    booted = [_boot(cli, 'demo-reserved-vm%d' % n, slots['flavor'])
              for n in (1, 2)]
    hosts = {line.rsplit(' ', 1)[1] for line in booted}
    if len(hosts) != 1 or not hosts <= set(slots['hosts']):
        raise AssertionError('not both on one of %s: %s'
                             % (slots['hosts'], booted))
    (slots['host'],) = hosts
    return '; '.join(booted)


def _end_slots(cli, slots):
    demo = common.DEMO_USER
    flavor = cli.json('openstack', 'flavor', 'show', slots['flavor'])
    cli.run('openstack', 'reservation', 'lease', 'delete', 'demo-slots',
            user=demo)
    cli.wait('the reserved flavor to go',
             ('openstack', 'flavor', 'list', '--all'),
             lambda found: slots['flavor'] not in
             [f['ID'] for f in found])
    left = [s['Name'] for s in cli.json('openstack', 'server', 'list',
                                        user=demo)
            if s['Name'].startswith('demo-reserved-vm')
            and s['Status'] == 'ACTIVE']
    if len(left) != 2:
        raise AssertionError('servers after the end: %s' % left)
    return ('flavor %s gone, its 2 servers still ACTIVE'
            % flavor['name'])


def _slots_freed(sandbox, cli, slots):
    demo = common.DEMO_USER
    for server in cli.json('openstack', 'server', 'list', '--name',
                           '^demo-reserved-vm', user=demo):
        cli.run('openstack', 'server', 'delete', '--wait', server['ID'],
                user=demo)
    # Held until they are gone (seeds/001: the end kills nothing).
    client = placement.admin_client(sandbox)
    deadline = time.monotonic() + 60
    while client.get('/allocations/%s' % slots['flavor']).json()[
            'allocations']:
        if time.monotonic() > deadline:
            raise AssertionError('Placement still holds capacity for '
                                 'reservation %s' % slots['flavor'])
        time.sleep(1)
    free = placement.free(sandbox, 'DISK_GB')[slots['host']]
    if free < 2 * slots['disk']:
        raise AssertionError('%s has %d GB free' % (slots['host'], free))
    return '%s has its %d GB free again' % (slots['host'], free)


def _end_lease(cli, blazar_hosts):
    cli.run('openstack', 'reservation', 'lease', 'delete',
            'demo-host-lease', user=common.DEMO_USER)
    leases = [lease['name'] for lease in cli.json(
        'openstack', 'reservation', 'lease', 'list', user=common.DEMO_USER)]
    if 'demo-host-lease' in leases:
        raise AssertionError('still listed: %s' % leases)
    free = cli.json('openstack', 'aggregate', 'show', 'freepool')['hosts']
    if sorted(free) != sorted(blazar_hosts):
        raise AssertionError('the free pool holds %s' % free)
    return 'the free pool holds %s again' % ' and '.join(free)
