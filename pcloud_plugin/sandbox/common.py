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

"""What the service processes share: the spec, serving, readiness, exit.

Standard library only: the Nova process must choose its concurrency mode
before anything imports eventlet, so nothing here may pull it in.
"""

import argparse
import ctypes
import json
import os
import signal
import socketserver
import sqlite3
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from wsgiref import simple_server

HOST = '127.0.0.1'
# Sandbox-only credentials, on a cloud that listens on loopback only.
PASSWORD = 'secret'
REGION = 'RegionOne'
SERVICE_PROJECT = 'service'
DEMO_PROJECT = 'demo'
DEMO_USER = 'demo'
# A second tenant, to show what the demo's project keeps to itself.
ALT_PROJECT = 'alt'
ALT_USER = 'alt'
# Each user's project for the clients.
PROJECT_OF = {'admin': 'admin', DEMO_USER: DEMO_PROJECT,
              ALT_USER: ALT_PROJECT}
# Service users, each an admin (and service) of the service project.
SERVICE_USERS = ('nova', 'placement', 'blazar')


def cache_dir():
    """Where sandboxes keep what they build once for later starts to copy

    (Keystone's snapshot, migrated schemas).
    """
    return os.environ.get('PCLOUD_SANDBOX_CACHE') or os.path.join(
        os.environ.get('XDG_CACHE_HOME', os.path.expanduser('~/.cache')),
        'pcloud-sandbox')


def sqlite_wal(url):
    """Readers must not wait on the writer: many threads and processes

    share the file (SQLite only; the journal mode stays with the file).
    """
    if url.startswith('sqlite:///'):
        sqlite3.connect(url[len('sqlite:///'):]).execute(
            'PRAGMA journal_mode=WAL').close()


def sqlite_writes_in_turn(target=None):
    """Every transaction on SQLite begins IMMEDIATE: of this process, or

    of the one engine ``target``.

    In WAL mode a transaction that read, and then writes after another
    writer committed, fails at once with "database is locked": SQLite
    cannot wait for a snapshot that is already stale (the busy timeout
    of ``patient`` does not apply); in rollback-journal mode a reader
    that would write while another writer commits is refused at once
    too, to break the deadlock. Blazar reads before it writes almost
    everywhere, so concurrent lease requests were 500s and left leases
    CREATING. Taking the write lock at BEGIN makes them wait in turn
    instead. SQLite only: production runs these on MariaDB/PostgreSQL.
    """
    import sqlalchemy as sa

    # oslo.db turns pysqlite's implicit BEGIN off and emits its own plain
    # BEGIN as each transaction starts: that is the statement made
    # IMMEDIATE here (a rewrite, as its listener runs before any added
    # to an engine later).
    def _immediate(conn, cursor, statement, parameters, context, many):
        if statement == 'BEGIN' and conn.dialect.name == 'sqlite':
            statement = 'BEGIN IMMEDIATE'
        return statement, parameters

    sa.event.listen(sa.engine.Engine if target is None else target,
                    'before_cursor_execute', _immediate, retval=True)


# Every database section of the services' configs: on SQLite, no fsync
# at each commit. A killed process loses nothing by it (its writes are
# the kernel's); only the machine's own crash would, and a sandbox need
# not survive that. Commits are what the sandbox's services do most,
# and an fsync costs far more on some CI disks than here.
NO_FSYNC = {'sqlite_synchronous': False}


def patient(url):
    """The URL a service is given: on SQLite, a writer waits up to a

    minute for another's transaction instead of failing at once (after
    pysqlite's 5 s) with "database is locked" on a loaded machine.
    """
    return url + '?timeout=60' if url.startswith('sqlite:///') else url


def url(spec, service, path=''):
    return 'http://%s:%d%s' % (HOST, spec['ports'][service], path)


def auth_url(spec):
    return url(spec, 'keystone', '/v3')


def authtoken_conf(spec, username):
    """The [keystone_authtoken] section of a service behind Keystone."""
    return {
        'www_authenticate_uri': auth_url(spec),
        'auth_url': auth_url(spec),
        'auth_type': 'password',
        'username': username,
        'password': PASSWORD,
        'project_name': SERVICE_PROJECT,
        'user_domain_name': 'Default',
        'project_domain_name': 'Default',
        'region_name': REGION,
    }


