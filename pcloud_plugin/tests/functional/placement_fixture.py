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
"""Real openstack-placement, in-process, on its own in-memory SQLite DB.

Placement keeps its database engine in a process-wide transaction factory
that can be configured only once, so one server serves the whole process
and ``PlacementFixture`` empties its provider data for each test.

Forests are described by a plain ``spec`` dict, so the same forest can be
loaded into Placement (``load_spec`` through the REST API, or
``bulk_load`` with direct inserts for benchmark-sized forests) and into
our own engine::

    {'providers': [{'uuid': ..., 'name': ..., 'parent': uuid or None,
                    'inventories': {rc: {'total': n, ...}},
                    'traits': [...], 'aggregates': [...]}, ...],
     'allocations': [(consumer uuid, {rp uuid: {rc: n}}), ...]}

Parents come before their children in 'providers'.
"""

import json as jsonlib
import uuid as uuidlib

import fixtures
from oslo_config import cfg
import sqlalchemy as sa
import webob

from placement import conf as placement_conf
from placement.db.sqlalchemy import migration
from placement.db.sqlalchemy import models
from placement import db_api
from placement import deploy

MICROVERSION = '1.39'
_server = None

_T = {name: cls.__table__ for name, cls in (
    ('rp', models.ResourceProvider), ('inv', models.Inventory),
    ('alloc', models.Allocation), ('rp_trait', models.ResourceProviderTrait),
    ('rp_agg', models.ResourceProviderAggregate),
    ('agg', models.PlacementAggregate), ('trait', models.Trait),
    ('rc', models.ResourceClass), ('consumer', models.Consumer),
    ('project', models.Project), ('user', models.User))}


class Response:
    """The bits of a requests.Response that callers use."""

    def __init__(self, resp):
        self.status_code = resp.status_int
        self.text = resp.text
        self.headers = resp.headers

    def json(self):
        return jsonlib.loads(self.text)

    def __bool__(self):
        return self.status_code < 400


class Adapter:
    """A keystoneauth1 Adapter look-alike calling the WSGI app directly,

    as admin, at MICROVERSION unless a call says otherwise.
    """

    def __init__(self, app, microversion=MICROVERSION):
        self.app = app
        self.microversion = microversion

    def request(self, url, method, json=None, microversion=None,
                headers=None, raise_exc=False):
        # raise_exc: taken as keystoneauth takes it; this one never raises.
        all_headers = {
            'x-auth-token': 'admin',
            'accept': 'application/json',
            'openstack-api-version': 'placement %s' % (
                microversion or self.microversion)}
        all_headers.update(headers or {})
        kwargs = {}
        if json is not None:
            all_headers['content-type'] = 'application/json'
            kwargs['body'] = jsonlib.dumps(json).encode('utf-8')
        req = webob.Request.blank(url, method=method, headers=all_headers,
                                  **kwargs)
        return Response(req.get_response(self.app))

    def get(self, url, **kwargs):
        return self.request(url, 'GET', **kwargs)

    def post(self, url, json=None, **kwargs):
        return self.request(url, 'POST', json=json, **kwargs)

    def put(self, url, json=None, **kwargs):
        return self.request(url, 'PUT', json=json, **kwargs)

    def delete(self, url, **kwargs):
        return self.request(url, 'DELETE', **kwargs)


class _Server:

    def __init__(self):
        self.conf = cfg.ConfigOpts()
        placement_conf.register_opts(self.conf)
        self.conf.set_default('connection', 'sqlite://',
                              group='placement_database')
        self.conf([], default_config_files=[])
        self.conf.set_override('auth_strategy', 'noauth2', group='api')
        # Placement's facade is global and configured once per process,
        # perhaps by another fixture with a database that is gone now:
        # each PlacementFixture patches this engine in while it is in use.
        db_api.configure(self.conf)
        self.engine = sa.create_engine('sqlite://',
                                       poolclass=sa.pool.StaticPool)
        migration.create_schema(self.engine)
        # Loading the app syncs standard traits and classes into it.
        unpatch = db_api.placement_context_manager.patch_engine(self.engine)
        try:
            self.app = deploy.loadapp(self.conf)
        finally:
            unpatch()

    def reset(self):
        """Forget every provider, aggregate and allocation.

        Custom traits and classes stay: they are harmless, and cached by
        Placement.
        """
        with self.engine.begin() as conn:
            for name in ('alloc', 'consumer', 'project', 'user', 'inv',
                         'rp_trait', 'rp_agg', 'agg', 'rp'):
                conn.execute(_T[name].delete())


def server():
    global _server
    if _server is None:
        _server = _Server()
    return _server


class PlacementFixture(fixtures.Fixture):
    """An empty Placement; ``self.api`` is an Adapter at 1.39."""

    def _setUp(self):
        self.server = server()
        self.addCleanup(db_api.placement_context_manager.patch_engine(
            self.server.engine))
        self.server.reset()
        self.api = Adapter(self.server.app)
        self.addCleanup(self.server.reset)


def _check(resp, what):
    if not resp:
        raise AssertionError('Placement refused to %s: %s %s'
                             % (what, resp.status_code, resp.text))
    return resp


