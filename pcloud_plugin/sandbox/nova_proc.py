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

"""Nova and Placement, in one process, on real loopback ports.

Configured through nova.conf and placement.conf like a deployment, and
started through the same calls as nova's own service scripts: the API app
from ``nova.api.openstack.wsgi_app``, Placement's from ``placement.wsgi``,
conductor, scheduler and N computes (the fake virt driver, each its own
size) as ``nova.service.Service``. Both APIs sit behind keystonemiddleware
and talk to each other through the Keystone catalog.

Nova's own test fixtures stand in for what the sandbox does not run:
Neutron and Glance (plus a read-only image endpoint for the clients), and
the local node identity file the computes would otherwise share. Known to
work with nova 34.0.0 (2026.2); those fixtures are not a stable API.
"""

import os
import shutil
import signal
import sqlite3
import sys
import tempfile

from pcloud_plugin.sandbox import common

PCLOUD_FILTER_MODULE = 'pcloud_plugin.scheduler.filters.pcloud_filter'
PCLOUD_FILTER = PCLOUD_FILTER_MODULE + '.PcloudFilter'
# The image the clients boot, served by the image stub.
IMAGE = {'id': 'c1e7a0a0-5a4d-4c3b-9a55-5a2d0b0c1e00', 'name': 'cirros',
         'status': 'active', 'visibility': 'public', 'is_public': True,
         'container_format': 'bare', 'disk_format': 'qcow2',
         'size': 21430272, 'min_ram': 0, 'min_disk': 0,
         'protected': False, 'tags': [], 'properties': {}}
# (name, vcpus, memory_mb, root_gb) of the flavors the sandbox offers.
FLAVORS = (('m1.tiny', 1, 512, 1), ('m1.small', 1, 2048, 20),
           ('m1.medium', 2, 4096, 40), ('m1.large', 4, 8192, 80))


# What an operator who also runs Blazar's host and instance reservations
# enables beside ours (blazar-nova's docs): the sandbox's blazar_filters.
BLAZAR_FILTER = 'blazarnova.scheduler.filters.blazar_filter.BlazarFilter'
BLAZAR_FILTERS = ('BlazarFilter', 'AggregateInstanceExtraSpecsFilter',
                  'AggregateMultiTenancyIsolation')


def _filters(spec):
    """Nova's default filters, plus the PcloudFilter once it exists, and

    Blazar's if the spec asks for them.
    """
    import importlib.util

    from nova.conf import scheduler

    enabled = next(opt.default for opt in scheduler.filter_scheduler_opts
                   if opt.name == 'enabled_filters')
    available = common.Multi(['nova.scheduler.filters.all_filters'])
    if spec.get('blazar_filters'):
        # The Aggregate* ones are in all_filters already. Before ours: the
        # scheduler's log of a refusal then shows what each let through.
        available.append(BLAZAR_FILTER)
        enabled = enabled + list(BLAZAR_FILTERS)
    try:
        found = importlib.util.find_spec(PCLOUD_FILTER_MODULE)
    except ImportError:
        found = None
    if found:
        available.append(PCLOUD_FILTER)
        enabled = enabled + ['PcloudFilter']
    return available, enabled


_NOVA_DATABASES = ('nova_api', 'nova_cell0', 'nova_cell1', 'placement')


class _NoCache(object):
    """On a database server: migrate every time."""

    def restore(self):
        return False

    def save(self, key, name):
        pass

    def commit(self):
        pass


def _service_auth(spec, username):
    auth = common.authtoken_conf(spec, username)
    del auth['www_authenticate_uri']
    return auth


