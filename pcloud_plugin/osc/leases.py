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

"""openstack pcloud lease create: a whole-host lease into a pcloud.

Blazar's own ``openstack reservation lease create --reservation`` cannot
send a string value for a resource type it does not know (it looks each
key up in its table of known types), so pcloud:host leases are made here;
Blazar's commands show, update and delete them as any other lease.
"""

from osc_lib.command import command

from pcloud_plugin.osc import common

LEASE_TYPES = ('IMMEDIATE', 'SCHEDULE', 'BEST-EFFORT')


class CreateHostLease(command.ShowOne):
    """Lease whole hosts of a host flavor into a pcloud for a window."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Lease name')
        parser.add_argument('--pcloud', metavar='<pcloud>', required=True,
                            help='Pcloud the hosts join (name or ID)')
        parser.add_argument('--host-flavor', metavar='<flavor>',
                            required=True, help='Host flavor ID')
        parser.add_argument('--amount', metavar='<n>', type=int, default=1,
                            help='Number of hosts (default: 1)')
        parser.add_argument('--type', dest='lease_type', choices=LEASE_TYPES,
                            default='SCHEDULE',
                            help='IMMEDIATE: now or refused; SCHEDULE (the '
                            'default): at the start date; BEST-EFFORT: as '
                            'soon as hosts are free, until --timeout')
        parser.add_argument('--start-date', metavar='<date>', default='now',
                            help='"YYYY-MM-DD HH:MM" (UTC) or "now" '
                            '(default)')
        parser.add_argument('--end-date', metavar='<date>', required=True,
                            help='"YYYY-MM-DD HH:MM" (UTC)')
        parser.add_argument('--availability-zone', metavar='<zone>',
                            help='Only hosts of this availability zone')
        parser.add_argument('--required-traits', metavar='<traits>',
                            help='Host capabilities in Placement\'s syntax, '
                            'e.g. HW_CPU_X86_AVX2,!CUSTOM_SLOW')
        parser.add_argument('--timeout', metavar='<minutes>', type=int,
                            help='BEST-EFFORT: give up this many minutes '
                            'after the start date')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        reservation = {
            'pcloud_id': client.find_pcloud(parsed_args.pcloud),
            'host_flavor': parsed_args.host_flavor,
            'amount': parsed_args.amount,
            'lease_type': parsed_args.lease_type}
        for field in ('availability_zone', 'required_traits', 'timeout'):
            value = getattr(parsed_args, field)
            if value is not None:
                reservation[field] = value
        lease = client.create_host_lease(
            parsed_args.name, parsed_args.start_date, parsed_args.end_date,
            reservation)
        shown = {k: lease[k] for k in ('id', 'name', 'status', 'start_date',
                                       'end_date') if k in lease}
        shown['reservations'] = [r['id'] for r in lease.get(
            'reservations', ())]
        return common.show_one(shown)
