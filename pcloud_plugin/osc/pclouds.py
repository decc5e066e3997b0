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
"""``openstack pcloud ...``: pclouds, their hosts, tenants and ratios.

A pcloud is named by its id or its name (when no other pcloud of the
caller's view has it).
"""

from osc_lib.cli import format_columns
from osc_lib.command import command

from pcloud_plugin.osc import common

PCLOUD_COLUMNS = ('id', 'name', 'owner', 'hosts')
PCLOUD_HEADERS = ('ID', 'Name', 'Owner', 'Hosts')
HOST_COLUMNS = ('name', 'state', 'flavor_id', 'instances')
HOST_HEADERS = ('Name', 'State', 'Flavor ID', 'Instances')
LIST_FIELDS = ('hosts', 'tenants', 'instances')


LIST_FORMATTERS = dict.fromkeys(LIST_FIELDS, format_columns.ListColumn)


def _show(item):
    return common.show_one(item, LIST_FORMATTERS)


def _row(item, columns):
    return tuple(LIST_FORMATTERS[c](item[c]) if c in LIST_FORMATTERS
                 else item[c] for c in columns)


def _pcloud_arg(parser):
    parser.add_argument('pcloud', metavar='<pcloud>',
                        help='Pcloud (name or ID)')


def _host_args(parser):
    _pcloud_arg(parser)
    parser.add_argument('name', metavar='<name>',
                        help='Name of the host in its pcloud')


class ListPcloud(command.Lister):
    """List pclouds (an admin's view has every project's)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project-id>',
                            help='Only the pclouds of this project')
        return parser

    def take_action(self, parsed_args):
        pclouds = common.client(self).list_pclouds(parsed_args.project)
        return PCLOUD_HEADERS, [_row(p, PCLOUD_COLUMNS) for p in pclouds]


class CreatePcloud(command.ShowOne):
    """Create a pcloud owned by your project."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the new pcloud')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).create_pcloud(parsed_args.name))


class ShowPcloud(command.ShowOne):
    """Show a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        return _show(client.show_pcloud(
            client.find_pcloud(parsed_args.pcloud)))


class DeletePcloud(command.Command):
    """Delete pclouds that hold no host."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('pclouds', metavar='<pcloud>', nargs='+',
                            help='Pcloud to delete (name or ID)')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        for pcloud in parsed_args.pclouds:
            client.delete_pcloud(client.find_pcloud(pcloud))


class ListHost(command.Lister):
    """List the hosts of a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('--state', choices=('enabled', 'disabled'),
                            help='Only the hosts in this state')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        hosts = client.list_hosts(client.find_pcloud(parsed_args.pcloud),
                                  parsed_args.state)
        return HOST_HEADERS, [_row(h, HOST_COLUMNS) for h in hosts]


class ShowHost(command.ShowOne):
    """Show a host of a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_args(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        return _show(client.show_host(client.find_pcloud(parsed_args.pcloud),
                                      parsed_args.name))


class AllocateHost(command.ShowOne):
    """Take a free host of a host flavor into a pcloud (disabled)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_args(parser)
        parser.add_argument('--flavor', metavar='<flavor>', required=True,
                            help='Host flavor of the host to take')
        parser.add_argument('--availability-zone', metavar='<zone>',
                            help='Take a host of this availability zone')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        return _show(client.allocate_host(
            client.find_pcloud(parsed_args.pcloud), parsed_args.name,
            parsed_args.flavor, parsed_args.availability_zone))


class SetHost(command.Command):
    """Enable or disable a host of a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_args(parser)
        state = parser.add_mutually_exclusive_group(required=True)
        state.add_argument('--enable', dest='state', action='store_const',
                           const='enabled', help='Let instances onto it')
        state.add_argument('--disable', dest='state', action='store_const',
                           const='disabled',
                           help='Let no new instance onto it')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.set_host_state(client.find_pcloud(parsed_args.pcloud),
                              parsed_args.name, parsed_args.state)


class ReleaseHost(command.Command):
    """Give a disabled, empty host of a pcloud back to its pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_args(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.release_host(client.find_pcloud(parsed_args.pcloud),
                            parsed_args.name)


class ListTenant(command.Lister):
    """List the projects authorized on a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        tenants = client.list_tenants(client.find_pcloud(parsed_args.pcloud))
        return ('Tenant ID',), [(t,) for t in tenants]


class AddTenant(command.Command):
    """Authorize a project on a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('tenant', metavar='<project-id>',
                            help='Project to authorize')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.add_tenant(client.find_pcloud(parsed_args.pcloud),
                          parsed_args.tenant)


class RemoveTenant(command.Command):
    """Take a project's authorization on a pcloud away."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('tenant', metavar='<project-id>',
                            help='Project to deauthorize')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.remove_tenant(client.find_pcloud(parsed_args.pcloud),
                             parsed_args.tenant)


class ShowAllocationRatio(command.ShowOne):
    """Show the allocation ratios of a pcloud's hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        return _show(client.show_allocation_ratios(
            client.find_pcloud(parsed_args.pcloud)))


class SetAllocationRatio(command.Command):
    """Set the allocation ratios of a pcloud's hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('--cpu', metavar='<ratio>', type=float,
                            help='VCPU allocation ratio')
        parser.add_argument('--ram', metavar='<ratio>', type=float,
                            help='MEMORY_MB allocation ratio')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.set_allocation_ratios(client.find_pcloud(parsed_args.pcloud),
                                     cpu=parsed_args.cpu,
                                     ram=parsed_args.ram)