def _custom_names(spec):
    traits = set(spec.get('traits', ()))
    classes = set(spec.get('resource_classes', ()))
    for p in spec['providers']:
        traits.update(p.get('traits', ()))
        classes.update(p.get('inventories', {}))
    return ({t for t in traits if t.startswith('CUSTOM_')},
            {c for c in classes if c.startswith('CUSTOM_')})


def load_spec(api, spec):
    """Build spec in Placement through its REST API.

    spec['traits'] and spec['resource_classes'], if present, name extra
    custom names to create (so a request may name one no provider has).
    """
    traits, classes = _custom_names(spec)
    for name in sorted(traits):
        _check(api.put('/traits/%s' % name), 'create trait')
    for name in sorted(classes):
        _check(api.put('/resource_classes/%s' % name), 'create class')
    for p in spec['providers']:
        body = {'uuid': p['uuid'], 'name': p['name']}
        if p.get('parent'):
            body['parent_provider_uuid'] = p['parent']
        gen = _check(api.post('/resource_providers', json=body),
                     'create provider').json()['generation']
        url = '/resource_providers/%s' % p['uuid']
        if p.get('inventories'):
            gen = _check(api.put(url + '/inventories', json={
                'resource_provider_generation': gen,
                'inventories': p['inventories']}), 'set inventories'
            ).json()['resource_provider_generation']
        if p.get('traits'):
            gen = _check(api.put(url + '/traits', json={
                'resource_provider_generation': gen,
                'traits': sorted(p['traits'])}), 'set traits'
            ).json()['resource_provider_generation']
        if p.get('aggregates'):
            _check(api.put(url + '/aggregates', json={
                'resource_provider_generation': gen,
                'aggregates': sorted(p['aggregates'])}), 'set aggregates')
    for consumer, amounts in spec.get('allocations', ()):
        _check(api.put('/allocations/%s' % consumer, json={
            'allocations': {rp: {'resources': res}
                            for rp, res in amounts.items()},
            'project_id': str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, 'p')),
            'user_id': str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, 'u')),
            'consumer_generation': None,
            'consumer_type': 'INSTANCE'}), 'allocate')


def bulk_load(spec, api=None):
    """Build spec in Placement with direct inserts.

    The same rows as the API writes (but consumers, which GET
    /allocation_candidates never reads), in seconds for thousands of
    providers.
    """
    srv = server()
    api = api or Adapter(srv.app)
    traits, classes = _custom_names(spec)
    for name in sorted(traits):
        _check(api.put('/traits/%s' % name), 'create trait')
    for name in sorted(classes):
        _check(api.put('/resource_classes/%s' % name), 'create class')
    with srv.engine.begin() as conn:
        trait_ids = dict(conn.execute(
            sa.select(_T['trait'].c.name, _T['trait'].c.id)).all())
        rc_ids = dict(conn.execute(
            sa.select(_T['rc'].c.name, _T['rc'].c.id)).all())
        next_id = (conn.execute(sa.select(
            sa.func.max(_T['rp'].c.id))).scalar() or 0) + 1
        ids, roots, rows, invs, rp_traits, rp_aggs = {}, {}, [], [], [], []
        agg_ids = {}
        for p in spec['providers']:
            ids[p['uuid']] = rp_id = next_id
            next_id += 1
            parent = ids.get(p.get('parent'))
            roots[rp_id] = root = rp_id if parent is None else roots[parent]
            rows.append({'id': rp_id, 'uuid': p['uuid'], 'name': p['name'],
                         'generation': 1, 'parent_provider_id': parent,
                         'root_provider_id': root})
            for rc, inv in p.get('inventories', {}).items():
                invs.append(dict(
                    {'reserved': 0, 'min_unit': 1, 'max_unit': inv['total'],
                     'step_size': 1, 'allocation_ratio': 1.0}, **inv,
                    resource_provider_id=rp_id, resource_class_id=rc_ids[rc]))
            rp_traits.extend({'resource_provider_id': rp_id,
                              'trait_id': trait_ids[t]}
                             for t in p.get('traits', ()))
            for agg in p.get('aggregates', ()):
                agg_ids.setdefault(agg, len(agg_ids) + 1)
                rp_aggs.append({'resource_provider_id': rp_id,
                                'aggregate_id': agg_ids[agg]})
        conn.execute(_T['rp'].insert(), rows)
        for table, values in (('inv', invs), ('rp_trait', rp_traits),
                              ('rp_agg', rp_aggs)):
            if values:
                conn.execute(_T[table].insert(), values)
        if agg_ids:
            conn.execute(_T['agg'].insert(), [
                {'id': i, 'uuid': agg} for agg, i in agg_ids.items()])
        allocs = [{'resource_provider_id': ids[rp], 'consumer_id': consumer,
                   'resource_class_id': rc_ids[rc], 'used': n}
                  for consumer, amounts in spec.get('allocations', ())
                  for rp, res in amounts.items() for rc, n in res.items()]
        if allocs:
            conn.execute(_T['alloc'].insert(), allocs)
