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

"""Blazar's physical:host plugin takes no host of ours (pcloud.partition).

Before Blazar's view of ``POST /v1/os-hosts`` (an operator registering a
compute with Blazar's physical:host plugin): a host in one of our host
flavor pools or pclouds, or whose provider holds claims of our
reservations now or later, is refused with 409 saying what holds it and
until when. The other way round, our plugins never use a host Blazar's
plugin holds. So whichever comes second is refused, in either order.
"""

import json
import re

from blazar.api import context as blazar_api_context
from blazar import policy as blazar_policy
import flask
from oslo_log import log as logging

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin.pcloud import partition

LOG = logging.getLogger(__name__)
_HOSTS = re.compile(r'/os-hosts/?$')
_ADD_HOSTS = 'blazar:oshosts:post'


def why_held(name, aggregates):
    """Why the host named ``name`` is ours, or None."""
    if name in partition.our_hosts(aggregates):
        return 'it is in a pcloud or host flavor pool'
    # Usage of instances running outside reservations is no holder:
    # Blazar's plugin refuses hosts that run instances itself.
    ctx = context_mod.get_admin_context()
    holders = host_db.holders(ctx, name, not_holders=db_claims.USAGE_PREFIX)
    if not holders:
        return None
    # An ended instance reservation holds what its instances still use.
    ended = {row['reservation_id'] for row in res_db.list_reservations(
        ctx, state=res_db.ENDING)} & set(holders)
    until = max((end for holder, end in holders.items()
                 if holder not in ended), default=None)
    if until is None:
        return ('instances booted into ended reservation(s) %s of '
                'pcloud-plugin still run there; their capacity is held '
                'until they are deleted' % ', '.join(sorted(ended)))
    return 'reservations of pcloud-plugin hold it %s' % (
        'with no end' if until >= window_mod.FOREVER
        else 'until %s' % until.isoformat())


def _may_add_hosts():
    """Whether Blazar's policy lets the caller add hosts: the guard says

    nothing of any host to one it does not (Blazar answers 403), or
    tenants could probe host names and other projects' reservations.
    """
    try:
        with blazar_api_context.ctx_from_headers(flask.request.headers) as ctx:
            return bool(blazar_policy.enforce(ctx, _ADD_HOSTS, {},
                                              do_raise=False))
    except Exception:
        LOG.exception('Could not check policy %s', _ADD_HOSTS)
        return False


def refusal():
    """Why the request must be refused (409), or None: Blazar goes on."""
    request = flask.request
    if request.method != 'POST' or not _HOSTS.search(request.path):
        return None
    try:
        body = json.loads(request.get_data(cache=True) or b'null')
    except ValueError:
        return None  # Blazar's to answer
    name = body.get('name') if isinstance(body, dict) else None
    if not isinstance(name, str) or not name or not _may_add_hosts():
        return None
    try:
        why = why_held(name, handlers.get_service().nova.aggregates.list())
    except Exception:
        LOG.exception('Could not tell whether host %s is ours', name)
        why = 'pcloud-plugin could not tell whether it holds it'
    if why is None:
        return None
    return ("Host %s cannot be added to Blazar's physical:host plugin: %s."
            % (name, why))
