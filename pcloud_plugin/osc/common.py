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
"""What the pcloud commands share."""

import logging
import re

from cliff import columns
from keystoneauth1 import exceptions as ks_exc
from osc_lib import exceptions
from osc_lib import utils

LOG = logging.getLogger(__name__)

_DURATION = re.compile(r'^([0-9]+)([mhd]?)$')
_MINUTES = {'': 1, 'm': 1, 'h': 60, 'd': 24 * 60}


def minutes(text):
    """Minutes of a duration: "90", "90m", "4h" or "2d"."""
    found = _DURATION.match(text.strip().lower())
    if not found:
        raise exceptions.CommandError(
            'A duration is minutes, or a number with m, h or d '
            '(e.g. 90m, 4h, 2d), not %r.' % text)
    return int(found.group(1)) * _MINUTES[found.group(2)]


def given(parsed_args, fields):
    """{field: value} of the fields given on the command line."""
    return {field: getattr(parsed_args, field) for field in fields
            if getattr(parsed_args, field) is not None}


def client(cmd):
    """The pcloud API client of a command."""
    return cmd.app.client_manager.pcloud


class LinesColumn(columns.FormattableColumn):
    """A list of sentences: one a line in a table, a list in JSON."""

    def human_readable(self):
        return '\n'.join(self._value)

    def machine_readable(self):
        return list(self._value)


def show_one(item, formatters=None):
    """A ShowOne's (names, values): the item's fields in name order, each

    through its formatter if ``formatters`` names one.
    """
    formatters = formatters or {}
    names = tuple(sorted(item))
    return names, tuple(formatters[n](item[n]) if n in formatters
                        else item[n] for n in names)


def current_project(cmd):
    """The caller's project id, when its login is project-scoped."""
    auth_ref = cmd.app.client_manager.auth_ref
    return auth_ref.project_id if auth_ref else None


def add_project_domain_option(parser):
    parser.add_argument('--project-domain', metavar='<project-domain>',
                        help='Domain the project belongs to (name or ID), '
                        'when its name is not unique')


def project_id(cmd, name_or_id, domain=None):
    """A project's id from its name or id, through the identity client.

    A caller whom Keystone does not let look projects up (403: a member,
    for any project but its own) gets the value back as given. Where the
    Pcloud API takes a project (authorizing one on a pcloud), it
    resolves a name itself, with Keystone's admin rights; without the
    domain, so a name several domains have is refused there, asking for
    the id.
    """
    identity = cmd.app.client_manager.identity
    try:
        query = {}
        if domain:
            query['domain_id'] = utils.find_resource(identity.domains,
                                                     domain).id
        return utils.find_resource(identity.projects, name_or_id,
                                   **query).id
    except ks_exc.Forbidden:
        LOG.debug('Keystone does not let the caller look project %s up: '
                  'sent as given, for the Pcloud API to resolve',
                  name_or_id)
        return name_or_id


def delete_each(names, delete, kinds):
    """Call delete(name) for each name, all of them even when some fail;

    then, if any did, a CommandError "N of M <kinds> failed to delete."
    (each failure logged first, as OpenStackClient's deletes do).
    """
    failed = 0
    for name in names:
        try:
            delete(name)
        except Exception as e:
            failed += 1
            LOG.error('Failed to delete %s: %s', name, e)
    if failed:
        raise exceptions.CommandError('%d of %d %s failed to delete.'
                                      % (failed, len(names), kinds))


class Deprecated(object):
    """Mixin of a command's old name: warns on stderr, in one line, which

    command replaces it (``replacement``), then runs as before. cliff
    leaves commands marked deprecated out of ``openstack help``.
    """

    deprecated = True
    replacement = None

    def run(self, parsed_args):
        LOG.warning('"openstack %s" is deprecated: use "openstack %s".',
                    self.cmd_name, self.replacement)
        return super().run(parsed_args)
