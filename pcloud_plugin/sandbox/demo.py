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

"""The sandbox's demo: the story of everything that exists so far.

First the capacity ledger on its own, then the cloud through the real
``openstack``, ``nova`` and ``blazar`` clients and ``pcloud-manage``, run
as a user runs them. Each step prints what it shows; the first one that
does not hold stops the story, named. Each new piece adds its part here.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time

from keystoneauth1 import adapter
from keystoneauth1 import loading
from keystoneauth1 import session

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.db import api as db_api
from pcloud_plugin import exception
from pcloud_plugin.sandbox import common


class DemoFailed(Exception):
    pass


class Story:
    """Numbered steps that print what they show and stop at the first

    one that does not hold.
    """

    def __init__(self, out=sys.stdout):
        self.out = out
        self.number = 0

    def step(self, title, check):
        self.number += 1
        started = time.monotonic()
        try:
            detail = check()
        except Exception as e:
            self.out.write('[FAIL] %d. %s: %s: %s\n'
                           % (self.number, title, type(e).__name__, e))
            self.out.flush()
            raise DemoFailed('step %d, %s' % (self.number, title))
        self.out.write('[ ok ] %d. %s%s (%.1fs)\n'
                       % (self.number, title,
                          ': %s' % detail if detail else '',
                          time.monotonic() - started))
        self.out.flush()

    def refused(self, title, error, call):
        """A step whose point is that ``call`` is refused with ``error``."""
        def check():
            try:
                call()
            except error as e:
                return 'refused: %s' % e.message
            raise AssertionError('was not refused')
        self.step(title, check)


def ledger_story(context, story, now):
    day = datetime.timedelta(days=1)
    monday, tuesday, wednesday = now + day, now + 2 * day, now + 3 * day

    def make_hosts():
        for name in ('cn1', 'cn2'):
            db_api.create_provider(context, 'sandbox-' + name, name,
                                   can_host=True)
            db_api.set_inventories(context, 'sandbox-' + name, {
                'VCPU': Inventory(8, allocation_ratio=2.0),
                'MEMORY_MB': Inventory(16384, reserved=512),
                'DISK_GB': Inventory(500, min_unit=10, step_size=10)})
        return '2 hosts of 16 VCPU (8 x ratio 2.0), 15872 MB, 500 GB'
    story.step('create hosts with Placement-style inventories', make_hosts)

    cn1, cn2 = 'sandbox-cn1', 'sandbox-cn2'
    story.step('lease A takes 12 VCPU of cn1 for tomorrow', lambda: str(
        db_api.claim(context, 'lease-A', {cn1: {'VCPU': 12}},
                     monday, tuesday)))
    story.refused('lease B cannot take 8 more VCPU of cn1 overlapping A',
                  exception.CapacityExceeded,
                  lambda: db_api.claim(context, 'lease-B',
                                       {cn1: {'VCPU': 8}},
                                       monday + day / 2, wednesday))
    story.step('lease B fits once A has ended', lambda: str(
        db_api.claim(context, 'lease-B', {cn1: {'VCPU': 8}, cn2: {
            'VCPU': 16, 'DISK_GB': 100}}, tuesday, wednesday)))
    story.refused('a 15 GB disk breaks step_size 10',
                  exception.UnitRuleViolation,
                  lambda: db_api.claim(context, 'lease-C',
                                       {cn2: {'DISK_GB': 15}}))
    story.refused('moving A into B\'s window is refused, A stays put',
                  exception.CapacityExceeded,
                  lambda: db_api.change_claim(context, 'lease-A',
                                              start=tuesday, end=wednesday))

    def a_unchanged():
        claims = db_api.get_claims(context, 'lease-A')
        if claims['start'] != monday.replace(microsecond=0):
            raise AssertionError('lease A moved to %s' % claims['start'])
        return 'A still starts %s' % claims['start']
    story.step('the refused move left nothing half-written', a_unchanged)
    story.refused('cn2 cannot shrink below what B holds',
                  exception.InventoryInUse,
                  lambda: db_api.set_inventories(context, cn2, {
                      'VCPU': Inventory(4)}))
    story.step('releasing A frees tomorrow', lambda: str(
        db_api.release(context, 'lease-A') and db_api.claim(
            context, 'lease-D', {cn1: {'VCPU': 16}}, monday, tuesday)))

    def usage():
        return ', '.join('%s %s' % (name, db_api.get_usage(
            context, cn1, *window)) for name, window in (
                ('tomorrow', (monday, tuesday)),
                ('the day after', (tuesday, wednesday))))
    story.step('cn1 usage per window', usage)


class CommandFailed(Exception):
    pass


class Cli:
    """The real command-line clients, with the sandbox's OS_* variables."""

    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.path = os.pathsep.join((os.path.dirname(sys.executable),
                                     os.environ.get('PATH', '')))

    def run(self, *args, user='admin'):
        command = shutil.which(args[0], path=self.path)
        if command is None:
            raise CommandFailed('%s is not installed' % args[0])
        result = subprocess.run(
            (command,) + args[1:], capture_output=True, text=True,
            env=self.sandbox.client_env(user), timeout=120)
        if result.returncode:
            lines = [line for line in result.stderr.splitlines()
                     if not line.startswith('Could not load')]
            raise CommandFailed('"%s" exited %d: %s' % (
                ' '.join(args), result.returncode,
                ' / '.join(lines[-3:]) or result.stdout[-300:]))
        return result.stdout

    def json(self, *args, user='admin'):
        return json.loads(self.run(*args, '-f', 'json', user=user))

    def wait(self, title, args, done, user='admin', timeout=60):
        """Run ``args`` again until ``done(output)``; return the output."""
        deadline = time.monotonic() + timeout
        while True:
            output = self.json(*args, user=user)
            if done(output):
                return output
            if time.monotonic() > deadline:
                raise AssertionError('%s: still %s after %ds'
                                     % (title, output, timeout))
            time.sleep(0.5)


