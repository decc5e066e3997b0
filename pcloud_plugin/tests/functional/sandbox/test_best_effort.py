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
"""BEST-EFFORT pcloud:host leases in the sandbox's real cloud, whose

Blazar runs with [pcloud_host] live_migrate_others: a server of the alt
project sits on a pool host; a lease of the demo project for that host
moves it away (a real live migration, by Nova's fake virt driver) and
becomes ACTIVE only once it runs elsewhere; when it cannot move, the
lease is TIMEDOUT and the host free again.

The pool host takes no plain boots, so the server is put there as an
admin may (a forced host), by the admin user given the admin role in the
alt project for the test.
"""

import datetime
import json
import time
import uuid

from keystoneauth1 import loading
from keystoneauth1 import session as ks_session
from novaclient import client as nova_client
import sqlalchemy as sa

from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox import nova_proc
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

# A 2-minute timeout ends up to 2 minutes after the lease is made (Blazar
# takes "now" to the minute), and the check runs every retry_interval:
# a little more than that.
PATIENCE = 150


class BestEffortLease(base.TestCase):

    def setUp(self):
        super().setUp()
        cloud = self.useFixture(fixture.SandboxFixture())
        self.sandbox, self.cli = cloud.sandbox, cloud.cli
        clients = fixture.Clients(self.sandbox)
        self.nova, self.admin, self.demo = (clients.nova, clients.admin,
                                            clients.demo)
        self.ledger = sa.create_engine(self.sandbox.databases.urls['ledger'])
        self.addCleanup(self.ledger.dispose)
        names = sorted(c['name'] for c in self.sandbox.computes)
        self.host, self.others = names[-1], names[:-1]
        # Pooled as the README says: out of service for plain boots first.
        fixture.out_of_service(self, self.nova, self.host)
        self.flavor = 'be-%s' % uuid.uuid4().hex[:6]
        self.admin.create_host_flavor(self.flavor, 1)
        self.addCleanup(self.admin.delete_host_flavor, self.flavor)
        self.admin.add_pool_host(self.flavor, self.host)
        self.addCleanup(self.admin.remove_pool_host, self.flavor, self.host)
        self.pcloud = self.demo.create_pcloud('be-%s' % self.flavor)
        self.addCleanup(self.demo.delete_pcloud, self.pcloud['id'])
        self.server = self._squat()

    # -- the alt project's server on the pool host -------------------------

    def _keystone(self, method, path):
        url = self.sandbox.env('admin')['OS_AUTH_URL'] + path
        return fixture.session(self.sandbox, 'admin').request(url, method)

    def _id(self, kind, name):
        return self._keystone('GET', '/%s?name=%s' % (kind, name)).json()[
            kind][0]['id']

    def _alt_admin(self):
        """Nova as the admin user in the alt project (granted for now)."""
        project = self._id('projects', common.ALT_PROJECT)
        grant = '/projects/%s/users/%s/roles/%s' % (
            project, self._id('users', 'admin'), self._id('roles', 'admin'))
        self._keystone('PUT', grant)
        self.addCleanup(self._keystone, 'DELETE', grant)
        env = self.sandbox.env('admin')
        auth = loading.get_plugin_loader('password').load_from_options(
            auth_url=env['OS_AUTH_URL'], username='admin',
            password=env['OS_PASSWORD'], project_name=common.ALT_PROJECT,
            user_domain_id='default', project_domain_id='default')
        return nova_client.Client('2.53', session=ks_session.Session(
            auth=auth)), project

    def _squat(self):
        nova, project = self._alt_admin()
        flavor = nova.flavors.find(name='m1.tiny')
        server = nova.servers.create(
            'alt-squatter', nova_proc.IMAGE['id'], flavor, nics='none',
            availability_zone='nova:%s' % self.host)
        self.addCleanup(self._delete_server, server.id)
        found = self._wait('the alt server to run', lambda: self._server(
            server.id, ('ACTIVE', 'ERROR')))
        self.assertEqual(('ACTIVE', self.host, project),
                         (found.status, self._host_of(found),
                          found.tenant_id))
        return found

    def _delete_server(self, server_id):
        if self._server(server_id) is None:
            return
        self.nova.servers.delete(server_id)
        self._wait('the alt server to go', lambda: True if self._server(
            server_id) is None else None)

    def _server(self, server_id, statuses=None):
        """The server as the admin sees it (None once gone), or None

        while its status is not in ``statuses``.
        """
        try:
            found = self.nova.servers.get(server_id)
        except Exception as e:
            if getattr(e, 'code', None) == 404:
                return None
            raise
        if statuses is not None and found.status not in statuses:
            return None
        return found

    @staticmethod
    def _host_of(server):
        return getattr(server, 'OS-EXT-SRV-ATTR:host')

    def _wait(self, what, check, patience=PATIENCE):
        deadline = time.monotonic() + patience
        while True:
            found = check()
            if found is not None:
                return found
            if time.monotonic() > deadline:
                with open(self.sandbox.log('blazar'), errors='replace') as f:
                    log = [line for line in f if 'pcloud' in line][-30:]
                self.fail('%s: not after %ds. Blazar\'s log about us:\n%s'
                          % (what, patience, ''.join(log)))
            time.sleep(0.1)

    # -- leases and what holds the host ------------------------------------

    def _lease(self, lease_type, **terms):
        end = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        lease = self.demo.create_host_lease(
            'be-%s' % lease_type.lower(), 'now',
            end.strftime('%Y-%m-%d %H:%M'),
            dict(terms, amount=1, host_flavor=self.flavor,
                 pcloud_id=self.pcloud['id'], lease_type=lease_type))
        self.addCleanup(fixture.delete_lease, self.demo, lease['id'])
        return lease['id'], fixture.reservation_of(self.sandbox, lease['id'])

    def _row(self, rid):
        """(state, migrations) of the ledger's record of a reservation."""
        with self.ledger.connect() as conn:
            state, migrations = conn.execute(sa.text(
                'SELECT state, migrations FROM pcloud_host_reservations '
                'WHERE reservation_id = :rid'), {'rid': rid}).one()
        return state, json.loads(migrations or '[]')

    def _claimed(self, rid):
        with self.ledger.connect() as conn:
            return bool(conn.execute(sa.text(
                'SELECT id FROM allocations WHERE consumer_id = :rid'),
                {'rid': rid}).first())

    def _reservation(self, lease_id):
        (found,) = self.demo._request('GET', '/leases/%s' % lease_id)[
            'lease']['reservations']
        return found

    def _in_pcloud(self):
        (agg,) = [a for a in self.nova.aggregates.list()
                  if a.name == codec.pcloud_name(self.pcloud['id'])]
        return self.host in agg.hosts

    def _shown(self, lease_id):
        """What ``openstack pcloud lease show`` tells the lessee."""
        return self.cli.json('openstack', 'pcloud', 'lease', 'show',
                             lease_id, user=common.DEMO_USER)

    def _states_until(self, rid, last, lease_id=None):
        """The ledger states the reservation goes through until one of

        ``last``, each once; at its first IN-PROGRESS, also whether the
        host is in the pcloud and, given ``lease_id``, what ``pcloud
        lease show`` says.
        """
        seen, waiting = [], {}

        def look():
            state, migrations = self._row(rid)
            if not seen or seen[-1] != state:
                seen.append(state)
                if state == 'IN-PROGRESS' and not waiting:
                    waiting['in_pcloud'] = self._in_pcloud()
                    waiting['migrations'] = migrations
                    if lease_id:
                        waiting['shown'] = self._shown(lease_id)
            return state if state in last else None
        self._wait('reservation %s to be %s (went %s)' % (
            rid, ' or '.join(last), seen), look)
        return seen, waiting

    # -- tests ---------------------------------------------------------------

    def test_active_once_the_other_projects_server_runs_elsewhere(self):
        lease_id, rid = self._lease('BEST-EFFORT', timeout=5)
        seen, waiting = self._states_until(rid, ('ACTIVE', 'TIMEDOUT'))
        # IN-PROGRESS, the migration recorded, the host not in the pcloud
        # yet; ACTIVE after.
        self.assertEqual(['IN-PROGRESS', 'ACTIVE'], seen[-2:])
        self.assertFalse(waiting['in_pcloud'])
        self.assertEqual([(self.server.id, self.host)],
                         [(m['server'], m['host'])
                          for m in waiting['migrations']])
        moved = self.nova.servers.get(self.server.id)
        self.assertEqual('ACTIVE', moved.status)
        self.assertIn(self._host_of(moved), self.others)
        self.assertEqual(['moved'],
                         [m['status'] for m in self._row(rid)[1]])
        self.assertTrue(self._in_pcloud())
        self.assertEqual(['enabled'], [
            h['state'] for h in self.demo.list_hosts(self.pcloud['id'])])
        reservation = self._reservation(lease_id)
        self.assertEqual(('active', False),
                         (reservation['status'],
                          reservation['missing_resources']))

    def test_timed_out_when_it_cannot_move(self):
        # Nowhere to go: Nova's scheduler finds no host for the migration
        # (the ledger, admitting the lease, still sees their room; with
        # their computes disabled it would refuse the lease at once).
        for name in self.others:
            fixture.forced_down(self, self.nova, name)
        # Blazar takes 'now' to the minute: 2 minutes leave at least one
        # for the checks before the deadline.
        lease_id, rid = self._lease('BEST-EFFORT', timeout=2)
        seen, waiting = self._states_until(rid, ('ACTIVE', 'TIMEDOUT'),
                                           lease_id)
        self.assertEqual(['IN-PROGRESS', 'TIMEDOUT'], seen[-2:])
        self.assertFalse(waiting['in_pcloud'])
        # The lessee sees the states seeds/001 names, where Blazar's own
        # lease show says ACTIVE for both.
        (reservation,) = waiting['shown']['reservations']
        self.assertEqual(('IN-PROGRESS', 'IN-PROGRESS', 'BEST-EFFORT', 2), (
            waiting['shown']['state'], reservation['state'],
            reservation['lease_type'], reservation['timeout']))
        shown = self._shown(lease_id)
        self.assertEqual(('TIMEDOUT', 'ACTIVE'),
                         (shown['state'], shown['blazar_status']))
        # Tried again after each failure, until the deadline.
        (migration,) = self._row(rid)[1]
        self.assertGreater(migration['tries'], 1)
        self.assertEqual('error', self._reservation(lease_id)['status'])
        self.assertFalse(self._claimed(rid))
        self.assertFalse(self._in_pcloud())
        self.assertEqual([], self.demo.list_hosts(self.pcloud['id']))
        found = self.nova.servers.get(self.server.id)
        self.assertEqual(('ACTIVE', self.host),
                         (found.status, self._host_of(found)))
        # Once the other project's server is gone (hosts are handed over
        # only empty), the host is free for the next lease.
        fixture.delete_lease(self.demo, lease_id)
        self._delete_server(self.server.id)
        next_id, next_rid = self._lease('IMMEDIATE')
        self._wait('the next lease to be ACTIVE', lambda: self._row(
            next_rid)[0] == 'ACTIVE' or None)
        self.assertTrue(self._in_pcloud())

    def test_a_restarted_blazar_carries_on(self):
        downed = [fixture.forced_down(self, self.nova, name)
                  for name in self.others]
        lease_id, rid = self._lease('BEST-EFFORT', timeout=5)
        # Waiting, its migration failed and started again.
        self._wait('a migration tried again', lambda: [
            m for m in self._row(rid)[1] if m['tries'] > 1] or None)
        self.assertEqual('IN-PROGRESS', self._row(rid)[0])
        self.sandbox.restart('blazar')
        for service in downed:
            self.nova.services.force_down(service.id, False)
        seen, _waiting = self._states_until(rid, ('ACTIVE', 'TIMEDOUT'))
        self.assertEqual('ACTIVE', seen[-1])
        moved = self.nova.servers.get(self.server.id)
        self.assertIn(self._host_of(moved), self.others)
        self.assertTrue(self._in_pcloud())
