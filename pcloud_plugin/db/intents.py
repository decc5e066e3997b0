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

"""Intents: the operations on Nova and Placement under way, in the ledger.

An operation that changes several objects in Nova and Placement (a host
joining or leaving a pcloud, a lease's hosts joining or leaving) records
an intent before its first change and deletes it after its last. An
intent still there is an interrupted operation when its process is gone
(it died), when the operation raised (its own undo may have met the same
failure), or when it is older than the caller's timeout (a process on
another machine that may be gone). The reconciler takes such an intent
(``take`` is a compare-and-swap on its owner and last update, so one
reconciler acts on it) and finishes or undoes the operation.
"""

import contextlib
import datetime
import json
import os
import socket

from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import models

LOG = logging.getLogger(__name__)
_INTENT = models.Intent.__table__
# The operations of a lease event (their intents' names): a reservation's
# start and its end.
LEASE_START = 'lease-start'
LEASE_END = 'lease-end'
# A recover() handler's answer: the operation may still be running, look
# again.
KEEP = object()


def _process_start(pid):
    """The start time of process ``pid`` in clock ticks, or None if there

    is no such process; 0 where /proc does not tell (alive, start unknown).
    """
    try:
        with open('/proc/%d/stat' % pid) as f:
            # Field 22; the command name (field 2) may hold spaces.
            return int(f.read().rsplit(')', 1)[1].split()[19])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:
            pass
        return 0


def this_process():
    """The owner string of the running process."""
    pid = os.getpid()
    return '%s:%d:%s' % (socket.gethostname(), pid, _process_start(pid))


def owner_gone(owner):
    """True when ``owner`` names a process of this machine that has

    exited; False when it runs, or runs on another machine (unknown).
    """
    try:
        host, pid, start = owner.rsplit(':', 2)
        pid = int(pid)
    except ValueError:
        return True
    if host != socket.gethostname():
        return False
    now = _process_start(pid)
    return now is None or (now != 0 and str(now) != start)


@db_api.retry_on_deadlock
def begin(context, operation, subject, details):
    """Record an operation about to start; returns its intent id."""
    with db_api.writer(context) as session:
        result = session.execute(_INTENT.insert().values(
            operation=operation, subject=subject,
            details=json.dumps(details, sort_keys=True),
            owner=this_process(), failed=False,
            created_at=timeutils.utcnow()))
        return result.inserted_primary_key[0]


@db_api.retry_on_deadlock
def finish(context, intent_id):
    with db_api.writer(context) as session:
        session.execute(_INTENT.delete().where(_INTENT.c.id == intent_id))


@db_api.retry_on_deadlock
def fail(context, intent_id):
    with db_api.writer(context) as session:
        session.execute(_INTENT.update().where(
            _INTENT.c.id == intent_id).values(
                failed=True, updated_at=timeutils.utcnow()))


@contextlib.contextmanager
def recorded(context, operation, subject, **details):
    """Around an operation: its intent, deleted when it returns and

    marked failed when it raises (the reconciler then takes it over).
    """
    intent_id = begin(context, operation, subject, details)
    try:
        yield
    except BaseException:
        try:
            fail(context, intent_id)
        except Exception:
            pass  # still there, unfinished: the reconciler sees it anyway
        raise
    finish(context, intent_id)


def _as_dict(row):
    return dict(row, details=json.loads(row['details']))


@db_api.retry_on_deadlock
def list_intents(context, operations=None):
    """Every intent (of ``operations`` if given), oldest first."""
    query = sa.select(_INTENT).order_by(_INTENT.c.id)
    if operations is not None:
        query = query.where(_INTENT.c.operation.in_(operations))
    with db_api.reader(context) as session:
        return [_as_dict(r) for r in session.execute(query).mappings()]


def since(seconds):
    """The moment ``seconds`` ago: intents older than it are abandoned."""
    return timeutils.utcnow() - datetime.timedelta(seconds=seconds)


def abandoned(intent, older_than):
    """Whether an intent's process exited, or it began before

    ``older_than`` (its process may be on another machine).
    """
    return owner_gone(intent['owner']) or intent['created_at'] < older_than


def interrupted(context, operations, older_than):
    """The intents of ``operations`` whose operation no longer runs: it

    raised, or it is abandoned.
    """
    return [i for i in list_intents(context, operations)
            if i['failed'] or abandoned(i, older_than)]


@db_api.retry_on_deadlock
def take(context, intent):
    """Make this process the owner of an interrupted intent; False when

    another reconciler took it (or finished it) first.
    """
    updated = (_INTENT.c.updated_at.is_(None) if intent['updated_at'] is None
               else _INTENT.c.updated_at == intent['updated_at'])
    with db_api.writer(context) as session:
        result = session.execute(_INTENT.update().where(
            _INTENT.c.id == intent['id'],
            _INTENT.c.owner == intent['owner'], updated).values(
                owner=this_process(), failed=True,
                updated_at=timeutils.utcnow()))
        return result.rowcount == 1


def recover(ctx, found, handler, notifier, take_first=False):
    """Hand each intent of ``found`` to ``handler``, which finishes or

    undoes its operation and returns what it did (None: nothing was left
    to do; KEEP: not now). With ``take_first``, an intent is first taken
    from its owner (take), so that of several reconcilers one acts.
    A handler that fails leaves the intent for the next pass. Returns
    {intent id: what was done}.
    """
    done = {}
    for intent in found:
        if take_first and not take(ctx, intent):
            continue
        try:
            what = handler(intent)
        except Exception:
            LOG.exception('Could not recover the %s of %s; the next pass '
                          'tries again', intent['operation'],
                          intent['subject'])
            continue
        if what is KEEP:
            continue
        finish(ctx, intent['id'])
        if what is None:
            continue
        LOG.warning('Recovered the interrupted %s of %s: %s',
                    intent['operation'], intent['subject'], what)
        notifier.reconciled({}, {
            'operation': intent['operation'], 'subject': intent['subject'],
            'details': intent['details'], 'done': what,
            'since': intent['created_at'].isoformat()})
        done[intent['id']] = what
    return done