def placement(sandbox):
    """The admin's Placement (what osc-placement would ask, were it

    installed): what the ledger and the scheduler go by.
    """
    env = sandbox.env('admin')
    auth = loading.get_plugin_loader('password').load_from_options(
        auth_url=env['OS_AUTH_URL'], username=env['OS_USERNAME'],
        password=env['OS_PASSWORD'], project_name=env['OS_PROJECT_NAME'],
        user_domain_id='default', project_domain_id='default')
    return adapter.Adapter(session.Session(auth=auth),
                           service_type='placement')


def _provider_url(client, host):
    """The Placement URL of a compute's provider, with a trailing /."""
    (provider,) = client.get('/resource_providers?name=%s' % host).json()[
        'resource_providers']
    return '/resource_providers/%s/' % provider['uuid']


def vcpu_ratio(sandbox, host):
    """The VCPU allocation ratio Placement has for a compute."""
    client = placement(sandbox)
    return client.get(_provider_url(client, host) + 'inventories/VCPU'
                      ).json()['allocation_ratio']


def placement_free(sandbox, rc):
    """{compute: how much of ``rc`` Placement has free on it}."""
    client = placement(sandbox)
    free = {}
    for compute in sandbox.computes:
        url = _provider_url(client, compute['name'])
        inventory = client.get(url + 'inventories').json()[
            'inventories'][rc]
        used = client.get(url + 'usages').json()['usages'].get(rc, 0)
        free[compute['name']] = int(
            (inventory['total'] - inventory['reserved'])
            * inventory['allocation_ratio']) - used
    return free


def _in_an_hour():
    return (datetime.datetime.now(datetime.timezone.utc)
            + datetime.timedelta(hours=1)).strftime('%Y-%m-%d %H:%M')


