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

"""openstack pcloud lease create / set / show / list / hints: whole-host

leases into a pcloud, any lease's state as seeds/001 names it, and what
a lease may ask for; openstack pcloud slot lease create: instance slots
(virtual:instance), at given dates or, with --duration, at the earliest
window that fits, which Blazar's own ``lease create`` cannot ask for (it
sends no ``duration``).

Blazar's own ``openstack reservation lease create --reservation`` and
``lease set --reservation`` cannot send a string value for a resource
type they do not know (they look each key up in a table of known types,
and take an unknown one for part of the previous value), so pcloud:host
leases are made and changed here, through Blazar's lease API; Blazar's
commands show and delete them as any other lease. Blazar shows a lease
ACTIVE while a BEST-EFFORT reservation still waits (IN-PROGRESS) or after
it gave up (TIMEDOUT), and none of a whole-host reservation's terms:
``pcloud lease show`` and ``list`` say both, from the Pcloud API.
"""

import json

from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions
from oslo_utils import strutils

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.osc import common

LEASE_TYPES = ('IMMEDIATE', 'SCHEDULE', 'BEST-EFFORT')
# Optional fields of a pcloud:host reservation, as options of both
# commands (_host_choice_args).
_HOST_CHOICES = ('availability_zone', 'required_traits', 'timeout')


def _host_choice_args(parser, clearable=False):
    """--availability-zone, --required-traits and --timeout; with

    ``clearable``, --no-availability-zone and --no-required-traits too.
    """
    zone = parser.add_mutually_exclusive_group() if clearable else parser
    zone.add_argument('--availability-zone', metavar='<zone>',
                      help='Only hosts of this availability zone')
    traits = parser.add_mutually_exclusive_group() if clearable else parser
    traits.add_argument('--required-traits', metavar='<traits>',
                        help='Host capabilities in Placement\'s syntax, '
                        'e.g. HW_CPU_X86_AVX2,!CUSTOM_SLOW')
    if clearable:
        zone.add_argument('--no-availability-zone', action='store_true',
                          help='Hosts of any availability zone')
        traits.add_argument('--no-required-traits', action='store_true',
                            help='No required capability')
    parser.add_argument('--timeout', metavar='<minutes>', type=int,
                        help='BEST-EFFORT: give up this many minutes '
                        'after the start date')


def _window_args(parser, flexible):
    """--start-date, --end-date and --duration of a lease to create;

    ``flexible`` begins --duration's help (what it makes).
    """
    parser.add_argument('--start-date', metavar='<date>', default='now',
                        help='"YYYY-MM-DD HH:MM" (UTC) or "now" '
                        '(default); with --duration, the earliest start')
    parser.add_argument('--end-date', metavar='<date>',
                        help='"YYYY-MM-DD HH:MM" (UTC); with --duration, '
                        'the latest end (optional there)')
    parser.add_argument('--duration', metavar='<duration>',
                        type=common.minutes,
                        help='%s: the earliest window this long (minutes, '
                        'or e.g. 90m, 4h, 2d) between the dates that fits, '
                        'booked at once; the lease shows the dates chosen'
                        % flexible)


def _check_window(parsed_args):
    """A fixed lease (no --duration) needs its --end-date."""
    if parsed_args.duration is None and parsed_args.end_date is None:
        raise exceptions.CommandError(
            '--end-date is required (or --duration, for a flexible '
            'lease)')


def _create_lease(client, parsed_args, reservation):
    """Create the lease of the one reservation (resource_type included)

    for parsed_args' window: its dates, or with --duration the earliest
    window that long from --start-date, ending by --end-date (if given).
    Answers the ShowOne of the lease made: its id, name, status, dates
    and reservations' ids.
    """
    if parsed_args.duration is None:
        lease = client.create_lease(
            parsed_args.name, parsed_args.start_date, parsed_args.end_date,
            [reservation])
    else:
        lease = client.create_flexible_lease(
            parsed_args.name, parsed_args.duration, parsed_args.start_date,
            parsed_args.end_date, [reservation])
    shown = {k: lease[k] for k in ('id', 'name', 'status', 'start_date',
                                   'end_date') if k in lease}
    shown['reservations'] = [r['id'] for r in lease.get(
        'reservations', ())]
    return common.show_one(shown)


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
        _window_args(parser, 'A flexible SCHEDULE lease')
        _host_choice_args(parser)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        _check_window(parsed_args)
        reservation = {
            'resource_type': pcloud_client.HOST_RESOURCE_TYPE,
            'pcloud_id': client.find_pcloud(parsed_args.pcloud),
            'host_flavor': parsed_args.host_flavor,
            'amount': parsed_args.amount,
            'lease_type': parsed_args.lease_type}
        reservation.update(common.given(parsed_args, _HOST_CHOICES))
        return _create_lease(client, parsed_args, reservation)


