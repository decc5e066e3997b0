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

"""One change of a lease at a time, across blazar-api workers.

Blazar's manager checks a lease's status and then sets it, in two steps:
two deletes of one lease (or a delete and an update) that reach it
together both pass the check, and all but one fail inside Blazar with a
500. Our API extension holds a lock named after the lease (db.locks) from
before Blazar's view of PUT or DELETE /v1/leases/<id> until the request
ends; the next one then finds the lease gone (404) or changed.
"""

import re

import flask
from oslo_log import log as logging

from pcloud_plugin.db import locks

LOG = logging.getLogger(__name__)
_LEASE = re.compile(r'/leases/([^/]+)/?$')
_HELD = 'pcloud_lease_lock'


def before():
    request = flask.request
    if request.method not in ('PUT', 'DELETE'):
        return None
    match = _LEASE.search(request.path)
    if match:
        setattr(flask.g, _HELD, locks.acquire('lease:' + match.group(1)))
    return None


def teardown(_exc=None):
    held = flask.g.pop(_HELD, None)
    if held is not None:
        try:
            locks.release(held)
        except Exception:
            LOG.exception('Could not release a lease lock')
