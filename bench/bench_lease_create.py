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

"""What a tenant waits for: POST /v1/leases of a virtual:instance

reservation to its answer, through Blazar's real API, RPC and manager, in
a sandbox cloud (pcloud_plugin.sandbox) on MariaDB and RabbitMQ.

The cloud: the sandbox's Keystone, Nova, Placement and Blazar; 1,000
hosts of bench.dataset's sizes made in Placement through its API (a
resource provider and its VCPU, MEMORY_MB and DISK_GB inventory each:
what a compute reports, without its service), mirrored into the ledger
by the manager's own Placement mirror; the dataset's 10,000 existing
instance reservations loaded as the ledger's claims (for our plugin) and
as Blazar's leases, reservations, host allocations and events (for
Blazar's, as bench_instance_plugin loads them). The leases asked for are
the dataset's requests (1-50 slots of its flavors, any affinity, windows
of 1 hour to 10 days in its 30 days), each POSTed as the demo tenant.

Measured:

* ours: N leases in turn, each timed from POST to its answer; p50, p99;
* where the time goes: a second manager of the bench's own (the same
  blazar.conf) times, on the leases RabbitMQ hands it, the manager's
  create_lease and our plugin's calls in it (allocation_candidates and
  reserve_resource); the rest is Blazar's API, Keystone's token check and
  RPC;
* creations per second with 1, 2 and 4 blazar-manager processes (the
  sandbox's, plus 0, 1 or 3 of the bench's), several clients at once;
  then no host overbooked in the ledger (its rows summed apart from our
  code, as bench_instance_plugin does);
* Blazar's own virtual:instance plugin in the same cloud (blazar
  restarted with it in [manager] plugins): first as a tenant meets it,
  with Blazar's RPC timeout as configured by default (60 s), then with
  rpc_response_timeout raised so that a figure comes back; the ratio.

The hosts are providers without a nova-compute service behind them: 1,000
fake computes would not fit the machine. Nothing on the lease create path
asks Nova about hosts (ours reads the ledger and writes its promises to
Placement; Blazar's reads its computehosts table), so what is timed is
the path a real cloud takes.
"""

import collections
import concurrent.futures
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import requests
import sqlalchemy as sa

from bench import bench_instance_plugin as instances
from bench import database
from bench import dataset
from bench import timing

HOSTS, RESERVATIONS = 1000, 10000
SEED = 2031
# Far from the sandbox's default 18500.
BASE_PORT = 19700
SERVER = 'mysql+pymysql://root@127.0.0.1'
RABBIT = 'rabbit://guest:guest@127.0.0.1:5672/'
MANAGERS = (1, 2, 4)
CLIENTS = 8
FULL = dict(ours=100, split=40, per_managers=160, upstream=3)
QUICK = dict(ours=20, split=16, per_managers=40, upstream=2)
# Raised for Blazar's own plugin, to get a figure back (default 60 s).
UPSTREAM_RPC_TIMEOUT = 900
OURS = 'pcloud.virtual.instance'
THEIRS = 'virtual.instance.plugin'
OTHER_PLUGINS = ['pcloud.host']
NAMESPACE = uuid.UUID('6d1b7a5e-3f0c-4a4e-9a3e-0c6b2f4d1e35')
PLACEMENT_VERSION = 'placement 1.20'


def _say(message):
    print('lease_create: %s' % message, file=sys.stderr, flush=True)


def _host_uuid(host):
    return str(uuid.uuid5(NAMESPACE, host.name))


# --- the servers: a database name and a virtual host of our own ----------

def _rabbitmqctl(*args):
    return subprocess.run(('rabbitmqctl',) + args, capture_output=True,
                          timeout=120, check=True)


