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

"""The demo's chapter of pcloud:host leases, told within pcloud_story:

a SCHEDULE lease whose host joins the pcloud at its start and leaves at
its end, and a BEST-EFFORT one that moves another project's server away
first.
"""

import datetime

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox.demo import placement


def scheduled(story, cli, made):
    """A SCHEDULE pcloud:host lease: waits, then its host joins the

    pcloud at the start and leaves at the end, on time.
    """
    demo = common.DEMO_USER
    name = 'demo-scheduled-host'
    # Its window, set as it is booked: the booking and the two refusals
    # after it all come before its start. On a loaded machine they took
    # over a minute (a start a minute ahead came first), so three.
    window = {}

    def hosts():
        return cli.json('openstack', 'pcloud', 'host', 'list', 'demo-pcloud',
                        user=demo)

    def ratio():
        made['own-ratio'] = placement.vcpu_ratio(cli.sandbox, made['host'])
        cli.run('openstack', 'pcloud', 'set', 'demo-pcloud',
                '--cpu-allocation-ratio', str(made['own-ratio'] * 2),
                user=demo)
        return 'the pool host runs at %s on its own' % made['own-ratio']
    story.step('the demo member sets the pcloud\'s VCPU allocation ratio to '
               'twice the host\'s own: openstack pcloud set', ratio)

    def book():
        window['start'] = commands.lease_date(datetime.timedelta(minutes=4))
        window['end'] = commands.lease_date(datetime.timedelta(minutes=5))
        cli.run('openstack', 'pcloud', 'lease', 'create', name, '--pcloud',
                'demo-pcloud', '--host-flavor', 'demo.c16', '--type',
                'SCHEDULE', '--start-date', window['start'], '--end-date',
                window['end'], user=demo)
        lease = cli.json('openstack', 'reservation', 'lease', 'show', name,
                         user=demo)
        if lease['status'] != 'PENDING' or hosts():
            raise AssertionError('before its start: %s, hosts %s'
                                 % (lease['status'], hosts()))
        return 'PENDING from %s to %s, the pcloud still empty' % (
            window['start'], window['end'])
    story.step('the demo member books a host for a minute, three to four '
               'minutes ahead: openstack pcloud lease create --type '
               'SCHEDULE', book)

    story.step('99 hosts then are a capacity conflict (409), not a server '
               'error', lambda: commands.conflict(cli, (
                   'openstack', 'pcloud', 'lease', 'create', name + '-99',
                   '--pcloud', 'demo-pcloud', '--host-flavor', 'demo.c16',
                   '--amount', '99', '--type', 'SCHEDULE', '--start-date',
                   window['start'], '--end-date', window['end']), demo))
    story.step('nor can the booked host be allocated for good now: the '
               'refusal says from when', lambda: commands.conflict(cli, (
                   'openstack', 'pcloud', 'add', 'host', 'demo-pcloud',
                   'rack-b', '--host-flavor', 'demo.c16'), demo,
                   'booked from %s' % window['start'].replace(' ', 'T')))

    def started():
        cli.wait('lease %s to start' % name,
                 ('openstack', 'reservation', 'lease', 'show', name),
                 lambda lease: lease['status'] == 'ACTIVE', user=demo,
                 timeout=360)
        found = hosts()
        if [h['State'] for h in found] != ['enabled']:
            raise AssertionError(found)
        ratio = placement.vcpu_ratio(cli.sandbox, made['host'])
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
        ratio = placement.vcpu_ratio(cli.sandbox, made['host'])
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
               lambda: commands.boot_fails(
                   cli, 'demo-after-lease', 'm1.small', demo, '--hint',
                   'pcloud=%s' % made['pcloud']))

    def left_behind():
        server = cli.json('openstack', 'server', 'show', made['lease-vm'])
        if (server['status'], server['OS-EXT-SRV-ATTR:host']) != (
                'ACTIVE', made['host']):
            raise AssertionError('demo-lease-vm: %s' % server)
        refused = commands.conflict(cli, (
            'openstack', 'pcloud', 'add', 'host', 'demo-pcloud',
            'rack-b', '--host-flavor', 'demo.c16'), demo,
            'an ended lease left')
        cli.run('openstack', 'server', 'delete', '--wait', made['lease-vm'],
                user=demo)
        return 'demo-lease-vm still ACTIVE there; allocation ' + refused
    story.step('a host is handed over only empty: the server outlives the '
               'lease, and no allocation takes its host', left_behind)


def _leased_refusals(story, cli, made, found):
    """While a lease (``found['lease']``) holds the pcloud's one host:

    no boot of another project there, and the lessee can neither take the
    host out of the pcloud nor delete the pcloud (409, naming the lease).
    """
    demo = common.DEMO_USER
    story.step('the alt project, not authorized, cannot boot into the '
               'leased host either',
               lambda: commands.boot_fails(cli, 'alt-leased-vm', 'm1.small',
                                           common.ALT_USER, '--hint',
                                           'pcloud=%s' % made['pcloud']))

    def refused(*args):
        return commands.conflict(cli, ('openstack', 'pcloud') + args, demo,
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


def best_effort(story, cli, made):
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
                commands.in_an_hour(), user=demo)
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
    _leased_refusals(story, cli, made, found)

    def end():
        cli.run('openstack', 'reservation', 'lease', 'delete', name,
                user=demo)
        cli.wait('the host to leave the pcloud',
                 ('openstack', 'pcloud', 'host', 'list', 'demo-pcloud'),
                 lambda hosts: hosts == [], user=demo)
        cli.run('openstack', 'server', 'delete', '--wait', found['server'])
        return 'the host left the pcloud'
    story.step('deleting the lease gives the host back', end)