def _affinity(text):
    """--affinity: True, False or None, as the virtual:instance plugin

    reads it (true/false or any boolean string, none).
    """
    value = text.strip()
    if value.lower() in ('none', 'null', ''):
        return None
    if strutils.is_valid_boolstr(value):
        return strutils.bool_from_string(value)
    raise exceptions.CommandError(
        '--affinity is true (one host), false (distinct hosts) or none '
        '(any), not %r.' % text)


def _resource_properties(text):
    """--resource-properties: Blazar's JSON expression, sent as given

    ('' for none); what is not JSON is refused here.
    """
    if not text.strip():
        return ''
    try:
        json.loads(text)
    except ValueError as e:
        raise exceptions.CommandError(
            '--resource-properties is a JSON expression, e.g. \'["=", '
            '"$HW_CPU_X86_AVX2", "true"]\', not %r (%s).' % (text, e))
    return text


class CreateSlotLease(command.ShowOne):
    """Reserve instance slots (virtual:instance) for a window, or for the

    earliest window of --duration that fits.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Lease name')
        for option, what in (('--vcpus', 'VCPUs'),
                             ('--memory-mb', 'Memory (MiB)'),
                             ('--disk-gb', 'Root disk (GiB)')):
            parser.add_argument(option, metavar='<n>', type=int,
                                required=True, help='%s of each slot' % what)
        parser.add_argument('--amount', metavar='<n>', type=int,
                            required=True, help='Number of slots')
        parser.add_argument('--affinity', metavar='<true|false|none>',
                            type=_affinity, default=None,
                            help='true: all slots on one host; false: each '
                            'on a distinct host; none (the default): '
                            'anywhere')
        parser.add_argument('--resource-properties', metavar='<json>',
                            type=_resource_properties, default='',
                            help='Hosts the slots may go to, in Blazar\'s '
                            'syntax, e.g. \'["=", "$CUSTOM_SLOW", '
                            '"false"]\' (default: any)')
        parser.add_argument('--availability-zone', metavar='<zone>',
                            help='Only hosts of this availability zone')
        _window_args(parser, 'A flexible lease')
        return parser

    def take_action(self, parsed_args):
        _check_window(parsed_args)
        reservation = {
            'resource_type': pcloud_client.INSTANCE_RESOURCE_TYPE,
            'amount': parsed_args.amount,
            'vcpus': parsed_args.vcpus,
            'memory_mb': parsed_args.memory_mb,
            'disk_gb': parsed_args.disk_gb,
            'affinity': parsed_args.affinity,
            'resource_properties': parsed_args.resource_properties}
        reservation.update(common.given(parsed_args, ('availability_zone',)))
        return _create_lease(common.client(self), parsed_args, reservation)


class ShowLease(command.ShowOne):
    """Show a lease's state as seeds/001 names it (INACTIVE, IN-PROGRESS,

    ACTIVE, TIMEDOUT, ENDED) and the terms of its pcloud:host and
    virtual:instance reservations.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='Lease (name or ID)')
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        lease_id = client.find_lease(parsed_args.lease)
        shown = client.show_lease_state(lease_id)
        blazars = client.show_lease(lease_id)
        shown.update(name=blazars['name'], blazar_status=blazars['status'])
        # Registered with the lease as they boot into it (seeds/001).
        shown['instances'] = [
            stay['id'] for r in shown.get('reservations', ())
            for stay in r.get('instances', ()) if not stay['left_at']]
        return common.show_one(shown, {
            'reservations': format_columns.ListDictColumn})


