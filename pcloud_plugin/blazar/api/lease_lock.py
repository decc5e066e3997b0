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

The manager's own events take no such lock: an update that meets the
start or the end ends in a 500 and the lease in ERROR (Blazar's check
of the lease's events when the update ends finds the event under way).
So, the lock held, a change of a lease that is starting or ending, or
an update of one whose next event comes due within
``[pcloud] lease_event_margin`` seconds, is answered 409 with a
Retry-After header: the event runs first, undisturbed. A change that
passed this check just as an event began is refused by Blazar's own
check, before it changes anything, with a 500 "Invalid lease status.":
that answer becomes the same 409.

A before-end event checks no lease status and an update checks none of
it, so it holds back only an update that moves the lease's dates (one
that met it as it ran would leave the re-timed event done, never run at
its new time). Blazar sets a before-end that has run to run again after
every update: were it to hold back the next update too, a lease past
its before-end could change only once per pass of Blazar's event loop.
Nor should it run again when the update moved none of the dates: its
time, unchanged, has passed, and Blazar's manager would run its actions
(Blazar's own plugins snapshot instances) and send
``lease.event.before_end_lease`` again, after every update of a lease in
its last hour. Such an update leaves a before-end that had run done.
"""

import datetime
import json
import re

from blazar.db import api as blazar_db
from blazar import status
import flask
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from pcloud_plugin.db import locks

CONF = cfg.CONF
LOG = logging.getLogger(__name__)
_LEASE = re.compile(r'/leases/([^/]+)/?$')
_HELD = 'pcloud_lease_lock'
# (event id, time) of the before-end an update that moves no date found
# run, to leave run after it.
_RAN = 'pcloud_before_end_ran'
# Seconds to retry after: Blazar's manager looks for due events every 10.
_RETRY = 10
# Blazar's message when its check of the lease's status refuses a change.
_BLAZAR_STATUS_REFUSAL = 'Invalid lease status.'
_BEFORE_END = 'before_end_lease'
# What an update names of the lease's dates (lease_guard's aliases too).
_DATES = ('start_date', 'end_date', 'before_end_date', 'start', 'end')


def before():
    """Take the lease's lock; (message, seconds to retry after) when the

    change must wait for an event of the lease, else None.
    """
    request = flask.request
    if request.method not in ('PUT', 'DELETE'):
        return None
    match = _LEASE.search(request.path)
    if match is None:
        return None
    lease_id = match.group(1)
    setattr(flask.g, _HELD, locks.acquire('lease:' + lease_id))
    update, dates = _change(request)
    wait = busy(lease_id, update, dates)
    if wait is None and update and not dates:
        for event in blazar_db.event_get_all_sorted_by_filters(
                'time', 'asc', {'lease_id': lease_id}):
            if event['event_type'] == _BEFORE_END and \
                    event['status'] == status.event.DONE:
                setattr(flask.g, _RAN, (event['id'], event['time']))
    return wait


def _change(request):
    """(update, dates): whether the request is an update, and whether

    it may move the lease's dates (a body not read as an object may).
    """
    if request.method != 'PUT':
        return False, False
    try:
        body = json.loads(request.get_data(cache=True) or b'null')
    except ValueError:
        return True, True
    if not isinstance(body, dict):
        return True, True
    # python-blazarclient sends a null before_end_date when not given.
    return True, any(body.get(name) is not None for name in _DATES)


def busy(lease_id, update, dates=True):
    """Why a change of the lease must wait for one of its events, and

    for how many seconds, or None. Any change waits while the lease is
    in a transitional state or one of its events runs; an update also
    while an event is due within the margin. An update that moves none
    of the lease's dates (``dates`` False) waits for no before-end.
    """
    lease = blazar_db.lease_get(lease_id)
    if lease is None:
        return None  # Blazar's 404
    if lease['status'] in status.lease.TRANSITIONAL:
        return ('Lease %s is %s; try again in a few seconds.'
                % (lease_id, lease['status']), _RETRY)
    margin = datetime.timedelta(seconds=CONF.pcloud.lease_event_margin)
    now = timeutils.utcnow()
    for event in blazar_db.event_get_all_sorted_by_filters(
            'time', 'asc', {'lease_id': lease_id}):
        if update and not dates and event['event_type'] == _BEFORE_END:
            continue
        what = event['event_type'].replace('_lease', '').replace('_', '-')
        if event['status'] == status.event.IN_PROGRESS:
            return ('The %s of lease %s is under way; try again in a few '
                    'seconds.' % (what, lease_id), _RETRY)
        if update and event['status'] == status.event.UNDONE and \
                event['time'] <= now + margin:
            wait = max(_RETRY, int((event['time'] - now).total_seconds()) +
                       _RETRY)
            return ('Lease %s cannot change until its %s at %s has run; '
                    'try again in %d seconds.' % (
                        lease_id, what, event['time'].isoformat(), wait),
                    wait)
    return None


def met_an_event(response):
    """For a PUT or DELETE of a lease that Blazar answered 500 "Invalid

    lease status.": one of the lease's events began between our check
    and Blazar's, which refused the change before making it. Why the
    change must wait, and for how many seconds; None for any other
    response.
    """
    request = flask.request
    match = _LEASE.search(request.path)
    if (request.method not in ('PUT', 'DELETE') or match is None
            or response.status_code != 500):
        return None
    try:
        refusal = json.loads(response.get_data()).get('error_message')
    except (ValueError, AttributeError):
        return None
    if refusal != _BLAZAR_STATUS_REFUSAL:
        return None
    lease_id = match.group(1)
    return busy(lease_id, *_change(request)) or (
        'Lease %s was starting or ending; try again in a few seconds.'
        % lease_id, _RETRY)


def keep_before_end(response):
    """After Blazar's answer to an update that moved none of the lease's

    dates: the before-end that had run before it, set to run again at
    its same (past) time, is done again. Should Blazar's manager have
    taken it meanwhile, it runs once more, as Blazar would have it.
    """
    ran = flask.g.pop(_RAN, None)
    if ran is None or response.status_code != 200:
        return
    event_id, moment = ran
    try:
        event = blazar_db.event_get(event_id)
        if event is not None and event['time'] == moment and \
                event['status'] == status.event.UNDONE:
            blazar_db.event_update(event_id, {'status': status.event.DONE})
    except Exception:
        LOG.exception('Could not leave the before-end event %s done',
                      event_id)


def teardown(_exc=None):
    held = flask.g.pop(_HELD, None)
    if held is not None:
        try:
            locks.release(held)
        except Exception:
            LOG.exception('Could not release a lease lock')
