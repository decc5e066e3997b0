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
"""What healing reads and marks on Blazar's leases.

reservations.healing decides; this is where its decisions meet Blazar's
records: whether a lease is settled (not being started, ended or updated
by Blazar's manager), and the flags Blazar's own resource monitor sets
(``missing_resources`` or ``resources_changed`` on a reservation,
``degraded`` on its lease). The plugins hand this module to healing as
their ``lease_flags``.
"""

from blazar.db import api as blazar_db
from blazar import status
from oslo_log import log as logging

from pcloud_plugin.reservations import healing

LOG = logging.getLogger(__name__)


def settled(lease_id):
    """Whether the lease is PENDING or ACTIVE (the next pass sees one

    that is not again).
    """
    try:
        lease = blazar_db.lease_get(lease_id)
    except Exception:
        LOG.exception('Could not read Blazar lease %s', lease_id)
        return False
    return lease is not None and lease['status'] in (
        status.lease.PENDING, status.lease.ACTIVE)


def _reservation(reservation_id):
    try:
        return blazar_db.reservation_get(reservation_id)
    except Exception:
        LOG.exception('Could not read Blazar reservation %s', reservation_id)
        return None


def is_set(reservation_id, flag):
    found = _reservation(reservation_id)
    return bool(found and found[flag])


def set_flag(reservation_id, flag):
    """Set a flag on the reservation and degraded on its lease; False if

    it was set already (or Blazar has no such reservation).
    """
    found = _reservation(reservation_id)
    if found is None or found[flag]:
        return False
    blazar_db.reservation_update(reservation_id, {flag: True})
    blazar_db.lease_update(found['lease_id'], {'degraded': True})
    return True


def clear_missing(resource_type, whole):
    """Clear missing_resources on the reservations of ``resource_type``

    for which ``whole(reservation id)`` is True (False: still missing;
    None: not healing's to say), and degraded on their leases when none
    of their reservations is flagged any more. The ids cleared.
    """
    cleared = []
    for found in blazar_db.reservation_get_all_by_values(
            resource_type=resource_type, missing_resources=True):
        rid = found['id']
        try:
            if not whole(rid):
                continue
            blazar_db.reservation_update(rid, {healing.MISSING: False})
            cleared.append(rid)
            siblings = blazar_db.reservation_get_all_by_lease_id(
                found['lease_id'])
            if not any(s[healing.MISSING] or s[healing.CHANGED]
                       for s in siblings):
                blazar_db.lease_update(found['lease_id'],
                                       {'degraded': False})
        except Exception:
            LOG.exception('Could not clear the flags of reservation %s',
                          rid)
    return cleared