class _Vhost:
    """A RabbitMQ virtual host for the run, deleted after (and every

    queue and exchange the services made in it with it).
    """

    def __init__(self):
        self.name = 'pcloud_bench_%s' % uuid.uuid4().hex[:10]

    def __enter__(self):
        _rabbitmqctl('add_vhost', self.name)
        _rabbitmqctl('set_permissions', '-p', self.name, 'guest', '.*',
                     '.*', '.*')
        return RABBIT.rstrip('/') + '/' + self.name

    def __exit__(self, *exc):
        _rabbitmqctl('delete_vhost', self.name)

    def consumers(self, queue):
        listed = _rabbitmqctl('list_queues', '-p', self.name, '-q', 'name',
                              'consumers').stdout.decode().split('\n')
        for line in listed:
            fields = line.split()
            if len(fields) == 2 and fields[0] == queue:
                return int(fields[1])
        return 0


def _server():
    """The MariaDB server: --db's if it names one, else the local one."""
    if database.SERVER and database.SERVER.startswith('mysql'):
        return sa.engine.make_url(database.SERVER).set(
            database='').render_as_string(hide_password=False).rstrip('/')
    return SERVER


def _drop_databases(server, prefix):
    """The sandbox drops its <prefix>_<service> databases at stop; the

    <prefix> one it makes for its demo's story is ours to drop.
    """
    engine = sa.create_engine(server + '/')
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s' % prefix)
            for (name,) in conn.exec_driver_sql('SHOW DATABASES').all():
                if name.startswith(prefix + '_'):
                    conn.exec_driver_sql('DROP DATABASE IF EXISTS %s'
                                         % name)
    finally:
        engine.dispose()


# --- the clients ---------------------------------------------------------

def _token(sandbox, user, project=False):
    """A token of ``user`` (and its project's id if ``project``)."""
    env = sandbox.env(user)
    body = {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': env['OS_USERNAME'], 'password': env['OS_PASSWORD'],
            'domain': {'id': 'default'}}}},
        'scope': {'project': {'name': env['OS_PROJECT_NAME'],
                              'domain': {'id': 'default'}}}}}
    answer = requests.post(env['OS_AUTH_URL'] + '/auth/tokens', json=body,
                           timeout=30)
    answer.raise_for_status()
    token = answer.headers['X-Subject-Token']
    if project:
        return token, answer.json()['token']['project']['id']
    return token


def _unlimited(sandbox):
    """No Nova quota for the demo tenant: its leases add up, and a

    refusal for quota is not what is measured.
    """
    token = _token(sandbox, 'admin')
    _token_, project = _token(sandbox, 'demo', project=True)
    _session(token).put(
        'http://127.0.0.1:%d/v2.1/os-quota-sets/%s' % (
            sandbox.ports['nova'], project),
        json={'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}},
        timeout=60).raise_for_status()


def _session(token, **headers):
    session = requests.Session()
    session.trust_env = False  # no proxy for loopback
    session.headers['X-Auth-Token'] = token
    session.headers.update(headers)
    return session


def _make_hosts(sandbox, data):
    """Each dataset host as a Placement provider with its inventory."""
    token = _token(sandbox, 'admin')
    url = 'http://127.0.0.1:%d' % sandbox.ports['placement']

    def make(hosts):
        session = _session(token, **{
            'OpenStack-API-Version': PLACEMENT_VERSION})
        for host in hosts:
            rp = _host_uuid(host)
            made = session.post(url + '/resource_providers', json={
                'name': host.name, 'uuid': rp}, timeout=60)
            made.raise_for_status()
            session.put(
                url + '/resource_providers/%s/inventories' % rp,
                json={'resource_provider_generation':
                      made.json()['generation'],
                      'inventories': {
                          rc: {'total': n, 'max_unit': n}
                          for rc, n in zip(dataset.CLASSES, host.size)}},
                timeout=60).raise_for_status()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(make, [data.hosts[k::4] for k in range(4)]))


def _lease_body(request, name):
    def at(hours):
        return dataset.moment(hours).strftime('%Y-%m-%d %H:%M')
    return {'name': name, 'events': [],
            'start_date': at(request.start), 'end_date': at(request.end),
            'reservations': [{
                'resource_type': 'virtual:instance',
                'amount': request.amount, 'vcpus': request.flavor[0],
                'memory_mb': request.flavor[1],
                'disk_gb': request.flavor[2],
                'affinity': request.affinity,
                'resource_properties': ''}]}