def cloud_story(story, sandbox):
    cli = Cli(sandbox)
    demo = common.DEMO_USER
    names = [c['name'] for c in sandbox.computes]

    def hypervisors():
        if len(names) < 3:
            raise AssertionError('the demo needs 3 computes or more, not '
                                 '%d (--computes)' % len(names))
        found = sorted(h['Hypervisor Hostname'] for h in cli.json(
            'openstack', 'hypervisor', 'list'))
        if found != sorted(names):
            raise AssertionError('hypervisors %s, expected %s'
                                 % (found, names))
        return ', '.join(found)
    story.step('openstack hypervisor list: the fake computes are up',
               hypervisors)

    def placement_sync():
        output = cli.run(sys.executable, '-m', 'pcloud_plugin.cmd.manage',
                         '--config-file', sandbox.path('pcloud.conf'),
                         'placement', 'sync')
        if 'PROBLEM' in output or 'created: 0' not in output:
            raise AssertionError(output)
        return ' '.join(output.split())
    story.step('pcloud-manage placement sync: the ledger already mirrors '
               'Placement (synced at start), nothing to change',
               placement_sync)

    def boot(name, flavor):
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          flavor, '--image', 'cirros', '--nic', 'none',
                          '--wait', name, user=demo)
        if server['status'] != 'ACTIVE':
            raise AssertionError('%s is %s' % (name, server['status']))
        # The host is for admins' eyes only.
        host = cli.json('openstack', 'server', 'show', server['id'])[
            'OS-EXT-SRV-ATTR:host']
        return '%s ACTIVE on %s' % (name, host)
    story.step('the demo member boots a server: openstack server create',
               lambda: boot('demo-vm', 'm1.small'))

    def nova_list():
        output = cli.run('nova', 'list', user=demo)
        if 'demo-vm' not in output or 'ACTIVE' not in output:
            raise AssertionError(output)
        return 'demo-vm ACTIVE'
    story.step('nova list (python-novaclient) sees it', nova_list)

    # The two smallest: the plain server went to the emptiest, the largest.
    blazar_hosts = names[:2]

    def add_hosts():
        for name in blazar_hosts:
            cli.run('openstack', 'reservation', 'host', 'create', name)
        return '%s now reservable' % ' and '.join(blazar_hosts)
    story.step('the admin gives Blazar hosts: openstack reservation host '
               'create', add_hosts)

    def host_list():
        output = cli.run('blazar', 'host-list')
        missing = [n for n in blazar_hosts if n not in output]
        if missing:
            raise AssertionError('%s missing: %s' % (missing, output))
        return ' '.join(output.split('\n')[3:-2]).replace('|', ' ').split()
    story.step('blazar host-list (the blazar client) shows them',
               lambda: ' '.join(host_list()))

    def lease(name, reservation):
        cli.run('openstack', 'reservation', 'lease', 'create',
                '--reservation', reservation, '--start-date', 'now',
                '--end-date', _in_an_hour(), name, user=demo)
        found = cli.wait('lease %s' % name,
                         ('openstack', 'reservation', 'lease', 'show', name),
                         lambda lease: lease['status'] in ('ACTIVE', 'ERROR'),
                         user=demo)
        if found['status'] != 'ACTIVE':
            raise AssertionError('lease %s is %s' % (name, found['status']))
        return found
    story.step('the demo member leases a whole host with 8+ vCPUs: '
               'openstack reservation lease create', lambda: 'ACTIVE, id %s'
               % lease('demo-host-lease', 'resource_type=physical:host,'
                       'min=1,max=1,hypervisor_properties=[">=", "$vcpus", '
                       '"8"]')['id'])

    def usage_counts():
        # A slot 1 GB more than demo-vm leaves free on its host (the
        # roomiest of ours) fits there only if demo-vm's disk were free.
        (server,) = cli.json('openstack', 'server', 'list', '--long',
                             '--all-projects', '--name', '^demo-vm$')
        host = server['Host']
        ours = names[2:]
        free = placement_free(sandbox, 'DISK_GB')
        disk = free[host] + 1
        if host not in ours or max(free[h] for h in ours if h != host) >= disk:
            raise AssertionError('demo-vm is on %s, free disk %s: this step '
                                 'needs it on the roomiest of %s'
                                 % (host, free, ours))
        # Blazar's client does not print the HTTP status.
        return command_refused(cli, (
            'openstack', 'reservation', 'lease', 'create', '--reservation',
            'resource_type=virtual:instance,vcpus=1,memory_mb=512,'
            'disk_gb=%d,amount=1,affinity=None' % disk,
            '--start-date', 'now', '--end-date', _in_an_hour(),
            'demo-too-big'), demo, 'Cannot reserve', 'DISK_GB')
    story.step('servers outside reservations count: a slot 1 GB more than '
               'demo-vm leaves free on its host is refused', usage_counts)

    slots = {}

    def instance_lease():
        # Two slots that take all the free disk of the roomiest host
        # (disk: it has no quota to lift): only such a host can take
        # them, and the reservation then holds it full.
        free = placement_free(sandbox, 'DISK_GB')
        disk = max(free.values()) // 2
        slots['hosts'] = sorted(h for h, n in free.items() if n >= 2 * disk)
        found = lease('demo-slots', 'resource_type=virtual:instance,'
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
    story.step('the demo member reserves 2 instance slots on one host '
               '(virtual:instance) that fill its disk', instance_lease)

    def boot_reserved():
        booted = [boot('demo-reserved-vm%d' % n, slots['flavor'])
                  for n in (1, 2)]
        hosts = {line.rsplit(' ', 1)[1] for line in booted}
        if len(hosts) != 1 or not hosts <= set(slots['hosts']):
            raise AssertionError('not both on one of %s: %s'
                                 % (slots['hosts'], booted))
        (slots['host'],) = hosts
        return '; '.join(booted)
    story.step('the demo member boots both slots, on one host',
               boot_reserved)
    story.step('a third server with the reserved flavor does not fit',
               lambda: boot_fails(cli, 'demo-reserved-vm3', slots['flavor'],
                                  demo))
    story.step('another project cannot use the reserved flavor',
               lambda: boot_fails(cli, 'alt-vm', slots['flavor'],
                                  common.ALT_USER))
    # An admin may ask for a host (2.74), and the scheduler still checks
    # it. The host has room for this server but for what the slots hold
    # (they leave less than 1 GB of its disk).
    story.step('another project\'s plain boot onto the slots\' host is '
               'refused, the reservation holds it: openstack server create '
               '--host',
               lambda: boot_fails(cli, 'admin-on-slots-host', 'm1.small',
                                  'admin', '--os-compute-api-version', '2.74',
                                  '--host', slots['host']))

    def end_slots():
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
    story.step('ending the slots lease removes what it made, and kills '
               'nothing', end_slots)

    def slots_freed():
        for server in cli.json('openstack', 'server', 'list', '--name',
                               '^demo-reserved-vm', user=demo):
            cli.run('openstack', 'server', 'delete', '--wait', server['ID'],
                    user=demo)
        # Held until they are gone (seeds/001: the end kills nothing).
        client = placement(sandbox)
        deadline = time.monotonic() + 60
        while client.get('/allocations/%s' % slots['flavor']).json()[
                'allocations']:
            if time.monotonic() > deadline:
                raise AssertionError('Placement still holds capacity for '
                                     'reservation %s' % slots['flavor'])
            time.sleep(1)
        free = placement_free(sandbox, 'DISK_GB')[slots['host']]
        if free < 2 * slots['disk']:
            raise AssertionError('%s has %d GB free' % (slots['host'], free))
        return '%s has its %d GB free again' % (slots['host'], free)
    story.step('once the member deletes those servers, their host is free '
               'again', slots_freed)

    def end_lease():
        cli.run('openstack', 'reservation', 'lease', 'delete',
                'demo-host-lease', user=demo)
        leases = [lease['name'] for lease in cli.json(
            'openstack', 'reservation', 'lease', 'list', user=demo)]
        if 'demo-host-lease' in leases:
            raise AssertionError('still listed: %s' % leases)
        free = cli.json('openstack', 'aggregate', 'show', 'freepool')['hosts']
        if sorted(free) != sorted(blazar_hosts):
            raise AssertionError('the free pool holds %s' % free)
        return 'the free pool holds %s again' % ' and '.join(free)
    story.step('deleting the host lease gives its host back', end_lease)

    pcloud_story(story, sandbox, cli, names[2:])
    added_compute_story(story, sandbox, cli)


def boot_fails(cli, name, flavor, user, *options):
    """Ask for a server that must not be made; say how it was refused."""
    try:
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          flavor, '--image', 'cirros', '--nic', 'none',
                          *options, name, user=user)
    except CommandFailed as e:
        return 'refused: %s' % e
    found = cli.wait('server %s' % name, ('openstack', 'server', 'show',
                                          server['id']),
                     lambda found: found['status'] in ('ACTIVE', 'ERROR'),
                     user=user)
    if found['status'] != 'ERROR':
        raise AssertionError('%s is %s' % (name, found['status']))
    cli.run('openstack', 'server', 'delete', '--wait', server['id'],
            user=user)
    return '%s went to ERROR (no valid host)' % name


