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
"""``openstack pcloud ...``: pclouds, their hosts, projects and ratios.

A pcloud is named by its id or its name (when no other pcloud of the
caller's view has it); a project by its id or its name: looked up here
when Keystone lets the caller, else sent as given for the Pcloud API to
resolve (what it stores is always the id). The caller's view includes
the pclouds of other projects its project is authorized on (``own``
false: without their hosts). The commands' earlier names (tenant,
allocate/release, allocation ratio) remain as deprecated aliases.
"""

from osc_lib.cli import format_columns
from osc_lib.command import command

from pcloud_plugin.osc import common

PCLOUD_COLUMNS = ('id', 'name', 'owner', 'hosts')
PCLOUD_HEADERS = ('ID', 'Name', 'Owner', 'Hosts')
PCLOUD_LONG_COLUMNS = ('tenants', 'cpu_allocation_ratio',
                       'ram_allocation_ratio')
PCLOUD_LONG_HEADERS = ('Projects', 'CPU Allocation Ratio',
                       'RAM Allocation Ratio')
HOST_COLUMNS = ('name', 'state', 'flavor_id', 'instances')
HOST_HEADERS = ('Name', 'State', 'Flavor ID', 'Instances')
LIST_FIELDS = ('hosts', 'tenants', 'instances')
# The ratios of pcloud set/unset: <name>_allocation_ratio, resource class.
RATIOS = (('cpu', 'VCPU'), ('ram', 'MEMORY_MB'))


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
    parser.add_argument('name', metavar='<host>',
                        help='Name of the host in its pcloud')


def _long_arg(parser):
    parser.add_argument('--long', action='store_true', default=False,
                        help='List additional fields in output')


class ListPcloud(command.Lister):
    """List pclouds (by default, your project's and those it may use)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project>',
                            help='Only the pclouds this project owns or is '
                            'authorized on (name or ID; admin)')
        common.add_project_domain_option(parser)
        parser.add_argument('--all-projects', action='store_true',
                            default=False,
                            help='The pclouds of every project (admin)')
        _long_arg(parser)
        return parser

    def take_action(self, parsed_args):
        if parsed_args.project:
            project = common.project_id(self, parsed_args.project,
                                        parsed_args.project_domain)
        elif parsed_args.all_projects:
            project = None
        else:
            # Yours: the API shows an admin every project's unless asked
            # for one.
            project = common.current_project(self)
        pclouds = common.client(self).list_pclouds(project)
        columns, headers = PCLOUD_COLUMNS, PCLOUD_HEADERS
        if parsed_args.long:
            columns += PCLOUD_LONG_COLUMNS
            headers += PCLOUD_LONG_HEADERS
        return headers, [_row(p, columns) for p in pclouds]


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
                            help='Pcloud(s) to delete (name or ID)')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        common.delete_each(
            parsed_args.pclouds,
            lambda pcloud: client.delete_pcloud(client.find_pcloud(pcloud)),
            'pclouds')


class SetPcloud(command.Command):
    """Set the allocation ratios of a pcloud's hosts."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        for name, resource_class in RATIOS:
            parser.add_argument(
                '--%s-allocation-ratio' % name, metavar='<ratio>',
                type=float, help='%s allocation ratio of every host of the '
                'pcloud, in Placement' % resource_class)
        return parser

    def take_action(self, parsed_args):
        ratios = {name: getattr(parsed_args, '%s_allocation_ratio' % name)
                  for name, _rc in RATIOS}
        if all(value is None for value in ratios.values()):
            return
        client = common.client(self)
        client.set_allocation_ratios(client.find_pcloud(parsed_args.pcloud),
                                     **ratios)


class UnsetPcloud(command.Command):
    """Give a pcloud's hosts their own allocation ratios back."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        for name, resource_class in RATIOS:
            parser.add_argument(
                '--%s-allocation-ratio' % name, action='store_true',
                default=False, help='Each host gets its own %s allocation '
                'ratio back' % resource_class)
        return parser

    def take_action(self, parsed_args):
        unset = [name for name, _rc in RATIOS
                 if getattr(parsed_args, '%s_allocation_ratio' % name)]
        if not unset:
            return
        client = common.client(self)
        client.set_allocation_ratios(client.find_pcloud(parsed_args.pcloud),
                                     unset=unset)


class ListHost(command.Lister):
    """List the hosts of a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('--state', choices=('enabled', 'disabled'),
                            help='Only the hosts in this state')
        _long_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        hosts = client.list_hosts(client.find_pcloud(parsed_args.pcloud),
                                  parsed_args.state)
        rows = [_row(h, HOST_COLUMNS) for h in hosts]
        if not parsed_args.long:
            return HOST_HEADERS, rows
        # What each host counts for in the project's units quota.
        units = {f['id']: f['units'] for f in client.list_host_flavors()}
        return HOST_HEADERS + ('Units',), [
            row + (units.get(h['flavor_id']),) for row, h in zip(rows, hosts)]


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