Answer = collections.namedtuple('Answer', 'name status ms error')


def _create(session, url, request, name, timeout=60 * 20):
    began = time.perf_counter()
    try:
        answer = session.post(url, json=_lease_body(request, name),
                              timeout=timeout)
        status, error = answer.status_code, (
            None if answer.status_code == 201 else answer.text[:300])
    except requests.RequestException as e:
        status, error = None, str(e)[:300]
    return Answer(name, status, (time.perf_counter() - began) * 1000, error)


class _Tenant:
    """The demo tenant, creating leases through Blazar's API."""

    def __init__(self, sandbox):
        self.token = _token(sandbox, 'demo')
        self.url = 'http://127.0.0.1:%d/v1/leases' % sandbox.ports['blazar']
        self.local = threading.local()
        self.made = 0

    def create(self, request, timeout=60 * 20):
        if not hasattr(self.local, 'session'):
            self.local.session = _session(self.token)
        self.made += 1
        name = 'bench-%s' % uuid.uuid4().hex[:12]
        return _create(self.local.session, self.url, request, name, timeout)


class _Timings:
    def __init__(self, answers):
        self.answers = answers
        self.ms = sorted(a.ms for a in answers if a.status == 201)
        self.statuses = collections.Counter(a.status for a in answers)

    def p(self, percent):
        return timing.percentile(self.ms, percent)

    def refused(self):
        return len(self.answers) - len(self.ms)

    def errors(self):
        return collections.Counter(
            (a.status, (a.error or '')[:120]) for a in self.answers
            if a.status != 201)


# --- the loads -----------------------------------------------------------

def _mirror_passed(ledger_url, since, timeout=300):
    """Until a pass of the Placement mirror completed after ``since``

    (UTC): a manager that just started reads every provider once (four
    requests each), which is not what a lease creation should share the
    machine with.
    """
    from pcloud_plugin.db import placement_sync

    engine = sa.create_engine(ledger_url)
    deadline = time.monotonic() + timeout
    try:
        while True:
            with engine.connect() as conn:
                done = conn.execute(sa.select(sa.func.max(
                    placement_sync._PASS.c.finished_at))).scalar()
            if done is not None and done > since:
                return
            if time.monotonic() > deadline:
                raise RuntimeError('no pass of the Placement mirror '
                                   'completed in %ds' % timeout)
            time.sleep(1)
    finally:
        engine.dispose()


def _wait_mirrored(ledger_url, count, timeout=600):
    """Until the manager's Placement mirror has every host's inventory in

    the ledger, and then completed a pass: nothing left for it to read.
    """
    engine = sa.create_engine(ledger_url)
    inv = instances._INV
    deadline = time.monotonic() + timeout
    try:
        while True:
            with engine.connect() as conn:
                have = conn.execute(sa.select(sa.func.count(
                    sa.distinct(inv.c.resource_provider_id)))).scalar()
            if have >= count:
                break
            if time.monotonic() > deadline:
                raise RuntimeError('the mirror brought %d of %d hosts into '
                                   'the ledger in %ds' % (have, count,
                                                          timeout))
            time.sleep(2)
    finally:
        engine.dispose()
    _mirror_passed(ledger_url, datetime.datetime.utcnow())


def _restart_blazar(sandbox):
    """blazar again (with its spec's options), once its mirror caught up."""
    since = datetime.datetime.utcnow()
    sandbox.restart('blazar')
    _mirror_passed(sandbox.databases.urls['ledger'], since)


