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

"""Truth at once (issue 31): the ledger follows Nova's notifications.

A sandbox of its own, on MariaDB and RabbitMQ, where Nova sends versioned
notifications and blazar-manager follows them (cloud.nova_events), with
the Placement mirror's interval left at its default (60 s): what a
server deleted, booted or moved frees or takes is in the ledger before
any mirror pass, so a reservation needing exactly that capacity is
admitted at once. The shared sandbox (fake:// transport, no events
between its processes) shows the fallback: the pass repairs it.
"""

import atexit
import configparser
import io
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import sqlalchemy as sa

from pcloud_plugin.cloud import mirror
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import placement
from pcloud_plugin.sandbox import supervisor
from pcloud_plugin.tests.functional.sandbox import fixture
from pcloud_plugin.tests.functional.sandbox import test_capacity_truth
from pcloud_plugin.tests.functional.sandbox import test_cloud

_LOCK = threading.Lock()
_CLOUD = {}


def _missing():
    """Why no sandbox on MariaDB and RabbitMQ can run here, or None."""
    engine = sa.create_engine(test_cloud.MYSQL + '/')
    try:
        engine.connect().close()
    except sa.exc.OperationalError as e:
        return 'no MariaDB for this test: %s' % e
    finally:
        engine.dispose()
    parsed = urllib.parse.urlsplit(test_cloud.RABBIT)
    try:
        socket.create_connection((parsed.hostname, parsed.port or 5672),
                                 timeout=3).close()
    except OSError as e:
        return 'no RabbitMQ for this test: %s' % e
    if not shutil.which('rabbitmqctl'):
        return 'no rabbitmqctl to make a virtual host for this test'
    return None


def _rabbitmqctl(*args):
    subprocess.run(('rabbitmqctl',) + args, check=True, capture_output=True,
                   timeout=120)


def _stop(sandbox, engine, prefix, vhost):
    try:
        sandbox.stop()
    finally:
        shutil.rmtree(sandbox.state_dir, ignore_errors=True)
        with engine.connect() as connection:
            for (name,) in connection.execute(sa.text(
                    'SHOW DATABASES LIKE :name'), {'name': prefix + '%'}):
                connection.exec_driver_sql('DROP DATABASE `%s`' % name)
        engine.dispose()
        subprocess.run(('rabbitmqctl', 'delete_vhost', vhost),
                       capture_output=True, timeout=120)


def get_sandbox(test):
    """This process's sandbox on MariaDB and RabbitMQ (started on first

    use, stopped and its databases and virtual host removed at exit);
    skips ``test`` where either server is missing.
    """
    with _LOCK:
        if 'missing' not in _CLOUD:
            _CLOUD['missing'] = _missing()
        if _CLOUD['missing']:
            test.skipTest(_CLOUD['missing'])
        sandbox = _CLOUD.get('sandbox')
        if sandbox is not None and not sandbox.dead():
            return sandbox
        prefix = 'pcloud_events_%s' % uuid.uuid4().hex[:8]
        vhost = 'pcloud_%s' % uuid.uuid4().hex[:12]
        _rabbitmqctl('add_vhost', vhost)
        _rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*',
                     '.*')
        engine = sa.create_engine(test_cloud.MYSQL + '/')
        sandbox = supervisor.Sandbox(
            tempfile.mkdtemp(prefix='pcloud-sandbox-', dir=fixture._TMP),
            db='%s/%s' % (test_cloud.MYSQL, prefix),
            transport=urllib.parse.urlsplit(test_cloud.RABBIT)._replace(
                path='/' + vhost).geturl(),
            computes=2, ports=fixture.free_ports(), out=io.StringIO(),
            # The defaults: no pass comes to the rescue in a test.
            blazar_options={'pcloud': {'placement_mirror_interval': 60,
                                       'healing_interval': 60}})
        atexit.register(_stop, sandbox, engine, prefix, vhost)
        sandbox.start()
        _CLOUD['sandbox'] = sandbox
        return sandbox


