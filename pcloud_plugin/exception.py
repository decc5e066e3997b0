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
"""Typed errors of the ledger and the capacity engine.

Each one carries the facts a caller needs to explain the refusal (which
provider, class and window fell short, by how much, which rule was broken)
both as attributes and in its message. code is the HTTP status an API
layer maps it to.
"""


class PcloudException(Exception):
    msg_fmt = 'An unknown error occurred.'
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.msg_fmt % kwargs
        self.message = message
        super().__init__(message)


class Invalid(PcloudException):
    msg_fmt = 'Invalid input: %(reason)s'
    code = 400


class InvalidTerm(Invalid):
    """A term of a reservation, named with what is wrong with it."""
    msg_fmt = 'Malformed parameter %(param)s'


class MissingTerm(Invalid):
    """Terms a reservation must have, named."""
    msg_fmt = 'Missing parameter %(param)s'


class InvalidWindow(Invalid):
    msg_fmt = 'Invalid window: %(reason)s'


class InvalidAmount(Invalid):
    msg_fmt = ('Invalid amount %(amount)r of %(resource_class)s: '
               '%(reason)s')


class InvalidInventory(Invalid):
    msg_fmt = ('Invalid inventory of %(resource_class)s on provider '
               '%(provider)s: %(reason)s')


class InvalidName(Invalid):
    msg_fmt = 'Invalid %(kind)s name %(name)r: %(reason)s'


class UnknownResourceClass(Invalid):
    msg_fmt = 'Unknown resource class %(name)s.'


class UnknownTrait(Invalid):
    msg_fmt = 'Unknown trait %(name)s.'


class UnitRuleViolation(Invalid):
    """An amount breaks its inventory's min_unit, max_unit or step_size."""
    msg_fmt = ('Amount %(amount)d of %(resource_class)s on provider '
               '%(provider)s breaks %(rule)s=%(limit)d.')


class NotFound(PcloudException):
    msg_fmt = 'Not found: %(reason)s'
    code = 404


class ResourceProviderNotFound(NotFound):
    msg_fmt = 'No resource provider %(provider)s.'


class InventoryNotFound(NotFound):
    msg_fmt = 'Provider %(provider)s has no inventory of %(resource_class)s.'


class Conflict(PcloudException):
    msg_fmt = 'Conflict: %(reason)s'
    code = 409


class CapacityRefused(Conflict):
    """Not enough capacity for a reservation in its window: the message

    says what was short (the Blazar adapter answers 409 with it).
    """
    msg_fmt = '%(reason)s'


class PoolTooSmall(CapacityRefused):
    """Fewer hosts could ever serve the reservation than it asks for, even

    all emptied: refused at once, whatever the lease type (seeds/001: a
    BEST-EFFORT lease needs enough potential candidates).
    """


class UpdateRefused(Conflict):
    """A change a reservation cannot take as it is now (its state, its

    pcloud, its hosts in use): the message says why.
    """
    msg_fmt = '%(reason)s'


class EventFailed(PcloudException):
    """A reservation's start or end could not be carried out: the lease

    goes to ERROR (the Blazar adapter raises Blazar's EventError).
    """
    msg_fmt = '%(error)s'


class CapacityExceeded(Conflict):
    """A claim does not fit in part of its window."""
    msg_fmt = ('Provider %(provider)s is short of %(resource_class)s at '
               '%(at)s in window %(window)s: requested %(requested)d, peak '
               'usage %(used)d of capacity %(capacity)d, short by '
               '%(short)d.')


class InventoryInUse(Conflict):
    msg_fmt = ('Inventory of %(resource_class)s on provider %(provider)s '
               'cannot drop to capacity %(capacity)d: existing claims peak '
               'at %(used)d from %(at)s.')


class ResourceProviderInUse(Conflict):
    msg_fmt = ('Resource provider %(provider)s has live claims and cannot '
               'be removed.')


class MaintenanceNotFound(NotFound):
    msg_fmt = 'Maintenance %(maintenance)s not found.'


class MaintenanceRefused(Conflict):
    """Bookings hold the hosts in the window and cannot move; the

    operator did not accept leaving them there.
    """
    msg_fmt = ('Maintenance of %(hosts)s from %(start)s to %(end)s refused: '
               'these reservations hold them then and cannot move: '
               '%(unmovable)s. Send it again with accept_unmovable to '
               'book it anyway (they stay, and are healed or degraded '
               'when it starts).')


class NoWindowFits(Conflict):
    """No window of a flexible lease's duration fits in its bounds."""
    msg_fmt = ('No window of %(minutes)d minutes from %(earliest)s '
               '%(until)s fits this lease now: %(why)s')


class ConsumerExists(Conflict):
    msg_fmt = 'Consumer %(consumer)s already holds claims.'


class ConcurrentUpdateDetected(Conflict):
    msg_fmt = ('Gave up after %(attempts)d attempts: concurrent updates kept '
               'changing provider generations (%(providers)s).')


class InvalidCandidatesRequest(Invalid):
    """An allocation-candidates request Placement would refuse with 400."""
    msg_fmt = 'Invalid allocation candidates request: %(reason)s'


# The Pcloud service (host flavors and pclouds over Nova aggregates).

