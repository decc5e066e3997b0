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
"""``openstack pcloud host flavor ...``: host flavors and their pools.

``host flavor host add/remove`` remain as deprecated aliases of ``host
flavor add/remove host``.
"""

from osc_lib.cli import format_columns
from osc_lib.command import command

from pcloud_plugin.osc import common

FLAVOR_COLUMNS = ('id', 'description', 'units', 'free_hosts')
FLAVOR_HEADERS = ('ID', 'Description', 'Units', 'Free Hosts')
POOL_COLUMNS = ('host', 'pcloud_id')
POOL_HEADERS = ('Host', 'Pcloud ID')


def _show(flavor):
    return common.show_one(flavor, {'hosts': format_columns.ListDictColumn})


class ListHostFlavor(command.Lister):
    """List host flavors and how many of their hosts are free."""

    def take_action(self, parsed_args):
        flavors = common.client(self).list_host_flavors()
        return FLAVOR_HEADERS, [tuple(f[c] for c in FLAVOR_COLUMNS)
                                for f in flavors]


class ShowHostFlavor(command.ShowOne):
    """Show a host flavor (and, to admins, the hosts of its pool)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='ID of the host flavor')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).show_host_flavor(parsed_args.flavor))


class CreateHostFlavor(command.ShowOne):
    """Create a host flavor with an empty pool (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='ID of the new host flavor')
        parser.add_argument('--units', metavar='<units>', type=int,
                            required=True,
                            help='Quota units one host of it counts for')
        parser.add_argument('--description', metavar='<description>',
                            help='What its hosts are')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).create_host_flavor(
            parsed_args.flavor, parsed_args.units,
            parsed_args.description))


class DeleteHostFlavor(command.Command):
    """Delete host flavors whose pools are empty (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavors', metavar='<flavor>', nargs='+',
                            help='ID of a host flavor to delete')
        return parser

    def take_action(self, parsed_args):
        common.delete_each(parsed_args.flavors,
                           common.client(self).delete_host_flavor,
                           'host flavors')


class ListPoolHost(command.Lister):
    """List the compute hosts of a host flavor's pool (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='ID of the host flavor')
        return parser

    def take_action(self, parsed_args):
        hosts = common.client(self).list_pool_hosts(parsed_args.flavor)
        return POOL_HEADERS, [tuple(h[c] for c in POOL_COLUMNS)
                              for h in hosts]


class AddFlavorHost(command.ShowOne):
    """Put an empty, disabled compute host in a host flavor's pool."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='ID of the host flavor')
        parser.add_argument('host', metavar='<host>',
                            help='Compute host (its nova-compute service '
                            'host name)')
        return parser

    def take_action(self, parsed_args):
        host = common.client(self).add_pool_host(parsed_args.flavor,
                                                 parsed_args.host)
        return POOL_COLUMNS, tuple(host[c] for c in POOL_COLUMNS)


class RemoveFlavorHost(command.Command):
    """Take a compute host no pcloud holds out of its pool (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='ID of the host flavor')
        parser.add_argument('host', metavar='<host>', help='Compute host')
        return parser

    def take_action(self, parsed_args):
        common.client(self).remove_pool_host(parsed_args.flavor,
                                             parsed_args.host)


class AddPoolHost(common.Deprecated, AddFlavorHost):
    """Pool a host (deprecated: pcloud host flavor add host)."""

    replacement = 'pcloud host flavor add host'


class RemovePoolHost(common.Deprecated, RemoveFlavorHost):
    """Unpool a host (deprecated: pcloud host flavor remove host)."""

    replacement = 'pcloud host flavor remove host'
