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

"""The sandbox cloud as a session-scoped fixture for cross-service tests.

The first test of a test process that uses ``SandboxFixture`` starts the
cloud (Keystone, Nova with Placement, Blazar: three processes, and
Horizon with our dashboard, on free loopback ports); later tests reuse
it; it stops when the process exits. Tests must leave it as they would
like to find it (or use their own project and names).
``SandboxFixture(blazar_filters=True)`` is another, separate cloud whose
scheduler also runs Blazar's filters: each variant is started once per
process.
"""

import atexit
import datetime
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import fixtures
from keystoneauth1 import adapter
from keystoneauth1 import loading
from keystoneauth1 import session as ks_session
from novaclient import client as nova_client
import sqlalchemy as sa

from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import blazar_proc
from pcloud_plugin.sandbox import common

from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox import supervisor
from pcloud_plugin.tests.functional.sandbox import cli_zygote

_LOCK = threading.Lock()
# The running sandbox of each variant (its blazar_filters).
_SANDBOXES = {}
# Taken at import: tests get a temporary directory of their own (oslotest),
# removed when they end, and the cloud outlives them.
_TMP = tempfile.gettempdir()


def free_ports():
    """A free loopback port for each of the sandbox's services."""
    sockets = []
    try:
        for _ in supervisor.PORT_NAMES:
            sock = socket.socket()
            sock.bind(('127.0.0.1', 0))
            sockets.append(sock)
        return {name: sock.getsockname()[1]
                for name, sock in zip(supervisor.PORT_NAMES, sockets)}
    finally:
        for sock in sockets:
            sock.close()


def _stop(sandbox):
    sandbox.stop()
    shutil.rmtree(sandbox.state_dir, ignore_errors=True)


def get_sandbox(blazar_filters=False):
    """This process's running sandbox of a variant, started on first use."""
    with _LOCK:
        sandbox = _SANDBOXES.get(blazar_filters)
        if sandbox is not None and sandbox.dead():
            # A service died under an earlier test: start afresh.
            _stop(sandbox)
            sandbox = None
        if sandbox is None:
            sandbox = supervisor.Sandbox(
                tempfile.mkdtemp(prefix='pcloud-sandbox-', dir=_TMP),
                ports=free_ports(), out=io.StringIO(), faults=True,
                blazar_filters=blazar_filters,
                # Horizon beside the plain cloud, for the browser tests:
                # it is up before Keystone is, so costs no time.
                dashboard=not blazar_filters,
                # Backfill on and maintenance passes as often as healing,
                # for their stories only: the stories with sandboxes of
                # their own (the soak among them) run without.
                blazar_options=None if blazar_filters else {'pcloud': {
                    'backfill_interval': blazar_proc.HEALING_INTERVAL,
                    'backfill_warning': 30,
                    'maintenance_interval': blazar_proc.HEALING_INTERVAL}})
            try:
                sandbox.start()
            except BaseException:
                shutil.rmtree(sandbox.state_dir, ignore_errors=True)
                raise
            atexit.register(_stop, sandbox)
            _SANDBOXES[blazar_filters] = sandbox
        return sandbox


class Cli(commands.Cli):
    """The real command-line clients; ``openstack`` forked from a process

    that imported it once (cli_zygote): the stories run hundreds. A try
    costs a fork, so waits try every half second throughout.
    """

    MAX_PAUSE = 0.5

    def _process(self, argv, env):
        if os.path.basename(argv[0]) != 'openstack':
            return super()._process(argv, env)
        return cli_zygote.run(argv, env, timeout=120)


class SandboxFixture(fixtures.Fixture):
    """``sandbox`` (a running supervisor.Sandbox) and ``cli`` (the real

    command-line clients pointed at it); ``blazar_filters``: the variant
    whose Nova also runs Blazar's filters.
    """

    def __init__(self, blazar_filters=False):
        super().__init__()
        self.blazar_filters = blazar_filters

    def _setUp(self):
        self.sandbox = get_sandbox(self.blazar_filters)
        self.cli = Cli(self.sandbox)
        ledger_caught_up(self.sandbox)


def ledger_caught_up(sandbox, timeout=60):
    """Wait until the ledger holds no usage outside reservations that

    Placement no longer has. Placement does not move a provider's
    generation when an allocation is deleted, so a server an earlier test
    deleted stays counted in the ledger until blazar-manager's next mirror
    pass: a test that starts at once would find free capacity short.
    """
    placement = adapter.Adapter(session(sandbox, 'admin'),
                                service_type='placement',
                                default_microversion='1.26')
    engine = sa.create_engine(sandbox.databases.urls['ledger'])
    deadline = time.monotonic() + timeout
    try:
        while True:
            with engine.connect() as conn:
                held = conn.execute(sa.text(
                    'SELECT p.uuid, c.name, SUM(a.used) FROM allocations a '
                    'JOIN resource_providers p ON '
                    'p.id = a.resource_provider_id JOIN resource_classes c '
                    'ON c.id = a.resource_class_id WHERE a.consumer_id '
                    'LIKE :usage GROUP BY p.uuid, c.name'),
                    {'usage': db_claims.USAGE_PREFIX + '%'}).all()
            usages = {}
            for provider in {row[0] for row in held}:
                found = placement.get(
                    '/resource_providers/%s/usages' % provider,
                    raise_exc=False)
                usages[provider] = (found.json()['usages']
                                    if found.status_code == 200 else {})
            stale = [row for row in held
                     if row[2] > usages[row[0]].get(row[1], 0)]
            if not stale:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    'the ledger still counts usage Placement no longer has '
                    '(provider, class, ledger): %s' % stale)
            time.sleep(0.5)
    finally:
        engine.dispose()


