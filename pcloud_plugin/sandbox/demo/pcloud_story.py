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

"""The demo's pcloud chapter: pclouds through the REST API, with

``openstack pcloud ...``: a host flavor pool, a pcloud that takes a host
for good, boots into it, what other projects cannot do; then its leases
of hosts (host_lease_story).
"""

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox.demo import host_lease_story


def tell(story, sandbox, cli, hosts):
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
               'it is refused', lambda: commands.conflict(cli, (
                   'openstack', 'pcloud', 'lease', 'create', 'demo-no-host',
                   '--pcloud', 'demo-pcloud', '--host-flavor', 'demo.c16',
                   '--type', 'IMMEDIATE', '--end-date', commands.in_an_hour()),
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
               lambda: commands.boot_fails(cli, 'alt-pcloud-vm', 'm1.small',
                                           common.ALT_USER, '--hint',
                                           'pcloud=%s' % made['pcloud']))

    def not_found_for_alt():
        try:
            cli.run('openstack', 'pcloud', 'show', made['pcloud'],
                    user=common.ALT_USER)
        except commands.CommandFailed as e:
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
        except commands.CommandFailed as e:
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

    host_lease_story.scheduled(story, cli, made)
    host_lease_story.best_effort(story, cli, made)

    def delete():
        cli.run('openstack', 'pcloud', 'delete', 'demo-pcloud', user=demo)
        pool = cli.json('openstack', 'pcloud', 'host', 'flavor', 'host',
                        'list', 'demo.c16')
        if pool != [{'Host': made['host'], 'Pcloud ID': None}]:
            raise AssertionError(pool)
        return 'pcloud deleted, %s free in the pool' % made['host']
    story.step('the demo member deletes the empty pcloud', delete)