class _Events(test_capacity_truth._Capacity):
    """The _Capacity helpers, on this module's sandbox."""

    def setUp(self):
        super(test_capacity_truth._Capacity, self).setUp()
        self.sandbox = get_sandbox(self)
        self.cli = fixture.Cli(self.sandbox)
        clients = fixture.Clients(self.sandbox)
        self.nova, self.placement = clients.nova, clients.placement
        self.admin, self.demo = clients.admin, clients.demo
        self.computes = sorted(c['name'] for c in self.sandbox.computes)

    def _last_pass(self):
        return fixture.ledger_sql(
            self.sandbox, 'SELECT finished_at FROM pcloud_mirror_passes')

    def _gone_from_nova(self, server):
        """Delete ``server``; the time Nova's API no longer has it."""
        self.nova.servers.delete(server)
        while True:
            try:
                self.nova.servers.get(server)
            except Exception as e:  # novaclient's NotFound
                if getattr(e, 'code', None) == 404:
                    return time.monotonic()
                raise
            time.sleep(0.05)

    def _followed(self, title, check):
        """Seconds until ``check()`` holds, with no mirror pass between:

        None if a pass completed meanwhile (it could have done it).
        """
        before = self._last_pass()
        began = time.monotonic()
        while not check():
            self.assertLess(time.monotonic() - began, 30,
                            '%s: not in 30 s' % title)
            time.sleep(0.05)
        took = time.monotonic() - began
        return took if self._last_pass() == before else None


