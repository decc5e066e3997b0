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

"""The sandbox cloud: Keystone, Nova with Placement, and Blazar as three
processes, driven with the real command-line clients.
"""

import collections
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import fixtures
from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session
import psutil
import sqlalchemy as sa

from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.sandbox import blazar_proc
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox import supervisor
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

MYSQL = 'mysql+pymysql://openstack_citest:openstack_citest@127.0.0.1'
RABBIT = os.environ.get('PCLOUD_TEST_TRANSPORT_URL',
                        'rabbit://guest:guest@127.0.0.1:5672/')


def _leftovers(state_dir):
    """Processes whose command line names ``state_dir``: ours, alive."""
    found = []
    for proc in psutil.process_iter(['cmdline', 'status']):
        if (proc.info['status'] != psutil.STATUS_ZOMBIE
                and any(state_dir in arg
                        for arg in proc.info['cmdline'] or ())):
            found.append(proc)
    return found


def _text(output):
    """What a timed-out subprocess had printed (bytes then), as text."""
    if isinstance(output, bytes):
        return output.decode(errors='replace')
    return output or ''


def _port_args(ports):
    args = []
    for name, port in ports.items():
        args += ['--port', '%s=%d' % (name, port)]
    return args


class SharedCloud(base.TestCase):
    """Tests on the session-scoped cloud."""

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(fixture.SandboxFixture())
        self.cli = self.cloud.cli

    def test_catalog_serves_every_service_on_its_port(self):
        catalog = {entry['Type']: entry['Endpoints'] for entry in
                   self.cli.json('openstack', 'catalog', 'list')}
        ports = self.cloud.sandbox.ports
        for service_type, port in (('identity', 'keystone'),
                                   ('compute', 'nova'),
                                   ('placement', 'placement'),
                                   ('image', 'image'),
                                   ('reservation', 'blazar')):
            self.assertIn(':%d' % ports[port], str(catalog[service_type]))

    def test_hypervisors_have_distinct_sizes(self):
        sizes = {(c['vcpus'], c['memory_mb'])
                 for c in self.cloud.sandbox.computes}
        self.assertEqual(len(self.cloud.sandbox.computes), len(sizes))
        names = {h['Hypervisor Hostname'] for h in self.cli.json(
            'openstack', 'hypervisor', 'list')}
        self.assertEqual({c['name'] for c in self.cloud.sandbox.computes},
                         names)

    def test_scheduler_runs_the_pcloud_filter(self):
        with open(self.cloud.sandbox.path('nova', 'nova.conf')) as f:
            self.assertIn('PcloudFilter', f.read())
        # No host is in this pcloud: only the PcloudFilter can say so.
        name = 'vm-%s' % uuid.uuid4().hex[:8]
        self.assertRaises(
            commands.CommandFailed, self.cli.run, 'openstack', 'server',
            'create', '--flavor', 'm1.tiny', '--image', 'cirros', '--nic',
            'none', '--hint', 'pcloud=%s' % uuid.uuid4(), '--wait', name,
            user='demo')
        server = self.cli.json('openstack', 'server', 'show', name,
                               user='demo')
        self.assertEqual('ERROR', server['status'])
        self.assertIn('No valid host', str(server['fault']))
        self.cli.run('openstack', 'server', 'delete', name, user='demo')

    def test_serves_concurrent_clients(self):
        """Every request of 48 clients at once is answered, none reset."""
        sandbox = self.cloud.sandbox
        answers = collections.Counter()

        def client():
            session = fixture.session(sandbox, common.DEMO_USER)
            for service_type, path in (('reservation', '/leases'),
                                       ('compute', '/servers'),
                                       ('reservation', '/pclouds'),
                                       ('identity', '/projects')):
                try:
                    answers[session.get(path, endpoint_filter={
                        'service_type': service_type},
                        raise_exc=False).status_code // 100] += 1
                except Exception as e:
                    answers[repr(e)] += 1
        threads = [threading.Thread(target=client) for _ in range(48)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # identity /projects is a 403 for a member: an answer all the same.
        self.assertEqual({2: 48 * 3, 4: 48}, dict(answers))

    def test_keystone_answers_each_request_with_its_own_token(self):
        """Trusts made while a trust-scoped token is in use all succeed.

        Keystone's auth middleware keeps the token it validated on itself,
        one object for every request; served from threads, a tenant's
        trust creation could take a trust-scoped token of another request
        as its own, and was refused 403 as a redelegation (Blazar then
        answered the lease creation 500).
        """
        sandbox = self.cloud.sandbox
        demo_session = fixture.session(sandbox, common.DEMO_USER)
        admin_env = sandbox.env('admin')
        admin_id = fixture.session(sandbox, 'admin').get_user_id()

        def make_trust():
            response = demo_session.post('/OS-TRUST/trusts', json={'trust': {
                'trustor_user_id': demo_session.get_user_id(),
                'trustee_user_id': admin_id,
                'project_id': demo_session.get_project_id(),
                'impersonation': True,
                'roles': [{'name': 'member'}]}}, endpoint_filter={
                    'service_type': 'identity'}, raise_exc=False)
            if response.status_code == 201:
                trust_id = response.json()['trust']['id']
                self.addCleanup(demo_session.delete,
                                '/OS-TRUST/trusts/%s' % trust_id,
                                endpoint_filter={'service_type': 'identity'},
                                raise_exc=False)
                return trust_id
            return response.status_code
        trust_scoped = ks_session.Session(auth=v3.Password(
            auth_url=admin_env['OS_AUTH_URL'],
            username=admin_env['OS_USERNAME'],
            password=admin_env['OS_PASSWORD'], user_domain_id='default',
            trust_id=make_trust()))
        made = collections.Counter()
        done = threading.Event()

        def use_trust():
            while not done.is_set():
                trust_scoped.get('/auth/catalog', endpoint_filter={
                    'service_type': 'identity'}, raise_exc=False)

        def tenant():
            for _ in range(25):
                trust = make_trust()  # its id, or the status refusing it
                made['made' if isinstance(trust, str) else trust] += 1
        users = [threading.Thread(target=use_trust) for _ in range(8)]
        tenants = [threading.Thread(target=tenant) for _ in range(8)]
        for thread in users + tenants:
            thread.start()
        for thread in tenants:
            thread.join()
        done.set()
        for thread in users:
            thread.join()
        # Before Keystone answered one request at a time: 2 of 320 were
        # 403.
        self.assertEqual({'made': 200}, dict(made))

    def test_blazar_loads_our_plugins_from_entry_points(self):
        with open(self.cloud.sandbox.path('blazar', 'blazar.conf')) as f:
            conf = f.read()
        for name in blazar_proc.plugins():
            self.assertIn(name, conf)
        self.assertIn('pcloud.virtual.instance', blazar_proc.plugins())


class Demo(base.TestCase):

    def test_demo_with_the_real_clients_then_nothing_left(self):
        # The story waits for a scheduled lease to start and end on the
        # minute: longer than OS_TEST_TIMEOUT (a new alarm replaces it).
        # 11 to 21 minutes seen on a loaded 2-core machine; room for more.
        self.useFixture(fixtures.Timeout(2460, gentle=True))
        state = self.useFixture(fixtures.TempDir()).path
        try:
            result = subprocess.run(
                [sys.executable, '-m', 'pcloud_plugin.cmd.sandbox',
                 '--state-dir', state, '--demo']
                + _port_args(fixture.free_ports()),
                capture_output=True, text=True, timeout=2400)
        except subprocess.TimeoutExpired as e:
            # Its services outlive the killed runner: stopped here. And
            # say which step it was at.
            for proc in _leftovers(state):
                proc.kill()
            self.fail('The demo ran past %d s; it had printed:\n%s' % (
                e.timeout, _text(e.stdout) + _text(e.stderr)))
        output = result.stdout + result.stderr
        self.assertEqual(0, result.returncode, output)
        self.assertIn('Sandbox ready in', output)
        self.assertIn('Demo passed', output)
        self.assertNotIn('[FAIL]', output)
        self.assertIn('openstack server create: demo-vm ACTIVE', output)
        # The stories of the reservation plugin and of pclouds ran.
        self.assertIn('another project cannot use the reserved flavor: '
                      'refused', output)
        self.assertIn('the alt project, not authorized, cannot: ', output)
        self.assertIn('the demo member deletes the empty pcloud: pcloud '
                      'deleted', output)
        self.assertIn('the host leaves the pcloud, with its own ratio: '
                      'TERMINATED', output)
        self.assertIn("--type BEST-EFFORT: ACTIVE; admin-squatter "
                      "live-migrated", output)
        self.assertEqual([], _leftovers(state))


class Lifecycle(base.TestCase):

    def _start(self, state, ports, *args):
        proc = subprocess.Popen(
            [sys.executable, '-m', 'pcloud_plugin.cmd.sandbox',
             '--state-dir', state] + _port_args(ports) + list(args),
            # Unbuffered: no line may hide in a buffer select cannot see.
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.addCleanup(self._kill, proc)
        lines = []
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 300
            while not lines or lines[-1] != 'Ctrl-C stops it.':
                if not selector.select(deadline - time.monotonic()):
                    self.fail('not ready: %s' % lines)
                line = proc.stdout.readline()
                if not line:
                    self.fail('exited %s: %s' % (proc.wait(), lines))
                lines.append(line.decode().strip())
        return proc, lines

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def test_sigterm_stops_all_and_a_start_after_a_crash_works(self):
        state = self.useFixture(fixtures.TempDir()).path
        ports = fixture.free_ports()
        crashed, _ = self._start(state, ports)
        # The supervisor and its three services.
        self.assertEqual(4, len(_leftovers(state)))
        # The supervisor dies without a chance to stop anything: its
        # children notice and go.
        crashed.kill()
        crashed.wait()
        gone, alive = psutil.wait_procs(_leftovers(state), timeout=30)
        self.assertEqual([], alive)
        proc, lines = self._start(state, ports)
        self.assertIn('export OS_AUTH_URL=http://127.0.0.1:%d/v3'
                      % ports['keystone'], lines)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(60))
        self.assertEqual([], _leftovers(state))

    def test_a_start_after_a_crash_carries_on_with_the_cloud(self):
        state = self.useFixture(fixtures.TempDir()).path
        ports = fixture.free_ports()
        crashed, _ = self._start(state, ports)
        cli = commands.Cli(supervisor.Sandbox(state, ports=ports))
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          'm1.tiny', '--image', 'cirros', '--nic', 'none',
                          '--wait', 'kept', user=common.DEMO_USER)
        pcloud = cli.json('openstack', 'pcloud', 'create', 'kept-pcloud',
                          user=common.DEMO_USER)
        crashed.kill()
        crashed.wait()
        psutil.wait_procs(_leftovers(state), timeout=30)

        proc, lines = self._start(state, ports)
        self.assertIn('Carrying on with the cloud in %s (--fresh starts a '
                      'new one).' % state, lines)
        self.assertEqual('ACTIVE', cli.json(
            'openstack', 'server', 'show', server['id'],
            user=common.DEMO_USER)['status'])
        self.assertEqual(pcloud['id'], cli.json(
            'openstack', 'pcloud', 'show', 'kept-pcloud',
            user=common.DEMO_USER)['id'])
        self.assertEqual(4, len(cli.json('openstack', 'hypervisor',
                                         'list')))
        # And it works: another server boots.
        self.assertEqual('ACTIVE', cli.json(
            'openstack', 'server', 'create', '--flavor', 'm1.tiny',
            '--image', 'cirros', '--nic', 'none', '--wait', 'new',
            user=common.DEMO_USER)['status'])
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(60))

    def test_a_crashed_blazar_on_mariadb_leaves_the_cloud_to_carry_on(self):
        """A service that dies stops the sandbox, but on --db its

        databases stay (they were dropped, as at a clean stop): the next
        start carries on with the cloud, leases included.
        """
        name = 'pcloud_crash_%s' % uuid.uuid4().hex[:8]
        db = '%s/%s' % (MYSQL, name)
        engine = fixture.mariadb_story(self, MYSQL, name)

        def databases():
            with engine.connect() as connection:
                return connection.execute(sa.text(
                    'SHOW DATABASES LIKE :name'), {
                    'name': name + '\\_%'}).fetchall()
        state = self.useFixture(fixtures.TempDir()).path
        ports = fixture.free_ports()
        proc, _ = self._start(state, ports, '--db', db)
        client = pcloud_client.Client(fixture.session(
            supervisor.Sandbox(state, ports=ports), common.DEMO_USER))
        lease = fixture.slot_lease(client, 'kept')
        with open(os.path.join(state, supervisor.PIDS_FILE)) as f:
            blazar_pid = json.load(f)['children']['blazar'][0]
        os.kill(blazar_pid, signal.SIGKILL)
        self.assertEqual(1, proc.wait(60))
        self.assertNotEqual([], databases())

        proc, lines = self._start(state, ports, '--db', db)
        self.assertIn('Carrying on with the cloud in %s (--fresh starts a '
                      'new one).' % state, lines)
        self.assertEqual('PENDING', client._request(
            'GET', '/leases/%s' % lease['id'])['lease']['status'])
        fixture.delete_lease(client, lease['id'])
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(60))
        self.assertEqual([], databases())
        self.assertEqual([], _leftovers(state))

    def test_a_port_in_use_says_what_to_do(self):
        state = self.useFixture(fixtures.TempDir()).path
        ports = fixture.free_ports()
        taken = socket.socket()
        self.addCleanup(taken.close)
        taken.bind(('127.0.0.1', ports['nova']))
        taken.listen()
        result = subprocess.run(
            [sys.executable, '-m', 'pcloud_plugin.cmd.sandbox',
             '--state-dir', state] + _port_args(ports),
            capture_output=True, text=True, timeout=60)
        self.assertEqual(1, result.returncode)
        self.assertIn('port %d (nova) is in use' % ports['nova'],
                      result.stderr)
        self.assertIn('--port nova=N', result.stderr)

    def test_a_missing_service_says_what_to_install(self):
        self.useFixture(fixtures.MonkeyPatch(
            'pcloud_plugin.sandbox.supervisor.REQUIREMENTS',
            supervisor.REQUIREMENTS + (('no_such_module', 'no-such-dist'),)))
        sandbox = supervisor.Sandbox(
            self.useFixture(fixtures.TempDir()).path,
            ports=fixture.free_ports(), out=io.StringIO())
        e = self.assertRaises(supervisor.SandboxError, sandbox.start)
        self.assertIn('pip install no-such-dist', str(e))