def session(sandbox, user):
    """A keystoneauth session of ``user`` on the sandbox's Keystone."""
    env = sandbox.env(user)
    auth = loading.get_plugin_loader('password').load_from_options(
        auth_url=env['OS_AUTH_URL'], username=env['OS_USERNAME'],
        password=env['OS_PASSWORD'], project_name=env['OS_PROJECT_NAME'],
        user_domain_id='default', project_domain_id='default')
    return ks_session.Session(auth=auth)


class Clients(object):
    """On a sandbox: the admin's Nova, Placement and Pcloud API clients,

    and the demo member's Pcloud API client and session.
    """

    def __init__(self, sandbox):
        admin = session(sandbox, 'admin')
        self.nova = nova_client.Client('2.53', session=admin)
        self.placement = adapter.Adapter(admin, service_type='placement',
                                         default_microversion='1.26')
        self.admin = pcloud_client.Client(admin)
        self.demo_session = session(sandbox, common.DEMO_USER)
        self.demo = pcloud_client.Client(self.demo_session)


def delete_server(cli, server_id, user):
    """Delete a server, waiting until it is gone (or was already)."""
    try:
        cli.run('openstack', 'server', 'delete', '--wait', server_id,
                user=user)
    except commands.CommandFailed as e:
        if 'No Server found' not in str(e):
            raise


def _nova_said(log, server_id):
    """What Nova's log says of a boot that erred: the scheduler's last

    lines about filters and candidates, then every warning or error
    line (tracebacks' first lines) naming the server.
    """
    with open(log, errors='replace') as f:
        lines = f.readlines()
    scheduler = [line[-300:] for line in lines if 'Filter' in line
                 or 'allocation_candidates' in line][-12:]
    about = [line[:1500] for line in lines if server_id in line and (
        ' WARNING ' in line or ' ERROR ' in line)][-12:]
    return scheduler + about


def boot(test, cli, name, flavor, user, *options):
    """Boot with the real client and wait until ACTIVE (deleted when the

    test ends); the server as ``openstack server show`` gives it. A boot
    that errs fails the test with its fault, the scheduler's last
    words about filters and candidates, and Nova's warnings and errors
    about the server (a compute's reason for a failed build).
    """
    server = cli.json('openstack', 'server', 'create', '--flavor', flavor,
                      '--image', 'cirros', '--nic', 'none', *options, name,
                      user=user)
    test.addCleanup(delete_server, cli, server['id'], user)
    found = cli.wait(
        'server %s' % name, ('openstack', 'server', 'show', server['id']),
        lambda found: found['status'] in ('ACTIVE', 'ERROR'))
    if found['status'] != 'ACTIVE':
        test.fail('%s: %s\n%s' % (name, found.get('fault'), ''.join(
            _nova_said(cli.sandbox.log('nova'), server['id']))))
    return found


def out_of_service(test, nova, host):
    """Disable a compute service for the length of ``test``."""
    (service,) = nova.services.list(host=host, binary='nova-compute')
    nova.services.disable(service.id)
    test.addCleanup(nova.services.enable, service.id)
    return service


def forced_down(test, nova, host):
    """Force a compute service down for the length of ``test``: Nova's

    scheduler takes nothing there, while Placement, and so the ledger,
    still sees the host's room (a host failure Nova was told of).
    """
    (service,) = nova.services.list(host=host, binary='nova-compute')
    nova.services.force_down(service.id, True)
    test.addCleanup(nova.services.force_down, service.id, False)
    return service


def blazar_host(test, sandbox, admin, name):
    """Give a compute to Blazar's physical:host plugin for the length of

    ``test``; Blazar's host record. Deleting it deletes the reservation
    provider Blazar made under the compute's, which nova-compute keeps in
    its cache (every build and resource update there then fails): as
    Nova documents for such a case, nova-compute is sent SIGHUP after.
    """
    host = admin._request('POST', '/os-hosts', {'name': name})['host']
    test.addCleanup(forget_providers, sandbox)
    test.addCleanup(admin._request, 'DELETE', '/os-hosts/%s' % host['id'])
    return host


def forget_providers(sandbox):
    """SIGHUP to the sandbox's nova-computes: they forget their cached

    provider trees (sandbox.nova_proc).
    """
    with open(sandbox.path(supervisor.PIDS_FILE)) as f:
        pid, _created = json.load(f)['children']['nova']
    os.kill(pid, signal.SIGHUP)