def command_refused(cli, args, user, *saying):
    """A command that must fail, saying each of ``saying``."""
    try:
        cli.run(*args, user=user)
    except CommandFailed as e:
        missing = [text for text in saying if text not in str(e)]
        if missing:
            raise AssertionError('refused, but without %s: %s'
                                 % (missing, e))
        return 'refused: %s' % e
    raise AssertionError('"%s" was not refused' % ' '.join(args))


def conflict(cli, args, user, *saying):
    """A command of ours that the Pcloud API must refuse with a 409."""
    return command_refused(cli, args, user, 'HTTP 409', *saying)


def pcloud_story(story, sandbox, cli, hosts):
    """Pclouds through the REST API, with openstack pcloud ...

    ``hosts``: computes Blazar does not hold; the first without servers
    goes into a host flavor pool.
    """
    demo = common.DEMO_USER
    made = {}

    def pool():
        busy = {s['Host'] for s in cli.json(
            'openstack', 'server', 'list', '--all-projects', '--long')}
        empty = [h for h in hosts if h not in busy]
        if not empty:
            raise AssertionError('every one of %s runs servers: the demo '
                                 'needs one more --computes' % hosts)
        made['host'] = empty[0]
        cli.run('openstack', 'compute', 'service', 'set', '--disable',
                made['host'], 'nova-compute')
        cli.run('openstack', 'pcloud', 'host', 'flavor', 'create',
                'demo.c16', '--units', '2', '--description',
                '16 vCPU, 32 GB')
        cli.run('openstack', 'pcloud', 'host', 'flavor', 'add', 'host',
                'demo.c16', made['host'])
        flavors = cli.json('openstack', 'pcloud', 'host', 'flavor', 'list',
                           user=demo)
        if [(f['ID'], f['Free Hosts']) for f in flavors] != [
                ('demo.c16', 1)]:
            raise AssertionError(flavors)
        return 'host flavor demo.c16, 1 free host, seen by the member'
    story.step('the admin makes a host flavor and pools an emptied host: '
               'openstack pcloud host flavor create / add host', pool)

    def take_host():
        made['pcloud'] = cli.json('openstack', 'pcloud', 'create',
                                  'demo-pcloud', user=demo)['id']
        cli.run('openstack', 'pcloud', 'add', 'host', 'demo-pcloud',
                'rack-a', '--host-flavor', 'demo.c16', user=demo)
        cli.run('openstack', 'pcloud', 'host', 'set', 'demo-pcloud',
                'rack-a', '--enable', user=demo)
        seen = cli.run('openstack', 'pcloud', 'host', 'list', 'demo-pcloud',
                       user=demo)
        seen += cli.run('openstack', 'pcloud', 'show', 'demo-pcloud',
                        user=demo)
        if made['host'] in seen or 'rack-a' not in seen:
            raise AssertionError('the member sees: %s' % seen)
        return 'pcloud %s holds rack-a, enabled' % made['pcloud']
    story.step('the demo member creates a pcloud and takes a host: '
               'openstack pcloud create / add host', take_host)
    story.step('the pool\'s one host is the pcloud\'s for good: a lease of '
               'it is refused', lambda: conflict(cli, (
                   'openstack', 'pcloud', 'lease', 'create', 'demo-no-host',
                   '--pcloud', 'demo-pcloud', '--host-flavor', 'demo.c16',
                   '--type', 'IMMEDIATE', '--end-date', _in_an_hour()),
                   demo))

    def boot_in_pcloud():
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          'm1.small', '--image', 'cirros', '--nic', 'none',
                          '--hint', 'pcloud=%s' % made['pcloud'], '--wait',
                          'demo-pcloud-vm', user=demo)
        host = cli.json('openstack', 'server', 'show', server['id'])[
            'OS-EXT-SRV-ATTR:host']
        if host != made['host']:
            raise AssertionError('landed on %s' % host)
        made['server'] = server['id']
        return 'demo-pcloud-vm ACTIVE on the pcloud host'
    story.step('the demo member boots into it: openstack server create '
               '--hint pcloud=<id>', boot_in_pcloud)
    story.step('the alt project, not authorized, cannot',
               lambda: boot_fails(cli, 'alt-pcloud-vm', 'm1.small',
                                  common.ALT_USER, '--hint',
                                  'pcloud=%s' % made['pcloud']))

    def not_found_for_alt():
        try:
            cli.run('openstack', 'pcloud', 'show', made['pcloud'],
                    user=common.ALT_USER)
        except CommandFailed as e:
            return 'refused: %s' % e
        raise AssertionError('alt sees the demo member\'s pcloud')
    story.step('nor does it see the pcloud', not_found_for_alt)

    def busy():
        (host,) = cli.json('openstack', 'pcloud', 'host', 'list',
                           'demo-pcloud', user=demo)
        if host['Instances'] != [made['server']]:
            raise AssertionError(host)
        cli.run('openstack', 'pcloud', 'host', 'set', 'demo-pcloud',
                'rack-a', '--disable', user=demo)
        try:
            cli.run('openstack', 'pcloud', 'remove', 'host', 'demo-pcloud',
                    'rack-a', user=demo)
        except CommandFailed as e:
            return 'rack-a lists its server; removal refused: %s' % e
        raise AssertionError('removed a host with a server on it')
    story.step('the pcloud lists its server and keeps a busy host',
               busy)

    def give_back():
        cli.run('openstack', 'server', 'delete', '--wait', made['server'],
                user=demo)
        cli.run('openstack', 'pcloud', 'remove', 'host', 'demo-pcloud',
                'rack-a', user=demo)
        return 'rack-a removed, %s free in the pool again' % made['host']
    story.step('emptied and removed, the host returns to the pool',
               give_back)

    scheduled_host_story(story, cli, made)
    best_effort_story(story, cli, made)

    def delete():
        cli.run('openstack', 'pcloud', 'delete', 'demo-pcloud', user=demo)
        pool = cli.json('openstack', 'pcloud', 'host', 'flavor', 'host',
                        'list', 'demo.c16')
        if pool != [{'Host': made['host'], 'Pcloud ID': None}]:
            raise AssertionError(pool)
        return 'pcloud deleted, %s free in the pool' % made['host']
    story.step('the demo member deletes the empty pcloud', delete)