def _load_ledger(ledger_url, data):
    """The dataset's reservations as the ledger's claims, on the

    providers the mirror made (ids and classes looked up by name).
    """
    md = instances.models.BASE.metadata.tables
    now = datetime.datetime.utcnow()
    rows = data.ledger_rows(now)
    engine = sa.create_engine(ledger_url)
    try:
        with engine.begin() as conn:
            by_uuid = dict(conn.execute(sa.select(
                instances._RP.c.uuid, instances._RP.c.id)).all())
            classes = dict(conn.execute(sa.select(
                md['resource_classes'].c.name,
                md['resource_classes'].c.id)).all())
        provider = {h.index + 1: by_uuid[_host_uuid(h)] for h in data.hosts}
        rc = {k + 1: classes[name] for k, name in enumerate(dataset.CLASSES)}
        allocations = [dict(a, resource_provider_id=provider[
            a['resource_provider_id']], resource_class_id=rc[
                a['resource_class_id']]) for a in rows['allocations']]
        instances._insert(engine, md, {'consumers': rows['consumers'],
                                       'allocations': allocations})
        with engine.begin() as conn:
            # As every ledger write does: what was read of them is stale.
            conn.execute(instances._RP.update().where(
                instances._RP.c.id.in_(list(provider.values()))).values(
                    generation=instances._RP.c.generation + 1))
    finally:
        engine.dispose()


def _load_blazar(blazar_url, data):
    """The same reservations as Blazar's rows (bench.dataset's), for its

    own plugin.
    """
    engine = sa.create_engine(blazar_url)
    tables = sa.MetaData()
    tables.reflect(engine)
    rows = data.blazar_rows(datetime.datetime.utcnow())
    instances._insert(engine, tables.tables, rows)
    engine.dispose()


# --- the bench's own managers ---------------------------------------------

def _managers(sandbox, count, timings=None):
    """count blazar-manager processes of the bench, on the sandbox's

    blazar.conf; each times its create_lease calls into ``timings``.
    """
    conf = sandbox.path('blazar', 'blazar.conf')
    procs = []
    for n in range(count):
        log = open(sandbox.path('logs', 'bench-manager-%d.log' % n), 'ab')
        procs.append(subprocess.Popen(
            [sys.executable, '-W', 'ignore', '-m',
             'bench.bench_lease_create', 'manager', conf,
             'bench-manager-%d' % n, timings or ''],
            stdout=subprocess.PIPE, stderr=log, env=sandbox.client_env(),
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            start_new_session=True))
        log.close()
    try:
        for proc in procs:
            line = proc.stdout.readline().decode().strip()
            if line != 'ready':
                raise RuntimeError('a bench manager did not start (%s); see '
                                   '%s' % (line or 'it exited',
                                           sandbox.path('logs')))
    except BaseException:
        _stop(procs)
        raise
    return procs


def _stop(procs):
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _manager(conf, host, timings):
    """Main of a bench manager: blazar-manager as the sandbox starts it,

    with its create_lease and the virtual:instance plugin's calls timed.
    """
    from oslo_config import cfg

    from blazar.manager import service as manager_service
    from blazar.notification import notifier
    from blazar.utils import service as service_utils

    cfg.CONF(['--config-file', conf], project='blazar',
             prog='blazar-bench-manager')
    cfg.CONF.set_override('host', host)
    service_utils.prepare_service()
    notifier.init()
    manager_service.EVENT_INTERVAL = 2
    manager = manager_service.ManagerService()
    if timings:
        _time_manager(manager, timings)
    manager.start()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *a: stop.set())
    print('ready', flush=True)
    stop.wait()
    os._exit(0)


