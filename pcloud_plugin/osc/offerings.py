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
"""openstack pcloud offering list / allocation list."""

from osc_lib.command import command
from osc_lib import exceptions

from pcloud_plugin.osc import common


class ListOffering(command.Lister):
    """When could a reservation be had: the earliest windows, from now or

    --start on, in which a lease of these terms would be admitted. Whole
    hosts with --host-flavor, else instance slots of --vcpus,
    --memory-mb and --disk-gb.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--amount', metavar='<n>', type=int, default=1,
                            help='Hosts or slots (default: 1)')
        parser.add_argument('--duration', metavar='<duration>',
                            required=True, type=common.minutes,
                            help='Length of the window: minutes, or e.g. '
                            '90m, 4h, 2d')
        parser.add_argument('--start', metavar='<date>',
                            help='Not before "YYYY-MM-DD HH:MM" (UTC; '
                            'default: now)')
        parser.add_argument('--count', metavar='<k>', type=int,
                            help='How many windows (default 5, at most '
                            '20)')
        hosts = parser.add_argument_group('whole hosts')
        hosts.add_argument('--host-flavor', metavar='<flavor>',
                           help='Host flavor ID')
        hosts.add_argument('--availability-zone', metavar='<zone>',
                           help='Only hosts of this availability zone')
        hosts.add_argument('--required-traits', metavar='<traits>',
                           help='Host capabilities in Placement\'s syntax')
        slots = parser.add_argument_group('instance slots')
        slots.add_argument('--vcpus', metavar='<n>', type=int)
        slots.add_argument('--memory-mb', metavar='<mb>', type=int)
        slots.add_argument('--disk-gb', metavar='<gb>', type=int, default=0)
        slots.add_argument('--affinity', choices=('true', 'false', 'none'),
                           help='All on one host, each on its own, or '
                           'either (default)')
        slots.add_argument('--resource-properties', metavar='<json>',
                           help='Traits, as a virtual:instance '
                           'reservation takes them')
        return parser

    def take_action(self, parsed_args):
        params = common.given(parsed_args, ('amount', 'duration', 'start',
                                            'count'))
        if parsed_args.host_flavor is not None:
            kind = 'hosts'
            params.update(common.given(parsed_args, (
                'host_flavor', 'availability_zone', 'required_traits')))
        elif parsed_args.vcpus is None or parsed_args.memory_mb is None:
            raise exceptions.CommandError(
                'Give --host-flavor (whole hosts), or --vcpus and '
                '--memory-mb (instance slots).')
        else:
            kind = 'instances'
            params.update(common.given(parsed_args, (
                'vcpus', 'memory_mb', 'disk_gb', 'affinity',
                'resource_properties')))
        found = common.client(self).list_offerings(kind, params)
        return (('Start', 'End', 'Amount'),
                [(w['start'], w['end'], w['amount'])
                 for w in found['offerings']])


class ListAllocation(command.Lister):
    """Which whole-host leases, instance reservations and pclouds hold

    each host in a window (cloud admins).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--start', metavar='<date>',
                            help='From "YYYY-MM-DD HH:MM" (UTC; default: '
                            'now)')
        parser.add_argument('--end', metavar='<date>',
                            help='Until "YYYY-MM-DD HH:MM" (UTC; default: '
                            'the start: what holds them then)')
        parser.add_argument('--host', metavar='<host>',
                            help='Only this host (name or provider UUID)')
        return parser

    def take_action(self, parsed_args):
        found = common.client(self).list_allocations(
            common.given(parsed_args, ('start', 'end', 'host')))
        rows = [(host['host'], held['type'], held['id'],
                 held.get('lease_id'), held['project_id'], held['start'],
                 held['end'])
                for host in found for held in host['allocations']]
        return (('Host', 'Type', 'ID', 'Lease ID', 'Project ID', 'Start',
                 'End'), rows)