def _write_confs(spec, run_dir):
    dbs = spec['databases']
    available, enabled = _filters(spec)
    nova_conf = common.write_conf(os.path.join(run_dir, 'nova.conf'), {
        'DEFAULT': {
            'host': 'sandbox',
            'transport_url': spec['transport'],
            'compute_driver': 'fake.FakeDriver',
            'state_path': run_dir,
            'my_ip': common.HOST,
            'use_stderr': True,
        },
        'api': {'auth_strategy': 'keystone'},
        'api_database': dict(common.NO_FSYNC, connection=dbs['nova_api']),
        'database': dict(common.NO_FSYNC, connection=dbs['nova_cell1']),
        'keystone_authtoken': common.authtoken_conf(spec, 'nova'),
        'placement': _service_auth(spec, 'nova'),
        'filter_scheduler': {'available_filters': available,
                             'enabled_filters': enabled},
        'scheduler': {'discover_hosts_in_cells_interval': -1},
        # As the README asks of a cloud: versioned notifications, which
        # blazar-manager follows (cloud.nova_events).
        'notifications': {'notification_format': 'versioned'},
        'oslo_messaging_notifications': {
            'driver': ('messagingv2' if common.carries_notifications(spec)
                       else 'noop')},
        'oslo_concurrency': {'lock_path': os.path.join(run_dir, 'locks')},
    })
    placement_conf = common.write_conf(
        os.path.join(run_dir, 'placement.conf'), {
            'DEFAULT': {'use_stderr': True},
            'api': {'auth_strategy': 'keystone'},
            'placement_database': dict(common.NO_FSYNC,
                                       connection=dbs['placement'],
                                       sync_on_startup=True),
            'keystone_authtoken': common.authtoken_conf(spec, 'placement'),
        })
    return nova_conf, placement_conf


class _Stand(object):
    """The ``test`` nova's Neutron and Glance fixtures expect."""

    def __init__(self, fixture):
        self.fixture = fixture

    def useFixture(self, fixture):
        return self.fixture.useFixture(fixture)

    def stub_out(self, old, new):
        import fixtures
        self.fixture.useFixture(fixtures.MonkeyPatch(old, new))

    def flags(self, group=None, **overrides):
        from nova import conf
        for name, value in overrides.items():
            conf.CONF.set_override(name, value, group)

    def id(self):
        return 'pcloud-sandbox'


def _image_app(glance):
    """Glance's v2 read API over the Glance fixture, for the clients."""
    import json

    def render(image):
        body = {k: v for k, v in image.items()
                if k not in ('properties', 'deleted', 'deleted_at',
                             'is_public')}
        body.update(image.get('properties', {}))
        for stamp in ('created_at', 'updated_at'):
            if body.get(stamp) is not None:
                body[stamp] = body[stamp].strftime('%Y-%m-%dT%H:%M:%SZ')
        return body

    def app(environ, start_response):
        from urllib import parse

        path = environ['PATH_INFO'].rstrip('/')
        query = dict(parse.parse_qsl(environ.get('QUERY_STRING', '')))
        status, body = '404 Not Found', {'message': 'not found'}
        if path in ('', '/versions'):
            status, body = '200 OK', {'versions': [{
                'id': 'v2.16', 'status': 'CURRENT', 'links': [{
                    'rel': 'self', 'href': common.url(
                        app.spec, 'image', '/v2/')}]}]}
        elif path == '/v2/images':
            images = [render(i) for i in glance.images.values()]
            if 'name' in query:
                images = [i for i in images if i['name'] == query['name']]
            if 'marker' in query:
                images = []
            status, body = '200 OK', {'images': images}
        elif path.startswith('/v2/images/'):
            image = glance.images.get(path[len('/v2/images/'):])
            if image:
                status, body = '200 OK', render(image)
        start_response(status, [('Content-Type', 'application/json')])
        return [json.dumps(body).encode()]
    return app