def _time_manager(manager, path):
    """Time each create_lease, our plugin's calls in it, and within those

    the HTTP requests (by port: which service) and SQL statements made.
    """
    from urllib import parse

    local = threading.local()
    lock = threading.Lock()
    plugin = manager.plugins['virtual:instance']

    def add(key, seconds):
        counted = local.spent.setdefault(key, [0, 0.0])
        counted[0] += 1
        counted[1] += seconds * 1000

    def timed(call):
        def wrapper(*args, **kwargs):
            if getattr(local, 'depth', 0):  # one plugin call in another
                return call(*args, **kwargs)
            local.depth = 1
            began = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                local.depth = 0
                add('plugin', time.perf_counter() - began)
        return wrapper

    for name in ('allocation_candidates', 'reserve_resource'):
        setattr(plugin, name, timed(getattr(plugin, name)))

    send = requests.Session.send

    def timed_send(session, request, **kwargs):
        if not getattr(local, 'depth', 0):
            return send(session, request, **kwargs)
        began = time.perf_counter()
        try:
            return send(session, request, **kwargs)
        finally:
            add('http:%s' % parse.urlsplit(request.url).port,
                time.perf_counter() - began)
    requests.Session.send = timed_send

    def before(conn, cursor, statement, parameters, context, many):
        conn.info['bench_began'] = time.perf_counter()

    def after(conn, cursor, statement, parameters, context, many):
        began = conn.info.pop('bench_began', None)
        if began is not None and getattr(local, 'depth', 0):
            add('sql', time.perf_counter() - began)
    sa.event.listen(sa.engine.Engine, 'before_cursor_execute', before)
    sa.event.listen(sa.engine.Engine, 'after_cursor_execute', after)

    create_lease = manager.create_lease

    def create(lease_values):
        local.spent = {}
        name = lease_values.get('name')
        began = time.perf_counter()
        try:
            return create_lease(lease_values)
        finally:
            line = json.dumps({'name': name, 'manager_ms': (
                time.perf_counter() - began) * 1000, 'spent': local.spent})
            with lock, open(path, 'a') as f:
                f.write(line + '\n')
    manager.create_lease = create


# --- the phases ----------------------------------------------------------

def _in_turn(tenant, requests_):
    return _Timings([tenant.create(r) for r in requests_])


def _split(sandbox, tenant, requests_, tmp):
    """(leases the timed manager served, {what: (median count, median

    ms)}) over those leases.
    """
    path = os.path.join(tmp, 'manager-timings.jsonl')
    procs = _managers(sandbox, 1, path)
    try:
        answers = [tenant.create(r) for r in requests_]
    finally:
        _stop(procs)
    served = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                served[row['name']] = row
    services = {str(port): name for name, port in sandbox.ports.items()}
    rows = []
    for answer in answers:
        row = served.get(answer.name)
        if answer.status != 201 or row is None:
            continue
        spent = {'whole request': (1, answer.ms),
                 'manager create_lease': (1, row['manager_ms'])}
        for key, (count, ms) in row['spent'].items():
            if key.startswith('http:'):
                key = 'plugin: HTTP to %s' % services.get(key[5:], key)
            elif key == 'sql':
                key = 'plugin: SQL statements'
            else:
                key = 'our plugin (in it)'
            spent[key] = (count, ms)
        rows.append(spent)
    keys = []
    for spent in rows:
        keys += [k for k in spent if k not in keys]
    medians = {key: tuple(statistics.median(
        spent.get(key, (0, 0.0))[i] for spent in rows) for i in (0, 1))
        for key in keys}
    slowest = max(rows, key=lambda spent: spent['whole request'][1],
                  default=None)
    return len(rows), medians, slowest


# Servers outside the sandbox whose CPU a lease creation also takes.
SERVERS = {'mariadbd': 'MariaDB', 'mysqld': 'MariaDB', 'beam.smp': 'RabbitMQ'}


def _cpu(sandbox, procs):
    """{who: CPU seconds used so far} of the sandbox's services, the

    bench's managers, MariaDB, RabbitMQ and this process (the clients).
    """
    import psutil

    def seconds(proc, tree=True):
        try:
            found = [proc] + (proc.children(recursive=True) if tree else [])
            return sum(sum(p.cpu_times()[:2]) for p in found)
        except psutil.Error:
            return 0.0
    used = collections.Counter()
    for name, proc in sandbox.procs.items():
        # Placement runs in the sandbox's Nova process.
        name = {'nova': 'nova+plc'}.get(name, name)
        used[name] += seconds(psutil.Process(proc.pid))
    for proc in procs:
        used['bench managers'] += seconds(psutil.Process(proc.pid))
    for proc in psutil.process_iter(['name']):
        if proc.info['name'] in SERVERS:
            used[SERVERS[proc.info['name']]] += seconds(proc, tree=False)
    used['bench clients'] += seconds(psutil.Process(), tree=False)
    return used