class ListLeases(command.Lister):
    """List your project's leases with pcloud:host or virtual:instance

    reservations, with their states as seeds/001 names them.
    """

    columns = ('id', 'name', 'state', 'start_date', 'end_date')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', metavar='<project-id>',
                            help="Another project's leases (admin)")
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        names = {lease['id']: lease['name']
                 for lease in client.list_leases()}
        rows = [(lease['id'], names.get(lease['id'], ''), lease['state'],
                 lease['start_date'], lease['end_date'])
                for lease in client.list_lease_states(parsed_args.project)]
        return [c.replace('_', ' ').title() for c in self.columns], rows


class ShowLeaseHints(command.ShowOne):
    """Show what a lease may ask for (seeds/001's hints): each

    reservation type's terms, the host flavors, availability zones,
    pclouds and traits on offer, and the limits your project is held to.
    """

    def take_action(self, parsed_args):
        found = common.client(self).show_lease_hints()
        return common.show_one(found, dict.fromkeys(
            (k for k, v in found.items() if isinstance(v, dict)),
            format_columns.DictColumn))


class SetHostLease(command.Command):
    """Change a whole-host lease: its name, window, or what it reserves.

    Before the lease starts anything may change (its hosts are picked
    again); once it is active only its end may move. The API refuses
    other changes, saying why.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='Lease (name or ID)')
        parser.add_argument('--name', metavar='<name>', help='New name')
        parser.add_argument('--start-date', metavar='<date>',
                            help='New start: "YYYY-MM-DD HH:MM" (UTC) or '
                            '"now"')
        parser.add_argument('--end-date', metavar='<date>',
                            help='New end: "YYYY-MM-DD HH:MM" (UTC)')
        parser.add_argument('--reservation', metavar='<reservation-id>',
                            help='The pcloud:host reservation to change '
                            '(default: the lease\'s only one)')
        parser.add_argument('--pcloud', metavar='<pcloud>',
                            help='Pcloud the hosts join (name or ID)')
        parser.add_argument('--host-flavor', metavar='<flavor>',
                            help='Host flavor ID')
        parser.add_argument('--amount', metavar='<n>', type=int,
                            help='Number of hosts')
        parser.add_argument('--type', dest='lease_type', choices=LEASE_TYPES,
                            help='IMMEDIATE, SCHEDULE or BEST-EFFORT')
        _host_choice_args(parser, clearable=True)
        return parser

    def take_action(self, parsed_args):
        client = common.client(self)
        lease_id = client.find_lease(parsed_args.lease)
        body = common.given(parsed_args, ('name', 'start_date', 'end_date'))
        changes = self._reservation_changes(client, parsed_args)
        if changes:
            changes['id'] = _host_reservation(client.show_lease(lease_id),
                                              parsed_args.reservation)
            body['reservations'] = [changes]
        if body:
            client.update_lease(lease_id, body)

    @staticmethod
    def _reservation_changes(client, parsed_args):
        """The pcloud:host fields to change, each with its own type."""
        changes = {}
        if parsed_args.pcloud is not None:
            changes['pcloud_id'] = client.find_pcloud(parsed_args.pcloud)
        changes.update(common.given(parsed_args, (
            'host_flavor', 'amount', 'lease_type') + _HOST_CHOICES))
        if parsed_args.no_availability_zone:
            changes['availability_zone'] = None
        if parsed_args.no_required_traits:
            changes['required_traits'] = None
        return changes


def _host_reservation(lease, wanted=None):
    """The id of the lease's pcloud:host reservation to change: ``wanted``

    if it is one, else its only one.
    """
    ids = [r['id'] for r in lease.get('reservations', ())
           if r.get('resource_type') == pcloud_client.HOST_RESOURCE_TYPE]
    if wanted is not None:
        if wanted not in ids:
            raise exceptions.CommandError(
                'Lease %s has no pcloud:host reservation %s.'
                % (lease['id'], wanted))
        return wanted
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise exceptions.CommandError(
            'Lease %s has no pcloud:host reservation.' % lease['id'])
    raise exceptions.CommandError(
        'Lease %s has %d pcloud:host reservations: give --reservation.'
        % (lease['id'], len(ids)))