class _SchemaCache(object):
    """Migrated, empty SQLite databases, kept between runs.

    Migrating Nova's and Placement's schemas from scratch costs seconds at
    every start; the first start on SQLite saves its freshly migrated files
    here and later ones copy them. The cell0 and cell1 databases share one
    schema, Nova's "main" one.
    """

    def __init__(self, spec):
        from nova import version
        from placement import wsgi as placement_wsgi
        self.databases = spec['databases']
        self.path = os.path.join(spec['cache_dir'], 'schemas-nova-%s-%s' % (
            version.version_string(),
            placement_wsgi.version_info.version_string()))
        self.building = None

    def _file(self, key):
        return self.databases[key][len('sqlite:///'):]

    def restore(self):
        if not os.path.isdir(self.path):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.building = tempfile.mkdtemp(
                dir=os.path.dirname(self.path), prefix='.building-')
            return False
        for key, name in (('nova_api', 'nova_api'), ('nova_cell0', 'main'),
                          ('nova_cell1', 'main'), ('placement', 'placement')):
            shutil.copyfile(os.path.join(self.path, name + '.db'),
                            self._file(key))
        return True

    def save(self, key, name):
        if self.building:
            source = sqlite3.connect(self._file(key))
            copy = sqlite3.connect(os.path.join(self.building, name + '.db'))
            with copy:
                source.backup(copy)
            source.close()
            copy.close()

    def commit(self):
        if self.building:
            try:
                os.rename(self.building, self.path)
            except OSError:
                # Another sandbox saved the same schemas first.
                shutil.rmtree(self.building, ignore_errors=True)


def _prepare_databases(spec, cache):
    """The schemas, cell mappings, and what an operator adds first."""
    from nova.compute import flavors
    from nova import context
    from nova.db import migration
    from nova import objects
    from oslo_utils import uuidutils

    if not cache.restored:
        migration.db_sync(database='api')
        migration.db_sync(database='main')
        cache.save('nova_api', 'nova_api')
        cache.save('nova_cell1', 'main')
    ctxt = context.get_admin_context()
    cells = {}
    for name, uuid in (('cell0', objects.CellMapping.CELL0_UUID),
                       ('cell1', uuidutils.generate_uuid())):
        cells[name] = objects.CellMapping(
            context=ctxt, name=name, uuid=uuid,
            transport_url=spec['transport'],
            database_connection=spec['databases']['nova_' + name])
        cells[name].create()
    if not cache.restored:
        with context.target_cell(ctxt, cells['cell0']) as cctxt:
            migration.db_sync(database='main', context=cctxt)
    for name, vcpus, memory_mb, root_gb in FLAVORS:
        flavors.create(name, memory_mb, vcpus, root_gb)
    # Blazar takes the hosts it is given out of this aggregate.
    objects.Aggregate(context=ctxt, name='freepool').create()


def _same_nodes():
    """After a restart, the fake driver names its nodes as the cloud

    knows them (it draws their uuids at random in each process).
    """
    from nova import context
    from nova import objects
    from oslo_utils.fixture import uuidsentinel

    for node in objects.ComputeNodeList.get_all(context.get_admin_context()):
        setattr(uuidsentinel, 'node_%s' % node.hypervisor_hostname, node.uuid)


def _running_again(svc, host):
    """After a restart, the fake driver runs what the cloud says runs on

    the host (it keeps nothing itself), so that its servers stay ACTIVE.
    """
    from nova.compute import power_state
    from nova import context
    from nova import objects
    from nova.virt import fake

    for instance in objects.InstanceList.get_by_host(
            context.get_admin_context(), host):
        svc.manager.driver.instances[instance.uuid] = fake.FakeInstance(
            instance.name, power_state.RUNNING, instance.uuid)