def _throughput(sandbox, tenant, vhost, requests_, managers):
    """(_Timings, seconds, {who: CPU seconds}) of requests_ by CLIENTS

    at once, with ``managers`` blazar-managers listening.
    """
    procs = _managers(sandbox, managers - 1)
    try:
        deadline = time.monotonic() + 60
        while vhost.consumers('blazar.manager') < managers:
            if time.monotonic() > deadline:
                raise RuntimeError('%d managers never listened'
                                   % managers)
            time.sleep(1)
        cpu = _cpu(sandbox, procs)
        began = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            answers = list(pool.map(tenant.create, requests_))
        seconds = time.perf_counter() - began
        cpu = _cpu(sandbox, procs) - cpu
    finally:
        _stop(procs)
    return _Timings(answers), seconds, cpu


def _upstream(sandbox, tenant, requests_):
    """Blazar's own plugin: as a tenant meets it (Blazar's default RPC

    timeout), then, only if that answered no 201, with the timeout
    raised. (the first Answer, _Timings of every 201 and refusal, the
    timeout they had).
    """
    options = sandbox.spec['blazar_options']
    options['manager'] = {'plugins': sorted(OTHER_PLUGINS + [THEIRS])}
    # Our reconciler (pcloud.host, still loaded) deletes a lease left
    # CREATING longer than this (the sandbox's 60 s) as a creation that
    # died: Blazar's admission outlasts it, and one was deleted under it.
    options['pcloud'] = {'lease_transition_timeout': 2 * UPSTREAM_RPC_TIMEOUT}
    _restart_blazar(sandbox)
    _say('Blazar\'s plugin, default RPC timeout: lease 1 of %d (a minute '
         'or so)' % len(requests_))
    first = tenant.create(requests_[0])
    answers, timeout, after = [first], 60, None
    if first.status is None or first.status >= 500:
        _say('Blazar\'s plugin: did the lease the tenant got %s for come '
             'to be anyway?' % first.status)
        after = _afterwards(tenant, first.name)
        # What the manager still does for it is cut short here.
        answers, timeout = [], UPSTREAM_RPC_TIMEOUT
        options['DEFAULT'] = {'rpc_response_timeout': timeout}
        _restart_blazar(sandbox)
    for n, request in enumerate(requests_[len(answers):], len(answers)):
        _say('Blazar\'s plugin, rpc_response_timeout %d s: lease %d of %d '
             '(a minute or so each)' % (timeout, n + 1, len(requests_)))
        answers.append(tenant.create(request))
    return first, _Timings(answers), timeout, after


def _afterwards(tenant, name, wait=240):
    """(seconds after the answer, status) of the lease ``name`` once it

    left CREATING, as the tenant lists it; (seconds, None) if it never
    appeared, or its last status when the wait ran out.
    """
    session = _session(tenant.token)
    began = time.monotonic()
    seen = None
    while time.monotonic() - began < wait:
        listed = session.get(tenant.url, timeout=60)
        if listed.status_code == 200:
            for lease in listed.json().get('leases', ()):
                if lease['name'] == name:
                    seen = lease['status']
            if seen not in (None, 'CREATING'):
                break
        time.sleep(5)
    return time.monotonic() - began, seen


# --- report ----------------------------------------------------------------

def _table(rows, width=44):
    print('%-*s %5s %7s %10s %10s %10s' % (
        width, '', 'runs', 'not 201', 'p50 ms', 'p99 ms', 'max ms'))
    for label, t in rows:
        print('%-*s %5d %7d %10.1f %10.1f %10.1f' % (
            width, label, len(t.answers), t.refused(), t.p(50), t.p(99),
            max(t.ms) if t.ms else float('nan')))


def _errors(label, timings):
    for (status, error), n in sorted(timings.errors().items(),
                                     key=lambda i: -i[1]):
        print('  %s: %d x %s %s' % (label, n, status, error))


