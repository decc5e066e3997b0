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

"""Start, watch and stop the sandbox's three service processes.

The first start in a state directory makes a fresh cloud (Keystone from
its snapshot, empty Nova, Placement and Blazar databases); a later start
there carries on with the cloud it holds (its servers, pclouds, leases
and ledger), after a clean stop or a crash, unless told ``fresh``. With
databases on a server (``db``), a clean stop drops them: only a crash
leaves a cloud to carry on with. The state directory also keeps the last
run's configuration files and logs to look at.
"""

import errno
import importlib.util
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from urllib import parse

import psutil

from pcloud_plugin.sandbox import common

# Started in this order, stopped in the reverse one.
SERVICES = ('keystone', 'nova', 'blazar')
PORT_NAMES = ('keystone', 'nova', 'placement', 'blazar', 'image',
              'dashboard')
# Horizon with our dashboard, with --dashboard.
DASHBOARD = 'dashboard'
DEFAULT_BASE_PORT = 18500
# (vcpus, memory_mb, disk_gb) of the fake computes, in turn.
COMPUTE_SIZES = ((4, 8192, 100), (8, 16384, 200), (16, 32768, 400),
                 (32, 65536, 800))
# The modules each process needs, and what provides them.
REQUIREMENTS = (('keystone', 'keystone'), ('nova', 'nova'),
                ('placement', 'openstack-placement'), ('blazar', 'blazar'),
                ('openstackclient', 'python-openstackclient'),
                ('blazarclient', 'python-blazarclient'))
DATABASES = ('nova_api', 'nova_cell0', 'nova_cell1', 'placement', 'blazar',
             'ledger')
PIDS_FILE = 'sandbox.pids'
# Written once a cloud is up: its databases, to carry on with at restart.
CLOUD_FILE = 'cloud.json'


class SandboxError(Exception):
    """Something the user can act on; the message says what to do."""


def _check_requirements():
    missing = [dist for module, dist in REQUIREMENTS
               if importlib.util.find_spec(module) is None]
    if missing:
        raise SandboxError(
            'missing from this Python (%s): %s. Install them with '
            '"pip install %s", or run the sandbox through "tox -e sandbox", '
            'which does.' % (sys.executable, ', '.join(missing),
                             ' '.join(missing)))


def _check_port(name, port):
    with socket.socket() as sock:
        # As the servers will: a closed connection's TIME_WAIT is no user.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((common.HOST, port))
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise
            raise SandboxError(
                'port %d (%s) is in use on %s. Stop what listens there (is '
                'another sandbox running?), or choose other ports with '
                '--base-port N or --port %s=N.'
                % (port, name, common.HOST, name))


def _check_answers(what, address, hint):
    url = parse.urlsplit(address)
    try:
        socket.create_connection((url.hostname or common.HOST, url.port),
                                 timeout=3).close()
    except OSError as e:
        raise SandboxError('%s at %s:%s does not answer (%s): %s'
                           % (what, url.hostname, url.port, e, hint))


