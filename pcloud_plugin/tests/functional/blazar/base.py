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
"""Blazar's manager (and v1 API) in-process, with our plugin loaded from

its entry point, a real Placement over HTTP and the ledger on SQLite.
Nova is the recording fake of fake_nova (see there why).
"""

import asyncio
import datetime
import logging
import os
import threading
from wsgiref import simple_server

from blazar.api.v1 import app as blazar_app
from blazar import context as blazar_context
from blazar.db import api as blazar_db
from blazar.db.sqlalchemy import api as blazar_sqla
from blazar.db.sqlalchemy import facade_wrapper
from blazar.manager import service as manager_service
from blazar.notification import notifier as blazar_notifier
from blazar import status
from blazar.utils import trusts
from blazarclient import client as blazar_client
from blazarclient import exception as client_exc
import fixtures
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from keystonemiddleware import fixture as ksm_fixture
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_utils import timeutils
from oslo_utils import uuidutils

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.blazar.api import policy as api_policy
from pcloud_plugin.blazar import instance_plugin
from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import mirror
from pcloud_plugin.cloud import nova_events
from pcloud_plugin.cloud import resources
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import placement_sync
from pcloud_plugin.notifications import usage
from pcloud_plugin.sandbox import common as sandbox_common
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.blazar import fake_nova
from pcloud_plugin.tests.functional import placement_service

ENTRY_POINT = 'pcloud.virtual.instance'
PROJECT = 'f1e2d3c4b5a6978800112233445566aa'
USER = '0a1b2c3d4e5f60718293a4b5c6d7e8f9'
TOKEN = 'pcloud-test-member-token'
SHARES = 'MISC_SHARES_VIA_AGGREGATE'
PCLOUD_AGG = '7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f'
DISK_AGG = '1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b'
KEYSTONE = 'http://127.0.0.1/identity'
# What a trust-scoped context carries: Blazar's usage enforcement looks
# Keystone up in it.
CATALOG = [{'type': 'identity', 'name': 'keystone', 'endpoints': [
    {'interface': i, 'url': KEYSTONE, 'region': 'RegionOne'}
    for i in ('public', 'internal', 'admin')]}]


def override_policy(test, rules):
    """An operator's policy file of ``rules`` ({rule: check string}) for

    the length of ``test`` (which has a config fixture, ``conf``).
    """
    path = os.path.join(test.useFixture(fixtures.TempDir()).path,
                        'policy.yaml')
    with open(path, 'w') as f:
        f.writelines('"%s": "%s"\n' % rule for rule in rules.items())
    api_policy.get_enforcer()   # registers [oslo_policy]
    test.conf.set_override('policy_file', path, group='oslo_policy')
    api_policy.reset()


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class BlazarDatabase(fixtures.Fixture):
    """Blazar's own database: a fresh SQLite file, schema by Blazar."""

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.conf.set_override(
            'connection', sandbox_common.patient(
                'sqlite:///%s' % os.path.join(tmp, 'blazar.db')),
            group='database')
        facade_wrapper._clear_engine()
        self.addCleanup(facade_wrapper._clear_engine)
        blazar_sqla.setup_db()
        # As in the sandbox: the manager's threads and the tests' racing
        # API calls write in turn instead of failing "database is locked"
        # (an SQLite artefact; real deployments race on MariaDB: see
        # test_lease_race).
        sandbox_common.sqlite_writes_in_turn(
            facade_wrapper._get_facade().writer.get_engine())


class Notifications(fixtures.Fixture):
    """Listens on a private topic of a transport; ``events`` is what came,

    as (event_type, payload, publisher_id).
    """

    def __init__(self, transport, topic):
        super().__init__()
        self.transport = transport
        self.topic = topic
        self.events = []
        self._arrived = threading.Condition()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        with self._arrived:
            self.events.append((event_type, payload, publisher_id))
            self._arrived.notify_all()

    def _setUp(self):
        listener = messaging.get_notification_listener(
            self.transport, [messaging.Target(topic=self.topic)], [self],
            executor='threading')
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)

    def wait_for(self, event_type, count=1, timeout=10):
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.of(event_type)) >= count,
                                   timeout)
        return self.of(event_type)

    def of(self, event_type):
        return [p for t, p, _ in self.events if t == event_type]