def _blazar_sql(sandbox, statement, **params):
    """Run one statement on Blazar's database; its first column's value."""
    engine = sa.create_engine(sandbox.databases.urls['blazar'])
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement), params)
            return result.scalar() if result.returns_rows else None
    finally:
        engine.dispose()


def ledger_sql(sandbox, statement, **params):
    """The first column of every row a query of the ledger returns."""
    engine = sa.create_engine(sandbox.databases.urls['ledger'])
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text(statement), params).scalars())
    finally:
        engine.dispose()


def claimed_on(sandbox, consumer):
    """The hosts (root providers' names) a ledger consumer's claim is on."""
    return set(ledger_sql(
        sandbox, 'SELECT DISTINCT r.name FROM allocations a JOIN '
        'resource_providers p ON p.id = a.resource_provider_id JOIN '
        'resource_providers r ON r.id = p.root_provider_id WHERE '
        'a.consumer_id = :consumer', consumer=consumer))


def reservation_of(sandbox, lease_id):
    """The id of a lease's (first) reservation, from Blazar's database."""
    return _blazar_sql(sandbox, 'SELECT id FROM reservations WHERE '
                       'lease_id = :lease', lease=lease_id)


def end_lease_now(sandbox, lease_id):
    """Make a lease's end event due now (Blazar's dates go by minutes)."""
    _blazar_sql(sandbox, "UPDATE events SET time = :now WHERE lease_id = "
                ":lease AND event_type = 'end_lease'",
                now=datetime.datetime.utcnow(), lease=lease_id)


def mariadb_story(test, server_url, name):
    """Skip ``test`` where no MariaDB answers at ``server_url``; else an

    engine on the server, and the database the sandbox makes under the
    --db name ``name`` itself (the story's ledger) dropped when the test
    ends, however the sandbox stopped.
    """
    engine = sa.create_engine(server_url + '/')
    try:
        engine.connect().close()
    except sa.exc.OperationalError as e:
        engine.dispose()
        test.skipTest('no MariaDB for this test: %s' % e)
    test.addCleanup(engine.dispose)

    def drop_story_database():
        with engine.connect() as connection:
            connection.exec_driver_sql('DROP DATABASE IF EXISTS %s' % name)
    test.addCleanup(drop_story_database)
    return engine


def rabbitmq_story(test, server_url):
    """A transport URL on a virtual host of the test's own on RabbitMQ.

    Nova's and Blazar's queues have fixed names (conductor, scheduler,
    blazar.manager...): two clouds on one virtual host would consume each
    other's messages, and queues a killed service leaves would hand its
    messages to the next cloud. The virtual host, and with it every queue
    and exchange the cloud made, is deleted when the test ends. Skips
    ``test`` where no RabbitMQ answers on ``server_url`` or no rabbitmqctl
    on this machine can make a virtual host.
    """
    parsed = urllib.parse.urlsplit(server_url)
    try:
        socket.create_connection((parsed.hostname, parsed.port or 5672),
                                 timeout=3).close()
    except OSError as e:
        test.skipTest('no RabbitMQ for this test: %s' % e)
    vhost = 'pcloud_%s' % uuid.uuid4().hex[:12]
    user = parsed.username or 'guest'

    def rabbitmqctl(*args):
        try:
            subprocess.run(('rabbitmqctl',) + args, check=True,
                           capture_output=True, timeout=120)
        except subprocess.CalledProcessError as e:
            return '%s: %s' % (e, e.stderr.decode(errors='replace').strip())
        except (OSError, subprocess.SubprocessError) as e:
            return str(e)
    failure = rabbitmqctl('add_vhost', vhost)
    if failure:
        test.skipTest('rabbitmqctl cannot make a virtual host for this '
                      'test: %s' % failure)
    test.addCleanup(rabbitmqctl, 'delete_vhost', vhost)
    failure = rabbitmqctl('set_permissions', '-p', vhost, user,
                          '.*', '.*', '.*')
    if failure:
        test.fail('rabbitmqctl set_permissions: %s' % failure)
    return parsed._replace(path='/' + vhost).geturl()


def slot_lease(client, name):
    """A lease of one small slot, an hour from now for an hour."""
    later = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
    return client._request('POST', '/leases', {
        'name': name, 'events': [],
        'start_date': later.strftime('%Y-%m-%d %H:%M'),
        'end_date': (later + datetime.timedelta(hours=1)).strftime(
            '%Y-%m-%d %H:%M'),
        'reservations': [{
            'resource_type': 'virtual:instance', 'amount': 1,
            'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
            'affinity': None, 'resource_properties': ''}]})['lease']


def delete_lease(client, lease_id, attempts=10):
    """Delete a lease through the API; one already gone is fine.

    While one of the lease's events is under way the API answers 409
    (LeaseBusy, with Retry-After): as a user would, try again a moment
    later. Any other error fails at once.
    """
    for attempt in range(attempts):
        try:
            client._request('DELETE', '/leases/%s' % lease_id)
            return
        except pcloud_client.PcloudError as e:
            if e.code == 404:
                return
            if e.code != 409 or attempt == attempts - 1:
                raise
            time.sleep(2)
