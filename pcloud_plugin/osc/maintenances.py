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
"""``openstack pcloud maintenance ...``: maintenance windows (admin)."""

from osc_lib.cli import format_columns
from osc_lib.command import command

from pcloud_plugin.osc import common

COLUMNS = ('id', 'state', 'hosts', 'start_date', 'end_date', 'reason')
HEADERS = ('ID', 'State', 'Hosts', 'Start Date', 'End Date', 'Reason')


def _show(maintenance):
    return common.show_one(maintenance, {
        'hosts': format_columns.ListColumn,
        'moved': format_columns.ListColumn,
        'unmovable': format_columns.ListDictColumn})


class ListMaintenance(command.Lister):
    """List maintenance windows."""

    def take_action(self, parsed_args):
        found = common.client(self).list_maintenances()
        return HEADERS, [tuple(format_columns.ListColumn(m[c])
                               if c == 'hosts' else m[c] for c in COLUMNS)
                         for m in found]


class ShowMaintenance(command.ShowOne):
    """Show a maintenance window, what it moved and what it could not."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('maintenance', metavar='<maintenance>',
                            help='ID of the maintenance')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).show_maintenance(
            parsed_args.maintenance))


class CreateMaintenance(command.ShowOne):
    """Book a maintenance window on compute hosts: the reservations that

    hold them then move to other hosts now; refused, nothing moved, if
    one cannot (unless --accept-unmovable).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument('--host', metavar='<host>', dest='hosts',
                           action='append',
                           help='Compute host (its hypervisor name); '
                           'repeat for several')
        which.add_argument('--host-flavor', metavar='<host-flavor>',
                           help='Every host of this host flavor\'s pool')
        parser.add_argument('--start-date', metavar='<date>',
                            required=True,
                            help='"YYYY-MM-DD HH:MM" (UTC), or now')
        parser.add_argument('--end-date', metavar='<date>', required=True,
                            help='"YYYY-MM-DD HH:MM" (UTC)')
        parser.add_argument('--reason', metavar='<reason>',
                            help='Why (Nova shows it on the disabled '
                            'services)')
        parser.add_argument('--accept-unmovable', action='store_true',
                            help='Book it even if some reservations '
                            'cannot move (they are listed)')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).create_maintenance(
            parsed_args.hosts, parsed_args.start_date,
            parsed_args.end_date, reason=parsed_args.reason,
            accept_unmovable=parsed_args.accept_unmovable,
            host_flavor=parsed_args.host_flavor))


class DeleteMaintenance(command.Command):
    """Cancel or end maintenance windows: their hosts are given back."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('maintenances', metavar='<maintenance>',
                            nargs='+', help='ID of a maintenance')
        return parser

    def take_action(self, parsed_args):
        common.delete_each(parsed_args.maintenances,
                           common.client(self).delete_maintenance,
                           'maintenances')