class StillTime(fixtures.Fixture):
    """Time stands still (oslo's timeutils, which Blazar's manager and

    our code read) unless a test moves it: lease dates to the minute and
    a test's expectations then agree across a minute's turn.
    """

    def _setUp(self):
        timeutils.set_time_override(timeutils.utcnow().replace(
            microsecond=0))
        self.addCleanup(timeutils.clear_time_override)


class BlazarTestCase(base.LedgerTestCase):
    """Hosts in Placement (mirrored into the ledger):

    * cn1: 8 VCPU x 2.0, 8192 MB with 512 reserved, 200 GB: 7 slots of
      (2 VCPU, 1024 MB, 10 GB), memory bound;
    * cn2: two NUMA children of 4 VCPU and 4096 MB each, its disk from the
      sharing provider ss (100 GB): 4 slots, 2 per NUMA node;
    * cn3: in a pcloud, so never used, however free.
    """

    def setUp(self):
        super().setUp()
        self.conf([], project='blazar', default_config_files=[])
        for group, opts in messaging_opts.list_opts():
            self.conf.register_opts(opts, group=group)
        self.conf.set_override('plugins', [ENTRY_POINT], group='manager')
        self.conf.set_override('transport_url', 'fake:/')
        self.conf.set_override('driver', ['noop'],
                               group='oslo_messaging_notifications')
        self.conf.set_override('cleanup_interval', 0,
                               group='pcloud_instance')
        # Tests run the Placement mirror themselves, and write the
        # ledger's usage snapshots if they do.
        self.conf.set_override('placement_mirror_interval', 0,
                               group='pcloud')
        self.conf.set_override('usage_snapshot_interval', 0,
                               group='ledger')
        # And healing (test_healing) and maintenance passes
        # (test_maintenance); and no Nova here sends events.
        self.conf.set_override('healing_interval', 0, group='pcloud')
        self.conf.set_override('maintenance_interval', 0, group='pcloud')
        self.conf.set_override('nova_notifications', False, group='pcloud')
        # A Nova failure the fake makes lasts: a start meets it at once,
        # but where a test waits one out (nova_down_for_a_while).
        self.conf.set_override('unreachable_patience', 0, group='pcloud')
        self.addCleanup(nova_events.stop)
        self.useFixture(BlazarDatabase(self.conf))
        blazar_notifier.init()
        self.addCleanup(blazar_notifier.cleanup)

        self.placement = self.useFixture(
            placement_service.PlacementService())
        placement_service.use_placement(self.conf, self.placement.url)
        self.hosts = self._build_hosts()
        self.sync()
        mirror.reset()
        self.addCleanup(mirror.reset)

        self.nova = fake_nova.FakeNova({
            uuid: name for name, uuid in self.hosts.items()
            if name.startswith('cn') and '-' not in name})
        self.nova.add_pcloud_aggregate('Pcloud:abc', ['cn3'],
                                       uuid=PCLOUD_AGG)
        self.useFixture(fixtures.MockPatchObject(
            nova_client, 'get_client', return_value=self.nova))
        # The lessee's Nova (a trust's token in production): the same one.
        self.useFixture(fixtures.MockPatchObject(
            instance_plugin.VirtualInstancePlugin, 'lessee_nova',
            staticmethod(lambda: resources.NovaObjects(self.nova))))
        # The Pcloud API keeps one service a process: on this Nova.
        handlers.reset()
        self.addCleanup(handlers.reset)
        self.useFixture(fixtures.MockPatchObject(
            trusts, 'create_trust',
            return_value=fake_nova._Obj(id='trust-id')))
        self.useFixture(fixtures.MockPatchObject(
            trusts, 'create_ctx_from_trust',
            side_effect=lambda trust_id: self.blazar_context()))

        self.manager = manager_service.ManagerService()
        self.plugin = self.manager.plugins['virtual:instance']
        transport = messaging.get_notification_transport(
            self.conf, url='fake:/')
        topic = 'pcloud-test-%s' % uuidutils.generate_uuid()
        self.notifications = self.useFixture(
            Notifications(transport, topic))
        self.plugin.notifier = usage.UsageNotifier(
            self.conf, transport=transport, topics=[topic],
            driver='messaging')

    def _build_hosts(self):
        p = self.placement
        hosts = {}
        hosts['cn1'] = p.create_provider('cn1')
        p.set_inventories(hosts['cn1'], {
            'VCPU': {'total': 8, 'allocation_ratio': 2.0},
            'MEMORY_MB': {'total': 8192, 'reserved': 512},
            'DISK_GB': {'total': 200}})
        hosts['cn2'] = p.create_provider('cn2')
        for n in (0, 1):
            name = 'cn2-numa%d' % n
            hosts[name] = p.create_provider(name, parent=hosts['cn2'])
            p.set_inventories(hosts[name], {
                'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096}})
            p.set_traits(hosts[name], ['HW_NUMA_ROOT'])
        hosts['ss'] = p.create_provider('ss')
        p.set_inventories(hosts['ss'], {'DISK_GB': {'total': 100}})
        p.set_traits(hosts['ss'], [SHARES])
        p.set_aggregates(hosts['ss'], [DISK_AGG])
        p.set_aggregates(hosts['cn2'], [DISK_AGG])
        hosts['cn3'] = p.create_provider('cn3')
        p.set_inventories(hosts['cn3'], {
            'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 65536},
            'DISK_GB': {'total': 1000}})
        p.set_aggregates(hosts['cn3'], [PCLOUD_AGG])
        return hosts

    def sync(self):
        placement_sync.sync(self.context, placement_client.read_forest(
            placement_client.get_adapter()))

    # --- Blazar ------------------------------------------------------------

    def blazar_context(self, **kwargs):
        return blazar_context.BlazarContext(
            user_id=USER, project_id=PROJECT, service_catalog=CATALOG,
            **kwargs)

    @staticmethod
    def minutes(n):
        """A lease date n minutes from now, as Blazar's API takes it."""
        moment = timeutils.utcnow() + datetime.timedelta(minutes=n)
        return moment.strftime('%Y-%m-%d %H:%M')

    @staticmethod
    def reservation(amount, vcpus=2, memory_mb=1024, disk_gb=10,
                    affinity=None, resource_properties='', **terms):
        return dict({'resource_type': 'virtual:instance', 'vcpus': vcpus,
                     'memory_mb': memory_mb, 'disk_gb': disk_gb,
                     'amount': amount, 'affinity': affinity,
                     'resource_properties': resource_properties}, **terms)

    def create_lease(self, *reservations, start=60, end=120, name=None):
        """A lease through the manager, as an API worker's RPC call."""
        with self.blazar_context():
            return self.manager.create_lease({
                'name': name or uuidutils.generate_uuid(),
                'start_date': self.minutes(start),
                'end_date': self.minutes(end),
                'reservations': list(reservations), 'events': [],
                'trust_id': 'trust-id', 'user_id': USER})

    def update_lease(self, lease_id, **values):
        with self.blazar_context():
            return self.manager.update_lease(lease_id=lease_id,
                                             values=values)

    def delete_lease(self, lease_id):
        with self.blazar_context():
            self.manager.delete_lease(lease_id=lease_id)

    @staticmethod
    def event(lease_id, event_type):
        """A lease's event of this type, as Blazar's database has it."""
        return blazar_db.event_get_first_sorted_by_filters(
            'lease_id', 'asc', {'lease_id': lease_id,
                                'event_type': event_type})

    def run_event(self, lease_id, event_type):
        """Make a lease's event due now and let the manager run it."""
        event = self.event(lease_id, event_type)
        blazar_db.event_update(event['id'], {
            'time': timeutils.utcnow() - datetime.timedelta(seconds=1)})
        self.manager._process_events()
        return blazar_db.event_get(event['id'])

    def start_before_due_ends(self, lease_id):
        """Run the lease's start as Blazar does in a pass of starts that

        began before other leases' ends came due: those wait for the next
        pass. The start event, after.
        """
        event = self.event(lease_id, 'start_lease')
        running = self.manager._process_events_concurrently([event])
        if asyncio.iscoroutine(running):  # Blazar 18; before, eventlet's
            asyncio.run(running)
        return blazar_db.event_get(event['id'])

    def nova_down_for_a_while(self, call, error=None):
        """Nova's ``call`` cannot connect (or raises ``error``) until the

        first time a start waits to try again; the waits (seconds) are
        returned, as filled.
        """
        self.conf.set_override('unreachable_patience', 60, group='pcloud')
        self.nova.fail(call, error or ks_exc.ConnectFailure(
            'Unable to establish connection to http://nova'))
        waits = []

        def nova_back(seconds):
            waits.append(seconds)
            self.nova.failures.pop(call, None)
        self.useFixture(fixtures.MockPatch(
            'pcloud_plugin.cloud.patience._sleep', side_effect=nova_back))
        return waits

    def start(self, lease_id):
        event = self.run_event(lease_id, 'start_lease')
        self.assertEqual(status.event.DONE, event['status'])
        return blazar_db.lease_get(lease_id)

    def end(self, lease_id):
        event = self.run_event(lease_id, 'end_lease')
        self.assertEqual(status.event.DONE, event['status'])
        return blazar_db.lease_get(lease_id)

    def started_on_one_host(self, amount):
        """A lease of ``amount`` slots on one host (affinity), started

        now: (lease id, reservation id, its resource class, the host).
        """
        lease = self.create_lease(self.reservation(amount, affinity=True),
                                  start=0)
        (reservation,) = lease['reservations']
        self.start(lease['id'])
        rc = resources.resource_class(reservation['id'])
        (host,) = self.reservation_inventories(rc)
        return lease['id'], reservation['id'], rc, host

    # --- what Placement and the ledger hold ---------------------------------

    def claims(self, reservation_id):
        return db_claims.get_claims(self.context, reservation_id)

    def reservation_inventories(self, rc):
        """{host name: total} of rc on the hosts' reservation providers."""
        found = {}
        for name, uuid in self.hosts.items():
            response = self.placement.client.get(
                '/resource_providers?in_tree=%s' % uuid).json()
            for rp in response['resource_providers']:
                inventories = self.placement.client.get(
                    '/resource_providers/%s/inventories' % rp['uuid']
                ).json()['inventories']
                if rc in inventories and rp['parent_provider_uuid'] == uuid:
                    found[name] = inventories[rc]
        return found


class BlazarAPITestCase(BlazarTestCase):
    """Adds Blazar's v1 API served over HTTP on loopback, behind

    keystonemiddleware (AuthTokenFixture answers for the token), calling
    the manager over the fake oslo.messaging transport, and a
    python-blazarclient on it.
    """

    def setUp(self):
        super().setUp()
        self.conf.set_override('www_authenticate_uri',
                               'http://127.0.0.1/identity',
                               group='keystone_authtoken')
        token = ks_fixture.V3Token(user_id=USER, project_id=PROJECT)
        for role in ('member', 'reader'):
            token.add_role(name=role)
        # Blazar's API wants a catalog with the token, as Keystone gives.
        token.add_service('identity').add_standard_endpoints(
            public=KEYSTONE, internal=KEYSTONE, admin=KEYSTONE,
            region='RegionOne')
        self.useFixture(ksm_fixture.AuthTokenFixture()).add_token(
            token, token_id=TOKEN)
        # Blazar's request log middleware answers nothing at all unless
        # its logger takes INFO.
        self.useFixture(fixtures.FakeLogger(
            name='blazar.api.v1.request_log', level=logging.INFO))
        self.manager._server.start()
        self.addCleanup(self.manager._server.wait)
        self.addCleanup(self.manager._server.stop)
        server = simple_server.make_server(
            '127.0.0.1', 0, blazar_app.make_app(),
            handler_class=_QuietHandler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        url = 'http://127.0.0.1:%d/v1' % server.server_port
        session = ks_session.Session(auth=token_endpoint.Token(url, TOKEN))
        self.client = blazar_client.Client(
            '1', session=session, endpoint_override=url)
        # For bodies no client would send.
        self.api = (session, url)

    def assert_last_day_is_400(self, reservation):
        """Blazar takes dates up to 9999-12-31 23:59. Stored clamped, two

        such leases never met and both were admitted on the same capacity:
        a window the ledger cannot hold is a 400 naming the date.
        """
        for start, end, field in (
                ('9999-12-31 22:00', '9999-12-31 23:59', 'start_date'),
                ('9999-12-30 22:00', '9999-12-31 23:59', 'end_date')):
            e = self.assertRaises(
                client_exc.BlazarClientException, self.client.lease.create,
                'last-day', start, end, [reservation], [])
            self.assertEqual(400, e.kwargs['code'])
            self.assertIn(field, str(e))
        self.assertEqual([], self.client.lease.list())