class _Databases:
    """SQLite files in the state directory, or databases on a server.

    With a server URL, its database name (``pcloud_sandbox`` if none) holds
    the demo's ledger story and the cloud's databases are created fresh
    beside it as ``<name>_<service>``, and dropped again at stop.
    """

    def __init__(self, state_dir, server_url=None):
        self.server_url = server_url
        if server_url:
            import sqlalchemy as sa
            url = sa.engine.make_url(server_url)
            self.prefix = url.database or 'pcloud_sandbox'
            self._server = url.set(database='')
            self.story_ledger = url.set(database=self.prefix).render_as_string(
                hide_password=False)
            self.urls = {key: self._server.set(
                database='%s_%s' % (self.prefix, key)).render_as_string(
                    hide_password=False) for key in DATABASES}
        else:
            self.story_ledger = 'sqlite:///%s' % os.path.join(
                state_dir, 'demo.db')
            self.urls = {key: 'sqlite:///%s' % os.path.join(
                state_dir, '%s.db' % key) for key in DATABASES}

    def _sql(self, *statements):
        import sqlalchemy as sa
        engine = sa.create_engine(self._server)
        try:
            with engine.connect() as connection:
                for statement in statements:
                    connection.exec_driver_sql(statement)
        except sa.exc.OperationalError as e:
            raise SandboxError('cannot use the database server at %s: %s'
                               % (self._server.render_as_string(), e.orig))
        finally:
            engine.dispose()

    def create(self):
        """Empty databases for this run (a fresh cloud)."""
        if not self.server_url:
            for url in self.urls.values():
                path = url[len('sqlite:///'):]
                for suffix in ('', '-wal', '-shm'):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
            return
        names = ['%s_%s' % (self.prefix, key) for key in DATABASES]
        self._sql(*(['DROP DATABASE IF EXISTS %s' % n for n in names]
                    + ['CREATE DATABASE %s' % n for n in names]
                    + ['CREATE DATABASE IF NOT EXISTS %s' % self.prefix]))

    def drop(self):
        if self.server_url:
            self._sql(*['DROP DATABASE IF EXISTS %s_%s' % (self.prefix, key)
                        for key in DATABASES]
                      + ['DROP DATABASE IF EXISTS %s' % self.prefix])


def kill(*procs):
    """kill -9 of services' whole sessions (keystone-manage's children

    included), all at the same instant, then wait for them.
    """
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    for proc in procs:
        proc.wait()