class RealServers(base.TestCase):
    """--db and --transport: MariaDB and RabbitMQ, where they answer."""

    def _concurrent_deletes(self, sandbox):
        """Blazar's manager serves RPC calls at once on RabbitMQ: deletes

        of one lease that arrive together are one 204, then 404s (Blazar
        alone answers 500 to all but one).
        """
        client = pcloud_client.Client(fixture.session(sandbox,
                                                      common.DEMO_USER))
        for n in range(4):
            lease = fixture.slot_lease(client, 'deleted-%d' % n)
            codes = []
            start_line = threading.Barrier(3)

            def delete():
                start_line.wait()
                codes.append(client._adapter.request(
                    '/leases/%s' % lease['id'], 'DELETE',
                    raise_exc=False).status_code)
            threads = [threading.Thread(target=delete) for _ in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual([204, 404, 404], sorted(codes))

    def test_cloud_on_mariadb_and_rabbitmq(self):
        prefix = 'pcloud_sandbox_%s' % uuid.uuid4().hex[:8]
        engine = fixture.mariadb_story(self, MYSQL, prefix)
        transport = fixture.rabbitmq_story(self, RABBIT)
        state = self.useFixture(fixtures.TempDir()).path
        sandbox = supervisor.Sandbox(
            state, db='%s/%s' % (MYSQL, prefix), transport=transport,
            computes=2, ports=fixture.free_ports(), out=io.StringIO())
        with sandbox:
            with open(sandbox.path('nova', 'nova.conf')) as f:
                conf = f.read()
            self.assertIn('%s_nova_cell1' % prefix, conf)
            self.assertIn('rabbit://', conf)
            cli = commands.Cli(sandbox)
            self.assertEqual(2, len(cli.json('openstack', 'hypervisor',
                                             'list')))
            server = cli.json('openstack', 'server', 'create', '--flavor',
                              'm1.tiny', '--image', 'cirros', '--nic',
                              'none', '--wait', 'on-mariadb', user='demo')
            self.assertEqual('ACTIVE', server['status'])
            self._concurrent_deletes(sandbox)
        self.assertEqual([], _leftovers(state))
        # Neither the services' databases nor the story's ledger.
        with engine.connect() as connection:
            left = connection.execute(sa.text('SHOW DATABASES LIKE :name'), {
                'name': prefix + '%'}).fetchall()
        self.assertEqual([], left)