class AddHost(command.ShowOne):
    """Take a free host of a host flavor into a pcloud (disabled)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        parser.add_argument('name', metavar='<host>',
                            help='Name the host takes in the pcloud')
        parser.add_argument('--host-flavor', '--flavor', dest='flavor',
                            metavar='<flavor>', required=True,
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


class RemoveHost(command.Command):
    """Give a disabled, empty host of a pcloud back to its pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _host_args(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        client.release_host(client.find_pcloud(parsed_args.pcloud),
                            parsed_args.name)


class ListProject(command.Lister):
    """List the projects authorized on a pcloud."""

    headers = ('ID',)

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        tenants = client.list_tenants(client.find_pcloud(parsed_args.pcloud))
        return self.headers, [(t,) for t in tenants]


class _ProjectCommand(command.Command):
    """A command on one project of a pcloud."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        self._project_args(parser)
        return parser

    def _project_args(self, parser):
        parser.add_argument('project', metavar='<project>',
                            help='Project (name or ID)')
        common.add_project_domain_option(parser)

    def _project(self, parsed_args):
        return common.project_id(self, parsed_args.project,
                                 parsed_args.project_domain)


class AddProject(_ProjectCommand):
    """Authorize a project on a pcloud."""

    def take_action(self, parsed_args):
        client = common.client(self)
        client.add_tenant(client.find_pcloud(parsed_args.pcloud),
                          self._project(parsed_args))


class RemoveProject(_ProjectCommand):
    """Take a project's authorization on a pcloud away."""

    def take_action(self, parsed_args):
        client = common.client(self)
        client.remove_tenant(client.find_pcloud(parsed_args.pcloud),
                             self._project(parsed_args))


# Deprecated names: each as it was, with a warning naming its successor.

class AllocateHost(common.Deprecated, AddHost):
    """Take a free host into a pcloud (deprecated: pcloud add host)."""

    replacement = 'pcloud add host'


class ReleaseHost(common.Deprecated, RemoveHost):
    """Give a host back to its pool (deprecated: pcloud remove host)."""

    replacement = 'pcloud remove host'


class ListTenant(common.Deprecated, ListProject):
    """List a pcloud's projects (deprecated: pcloud project list)."""

    replacement = 'pcloud project list'
    headers = ('Tenant ID',)


class _ProjectIdOnly(object):
    """As the tenant commands were: the project as given, not looked up

    here (the Pcloud API resolves a name).
    """

    def _project_args(self, parser):
        parser.add_argument('project', metavar='<project-id>',
                            help='Project ID')

    def _project(self, parsed_args):
        return parsed_args.project


class AddTenant(common.Deprecated, _ProjectIdOnly, AddProject):
    """Authorize a project (deprecated: pcloud add project)."""

    replacement = 'pcloud add project'


class RemoveTenant(common.Deprecated, _ProjectIdOnly, RemoveProject):
    """Deauthorize a project (deprecated: pcloud remove project)."""

    replacement = 'pcloud remove project'


class CheckBoot(command.ShowOne):
    """Whether a boot of your project has a host, and why not.

    Nova answers every boot no host takes with "No valid host was
    found"; this asks what its scheduler would, for the same hint and
    flavor: which hosts the PcloudFilter, Nova's compute services and
    Placement each leave out, and why.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--flavor', metavar='<flavor>',
                            help='Flavor of the boot (name or ID; '
                            'default: room is not checked)')
        parser.add_argument('--hint', metavar='<key=value>',
                            action='append', default=[],
                            help='Scheduler hint of the boot, as '
                            '"openstack server create" takes it: '
                            'pcloud=<pcloud-id> (others are ignored)')
        return parser

    def take_action(self, parsed_args):
        params = {}
        for hint in parsed_args.hint:
            key, _sep, value = hint.partition('=')
            if key == 'pcloud':
                params.setdefault('pcloud', []).append(value)
        if parsed_args.flavor:
            params['flavor'] = parsed_args.flavor
        found = common.client(self).check_boot(params)
        refused = ['%d host(s): %s' % (r['hosts'], r['message'])
                   if r['hosts'] else r['message']
                   for r in found['refused']]
        return common.show_one(dict(found, refused=refused),
                               {'refused': common.LinesColumn})


class ShowAllocationRatio(common.Deprecated, command.ShowOne):
    """Show a pcloud's allocation ratios (deprecated: pcloud show)."""

    replacement = 'pcloud show'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _pcloud_arg(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        return _show(client.show_allocation_ratios(
            client.find_pcloud(parsed_args.pcloud)))


class SetAllocationRatio(common.Deprecated, command.Command):
    """Set a pcloud's allocation ratios (deprecated: pcloud set)."""

    replacement = 'pcloud set'

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