def _minute(delta):
    """A lease date ``delta`` from now, to the whole minute (UTC)."""
    return (datetime.datetime.now(datetime.timezone.utc)
            + delta).strftime('%Y-%m-%d %H:%M')


def scheduled_host_story(story, cli, made):
    """A SCHEDULE pcloud:host lease: waits, then its host joins the

    pcloud at the start and leaves at the end, on time.
    """
    demo = common.DEMO_USER
    name = 'demo-scheduled-host'
    # At least a minute ahead: the lease is made before it starts.
    start = _minute(datetime.timedelta(seconds=120))
    end = _minute(datetime.timedelta(seconds=180))

    def hosts():
        return cli.json('openstack', 'pcloud', 'host', 'list', 'demo-pcloud',
                        user=demo)

    def ratio():
        made['own-ratio'] = vcpu_ratio(cli.sandbox, made['host'])
        cli.run('openstack', 'pcloud', 'set', 'demo-pcloud',
                '--cpu-allocation-ratio', str(made['own-ratio'] * 2),
                user=demo)
        return 'the pool host runs at %s on its own' % made['own-ratio']
    story.step('the demo member sets the pcloud\'s VCPU allocation ratio to '
               'twice the host\'s own: openstack pcloud set', ratio)

    def book():
        cli.run('openstack', 'pcloud', 'lease', 'create', name, '--pcloud',
                'demo-pcloud', '--host-flavor', 'demo.c16', '--type',
                'SCHEDULE', '--start-date', start, '--end-date', end,
                user=demo)
        lease = cli.json('openstack', 'reservation', 'lease', 'show', name,
                         user=demo)
        if lease['status'] != 'PENDING' or hosts():
            raise AssertionError('before its start: %s, hosts %s'
                                 % (lease['status'], hosts()))
        return 'PENDING until %s, the pcloud still empty' % start
    story.step('the demo member books a host for %s to %s: openstack '
               'pcloud lease create --type SCHEDULE' % (start, end), book)

    story.step('99 hosts then are a capacity conflict (409), not a server '
               'error', lambda: conflict(cli, (
                   'openstack', 'pcloud', 'lease', 'create', name + '-99',
                   '--pcloud', 'demo-pcloud', '--host-flavor', 'demo.c16',
                   '--amount', '99', '--type', 'SCHEDULE', '--start-date',
                   start, '--end-date', end), demo))
    story.step('nor can the booked host be allocated for good now: the '
               'refusal says from when', lambda: conflict(cli, (
                   'openstack', 'pcloud', 'add', 'host', 'demo-pcloud',
                   'rack-b', '--host-flavor', 'demo.c16'), demo,
                   'booked from %s' % start.replace(' ', 'T')))

    def started():
        cli.wait('lease %s to start' % name,
                 ('openstack', 'reservation', 'lease', 'show', name),
                 lambda lease: lease['status'] == 'ACTIVE', user=demo,
                 timeout=240)
        found = hosts()
        if [h['State'] for h in found] != ['enabled']:
            raise AssertionError(found)
        ratio = vcpu_ratio(cli.sandbox, made['host'])
        if ratio != made['own-ratio'] * 2:
            raise AssertionError('the leased host runs at %s' % ratio)
        return 'ACTIVE at %s; the pcloud holds %s, enabled, at ratio %s' % (
            datetime.datetime.now(datetime.timezone.utc).strftime(
                '%H:%M:%S'), found[0]['Name'], ratio)
    story.step('at its start the lease is ACTIVE and its host in the '
               'pcloud, at the pcloud\'s ratio', started)

    def boot_in_lease():
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          'm1.tiny', '--image', 'cirros', '--nic', 'none',
                          '--hint', 'pcloud=%s' % made['pcloud'], '--wait',
                          'demo-lease-vm', user=demo)
        made['lease-vm'] = server['id']
        host = cli.json('openstack', 'server', 'show', server['id'])[
            'OS-EXT-SRV-ATTR:host']
        if host != made['host']:
            raise AssertionError('landed on %s' % host)
        return 'demo-lease-vm ACTIVE on the leased host'
    story.step('the demo member boots into the leased host', boot_in_lease)

    def ended():
        cli.wait('lease %s to end' % name,
                 ('openstack', 'reservation', 'lease', 'show', name),
                 lambda lease: lease['status'] == 'TERMINATED', user=demo,
                 timeout=240)
        if hosts():
            raise AssertionError('still in the pcloud: %s' % hosts())
        ratio = vcpu_ratio(cli.sandbox, made['host'])
        if ratio != made['own-ratio']:
            raise AssertionError('the host kept ratio %s' % ratio)
        cli.run('openstack', 'reservation', 'lease', 'delete', name,
                user=demo)
        return ('TERMINATED at %s; the host left the pcloud, back at its '
                'own ratio %s' % (datetime.datetime.now(
                    datetime.timezone.utc).strftime('%H:%M:%S'), ratio))
    story.step('at its end the host leaves the pcloud, with its own ratio',
               ended)
    story.step('after its end, a boot into the pcloud does not land on the '
               'host: openstack server create --hint pcloud=<id>',
               lambda: boot_fails(cli, 'demo-after-lease', 'm1.small', demo,
                                  '--hint', 'pcloud=%s' % made['pcloud']))

    def left_behind():
        server = cli.json('openstack', 'server', 'show', made['lease-vm'])
        if (server['status'], server['OS-EXT-SRV-ATTR:host']) != (
                'ACTIVE', made['host']):
            raise AssertionError('demo-lease-vm: %s' % server)
        refused = conflict(cli, (
            'openstack', 'pcloud', 'add', 'host', 'demo-pcloud',
            'rack-b', '--host-flavor', 'demo.c16'), demo,
            'an ended lease left')
        cli.run('openstack', 'server', 'delete', '--wait', made['lease-vm'],
                user=demo)
        return 'demo-lease-vm still ACTIVE there; allocation ' + refused
    story.step('a host is handed over only empty: the server outlives the '
               'lease, and no allocation takes its host', left_behind)


