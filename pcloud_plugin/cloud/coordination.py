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

"""Which of several blazar-managers runs the periodic work: the leader.

A process leads while it holds the tooz lock ``LOCK_NAME`` on the
``[coordination]`` backend (by default the ledger's own MySQL or
PostgreSQL server). The others try to take it, without waiting, each
time they ask, that is at each poll of their monitor: when the leader
dies its connection closes, the lock with it, and another leads within
one polling interval. The leader takes its lock again every
``RENEW_AFTER`` seconds on a new connection, so that one closed under it
(an idle timeout of the server or of a proxy) does not leave it leading
beside another for long.

On a Galera multi-writer ledger (and no ``backend_url``), tooz's
MySQL lock (``GET_LOCK``) would hold on one node only: the leader's lock
is then the ledger's own named lock (db.locks), which holds across
nodes; a leader that dies is followed once its lock expires
(``[pcloud_database] galera_lock_ttl``) and at the next poll.

A backend that cannot be reached never stops the periodic work: the
process then leads (passes run twice are only wasteful) and tries to
join again the next time it is asked.
"""

import hashlib
import os
import socket
import threading
import time
import warnings

from oslo_log import log as logging
import sqlalchemy as sa
from tooz import coordination as tooz_coordination

from pcloud_plugin import conf
from pcloud_plugin.db import locks

CONF = conf.CONF
LOG = logging.getLogger(__name__)

LOCK_NAME = 'pcloud-plugin-periodic-leader'
# MySQL's GET_LOCK takes names of 64 characters at most.
_NAME_MAX = 64
# Seconds between two takes of the leader's lock on a new connection.
RENEW_AFTER = 300
# The ledger's backends whose server tooz locks on, by their tooz scheme.
_TOOZ_SCHEMES = {'mysql': 'mysql', 'postgresql': 'postgresql'}


def _ledger_url(config):
    connection = config.pcloud_database.connection
    return sa.engine.make_url(connection) if connection else None


def backend_url(config=CONF):
    """The tooz URL of ``[coordination] backend_url``, else of the

    ledger's server; None (no election) for a SQLite ledger or none.
    """
    if config.coordination.backend_url:
        return config.coordination.backend_url
    ledger = _ledger_url(config)
    scheme = ledger and _TOOZ_SCHEMES.get(ledger.get_backend_name())
    if not scheme:
        return None
    return ledger.set(drivername=scheme).render_as_string(
        hide_password=False)


def lock_name(config=CONF):
    """LOCK_NAME and the ledger's database: clouds whose ledgers share a

    server (MySQL's locks are server-wide) or a coordination backend
    each elect their own leader.
    """
    ledger = _ledger_url(config)
    name = '%s:%s' % (LOCK_NAME, ledger and ledger.database or '')
    if len(name) > _NAME_MAX:
        name = '%s:%s' % (LOCK_NAME, hashlib.sha256(
            name.encode()).hexdigest()[:_NAME_MAX - len(LOCK_NAME) - 1])
    return name


class Leader(object):
    """Whether this process leads, on the tooz backend ``url`` (None: it

    always does), by the lock ``name``. Safe across threads.
    """

    def __init__(self, url, name, member_id=None, on_ledger=False):
        self.url = url
        self.name = name
        # Whether url is the ledger's server (no backend_url).
        self._on_ledger = on_ledger
        self._member = member_id or '%s-%d' % (socket.gethostname(),
                                               os.getpid())
        self._guard = threading.Lock()
        self._coordinator = None
        self._held = None
        self._since = 0
        self._leads = None
        self._unreachable = False

    def is_leader(self):
        """Whether this process leads now, after trying to, if it did

        not. True when the backend cannot be reached (logged).
        """
        if self.url is None:
            return True
        with self._guard:
            try:
                leads = self._elect()
            except Exception as e:
                self._drop()
                if not self._unreachable:
                    LOG.warning('Coordination backend %s unreachable (%s): '
                                'this process runs the periodic work and '
                                'tries to join again at its next poll.',
                                self._backend(), e)
                self._unreachable = leads = True
                self._leads = None
                return leads
            if self._unreachable:
                LOG.info('Coordination backend %s reachable again.',
                         self._backend())
                self._unreachable = False
            if leads != self._leads:
                LOG.info('%s process leads the periodic work (lock %s).',
                         'This' if leads else 'Another', self.name)
                self._leads = leads
            return leads

    def stop(self):
        """Leave the lead and the backend (another takes over)."""
        with self._guard:
            self._drop()
            self._leads = None

    def _elect(self):
        if (self._coordinator is None and self._on_ledger and
                self.url.startswith('mysql:') and locks.on_galera()):
            self._coordinator = _LedgerLocks()
        if self._coordinator is None:
            # tooz's postgresql driver warns that it is deprecated at
            # each start: a warning for tooz's maintainers, not ours.
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', DeprecationWarning)
                coordinator = tooz_coordination.get_coordinator(
                    self.url, self._member.encode())
            # The heart beats only for drivers whose locks expire
            # without it (etcd, Redis, ZooKeeper, file).
            coordinator.start(start_heart=True)
            self._coordinator = coordinator
        now = time.monotonic()
        if self._held is not None and now - self._since >= RENEW_AFTER:
            # Released on a dead connection, this raises: the lock was
            # lost with it, and the process asks again next time.
            held, self._held = self._held, None
            held.release()
        if self._held is None:
            lock = self._coordinator.get_lock(self.name.encode())
            if lock.acquire(blocking=False):
                self._held, self._since = lock, now
        return self._held is not None

    def _drop(self):
        held, self._held = self._held, None
        coordinator, self._coordinator = self._coordinator, None
        for step in (held and held.release,
                     coordinator and coordinator.stop):
            if step:
                try:
                    step()
                except Exception as e:
                    LOG.debug('Leaving the coordination backend: %s', e)

    def _backend(self):
        # Its scheme only: the URL may hold a password.
        return self.url.partition(':')[0]


class _LedgerLocks(object):
    """As much of a tooz coordinator as Leader uses, on db.locks."""

    def get_lock(self, name):
        return _LedgerLock(name.decode())

    def stop(self):
        pass


class _LedgerLock(object):

    def __init__(self, name):
        self.name = name
        self._held = None

    def acquire(self, blocking=True):
        self._held = locks.acquire(self.name, wait=blocking)
        return self._held is not None

    def release(self):
        held, self._held = self._held, None
        if held is not None:
            locks.release(held)


_process_leader = None
_process_guard = threading.Lock()


def process_leader(config=CONF):
    """The process's Leader (both our plugins' monitors ask it), on the

    backend and by the name the configuration says now.
    """
    global _process_leader
    url, name = backend_url(config), lock_name(config)
    with _process_guard:
        leader = _process_leader
        if leader is None or (leader.url, leader.name) != (url, name):
            if leader is not None:
                leader.stop()
            leader = _process_leader = Leader(
                url, name, on_ledger=not config.coordination.backend_url)
        return leader