def _start_computes(spec):
    from nova.compute import rpcapi as compute_rpcapi
    from nova import conf
    from nova import service
    from nova.virt import fake

    services = []
    if spec.get('resume'):
        _same_nodes()
    for compute in spec['computes']:
        # The fake driver names its node after CONF.host when it loads.
        conf.CONF.set_override('host', compute['name'])
        try:
            svc = service.Service.create(
                binary='nova-compute', host=compute['name'],
                topic=compute_rpcapi.RPC_TOPIC,
                topic_alt=compute_rpcapi.RPC_TOPIC_ALT)
        finally:
            conf.CONF.clear_override('host')
        # Its size, as Placement is told (update_provider_tree) and as
        # the driver's own claims count it.
        driver = svc.manager.driver
        driver.vcpus = compute['vcpus']
        driver.memory_mb = compute['memory_mb']
        driver.local_gb = compute['disk_gb']
        driver.resources = fake.Resources(
            vcpus=compute['vcpus'], memory_mb=compute['memory_mb'],
            local_gb=compute['disk_gb'])
        _running_again(svc, compute['name'])
        svc.start()
        services.append(svc)
    return services


def start(spec):
    os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = '1'
    from nova import monkey_patch
    monkey_patch.patch()

    run_dir = os.path.join(spec['state_dir'], 'nova')
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    cache = _NoCache()
    if spec.get('resume'):
        cache.restored = True  # the cloud's own databases, as they are
    else:
        if all(spec['databases'][key].startswith('sqlite:///')
               for key in _NOVA_DATABASES):
            cache = _SchemaCache(spec)
        cache.restored = cache.restore()
    for key in _NOVA_DATABASES:
        common.sqlite_wal(spec['databases'][key])
    nova_conf, placement_conf = _write_confs(spec, run_dir)
    paste = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')
    if not os.path.exists(paste):
        raise RuntimeError('%s is missing: is nova installed in this '
                           'Python (%s)?' % (paste, sys.prefix))

    import fixtures
    from nova.api.openstack import wsgi_app
    from nova import service
    from nova.tests import fixtures as nova_fixtures

    # What nova's API WSGI script does first: config, logging, RPC, DB.
    os.environ['OS_NOVA_CONFIG_FILES'] = ';'.join((paste, nova_conf))
    wsgi_app.init_global_data([paste, nova_conf], 'osapi_compute',
                              'nova-sandbox')
    holder = fixtures.Fixture()
    holder.setUp()
    stand = _Stand(holder)
    if spec['databases']['nova_api'].startswith('sqlite'):
        # One writer per SQLite file across all the services' threads.
        holder.useFixture(nova_fixtures.DatabaseWriteLock())
    holder.useFixture(nova_fixtures.ComputeNodeIdFixture())
    holder.useFixture(nova_fixtures.NeutronFixture(stand))
    glance = holder.useFixture(nova_fixtures.GlanceFixture(stand))
    glance.create(None, dict(IMAGE, created_at=glance.timestamp,
                             updated_at=glance.timestamp))
    if not spec.get('resume'):
        _prepare_databases(spec, cache)

    os.environ['OS_PLACEMENT_CONFIG_DIR'] = run_dir
    from placement import wsgi as placement_wsgi
    placement_app = placement_wsgi.init_application()
    cache.save('placement', 'placement')
    cache.commit()
    servers = [common.serve('placement', placement_app,
                            spec['ports']['placement'])]
    image_app = _image_app(glance)
    image_app.spec = spec
    servers.append(common.serve('image', image_app, spec['ports']['image']))

    # Computes report to Placement as the nova service user.
    common.wait_for_token(spec, 'nova', timeout=spec['timeout'])
    for binary in ('nova-conductor', 'nova-scheduler'):
        service.Service.create(binary=binary).start()
    computes = _start_computes(spec)
    # As a nova-compute does on SIGHUP (its manager's reset): forget the
    # cached provider tree. An operator's remedy once another service
    # deleted a provider of the tree, e.g. Blazar's host delete.
    signal.signal(signal.SIGHUP, lambda _signum, _frame: [
        svc.manager.reset() for svc in computes])
    from nova import context
    from nova.objects import host_mapping
    host_mapping.discover_hosts(context.get_admin_context())

    servers.append(common.serve(
        'nova-api', wsgi_app.init_application('osapi_compute', 'nova-api'),
        spec['ports']['nova']))
    return servers


if __name__ == '__main__':
    common.run('nova', start)
