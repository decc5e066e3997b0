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

"""Keystone, in its own process, started from a snapshot.

The first start bootstraps Keystone with ``keystone-manage`` (schema, keys,
admin) and then saves its SQLite database and keys as a snapshot in the
cache directory; later starts copy the snapshot, so they take seconds.
Every start then makes the sandbox's projects, users and catalog what the
spec says, through Keystone's own API (idempotent; it moves the endpoints
to this start's ports).
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading

from pcloud_plugin.sandbox import common

# Bump when what the snapshot holds changes, so old ones are not reused.
SNAPSHOT_FORMAT = 1
ROLES = ('admin', 'service')
ENDPOINT_INTERFACES = ('public', 'internal', 'admin')
# (service type, name, port name, path) of the catalog.
CATALOG = (
    ('identity', 'keystone', 'keystone', '/v3'),
    ('compute', 'nova', 'nova', '/v2.1'),
    ('placement', 'placement', 'placement', ''),
    ('image', 'glance', 'image', ''),
    ('reservation', 'blazar', 'blazar', '/v1'),
)


def snapshot_dir(spec):
    from keystone import version
    return os.path.join(spec['cache_dir'], 'keystone-%s-f%d' % (
        version.release_string(), SNAPSHOT_FORMAT))


def _write_conf(run_dir):
    return common.write_conf(os.path.join(run_dir, 'keystone.conf'), {
        # Services log in at once at start, and each login writes the
        # user's last_active_at: wait for SQLite's write lock longer than
        # its default 5 s on a loaded machine instead of answering 500.
        'database': dict(common.NO_FSYNC, connection=common.patient(
            'sqlite:///%s' % os.path.join(run_dir, 'keystone.db'))),
        'fernet_tokens': {
            'key_repository': os.path.join(run_dir, 'fernet-keys')},
        'fernet_receipts': {
            'key_repository': os.path.join(run_dir, 'fernet-keys')},
        'credential': {
            'key_repository': os.path.join(run_dir, 'credential-keys')},
        # bcrypt's minimum cost: every service login stays fast.
        'identity': {'password_hash_rounds': 4},
        'token': {'expiration': 24 * 3600},
        # Every service call brings Keystone a new token to validate.
        'cache': {'enabled': True, 'backend': 'dogpile.cache.memory'},
    })


def _manage(conf, *args):
    user = ['--keystone-user', str(os.getuid()),
            '--keystone-group', str(os.getgid())]
    command = [sys.executable, '-c',
               'from keystone.cmd import manage; manage.main()',
               '--config-file', conf, *args]
    if args[0].endswith('_setup'):
        command += user
    return subprocess.Popen(command)


def _bootstrap(spec, conf):
    def wait(*procs):
        for proc in procs:
            if proc.wait():
                raise RuntimeError('keystone-manage %s failed (exit %d)'
                                   % (proc.args[5], proc.returncode))
    # Keys and schema do not depend on each other: make them side by side.
    wait(_manage(conf, 'db_sync'), _manage(conf, 'fernet_setup'),
         _manage(conf, 'credential_setup'))
    wait(_manage(conf, 'bootstrap',
                 '--bootstrap-password', common.PASSWORD,
                 '--bootstrap-region-id', common.REGION,
                 '--bootstrap-public-url', common.auth_url(spec)))


def _catalog(spec):
    return {name: common.url(spec, port, path)
            for _, name, port, path in CATALOG}


def _save_snapshot(spec, run_dir, target):
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix='.building-')
    for keys in ('fernet-keys', 'credential-keys'):
        shutil.copytree(os.path.join(run_dir, keys), os.path.join(tmp, keys))
    # The backup API copies a consistent database while Keystone serves.
    with open(os.path.join(tmp, 'catalog.json'), 'w') as f:
        json.dump(_catalog(spec), f)
    source = sqlite3.connect(os.path.join(run_dir, 'keystone.db'))
    copy = sqlite3.connect(os.path.join(tmp, 'keystone.db'))
    with copy:
        source.backup(copy)
    source.close()
    copy.close()
    try:
        os.rename(tmp, target)
    except OSError:
        # Another sandbox saved the same snapshot first.
        shutil.rmtree(tmp, ignore_errors=True)


def _restore_snapshot(snapshot, run_dir):
    """Copy the snapshot; return the catalog it was saved with."""
    shutil.copy2(os.path.join(snapshot, 'keystone.db'), run_dir)
    for keys in ('fernet-keys', 'credential-keys'):
        shutil.copytree(os.path.join(snapshot, keys),
                        os.path.join(run_dir, keys))
    with open(os.path.join(snapshot, 'catalog.json')) as f:
        return json.load(f)


class _Identity:
    """Keystone's v3 API as the admin, read in bulk to save round trips

    (each request costs Keystone a token validation).
    """

    def __init__(self, base):
        from keystoneauth1.identity import v3
        from keystoneauth1 import session

        self.base = base
        self.session = session.Session(auth=v3.Password(
            auth_url=self.base, username='admin', password=common.PASSWORD,
            project_name='admin', user_domain_id='default',
            project_domain_id='default'))

    def list(self, collection):
        return self.session.get(self.base + '/' + collection).json()[
            collection]

    def create(self, collection, kind, body):
        return self.session.post(self.base + '/' + collection,
                                 json={kind: body}).json()[kind]

    def ensure(self, existing, collection, kind, key, body):
        """The entity whose ``key`` field has ``body[key]``; made if new."""
        for entity in existing:
            if entity[key] == body[key]:
                return entity
        entity = self.create(collection, kind, body)
        existing.append(entity)
        return entity


def provision(spec, base):
    """Projects, users, roles and catalog of the sandbox, through the

    Keystone API at ``base``.
    """
    identity = _Identity(base)
    roles, projects, users, services, endpoints, assignments = (
        identity.list(collection) for collection in (
            'roles', 'projects', 'users', 'services', 'endpoints',
            'role_assignments'))
    granted = {(a['scope']['project']['id'], a['user']['id'], a['role']['id'])
               for a in assignments if 'project' in a['scope']
               and 'user' in a}

    def grant(project, user, role_name):
        role = identity.ensure(roles, 'roles', 'role', 'name',
                               {'name': role_name})
        if (project['id'], user['id'], role['id']) not in granted:
            identity.session.put(identity.base + (
                '/projects/%s/users/%s/roles/%s' % (
                    project['id'], user['id'], role['id'])))

    def member(project_name, user_name, *role_names):
        project = identity.ensure(projects, 'projects', 'project', 'name', {
            'name': project_name, 'domain_id': 'default'})
        user = identity.ensure(users, 'users', 'user', 'name', {
            'name': user_name, 'domain_id': 'default',
            'password': common.PASSWORD})
        for role_name in role_names:
            grant(project, user, role_name)

    for service_type, name, port, path in CATALOG:
        service = identity.ensure(services, 'services', 'service', 'type', {
            'type': service_type, 'name': name})
        address = common.url(spec, port, path)
        for interface in ENDPOINT_INTERFACES:
            found = [e for e in endpoints if e['service_id'] == service['id']
                     and e['interface'] == interface]
            if not found:
                identity.create('endpoints', 'endpoint', {
                    'service_id': service['id'], 'interface': interface,
                    'url': address, 'region_id': common.REGION})
            elif found[0]['url'] != address:
                identity.session.patch(
                    identity.base + '/endpoints/' + found[0]['id'],
                    json={'endpoint': {'url': address}})
    for name in common.SERVICE_USERS:
        member(common.SERVICE_PROJECT, name, *ROLES)
    member(common.DEMO_PROJECT, common.DEMO_USER, 'member')
    member(common.ALT_PROJECT, common.ALT_USER, 'member')


def _one_writer_at_a_time():
    """One of Keystone's write transactions at a time in this process.

    Keystone writes a user's last_active_at at every login, in a
    transaction that reads first: on SQLite, concurrent ones fail at once
    with "database is locked" (SQLite does not wait to upgrade a read
    lock while another writer waits). Nova's sandbox does the same with
    its DatabaseWriteLock.
    """
    import contextlib
    import threading

    from keystone.common import sql

    writing = threading.RLock()
    session_for_write = sql.session_for_write

    @contextlib.contextmanager
    def one_at_a_time():
        with writing, session_for_write() as session:
            yield session
    sql.session_for_write = one_at_a_time


def _one_request_at_a_time(app):
    """Keystone's app, answering one request at a time.

    Its auth middleware keeps the token it validated on itself, one
    object for every request (``self.token``): served from threads, a
    request can take another's token, and a tenant's trust creation then
    ran as Blazar's trust-scoped token and was refused 403 (a 500 from
    Blazar, seen in the soak). Keystone is meant for servers of one
    thread per process.
    """
    lock = threading.Lock()

    def serialized(environ, start_response):
        with lock:
            return list(app(environ, start_response))
    return serialized


def start(spec):
    _one_writer_at_a_time()
    run_dir = os.path.join(spec['state_dir'], 'keystone')
    resume = spec.get('resume') and os.path.exists(
        os.path.join(run_dir, 'keystone.db'))
    if not resume:
        shutil.rmtree(run_dir, ignore_errors=True)
        os.makedirs(run_dir)
    conf = _write_conf(run_dir)
    snapshot = snapshot_dir(spec)
    fresh = not resume and not os.path.isdir(snapshot)
    if resume:
        # The cloud's own Keystone: its ids are in the other databases.
        catalog = None
    elif fresh:
        sys.stderr.write('No Keystone snapshot at %s: bootstrapping one '
                         '(once).\n' % snapshot)
        _bootstrap(spec, conf)
        catalog = None
    else:
        catalog = _restore_snapshot(snapshot, run_dir)

    from keystone.server.flask import core
    app = _one_request_at_a_time(core.initialize_application(
        'public', config_files=[conf]))
    if catalog != _catalog(spec):
        # On a private port first: nothing may log in before the catalog
        # is this run's.
        setup = common.serve('keystone-setup', app, 0)
        provision(spec, 'http://%s:%d/v3' % setup.server_address)
        setup.shutdown()
        setup.server_close()
    if fresh:
        _save_snapshot(spec, run_dir, snapshot)
    return [common.serve('keystone', app, spec['ports']['keystone'])]


if __name__ == '__main__':
    common.run('keystone', start)
