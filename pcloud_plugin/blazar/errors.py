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
"""Refusals our plugins raise in blazar-manager, as blazar-api answers them.

blazar-api turns an exception that comes back from the manager over RPC
into an HTTP status by looking its class *name* up in Blazar's own
exception modules; a name it does not find is a 500 with the message
hidden, and Blazar's NotEnoughHostsAvailable has no code (500 too).

CapacityRefused is a NotEnoughHostsAvailable (the manager treats it as
one) with code 409; QuotaRefused, over a project's units quota, is 403;
CloudUnreachable, when Nova or Placement cannot be reached, is 503. A
refused *update* is raised as CantUpdateParameter (409) instead:
Blazar's update_lease restores the lease's status only
for the exact exception types it lists, and puts it in ERROR for any
other, subclasses included. Importing this module makes its name known to
blazar.manager.exceptions; blazar-api imports it with our API extension
(stevedore imports every ``blazar.api.v1.extensions`` entry point before
choosing the enabled ones, so whichever of our plugins is enabled).
"""

import contextlib

from blazar import exceptions as blazar_exc
from blazar.manager import exceptions as mgr_exc
from oslo_config import cfg
from oslo_log import log as logging

from pcloud_plugin import clients
from pcloud_plugin import exception

CONF = cfg.CONF
LOG = logging.getLogger(__name__)
UNREACHABLE = 'Nova or Placement cannot be reached; try again later.'
# Raised when they cannot be: by keystoneauth, or by the Pcloud service
# (which our plugins also call) that wraps it.
UNREACHABLE_ERRORS = (clients.NoConnection, exception.NovaError,
                      exception.PlacementUnreachable)


class CapacityRefused(mgr_exc.NotEnoughHostsAvailable):
    """exception.CapacityRefused as Blazar answers it: 409, with the

    message saying what was short.
    """
    code = 409


class PoolTooSmall(CapacityRefused):
    """exception.PoolTooSmall as Blazar answers it."""


class QuotaRefused(blazar_exc.BlazarException):
    """The lease would take the project over its units quota."""
    msg_fmt = '%(reason)s'
    code = 403


class CloudUnreachable(blazar_exc.BlazarException):
    """Nova or Placement did not answer: nothing was reserved."""
    msg_fmt = UNREACHABLE
    code = 503


# blazar-api looks remote exceptions up by name here (see above).
for _refusal in (CapacityRefused, PoolTooSmall, QuotaRefused,
                 CloudUnreachable):
    if not hasattr(mgr_exc, _refusal.__name__):
        setattr(mgr_exc, _refusal.__name__, _refusal)


def _blazar_refusal(refusal):
    """The Blazar exception for the domain's exception.CapacityRefused."""
    kind = (PoolTooSmall if isinstance(refusal, exception.PoolTooSmall)
            else CapacityRefused)
    return kind(refusal.message)


@contextlib.contextmanager
def _bad_terms():
    """Around a call into the reservation domain: its refusals of terms

    as Blazar's own (400, the same message).
    """
    try:
        yield
    except exception.MissingTerm as e:
        raise mgr_exc.MissingParameter(param=e.kwargs['param']) from e
    except exception.InvalidTerm as e:
        raise mgr_exc.MalformedParameter(param=e.kwargs['param']) from e
    except exception.Invalid as e:
        # A term the ledger cannot hold (a window that ends before it
        # starts...): the request's fault.
        raise mgr_exc.MalformedParameter(param=e.message) from e


@contextlib.contextmanager
def update_refusals():
    """Around an update_reservation: a capacity refusal becomes

    CantUpdateParameter with the same message (see above).
    """
    try:
        with _bad_terms():
            yield
    except (exception.CapacityRefused, exception.UpdateRefused,
            exception.QuotaRefused, exception.CapacityExceeded,
            exception.ConcurrentUpdateDetected) as e:
        # The ledger's own refusal, should one reach here: a 409, not a
        # lease in ERROR.
        raise mgr_exc.CantUpdateParameter(str(e)) from e
    except UNREACHABLE_ERRORS as e:
        # A 409 rather than a 503: any other type puts the lease in ERROR.
        LOG.warning('Lease update refused: %s', e)
        raise mgr_exc.CantUpdateParameter(UNREACHABLE) from e


def record_to_update(get, ctx, reservation_id, not_found):
    """Our record of a reservation being updated (``get(ctx, id)``); none

    (its start failed and its end ran since: nothing is held) refuses
    the update with 409, the lease left as it was.
    """
    try:
        return get(ctx, reservation_id)
    except not_found:
        raise mgr_exc.CantUpdateParameter(
            'Reservation %s has ended and cannot be updated.'
            % reservation_id)


@contextlib.contextmanager
def admission_refusals():
    """Around an admission: bad terms are Blazar's 400s (as in updates),

    an unreachable Nova or Placement a 503.
    """
    try:
        with _bad_terms():
            yield
    except exception.CapacityRefused as e:
        raise _blazar_refusal(e) from e
    except exception.QuotaRefused as e:
        raise QuotaRefused(reason=e.message) from e
    except UNREACHABLE_ERRORS as e:
        LOG.warning('Reservation refused: %s', e)
        raise CloudUnreachable() from e


@contextlib.contextmanager
def event_failures():
    """Around a reservation's start or end: the domain's EventFailed is

    Blazar's EventError, with the same message.
    """
    try:
        yield
    except exception.EventFailed as e:
        raise mgr_exc.EventError(error=e.message) from e