def run(quick=False):
    # The sandbox's own imports (nova, keystone) in its processes only.
    from pcloud_plugin.sandbox import supervisor

    counts = QUICK if quick else FULL
    print('\nPOST /v1/leases of a virtual:instance reservation, to its '
          'answer, through Blazar\'s API, RPC and manager in a sandbox '
          'cloud (MariaDB, RabbitMQ): {:,} hosts in Placement, {:,} '
          'reservations (bench.dataset)'.format(HOSTS, RESERVATIONS))
    if database.SERVER and not database.SERVER.startswith('mysql'):
        print('(--db %s ignored: this bench runs on MariaDB)'
              % database.label())
    server = _server()
    tmp = tempfile.mkdtemp(prefix='pcloud-bench-lease-create-')
    prefix = 'pcloud_bench_lc_%s' % uuid.uuid4().hex[:8]
    began = time.perf_counter()
    data = dataset.Dataset(HOSTS, RESERVATIONS, seed=SEED)
    total = (counts['ours'] + counts['split'] + counts['upstream'] +
             len(MANAGERS) * counts['per_managers'] + 2)
    asked = data.requests(total, seed=HOSTS)
    # The same first leases for both plugins.
    upstream_requests = asked[:counts['upstream']]
    warmup, rest = asked[:2], asked[2:]
    ours_requests, rest = rest[:counts['ours']], rest[counts['ours']:]
    split_requests, rest = rest[:counts['split']], rest[counts['split']:]
    results, wrong, loads = {}, [], {}
    vhost = _Vhost()
    with vhost as transport:
        sandbox = supervisor.Sandbox(
            os.path.join(tmp, 'sandbox'), db='%s/%s' % (server, prefix),
            transport=transport, computes=0, base_port=BASE_PORT,
            fresh=True, out=sys.stderr,
            blazar_options={
                'manager': {'plugins': sorted(OTHER_PLUGINS + [OURS])},
                # No periodic sweep of claims Blazar does not know: the
                # loaded ones are its rows only for its own plugin's turn.
                'pcloud_instance': {'cleanup_interval': 0}})
        try:
            _say('starting the sandbox')
            sandbox.start()
            ledger_url = sandbox.databases.urls['ledger']
            _unlimited(sandbox)
            _say('%d hosts into Placement' % HOSTS)
            _make_hosts(sandbox, data)
            _say('waiting for the manager\'s mirror to bring them into '
                 'the ledger')
            _wait_mirrored(ledger_url, HOSTS)
            _say('%d reservations into the ledger' % RESERVATIONS)
            _load_ledger(ledger_url, data)
            setup_s = time.perf_counter() - began
            print('cloud up, hosts made and mirrored, reservations loaded in '
                  '%.0f s' % setup_s)
            tenant = _Tenant(sandbox)
            _in_turn(tenant, warmup)
            _say('ours: %d leases in turn' % len(ours_requests))
            results['ours, 1 manager, in turn'] = _in_turn(
                tenant, ours_requests)
            loads['ours in turn'] = os.getloadavg()[0]
            _say('ours: where the time goes (%d leases, a timed manager '
                 'beside)' % len(split_requests))
            served, split, slowest = _split(sandbox, tenant, split_requests,
                                            tmp)
            loads['time split'] = os.getloadavg()[0]
            rates = {}
            for managers in MANAGERS:
                batch = rest[:counts['per_managers']]
                rest = rest[counts['per_managers']:]
                _say('ours: %d leases by %d clients, %d managers'
                     % (len(batch), CLIENTS, managers))
                rates[managers] = _throughput(sandbox, tenant, vhost, batch,
                                              managers)
                loads['%d managers' % managers] = os.getloadavg()[0]
            _say('checking no host is overbooked')
            engine = sa.create_engine(ledger_url)
            over = instances._overbooked(engine)
            engine.dispose()
            if over:
                wrong.append('%d provider classes overbooked, e.g. %s'
                             % (len(over), over[:3]))
            _report_ours(results, served, split, slowest, rates, over)
            _say('Blazar\'s own plugin: its rows loaded')
            _load_blazar(sandbox.databases.urls['blazar'], data)
            _report_upstream(results, *_upstream(sandbox, tenant,
                                                 upstream_requests))
            loads['Blazar\'s plugin'] = os.getloadavg()[0]
            # Anything else on the machine skews every figure above.
            print('1-minute load average at the end of each phase (%d '
                  'cores): %s' % (os.cpu_count(), ', '.join(
                      '%s %.1f' % item for item in loads.items())))
        finally:
            _say('stopping the sandbox')
            sandbox.stop()
            _drop_databases(server, prefix)
            shutil.rmtree(tmp, ignore_errors=True)
    assert not wrong, '\n'.join(wrong)