class Multi(list):
    """The values of a multi-valued option: one line each."""


def carries_notifications(spec):
    """Whether the sandbox's transport reaches from one process to

    another (fake:// lives in each process): then Nova sends its
    versioned notifications and blazar-manager follows them.
    """
    return not spec['transport'].startswith('fake:')


def write_conf(path, sections):
    """Write an ini file from {section: {option: value}}."""
    with open(path, 'w') as f:
        for section, options in sections.items():
            f.write('[%s]\n' % section)
            for name, value in options.items():
                if isinstance(value, Multi):
                    for one in value:
                        f.write('%s = %s\n' % (name, one))
                    continue
                if isinstance(value, (list, tuple)):
                    value = ','.join(value)
                f.write('%s = %s\n' % (name, value))
            f.write('\n')
    return path


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    # socketserver's backlog of 5 drops connections of bursts of clients.
    request_queue_size = 128


class _QuietHandler(simple_server.WSGIRequestHandler):
    # The services log their own requests.
    def log_message(self, *args):
        pass


def serve(name, app, port):
    """Serve a WSGI app on loopback from a thread; return the server."""
    server = simple_server.make_server(HOST, port, app, server_class=_Server,
                                       handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name=name,
                     daemon=True).start()
    return server


def http_status(address, timeout=2):
    """The status of a GET, or None when nothing answers."""
    # No proxy: a proxy from the environment cannot reach our loopback.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(address, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def wait_for_http(address, timeout, expect=(200, 300)):
    """Poll a health URL until it answers one of ``expect``."""
    deadline = time.monotonic() + timeout
    while True:
        status = http_status(address)
        if status in expect:
            return status
        if time.monotonic() > deadline:
            raise TimeoutError('%s answered %s, not %s after %ds'
                               % (address, status, expect, timeout))
        time.sleep(0.1)


def wait_for_token(spec, username, timeout):
    """Wait until Keystone issues ``username`` a token: up and provisioned.

    A service needs more than Keystone answering: its own user must exist.
    """
    body = json.dumps({'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': username, 'password': PASSWORD,
            'domain': {'id': 'default'}}}},
        'scope': {'project': {'name': SERVICE_PROJECT,
                              'domain': {'id': 'default'}}}}}).encode()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + timeout
    while True:
        request = urllib.request.Request(
            auth_url(spec) + '/auth/tokens', data=body,
            headers={'Content-Type': 'application/json'})
        try:
            with opener.open(request, timeout=5) as response:
                if response.status == 201:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError('Keystone gave %s no token within %ds'
                               % (username, timeout))
        time.sleep(0.2)


def _die_with_parent(parent_pid):
    """Stop when the supervisor goes away, even if it was killed -9."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, name='parent-watch', daemon=True).start()


def run(name, start):
    """Main of a service process: ``python -m ... SPEC READY_FD``.

    ``start(spec)`` brings the service up and returns its WSGI servers; the
    process then writes "ready" on READY_FD and serves until SIGTERM or
    SIGINT (or until the supervisor dies).
    """
    parser = argparse.ArgumentParser(prog='pcloud-sandbox-' + name)
    parser.add_argument('spec', help='JSON spec written by the supervisor')
    parser.add_argument('ready_fd', type=int,
                        help='file descriptor to report readiness on')
    args = parser.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    # Services parse sys.argv themselves: leave them nothing to trip on.
    sys.argv = [sys.argv[0]]
    stop = threading.Event()
    _die_with_parent(spec['supervisor_pid'])
    try:
        servers = start(spec)
    except BaseException as e:
        traceback.print_exc()
        os.write(args.ready_fd, ('failed: %s: %s\n' % (
            type(e).__name__, e)).encode())
        os._exit(1)
    # Set after start: some services install handlers of their own.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *a: stop.set())
    os.write(args.ready_fd, b'ready\n')
    os.close(args.ready_fd)
    sys.stderr.write('%s ready\n' % name)
    sys.stderr.flush()
    stop.wait()
    for server in servers:
        server.shutdown()
        server.server_close()
    sys.stderr.write('%s stopped\n' % name)
    sys.stderr.flush()
    # The state is throwaway: skip the services' slow graceful stops.
    os._exit(0)