class DeletedServer(_Events):

    def test_a_deleted_servers_capacity_is_reservable_at_once(self):
        host = self.computes[0]
        self._pool(*self.computes[1:])
        provider = self._provider(host)
        usage = mirror.usage_consumer(provider)
        free = placement.free(self.sandbox, 'MEMORY_MB')[host]
        flavor = max((f for f in self.nova.flavors.list()
                      if f.name.startswith('m1.') and f.ram <= free),
                     key=lambda f: f.ram)
        slot = self._slot(free - flavor.ram // 2)
        seconds = []
        # A mirror pass in the window could have done it: then again.
        for _attempt in range(3):
            server, booted_on = self._boot('evented', flavor.name,
                                           common.ALT_USER)
            self.assertEqual(host, booted_on)
            # Booted: held by the ledger from Nova's event, no pass.
            self._followed('the boot in the ledger', lambda: (
                self._ledger_memory(usage) == flavor.ram))
            self._refused(self._lease, self.demo, slot)
            deleted_at = self._gone_from_nova(server)
            took = self._followed('the delete in the ledger', lambda: (
                self._ledger_memory(usage) == 0))
            if took is not None:
                seconds.append(time.monotonic() - deleted_at)
                break
        self.assertTrue(seconds, 'a mirror pass came each time')
        lease = self._lease(self.demo, slot)
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        self.assertEqual([host], self._slot_hosts(lease))
        # Within a second of Nova's API no longer showing the server on
        # a quiet machine; bounded loosely here (timing is the bench's).
        print('delete followed %.2f s after Nova deleted the server'
              % seconds[0])
        self.assertLess(seconds[0], 10)


class MovedServer(_Events):

    def _where(self, server):
        return getattr(self.nova.servers.get(server), 'OS-EXT-SRV-ATTR:host')

    def _moved(self, title, server, move):
        """Seconds until the ledger holds the memory of the flavor that

        ``move()`` returns where ``server`` runs and none on the other
        compute, with no mirror pass between; moved again if a pass came
        (it could have done it).
        """
        usage = {host: mirror.usage_consumer(self._provider(host))
                 for host in self.computes}
        for _attempt in range(3):
            ram = self.nova.flavors.find(name=move()).ram
            where = self._where(server)
            took = self._followed(title, lambda: all(
                self._ledger_memory(usage[host]) ==
                (ram if host == where else 0) for host in self.computes))
            if took is not None:
                return took
        self.fail('%s: a mirror pass came each time' % title)

    def _migrate(self, server):
        (other,) = set(self.computes) - {self._where(server)}
        self.cli.run('openstack', '--os-compute-api-version', '2.56',
                     'server', 'migrate', '--host', other, '--wait',
                     server)
        self.cli.run('openstack', 'server', 'resize', 'confirm', server)
        return 'm1.small'

    def _resize(self, server, flavors):
        flavors.reverse()
        self.cli.run('openstack', 'server', 'resize', '--flavor',
                     flavors[0], '--wait', server)
        self.cli.run('openstack', 'server', 'resize', 'confirm', server)
        return flavors[0]

    def test_a_migrated_and_resized_server_is_counted_where_it_runs(self):
        server, _booted_on = self._boot('moving', 'm1.small',
                                        common.ALT_USER)
        self._followed('the boot in the ledger', lambda: (
            self._ledger_memory(mirror.usage_consumer(self._provider(
                self._where(server)))) > 0))
        took = self._moved('the migration in the ledger', server,
                           lambda: self._migrate(server))
        print('migration followed in %.2f s' % took)
        # Resized (on whichever host the scheduler picks), back and
        # forth if a pass came: counted once, at its size, where it runs.
        flavors = ['m1.small', 'm1.medium']
        took = self._moved('the resize in the ledger', server,
                           lambda: self._resize(server, flavors))
        print('resize followed in %.2f s' % took)


class DisabledCompute(_Events):

    def test_a_disabled_compute_is_healed_at_once(self):
        lease = self._lease(self.demo, self._slot(512),
                            start=test_capacity_truth._minute(hours=1),
                            end=test_capacity_truth._minute(hours=2))
        self.assertEqual('PENDING', self._settled(
            lease, common.DEMO_USER, 'PENDING', 'ERROR'))
        (host,) = self._slot_hosts(lease)
        log = self.sandbox.log('blazar')
        with open(log) as f:
            f.seek(0, 2)
            service = fixture.out_of_service(self, self.nova, host)
            took = self._followed('the reservation off %s' % host, lambda: (
                self._slot_hosts(lease) not in ([host], [])))
            healed = f.read()
        # Healing ran on Nova's event, not on its 60 s timer.
        self.assertIn('the compute service of %s is disabled; healing now'
                      % host, healed)
        print('placed again in %s s' % took)
        with open(log) as f:
            f.seek(0, 2)
            self.nova.services.enable(service.id)
            said = []
            self._until('the enable followed', lambda: (
                said.append(f.read()) or 'the compute service of %s is '
                'enabled' % host in ''.join(said)), 30)


class FallbackPass(test_capacity_truth._Capacity):
    """Without Nova's events (the shared sandbox: its fake:// transport

    does not reach from Nova's process to Blazar's, so ``[pcloud]
    nova_notifications`` is off there), the mirror's periodic pass
    repairs the ledger, and says so in its log.
    """

    def test_the_periodic_pass_repairs_what_no_event_told(self):
        conf = configparser.RawConfigParser()
        conf.read(self.sandbox.path('blazar', 'blazar.conf'))
        self.assertFalse(conf.getboolean('pcloud', 'nova_notifications'))
        host = self.computes[0]
        self._pool(*self.computes[1:])
        provider = self._provider(host)
        usage = mirror.usage_consumer(provider)
        interval = self._mirror_interval()
        server, booted_on = self._boot('unevented', 'm1.small',
                                       common.ALT_USER)
        self.assertEqual(host, booted_on)
        self._until('the pass to hold the boot', lambda: (
            self._ledger_memory(usage) > 0), 4 * interval)
        with open(self.sandbox.log('blazar')) as f:
            f.seek(0, 2)
            self._delete_server(server)
            self._until('the pass to let it go', lambda: (
                self._ledger_memory(usage) == 0), 4 * interval)
            said = []
            self._until('the pass to say so', lambda: (
                said.append(f.read()) or 'usage repaired on' in
                ''.join(said)), 4 * interval)
        self.assertIn(provider, ''.join(said))


class LeaseInstances(_Events):
    """Every instance booted into a reservation is registered with its

    lease when Nova reports it created, and taken from it when deleted
    (seeds/001); the lessee sees them on the lease.
    """

    def _on_lease(self, lease):
        """{instance: left_at} the lessee is shown on the lease."""
        shown = self.cli.json('openstack', 'pcloud', 'lease', 'show',
                              lease['id'], user=common.DEMO_USER)
        (reservation,) = shown['reservations']
        return shown['instances'], {stay['id']: stay['left_at']
                                    for stay in reservation['instances']}

    def test_a_booted_instance_is_on_its_lease_until_deleted(self):
        lease = self._lease(self.demo, self._slot(512))
        self.assertEqual('ACTIVE', self._settled(lease, common.DEMO_USER,
                                                 'ACTIVE', 'ERROR'))
        rid = fixture.reservation_of(self.sandbox, lease['id'])
        server, _host = self._boot('in-lease', rid, common.DEMO_USER)
        self._followed('the instance on its lease', lambda: (
            self._on_lease(lease) == ([server], {server: None})))
        self._delete_server(server)
        self._followed('the instance off its lease', lambda: (
            self._on_lease(lease)[0] == []))
        self.assertIsNotNone(self._on_lease(lease)[1][server])