def _report_ours(results, served, split, slowest, rates, over):
    _table(results.items())
    _errors('ours', results['ours, 1 manager, in turn'])
    if split:
        whole = split['whole request'][1]
        print('where the time goes (medians of the %d leases the timed '
              'manager served; count: calls, requests or statements):'
              % served)
        for label, (count, ms) in split.items():
            print('  %-32s %8.1f ms  %5.1f%%  %5d' % (
                label, ms, 100 * ms / whole, count))
        print('  %-32s %8.1f ms  (API, token check, RPC, queueing)'
              % ('outside the manager',
                 whole - split['manager create_lease'][1]))
        print('  %-32s %8.1f ms  (Blazar\'s own rows, events, trust)'
              % ('manager, outside plugin', split['manager create_lease'][1]
                 - split.get('our plugin (in it)', (0, 0.0))[1]))
        print('  the slowest of them: %s' % ', '.join(
            '%s %.0f ms (%d)' % (label, ms, count)
            for label, (count, ms) in slowest.items()))
    else:
        print('where the time goes: the timed manager served none of the '
              '%d leases' % served)
    print('creations per second, %d clients at once (ours; MariaDB, '
          'RabbitMQ):' % CLIENTS)
    print('%-10s %6s %8s %10s %10s %10s' % ('managers', 'leases', 'not 201',
                                            'per s', 'p50 ms', 'p99 ms'))
    one = None
    for managers, (timings, seconds, _cpu_used) in rates.items():
        rate = len(timings.ms) / seconds
        one = one or rate
        print('%-10d %6d %8d %10.2f %10.1f %10.1f  x%.2f' % (
            managers, len(timings.answers), timings.refused(), rate,
            timings.p(50), timings.p(99), rate / one if one else 0))
        _errors('%d managers' % managers, timings)
    cores = os.cpu_count()
    print('CPU per lease created (ms), by process ("blazar": its API and '
          'first manager; "nova+plc": Nova and Placement), and how busy '
          'they kept the machine\'s %d cores:' % cores)
    names = sorted({name for _t, _s, cpu in rates.values() for name in cpu})
    print('%-10s %s %8s' % ('managers', ' '.join('%9s' % n[:9]
                                                 for n in names), 'busy'))
    for managers, (timings, seconds, cpu) in rates.items():
        made = max(len(timings.ms), 1)
        print('%-10d %s %7.0f%%' % (managers, ' '.join(
            '%9.0f' % (1000 * cpu.get(n, 0) / made) for n in names),
            100 * sum(cpu.values()) / seconds / cores))
    print('overbooked provider classes in the ledger at the end: %d'
          % len(over))


def _report_upstream(results, first, theirs, timeout, after):
    print('Blazar\'s own plugin, as a tenant meets it (rpc_response_timeout '
          '60 s, Blazar\'s default): %s after %.1f s%s' % (
              first.status, first.ms / 1000,
              '' if first.status == 201 else ': %s' % first.error))
    if after is not None:
        seconds, status = after
        print('  that lease, as the tenant lists it %.0f s later: %s' % (
            seconds, status or 'absent'))
    label = 'Blazar, rpc_response_timeout %d s%s' % (
        timeout, '' if timeout == 60 else ' (raised)')
    results[label] = theirs
    _table([(name, results[name]) for name in (
        'ours, 1 manager, in turn', label)])
    _errors('Blazar', theirs)
    ours = results['ours, 1 manager, in turn'].p(50)
    if theirs.ms:
        print('ratio (Blazar p50 / ours p50): x{:,.0f}'.format(
            theirs.p(50) / ours))
    else:
        print('ratio: none, Blazar answered no 201')


if __name__ == '__main__':
    if sys.argv[1] == 'manager':
        _manager(*sys.argv[2:5])