def leased_refusals(story, cli, made, found):
    """While a lease (``found['lease']``) holds the pcloud's one host:

    no boot of another project there, and the lessee can neither take the
    host out of the pcloud nor delete the pcloud (409, naming the lease).
    """
    demo = common.DEMO_USER
    story.step('the alt project, not authorized, cannot boot into the '
               'leased host either',
               lambda: boot_fails(cli, 'alt-leased-vm', 'm1.small',
                                  common.ALT_USER, '--hint',
                                  'pcloud=%s' % made['pcloud']))

    def refused(*args):
        return conflict(cli, ('openstack', 'pcloud') + args, demo,
                        found['lease'])

    def hosts():
        return cli.json('openstack', 'pcloud', 'host', 'list', 'demo-pcloud',
                        user=demo)

    def disable():
        (host,) = hosts()
        refusal = refused('host', 'set', 'demo-pcloud', host['Name'],
                          '--disable')
        if [h['State'] for h in hosts()] != ['enabled']:
            raise AssertionError('after the refusal: %s' % hosts())
        return refusal
    story.step('the lessee cannot disable the leased host: openstack '
               'pcloud host set --disable', disable)
    story.step('nor remove it: openstack pcloud remove host',
               lambda: refused('remove', 'host', 'demo-pcloud',
                               hosts()[0]['Name']))
    story.step('nor delete the pcloud the lease targets: openstack pcloud '
               'delete', lambda: refused('delete', 'demo-pcloud'))


