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

"""Real openstack-placement, served over HTTP on loopback, in-process.

Its own SQLite database per fixture, built by Placement's own schema code;
noauth2, so the admin token "admin" is all a client needs. Used by the sync
tests, the differential candidates test and the benchmarks.
"""

import os
import threading
from wsgiref import simple_server

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from oslo_config import cfg
from oslo_utils import uuidutils
import sqlalchemy as sa

MICROVERSION = '1.39'


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def use_placement(conf, url):
    """Point [pcloud_placement] of ``conf`` at a PlacementService's url."""
    from keystoneauth1 import loading as ks_loading

    conf.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='pcloud_placement')
    for name, value in (('auth_type', 'admin_token'), ('endpoint', url),
                        ('token', 'admin')):
        conf.set_override(name, value, group='pcloud_placement')


class PlacementService(fixtures.Fixture):
    """Start Placement; ``url`` is its endpoint, ``client`` an adapter."""

    def _setUp(self):
        # Imported here: only these tests and benchmarks need placement.
        from placement import conf as placement_conf
        from placement.db.sqlalchemy import migration
        from placement import db_api
        from placement import deploy

        tmp = self.useFixture(fixtures.TempDir()).path
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        url = 'sqlite:///%s' % os.path.join(tmp, 'placement.db')
        conf.set_override('connection', url, group='placement_database')
        conf.set_override('auth_strategy', 'noauth2', group='api')
        conf([], project='placement', default_config_files=[])
        engine = sa.create_engine(url)
        self.addCleanup(engine.dispose)
        migration.create_schema(engine)
        # Placement's facade is global and can be configured only once per
        # process: patch this fixture's engine into it instead.
        db_api.configure(conf)
        self.addCleanup(db_api.placement_context_manager.patch_engine(
            engine))
        # Placement syncs standard classes and traits into its database once
        # per process; each fixture has a new database, so sync again.
        for flag in ('resource_class._RESOURCE_CLASSES_SYNCED',
                     'trait._TRAITS_SYNCED',
                     'consumer_type._CONSUMER_TYPES_SYNCED'):
            self.useFixture(fixtures.MonkeyPatch(
                'placement.objects.' + flag, False))
        app = deploy.loadapp(conf)

        server = simple_server.make_server(
            '127.0.0.1', 0, app, handler_class=_QuietHandler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_port
        self.client = ks_adapter.Adapter(
            ks_session.Session(auth=token_endpoint.Token(self.url, 'admin')),
            service_type='placement', default_microversion=MICROVERSION,
            raise_exc=True)

    # Helpers that build provider trees in Placement, as an operator's
    # nova-compute or neutron agent would.

    def create_provider(self, name, parent=None, uuid=None):
        uuid = uuid or uuidutils.generate_uuid()
        body = {'name': name, 'uuid': uuid}
        if parent:
            body['parent_provider_uuid'] = parent
        self.client.post('/resource_providers', json=body)
        return uuid

    def _generation(self, uuid):
        return self.client.get(
            '/resource_providers/%s' % uuid).json()['generation']

    def set_inventories(self, uuid, inventories):
        for rc in inventories:
            if rc.startswith('CUSTOM_'):
                self.client.put('/resource_classes/%s' % rc)
        self.client.put('/resource_providers/%s/inventories' % uuid, json={
            'resource_provider_generation': self._generation(uuid),
            'inventories': inventories})

    def set_traits(self, uuid, traits):
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                self.client.put('/traits/%s' % trait)
        self.client.put('/resource_providers/%s/traits' % uuid, json={
            'resource_provider_generation': self._generation(uuid),
            'traits': list(traits)})

    def set_aggregates(self, uuid, aggregates):
        self.client.put('/resource_providers/%s/aggregates' % uuid, json={
            'resource_provider_generation': self._generation(uuid),
            'aggregates': list(aggregates)})

    def allocate(self, consumer, allocations, project='proj', user='user'):
        """allocations: {provider uuid: {class: amount}}."""
        self.client.put('/allocations/%s' % consumer, json={
            'allocations': {rp: {'resources': res}
                            for rp, res in allocations.items()},
            'project_id': project, 'user_id': user,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    def delete_provider(self, uuid):
        self.client.delete('/resource_providers/%s' % uuid)
