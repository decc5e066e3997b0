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

"""A three-node MariaDB Galera cluster on loopback, for multi-writer tests.

It needs MariaDB's server (mariadbd, mariadb-install-db) and Debian's
galera-4 (the wsrep provider) with rsync for state transfer; where one is
missing, ``cluster(test)`` skips the test saying what to install. The
nodes run as processes of the test, in a temporary directory, on free
ports, and stop with it.
"""

import os
import shutil
import socket
import subprocess
import time

import fixtures
import sqlalchemy as sa

from pcloud_plugin.db import migration

PROVIDERS = ('/usr/lib/galera/libgalera_smm.so',
             '/usr/lib/galera-4/libgalera_smm.so',
             '/usr/lib64/galera-4/libgalera_smm.so')
NODES = 3
DATABASE = 'pcloud_galera'


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(('127.0.0.1', 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _missing():
    """Why no cluster can run here, or None."""
    for program in ('mariadbd', 'mariadb-install-db', 'rsync'):
        if not shutil.which(program, path=os.environ.get('PATH', '') +
                            ':/usr/sbin:/usr/bin'):
            return '%s is not installed' % program
    if not any(os.path.exists(path) for path in PROVIDERS):
        return 'the galera-4 wsrep provider is not installed'
    return None


class GaleraCluster(fixtures.Fixture):
    """``urls``: one SQLAlchemy URL per node, of a migrated ledger."""

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.provider = next(p for p in PROVIDERS if os.path.exists(p))
        ports = _free_ports(NODES * 4)
        self.sql_ports = ports[:NODES]
        gcomm = ports[NODES:2 * NODES]
        ist = ports[2 * NODES:3 * NODES]
        sst = ports[3 * NODES:]
        self.procs = []
        for n in range(NODES):
            made = subprocess.run(
                ['mariadb-install-db', '--no-defaults', '--user=root',
                 '--datadir=%s' % self._path(n, 'data'),
                 '--auth-root-authentication-method=normal',
                 '--skip-test-db'], capture_output=True, text=True,
                # Its temporary tables, named by pid, away from others'.
                env=dict(os.environ, TMPDIR=self.dir))
            if made.returncode:
                raise RuntimeError('mariadb-install-db failed: %s'
                                   % (made.stdout + made.stderr)[-2000:])
        # The joiners' rsync daemon runs as nobody.
        for root, dirs, files in os.walk(self.dir):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o777)
        os.chmod(self.dir, 0o777)
        address = 'gcomm://' + ','.join('127.0.0.1:%d' % p for p in gcomm)
        for n in range(NODES):
            args = [shutil.which('mariadbd', path='/usr/sbin:/usr/bin'),
                    '--no-defaults', '--user=root',
                    '--bind-address=127.0.0.1',
                    '--port=%d' % self.sql_ports[n],
                    '--datadir=%s' % self._path(n, 'data'),
                    '--socket=%s' % self._path(n, 'sock'),
                    '--pid-file=%s' % self._path(n, 'pid'),
                    '--tmpdir=%s' % self.dir,
                    '--innodb-buffer-pool-size=64M',
                    '--default-storage-engine=InnoDB',
                    '--innodb-autoinc-lock-mode=2', '--binlog-format=ROW',
                    '--wsrep-on=ON', '--wsrep-provider=%s' % self.provider,
                    '--wsrep-cluster-address=%s' % address,
                    '--wsrep-node-address=127.0.0.1:%d' % gcomm[n],
                    '--wsrep-provider-options=gmcast.listen_addr=tcp://'
                    '127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d'
                    % (gcomm[n], ist[n]),
                    '--wsrep-sst-receive-address=127.0.0.1:%d' % sst[n],
                    '--wsrep-sst-method=rsync']
            if n == 0:
                args.append('--wsrep-new-cluster')
            log = open(self._path(n, 'log'), 'wb')
            self.addCleanup(log.close)
            proc = subprocess.Popen(args, stdout=log,
                                    stderr=subprocess.STDOUT)
            self.addCleanup(self._stop, proc)
            self.procs.append(proc)
            # One joiner at a time: each takes its state from the first.
            self._wait_synced(n)
        root = 'mysql+pymysql://root@127.0.0.1:%d/'
        engine = sa.create_engine(root % self.sql_ports[0])
        with engine.begin() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s' % DATABASE)
        engine.dispose()
        self.urls = [(root % port) + DATABASE for port in self.sql_ports]
        engine = sa.create_engine(self.urls[0])
        migration.upgrade(engine=engine)
        engine.dispose()

    def _path(self, n, what):
        return os.path.join(self.dir, 'node%d.%s' % (n, what))

    def _wait_synced(self, n, timeout=120):
        engine = sa.create_engine('mysql+pymysql://root@127.0.0.1:%d/'
                                  % self.sql_ports[n])
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.procs[n].poll() is not None:
                    with open(self._path(n, 'log'), errors='replace') as f:
                        raise RuntimeError('Galera node %d exited: %s'
                                           % (n, f.read()[-2000:]))
                try:
                    with engine.connect() as conn:
                        state = conn.exec_driver_sql(
                            "SHOW STATUS LIKE 'wsrep_local_state_comment'"
                        ).fetchone()
                    if state and state[1] == 'Synced':
                        return
                except sa.exc.OperationalError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError('Galera node %d not synced after %ds'
                                       % (n, timeout))
                time.sleep(0.3)
        finally:
            engine.dispose()

    @staticmethod
    def _stop(proc):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def cluster(test):
    """A running GaleraCluster, or skip ``test`` saying why there is none."""
    why = _missing()
    if why:
        test.skipTest('no Galera cluster for this test: %s (Debian: '
                      'apt-get install mariadb-server galera-4 rsync)' % why)
    return test.useFixture(GaleraCluster())