def best_effort_story(story, cli, made):
    """A BEST-EFFORT pcloud:host lease whose host runs another project's

    server: at its start the server is live-migrated away and the host
    joins the pcloud.
    """
    demo = common.DEMO_USER
    name = 'demo-best-effort'
    found = {}

    def squatter():
        # An admin may place a server on a host of its choosing, past the
        # scheduler's filters: how another project's server comes to sit
        # on a pool host.
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          'm1.small', '--image', 'cirros', '--nic', 'none',
                          '--availability-zone', 'nova:%s' % made['host'],
                          '--wait', 'admin-squatter')
        found['server'] = server['id']
        return 'admin-squatter ACTIVE on %s' % made['host']
    story.step('a server of the admin project sits on the free pool host',
               squatter)

    def lease():
        cli.run('openstack', 'pcloud', 'lease', 'create', name, '--pcloud',
                'demo-pcloud', '--host-flavor', 'demo.c16', '--type',
                'BEST-EFFORT', '--timeout', '30', '--end-date',
                _minute(datetime.timedelta(hours=1)), user=demo)
        found['lease'] = cli.wait(
            'lease %s to start' % name,
            ('openstack', 'reservation', 'lease', 'show', name),
            lambda lease: lease['status'] == 'ACTIVE', user=demo,
            timeout=120)['id']
        moved = cli.wait(
            'admin-squatter to move',
            ('openstack', 'server', 'show', found['server']),
            lambda server: server['status'] == 'ACTIVE' and server[
                'OS-EXT-SRV-ATTR:host'] != made['host'], timeout=120)
        # The host joins once the migration has finished.
        hosts = cli.wait('the host to join the pcloud',
                         ('openstack', 'pcloud', 'host', 'list',
                          'demo-pcloud'),
                         lambda hosts: [h['State'] for h in hosts] == [
                             'enabled'], user=demo)
        return ('ACTIVE; admin-squatter live-migrated to %s; the pcloud '
                'holds %s' % (moved['OS-EXT-SRV-ATTR:host'],
                              hosts[0]['Name']))
    story.step('the demo member\'s BEST-EFFORT lease moves it away and '
               'takes the host: openstack pcloud lease create --type '
               'BEST-EFFORT', lease)
    leased_refusals(story, cli, made, found)

    def end():
        cli.run('openstack', 'reservation', 'lease', 'delete', name,
                user=demo)
        cli.wait('the host to leave the pcloud',
                 ('openstack', 'pcloud', 'host', 'list', 'demo-pcloud'),
                 lambda hosts: hosts == [], user=demo)
        cli.run('openstack', 'server', 'delete', '--wait', found['server'])
        return 'the host left the pcloud'
    story.step('deleting the lease gives the host back', end)