class InvalidField(Invalid):
    """Bad input, naming the field at fault."""
    msg_fmt = 'Invalid %(field)s %(value)r: %(reason)s'


class Forbidden(PcloudException):
    msg_fmt = 'Forbidden: %(reason)s'
    code = 403


class HostFlavorNotFound(NotFound):
    msg_fmt = 'No host flavor %(flavor_id)s.'


class FlavorNotFound(NotFound):
    msg_fmt = 'No flavor %(flavor)s that your project may use.'


class PcloudNotFound(NotFound):
    msg_fmt = 'No pcloud %(pcloud_id)s.'


class PcloudHostNotFound(NotFound):
    msg_fmt = 'Pcloud %(pcloud_id)s has no host named %(name)s.'


class LeaseNotFound(NotFound):
    msg_fmt = 'No lease %(lease_id)s with a reservation of pcloud-plugin.'


class ComputeHostNotFound(NotFound):
    msg_fmt = 'No nova-compute service on host %(host)s.'


class HostFlavorExists(Conflict):
    msg_fmt = 'Host flavor %(flavor_id)s already exists.'


class HostFlavorInUse(Conflict):
    msg_fmt = ('Host flavor %(flavor_id)s still has %(count)d host(s) in '
               'its pool: remove them first.')


class HostNotEligible(Conflict):
    msg_fmt = 'Host %(host)s cannot join a host flavor pool: %(reason)s'


class HostAllocated(Conflict):
    msg_fmt = 'Host %(host)s is allocated to pcloud %(pcloud_id)s.'


class PcloudHostNameExists(Conflict):
    msg_fmt = 'Pcloud %(pcloud_id)s already has a host named %(name)s.'


class PcloudHostBusy(Conflict):
    msg_fmt = ('Host %(name)s of pcloud %(pcloud_id)s cannot be released: '
               '%(reason)s')


class PcloudLeased(Conflict):
    msg_fmt = ('Pcloud %(pcloud_id)s cannot %(action)s: lease %(lease_id)s '
               '(%(state)s until %(end)s) %(holds)s.')


class PcloudNotEmpty(Conflict):
    msg_fmt = ('Pcloud %(pcloud_id)s still holds %(count)d host(s): '
               'release them first.')


class NoFreeHost(Conflict):
    msg_fmt = 'No free host of host flavor %(flavor_id)s%(where)s%(why)s.'


class QuotaRefused(PcloudException):
    """A reservation would take its project over a limit: the message

    says which, and by how much (the Blazar adapter answers 403).
    """
    msg_fmt = '%(reason)s'
    code = 403


class QuotaExceeded(PcloudException):
    msg_fmt = ('Project %(project_id)s would hold %(requested)d quota '
               'units, over its limit of %(limit)d.')
    code = 403


class NovaError(PcloudException):
    """Nova refused or failed a call the service had to make."""
    msg_fmt = 'Nova failed to %(action)s: %(reason)s'
    code = 502


class NovaUnreachable(NovaError):
    """Nova could not be reached (or is unavailable) for a call the

    service had to make: a 503, to try again later.
    """
    msg_fmt = 'Nova cannot be reached to %(action)s: %(reason)s'
    code = 503


class PlacementUnreachable(PcloudException):
    """Placement could not be reached for a call the service had to make."""
    msg_fmt = 'Placement cannot be reached to %(action)s: %(reason)s'
    code = 503


# The Pcloud REST API.

class SchemaViolation(Invalid):
    """A body or query that its JSON schema refuses."""
    msg_fmt = 'Invalid input for field %(field)s: %(reason)s'


class UnsupportedMediaType(PcloudException):
    msg_fmt = 'Content type %(content_type)r is not supported: use %(use)s.'
    code = 415


class PolicyNotAuthorized(Forbidden):
    msg_fmt = 'Policy does not allow %(action)s to be performed.'


# Whole-host leases (pcloud:host reservations).

class HostBusy(Conflict):
    """A whole-host claim met another consumer's claim on the host."""
    msg_fmt = ('Host %(host)s is not free during %(window)s: %(consumer)s '
               'holds part of it from %(start)s to %(end)s.')


# What a claim raises when the capacity its plan was made on moved: a
# concurrent lease took it first, or the Placement mirror changed the
# provider's inventory (its max_unit, a class) or dropped the provider.
# The plan is made again.
PLAN_OUTDATED = (CapacityExceeded, ConcurrentUpdateDetected,
                 UnitRuleViolation, InventoryNotFound,
                 ResourceProviderNotFound)


# Projects named in the Pcloud API (by id or name), looked up in Keystone.

class ProjectNotFound(NotFound):
    msg_fmt = 'Keystone has no project with the id or name "%(project)s".'


class ProjectNameAmbiguous(Conflict):
    msg_fmt = ('%(count)d projects are named "%(project)s" (in different '
               'domains): give the id of the one you mean.')


class KeystoneError(PcloudException):
    """Keystone refused or failed a look-up the service had to make."""
    msg_fmt = 'Keystone failed to %(action)s: %(reason)s'
    code = 502


class KeystoneUnreachable(KeystoneError):
    """Keystone could not be reached: a 503, to try again later."""
    msg_fmt = 'Keystone cannot be reached to %(action)s: %(reason)s'
    code = 503