class Sandbox:
    """The local cloud. ``start()``, then ``env()`` for the clients, then

    ``stop()``; also a context manager.
    """

    def __init__(self, state_dir, cache_dir=None, db=None, transport=None,
                 computes=4, base_port=DEFAULT_BASE_PORT, ports=None,
                 timeout=180, out=sys.stdout, faults=False, fresh=False,
                 blazar_filters=False, blazar_options=None,
                 dashboard=False):
        self.state_dir = os.path.abspath(state_dir)
        self.cache_dir = os.path.abspath(cache_dir or common.cache_dir())
        self.transport = transport or 'fake://'
        # {group: {option: value}} over the sandbox's own blazar.conf.
        self.blazar_options = blazar_options or {}
        self.computes = [{
            'name': 'compute%d' % (i + 1),
            'vcpus': COMPUTE_SIZES[i % len(COMPUTE_SIZES)][0],
            'memory_mb': COMPUTE_SIZES[i % len(COMPUTE_SIZES)][1],
            'disk_gb': COMPUTE_SIZES[i % len(COMPUTE_SIZES)][2],
        } for i in range(computes)]
        self.ports = {name: base_port + i
                      for i, name in enumerate(PORT_NAMES)}
        unknown = set(ports or ()) - set(PORT_NAMES)
        if unknown:
            raise SandboxError('no such port %s: choose among %s'
                               % (', '.join(unknown), ', '.join(PORT_NAMES)))
        self.ports.update(ports or {})
        self.timeout = timeout
        self.out = out
        self.databases = _Databases(self.state_dir, db)
        self.procs = {}
        self.started_in = None
        self.spec = None
        # The crash tests' hook (pcloud_plugin.faults), in every service.
        self.faults_file = self.path('faults.json') if faults else None
        self.fresh = fresh
        self.resumed = False
        # Nova's scheduler runs Blazar's filters beside ours (nova_proc).
        self.blazar_filters = blazar_filters
        self.services = SERVICES + ((DASHBOARD,) if dashboard else ())

    # -- paths and environment --------------------------------------------

    def path(self, *parts):
        return os.path.join(self.state_dir, *parts)

    def log(self, name):
        return self.path('logs', '%s.log' % name)

    def env(self, user='admin'):
        """The OS_* variables the clients need, as ``user``."""
        project = common.PROJECT_OF[user]
        return {
            'OS_AUTH_URL': 'http://%s:%d/v3' % (common.HOST,
                                                self.ports['keystone']),
            'OS_AUTH_TYPE': 'password',
            'OS_IDENTITY_API_VERSION': '3',
            'OS_USERNAME': user,
            'OS_PASSWORD': common.PASSWORD,
            'OS_PROJECT_NAME': project,
            'OS_USER_DOMAIN_ID': 'default',
            'OS_PROJECT_DOMAIN_ID': 'default',
            'OS_REGION_NAME': common.REGION,
        }

    def dashboard_url(self):
        """Horizon's address, or None without the dashboard."""
        if DASHBOARD not in self.services:
            return None
        return 'http://%s:%d/' % (common.HOST, self.ports[DASHBOARD])

    def client_env(self, user='admin'):
        """os.environ for a client: OS_* set, no proxy for loopback."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        env.update(self.env(user))
        no_proxy = ','.join(filter(None, (os.environ.get('no_proxy'),
                                          common.HOST, 'localhost')))
        env['no_proxy'] = env['NO_PROXY'] = no_proxy
        return env

    def _write_openrc(self):
        for user in common.PROJECT_OF:
            name = '%s-openrc' % user
            with open(self.path(name), 'w') as f:
                for key, value in sorted(self.env(user).items()):
                    f.write('export %s=%s\n' % (key, value))

    def _write_pcloud_conf(self):
        """The plugin's own config: the cloud's ledger and Placement."""
        auth = common.authtoken_conf(self.spec, 'placement')
        del auth['www_authenticate_uri']
        return common.write_conf(self.path('pcloud.conf'), {
            'pcloud_database': {'connection': self.databases.urls['ledger']},
            'pcloud_placement': auth,
        })

    # -- start ------------------------------------------------------------

    def _recover(self):
        """Clean up after a sandbox of this state dir that crashed."""
        try:
            with open(self.path(PIDS_FILE)) as f:
                pids = json.load(f)
        except (OSError, ValueError):
            return
        supervisor = self._alive(*pids['supervisor'])
        if supervisor and supervisor.pid != os.getpid():
            raise SandboxError(
                'a sandbox is already running from %s (pid %d): stop it '
                'first (Ctrl-C where it runs, or "kill %d").'
                % (self.state_dir, supervisor.pid, supervisor.pid))
        for pid, created in pids['children'].values():
            proc = self._alive(pid, created)
            if proc:
                self.out.write('Stopping pid %d left by a sandbox that '
                               'crashed.\n' % pid)
                proc.kill()
                proc.wait(10)
        os.remove(self.path(PIDS_FILE))

    @staticmethod
    def _alive(pid, created):
        try:
            proc = psutil.Process(pid)
            if abs(proc.create_time() - created) < 1:
                return proc
        except psutil.Error:
            pass
        return None

    def _record_pids(self):
        me = psutil.Process()
        children = {name: (proc.pid, psutil.Process(proc.pid).create_time())
                    for name, proc in self.procs.items()}
        with open(self.path(PIDS_FILE), 'w') as f:
            json.dump({'supervisor': (me.pid, me.create_time()),
                       'children': children}, f)

    def _check(self):
        _check_requirements()
        if (self.blazar_filters
                and importlib.util.find_spec('blazarnova') is None):
            raise SandboxError(
                'Blazar\'s filters need blazar-nova in this Python (%s): '
                '"pip install blazar-nova", or leave out --blazar-filters.'
                % sys.executable)
        if (DASHBOARD in self.services
                and importlib.util.find_spec('openstack_dashboard') is None):
            raise SandboxError(
                'the dashboard needs Horizon in this Python (%s): "pip '
                'install horizon", or leave out --dashboard.' % sys.executable)
        for name, port in sorted(self.ports.items(), key=lambda i: i[1]):
            if name != DASHBOARD or DASHBOARD in self.services:
                _check_port(name, port)
        if not self.transport.startswith('fake:'):
            _check_answers('the message queue', self.transport,
                           'start it, or leave out --transport to use the '
                           'in-process fake:// transport.')

    def _spawn(self, name, ready):
        read_end, write_end = os.pipe()
        env = self.client_env()
        if self.faults_file:
            from pcloud_plugin import faults
            env[faults.ENV] = self.faults_file
        with open(self.log(name), 'ab') as log:
            proc = subprocess.Popen(
                [sys.executable, '-m',
                 'pcloud_plugin.sandbox.%s_proc' % name,
                 self.path('spec.json'), str(write_end)],
                pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT,
                env=env, start_new_session=True)
        os.close(write_end)
        self.procs[name] = proc
        ready.register(os.fdopen(read_end, 'rb'), selectors.EVENT_READ,
                       name)

    def _failure(self, name, why):
        with open(self.log(name), errors='replace') as f:
            tail = ''.join(f.readlines()[-15:])
        return SandboxError('%s did not start: %s\nLast lines of %s:\n%s'
                            % (name, why, self.log(name), tail))

    def _wait_ready(self, ready, names):
        deadline = time.monotonic() + self.timeout
        waiting = set(names)
        while waiting:
            left = deadline - time.monotonic()
            events = ready.select(timeout=max(left, 0))
            if not events:
                raise self._failure(
                    sorted(waiting)[0], 'not ready after %ds (--timeout)'
                    % self.timeout)
            for key, _ in events:
                line = key.fileobj.readline().decode().strip()
                ready.unregister(key.fileobj)
                key.fileobj.close()
                if line != 'ready':
                    raise self._failure(key.data, line or 'it exited')
                waiting.discard(key.data)
                self.out.write('  %s ready (%.1fs)\n' % (
                    key.data, time.monotonic() - self._t0))
        # What the clients will reach: each API answers on its port.
        for port, path, expect in (('keystone', '/v3', (200,)),
                                   ('nova', '/', (200, 300)),
                                   ('placement', '/', (200,)),
                                   ('image', '/', (200,)),
                                   ('blazar', '/', (401,))):
            common.wait_for_http(common.url(self.spec, port, path),
                                 timeout=10, expect=expect)

    def start(self):
        self._t0 = time.monotonic()
        os.makedirs(self.path('logs'), exist_ok=True)
        self._recover()
        self._check()
        self.resumed = not self.fresh and self._has_cloud()
        if not self.resumed:
            # A cloud carried on keeps its logs: what a crash left in
            # them is what the operator looks at.
            for name in self.services:
                if os.path.exists(self.log(name)):
                    os.remove(self.log(name))
            self._forget_cloud()
            self.databases.create()
            for url in self.databases.urls.values():
                common.sqlite_wal(url)
        self.spec = {
            'resume': self.resumed,
            'state_dir': self.state_dir,
            'cache_dir': self.cache_dir,
            'supervisor_pid': os.getpid(),
            'timeout': self.timeout,
            'transport': self.transport,
            'ports': self.ports,
            'databases': self.databases.urls,
            'computes': self.computes,
            'blazar_filters': self.blazar_filters,
            'blazar_options': self.blazar_options,
        }
        with open(self.path('spec.json'), 'w') as f:
            json.dump(self.spec, f, indent=2)
        ready = selectors.DefaultSelector()
        try:
            # All at once: Nova and Blazar import while Keystone starts,
            # then wait for Keystone themselves.
            for name in self.services:
                self._spawn(name, ready)
            self._record_pids()
            self._migrate_ledger()
            self._wait_ready(ready, self.services)
            self._sync_ledger()
        except BaseException:
            self.stop()
            raise
        finally:
            ready.close()
        self._write_openrc()
        with open(self.path(CLOUD_FILE), 'w') as f:
            json.dump({'databases': self.databases.urls}, f)
        self.started_in = time.monotonic() - self._t0
        return self

    def _has_cloud(self):
        """Whether the state dir holds a cloud on these databases."""
        try:
            with open(self.path(CLOUD_FILE)) as f:
                return json.load(f)['databases'] == self.databases.urls
        except (OSError, ValueError, KeyError):
            return False

    def _forget_cloud(self):
        try:
            os.remove(self.path(CLOUD_FILE))
        except OSError:
            pass

    def _migrate_ledger(self):
        """The plugin's ledger schema, where the services will find it."""
        import sqlalchemy as sa

        from pcloud_plugin.db import migration

        self._write_pcloud_conf()
        engine = sa.create_engine(self.databases.urls['ledger'])
        try:
            migration.upgrade(engine=engine)
        finally:
            engine.dispose()

    def _sync_ledger(self):
        """What an operator does once Nova is up: mirror Placement."""
        result = subprocess.run(
            [sys.executable, '-m', 'pcloud_plugin.cmd.manage',
             '--config-file', self.path('pcloud.conf'), 'placement', 'sync'],
            capture_output=True, text=True, env=self.client_env())
        if result.returncode:
            raise SandboxError('pcloud-manage placement sync failed: %s'
                               % (result.stderr or result.stdout)[-2000:])

    def restart(self, name):
        """Start one service again (killed first if it still runs), on

        the same databases: what an operator does after a crash.
        """
        self._t0 = time.monotonic()
        # The cloud as it is now (and its computes as they are now).
        self.spec = dict(self.spec, resume=True, computes=self.computes)
        with open(self.path('spec.json'), 'w') as f:
            json.dump(self.spec, f, indent=2)
        proc = self.procs.pop(name, None)
        if proc is not None:
            kill(proc)
        ready = selectors.DefaultSelector()
        try:
            self._spawn(name, ready)
            self._record_pids()
            self._wait_ready(ready, (name,))
        finally:
            ready.close()

    def add_compute(self, vcpus, memory_mb, disk_gb):
        """Bring one more compute into the running cloud, as an operator

        adds a host: Nova starts again with it, on the same databases,
        and its discovery maps it. Returns its name.
        """
        name = 'compute%d' % (max(int(c['name'][len('compute'):])
                                  for c in self.computes) + 1)
        self._restart_nova(self.computes + [{
            'name': name, 'vcpus': vcpus, 'memory_mb': memory_mb,
            'disk_gb': disk_gb}])
        return name

    def resize_compute(self, name, **sizes):
        """Give a compute other ``vcpus``, ``memory_mb`` or ``disk_gb``,

        as an operator who resizes a host: Nova starts again, and the
        compute reports them to Placement.
        """
        self._restart_nova([dict(c, **sizes) if c['name'] == name else c
                            for c in self.computes])

    def remove_compute(self, name):
        """Stop a compute (Nova starts again without it); deleting its

        service through Nova's API is the caller's.
        """
        self._restart_nova([c for c in self.computes if c['name'] != name])

    def _restart_nova(self, computes):
        self.computes = computes
        self.restart('nova')

    # -- run and stop -----------------------------------------------------

    def dead(self):
        """Names of the services whose process has exited."""
        return [name for name, proc in self.procs.items()
                if proc.poll() is not None]

    def processes(self):
        """psutil views of every process the sandbox started."""
        found = []
        for proc in self.procs.values():
            try:
                parent = psutil.Process(proc.pid)
                found += [parent] + parent.children(recursive=True)
            except psutil.NoSuchProcess:
                pass
        return found

    def rss(self):
        """Resident memory of the service processes, in bytes."""
        total = 0
        for proc in self.processes():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self, timeout=15, keep=False):
        """Stop every service; on database servers drop the cloud's

        databases too, unless ``keep`` (a service crashed: a later start
        carries on with the cloud).
        """
        for name in reversed(self.services):
            proc = self.procs.get(name)
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for name, proc in self.procs.items():
            try:
                proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                self.out.write('%s did not stop within %ds: killing it.\n'
                               % (name, timeout))
            kill(proc)
        self.procs = {}
        try:
            os.remove(self.path(PIDS_FILE))
        except OSError:
            pass
        if self.spec and self.databases.server_url and not keep:
            self._forget_cloud()
            self.databases.drop()
        # Stopped: a second stop has nothing to drop.
        self.spec = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