def added_compute_story(story, sandbox, cli):
    """A compute added to the running cloud is reservable with no command

    of ours run: blazar-manager's Placement mirror finds it.
    """
    demo = common.DEMO_USER
    made = {}

    def slot_lease():
        return ('openstack', 'reservation', 'lease', 'create',
                '--reservation', 'resource_type=virtual:instance,vcpus=1,'
                'memory_mb=%d,disk_gb=1,amount=1,affinity=None'
                % (made['memory'] + 1024), '--start-date', 'now',
                '--end-date', _in_an_hour(), 'demo-big-slot')

    def too_big():
        made['memory'] = max(placement_free(sandbox, 'MEMORY_MB').values())
        return command_refused(cli, slot_lease(), demo, 'Cannot reserve',
                               'MEMORY_MB')
    story.step('a slot 1 GB more than any compute has free is refused',
               too_big)

    def add():
        made['host'] = sandbox.add_compute(
            vcpus=4, memory_mb=made['memory'] + 4096, disk_gb=100)
        return '%s is up with %d MB' % (made['host'], made['memory'] + 4096)
    story.step('the operator adds a compute: nova-compute starts on it '
               'and reports to Placement', add)

    def reservable():
        began = time.monotonic()
        while True:
            try:
                cli.run(*slot_lease(), user=demo)
                break
            except CommandFailed:
                if time.monotonic() - began > 60:
                    raise
                time.sleep(1)
        found = cli.wait('demo-big-slot', (
            'openstack', 'reservation', 'lease', 'show', 'demo-big-slot'),
            lambda lease: lease['status'] in ('ACTIVE', 'ERROR'), user=demo)
        if found['status'] != 'ACTIVE':
            raise AssertionError('demo-big-slot is %s' % found['status'])
        cli.run('openstack', 'reservation', 'lease', 'delete',
                'demo-big-slot', user=demo)
        return ('the slot was admitted %.0f s later (no command run): '
                'only %s can hold it' % (time.monotonic() - began,
                                         made['host']))
    story.step('within the mirror\'s interval the slot is reservable, on '
               'the new compute', reservable)
