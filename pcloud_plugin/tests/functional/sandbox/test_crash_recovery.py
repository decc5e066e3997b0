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

"""Crashes and outages at every step, in the sandbox's real processes.

At each step of a host allocation, a release, a pcloud:host lease start
and a lease end (pcloud_plugin.faults), Blazar's process is killed, or
Nova and Placement become unreachable to it. Then Blazar is started again
on the same databases (the reconciler runs at manager start), or Nova
comes back (the reconciler runs every few seconds). The cloud must then
be whole: the host in the pcloud exactly when the operation counts as
done, no name or saved ratios left behind, the ledger's claim matching,
Placement's ratios the host's own when it is out, no intent left; the
lease ACTIVE or TERMINATED as its dates say (a start waits an outage
out); and the next operation works.
"""

import datetime
import json
import os
import time

import sqlalchemy as sa

from pcloud_plugin import faults
from pcloud_plugin.osc import client as pcloud_client
from pcloud_plugin.pcloud import aggregates as codec
from pcloud_plugin.sandbox import common
from pcloud_plugin.tests import base
from pcloud_plugin.tests.functional.sandbox import fixture

FLAVOR = 'crash.f'
HOST = 'compute4'
KILL = 'kill'
UNREACHABLE = 'unreachable'
# The steps of each operation, in order (faults.step names).
STEPS = {
    'allocate': ('claim', 'name', 'add', 'ratios', 'done'),
    'release': ('ratios', 'remove', 'forget', 'unclaim'),
    'lease-start': ('aggregate', 'name', 'add', 'joined', 'lease-aggregate',
                    'active'),
    'lease-end': ('disable', 'remove', 'forget', 'left', 'aggregate',
                  'release', 'ended'),
}
# Those of a virtual:instance reservation's start and end.
INSTANCE_STEPS = {
    'lease-start': ('slots', 'aggregate', 'server-group', 'flavor',
                    'active'),
    'lease-end': ('release', 'remove', 'ended'),
}
CPU_RATIO = 4.0
# How long a recovery may take: Blazar's start and its reconciler's pass,
# on a machine the other CI worker's sandbox loads too (a wait that
# succeeds costs only what it waited).
PATIENCE = 180


class CrashRecovery(base.TestCase):

    def setUp(self):
        super().setUp()
        self.sandbox = self.useFixture(fixture.SandboxFixture()).sandbox
        if not self.sandbox.faults_file:
            self.skipTest('the sandbox runs without the fault hook')
        clients = fixture.Clients(self.sandbox)
        self.admin, self.demo = clients.admin, clients.demo
        self.nova, self.placement = clients.nova, clients.placement
        self.ledger = sa.create_engine(self.sandbox.databases.urls['ledger'])
        self.addCleanup(self.ledger.dispose)
        self._clear_faults()
        fixture.out_of_service(self, self.nova, HOST)
        self.admin.create_host_flavor(FLAVOR, 1)
        self.addCleanup(self.admin.delete_host_flavor, FLAVOR)
        self.admin.add_pool_host(FLAVOR, HOST)
        self.addCleanup(self.admin.remove_pool_host, FLAVOR, HOST)
        self.pcloud = self.demo.create_pcloud('crash-%s' % self.id()[-12:])
        self.addCleanup(self.demo.delete_pcloud, self.pcloud['id'])
        self.demo.set_allocation_ratios(self.pcloud['id'], cpu=CPU_RATIO)
        self.node = self.nova.hypervisors.search(HOST)[0].hypervisor_hostname
        self.own_ratio = self._cpu_ratio()
        # Run first at clean-up: Nova back for the others.
        self.addCleanup(self._clear_faults)

    # -- access -----------------------------------------------------------

    def _cpu_ratio(self):
        uuid = self.placement.get(
            '/resource_providers?name=%s' % self.node).json()[
                'resource_providers'][0]['uuid']
        return self.placement.get(
            '/resource_providers/%s/inventories' % uuid).json()[
                'inventories']['VCPU']['allocation_ratio']

    def _aggregate(self):
        for agg in self.nova.aggregates.list():
            if agg.name == codec.pcloud_name(self.pcloud['id']):
                return agg
        raise AssertionError('pcloud aggregate missing')

    def _sql(self, engine, statement, **params):
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement), params)
            return list(result) if result.returns_rows else None

    # -- faults -----------------------------------------------------------

    def _clear_faults(self):
        path = self.sandbox.faults_file
        for suffix in ('', '.fired', '.outage', '.trace'):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)

    def _trace(self, operation):
        try:
            with open(self.sandbox.faults_file + '.trace') as f:
                return [line.split()[1] for line in f
                        if line.split()[0] == operation]
        finally:
            self._clear_faults()

    def _arm(self, operation, step, fault):
        urls = [common.url(self.sandbox.spec, name, '/')
                for name in ('nova', 'placement')]
        with open(self.sandbox.faults_file, 'w') as f:
            json.dump({'operation': operation, 'step': step,
                       'fault': fault, 'urls': urls}, f)

    def _fired(self):
        return os.path.exists(self.sandbox.faults_file + '.fired')

    def _after(self, fault):
        """Recovery: Blazar started again, or Nova back."""
        if fault == KILL:
            proc = self.sandbox.procs['blazar']
            proc.wait(PATIENCE)
            self.assertEqual(faults.KILLED, proc.returncode)
            self.sandbox.restart('blazar')
        else:
            os.remove(self.sandbox.faults_file + '.outage')
        self._clear_faults()

    def _wait(self, what, check):
        deadline = time.monotonic() + PATIENCE
        while True:
            problem = check()
            if problem is None:
                return
            if time.monotonic() > deadline:
                with open(self.sandbox.log('blazar'), errors='replace') as f:
                    log = [line for line in f if 'pcloud' in line][-40:]
                self.fail('%s: %s\nLast lines of Blazar\'s log about us:\n%s'
                          % (what, problem, ''.join(log)))
            time.sleep(0.5)

    # -- what whole means -------------------------------------------------

    def _host_problem(self, allocated):
        """None when the host is in the pcloud exactly if ``allocated``,

        with everything that goes with it; else what is wrong.
        """
        agg = self._aggregate()
        keys = {k: v for k, v in agg.metadata.items()
                if self.node in k or v == self.node}
        claims = self._sql(self.ledger, "SELECT DISTINCT consumer_id FROM "
                           "allocations WHERE consumer_id LIKE "
                           "'pcloud-host:%'")
        intents = self._sql(self.ledger, 'SELECT operation, subject, '
                            'failed FROM pcloud_intents WHERE operation IN '
                            "('allocate', 'release')")
        ratio = self._cpu_ratio()
        state = {'member': HOST in agg.hosts, 'keys': sorted(keys),
                 'claims': len(claims), 'ratio': ratio,
                 'intents': intents}
        if allocated:
            whole = (HOST in agg.hosts and len(keys) == 3
                     and len(claims) == 1 and ratio == CPU_RATIO
                     and not intents)
        else:
            whole = (HOST not in agg.hosts and not keys and not claims
                     and ratio == self.own_ratio and not intents)
        return None if whole else state

    # -- allocation and release ------------------------------------------

    def _allocate(self):
        return self.demo.allocate_host(self.pcloud['id'], 'h1', FLAVOR)

    def _release(self):
        self.demo.release_host(self.pcloud['id'], 'h1')

    def _attempt(self, call, fault):
        """(whether the call succeeded, what is wrong with how it ended).

        Blazar killed: no answer. Nova unreachable: a 502/503, or success
        when no Nova call was left after the step.
        """
        try:
            call()
        except pcloud_client.PcloudError as e:
            if fault == KILL or e.code not in (502, 503):
                return False, 'answered %s: %s' % (e.code, e)
            return False, None
        except Exception as e:
            if fault == KILL:
                return False, None
            return False, 'failed with %r' % e
        return True, 'it succeeded' if fault == KILL else None

    def test_steps_are_reached(self):
        self._allocate()
        self.assertEqual(list(STEPS['allocate']), self._trace('allocate'))
        self._release()
        self.assertEqual(list(STEPS['release']), self._trace('release'))

    def _host_operation(self, operation, before, call, after, done):
        """Interrupt ``call`` at each step; ``done``: whether the host is

        allocated once it has succeeded (an interrupted allocation is
        undone, an interrupted release finished: the host ends out).
        """
        failures = []
        for step in STEPS[operation]:
            for fault in (UNREACHABLE, KILL):
                where = '%s at %s, %s' % (fault, operation, step)
                if before:
                    before()
                self._arm(operation, step, fault)
                succeeded, problem = self._attempt(call, fault)
                if not self._fired():
                    failures.append('%s: the fault did not fire (%s)'
                                    % (where, problem))
                    return failures
                self._after(fault)
                if problem:
                    failures.append('%s: %s' % (where, problem))
                    continue
                allocated = done if succeeded else False
                try:
                    self._wait(where, lambda: self._host_problem(allocated))
                except AssertionError as e:
                    failures.append(str(e))
                    return failures
                # Usable: the operation works now.
                if succeeded:
                    if after:
                        after()
                    continue
                if before:
                    before()
                call()
                if after:
                    after()
        return failures

    def test_allocation_interrupted_at_each_step_is_undone(self):
        self.assertEqual([], self._host_operation(
            'allocate', None, self._allocate, self._release, True))

    def test_release_interrupted_at_each_step_is_finished(self):
        self.assertEqual([], self._host_operation(
            'release', self._allocate, self._release, None, False))

    # -- lease start and end ---------------------------------------------

    def _lease(self, start=None):
        """An IMMEDIATE lease, or a SCHEDULE one ``start`` from now."""
        now = datetime.datetime.utcnow()
        end = (now + datetime.timedelta(hours=2)).strftime('%Y-%m-%d %H:%M')
        terms = {'amount': 1, 'host_flavor': FLAVOR,
                 'pcloud_id': self.pcloud['id'], 'lease_type': 'IMMEDIATE'}
        if start is not None:
            terms['lease_type'] = 'SCHEDULE'
            start = (now + start).strftime('%Y-%m-%d %H:%M')
        lease = self.demo.create_host_lease('crash', start or 'now', end,
                                            terms)
        self.addCleanup(self._delete_lease, lease['id'])
        return lease['id']

    def _instance_lease(self):
        """An IMMEDIATE virtual:instance lease of one anti-affine slot."""
        end = (datetime.datetime.utcnow() + datetime.timedelta(hours=2))
        lease = self.demo._request('POST', '/leases', {
            'name': 'crash-slots', 'start_date': 'now', 'events': [],
            'end_date': end.strftime('%Y-%m-%d %H:%M'),
            'reservations': [{
                'resource_type': 'virtual:instance', 'amount': 1,
                'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1,
                'affinity': False, 'resource_properties': ''}]})['lease']
        self.addCleanup(self._delete_lease, lease['id'])
        return lease['id']

    def _delete_lease(self, lease_id):
        fixture.delete_lease(self.demo, lease_id)

    def _lease_status(self, lease_id):
        return self.demo._request('GET', '/leases/%s' % lease_id)[
            'lease']['status']

    def _lease_problem(self, lease_id, expect):
        status = self._lease_status(lease_id)
        agg = self._aggregate()
        in_pcloud = HOST in agg.hosts
        named = any(v == self.node for v in agg.metadata.values())
        lease_aggs = [a.name for a in self.nova.aggregates.list()
                      if a.name.startswith('pcloud-lease:')]
        intents = self._sql(self.ledger, 'SELECT operation FROM '
                            'pcloud_intents')
        state = {'status': status, 'in_pcloud': in_pcloud, 'named': named,
                 'lease aggregates': lease_aggs, 'intents': intents}
        joined = status == 'ACTIVE'
        if (status in expect and in_pcloud == joined and named == joined
                and bool(lease_aggs) == joined and not intents):
            return None
        return state

    def _slots_problem(self, lease_id, expect):
        """As _lease_problem, for a virtual:instance lease: its flavor,

        aggregate, server group, Placement slots and hold exist exactly
        while it is ACTIVE.
        """
        status = self._lease_status(lease_id)
        rid = fixture.reservation_of(self.sandbox, lease_id)
        name = 'reservation:%s' % rid
        flavors = [f.id for f in self.nova.flavors.list(is_public=None)
                   if f.id == rid]
        aggregates = [a.id for a in self.nova.aggregates.list()
                      if a.name == name]
        groups = [g.id for g in self.nova.server_groups.list(
            all_projects=True) if g.name == name]
        found = self.placement.get(
            '/resource_providers?resources=CUSTOM_RESERVATION_%s:1'
            % rid.upper().replace('-', '_'), raise_exc=False)
        # 400: no such class (any more).
        slots = (found.json()['resource_providers']
                 if found.status_code == 200 else [])
        hold = self.placement.get('/allocations/%s' % rid).json()[
            'allocations']
        intents = self._sql(self.ledger, 'SELECT operation FROM '
                            'pcloud_intents')
        state = {'status': status, 'flavor': flavors,
                 'aggregate': aggregates, 'server group': groups,
                 'slots': len(slots), 'hold': hold, 'intents': intents}
        made = status == 'ACTIVE'
        if (status in expect and not intents and all(
                bool(found) == made
                for found in (flavors, aggregates, groups, slots, hold))):
            return None
        return state

    def _lease_operation(self, operation, slots=False):
        create, problem, steps = (
            (self._instance_lease, self._slots_problem, INSTANCE_STEPS)
            if slots else (self._lease, self._lease_problem, STEPS))
        failures = []
        for step in steps[operation]:
            for fault in (UNREACHABLE, KILL):
                where = '%s at %s, %s' % (fault, operation, step)
                if operation == 'lease-start':
                    self._arm(operation, step, fault)
                    lease_id = create()
                else:
                    lease_id = create()
                    self._wait('start', lambda: problem(
                        lease_id, ('ACTIVE',)))
                    self._arm(operation, step, fault)
                    fixture.end_lease_now(self.sandbox, lease_id)
                self._wait('the fault to fire', lambda: None
                           if self._fired() else 'not fired')
                if fault == UNREACHABLE and operation == 'lease-end':
                    # Nova back only once the end has met the outage and
                    # finished.
                    self._wait('%s to finish' % where, lambda: None if (
                        self._lease_status(lease_id) != 'TERMINATING')
                        else 'running')
                self._after(fault)
                # Killed: done again by Blazar. Unreachable: a start waits
                # for Nova to come back ([pcloud] unreachable_patience;
                # its running out: test_host_plugin, test_instance_plugin)
                # and starts; an end ends.
                expect = (('ACTIVE',) if operation == 'lease-start'
                          else ('TERMINATED',))
                try:
                    self._wait(where, lambda: problem(lease_id, expect))
                except AssertionError as e:
                    failures.append(str(e))
                    return failures
                rid = fixture.reservation_of(self.sandbox, lease_id)
                self._delete_lease(lease_id)
                self._wait('its claim released', lambda: self._sql(
                    self.ledger, 'SELECT id FROM allocations WHERE '
                    'consumer_id = :rid', rid=rid) or None)
        return failures

    def test_lease_start_interrupted_at_each_step(self):
        self.assertEqual([], self._lease_operation('lease-start'))

    def test_lease_end_interrupted_at_each_step(self):
        self.assertEqual([], self._lease_operation('lease-end'))

    def test_instance_lease_start_interrupted_at_each_step(self):
        self.assertEqual([], self._lease_operation('lease-start',
                                                   slots=True))

    def test_instance_lease_end_interrupted_at_each_step(self):
        self.assertEqual([], self._lease_operation('lease-end', slots=True))

    def test_unreachable_nova_refuses_a_lease_with_nothing_left(self):
        self._arm('admission', 'reserve', UNREACHABLE)
        e = self.assertRaises(pcloud_client.PcloudError, self._lease,
                              datetime.timedelta(hours=1))
        self.assertEqual(503, e.code, e)
        self.assertIn('cannot be reached', str(e))
        self.assertEqual([], self.demo._request('GET', '/leases')['leases'])
        self.assertEqual([], self._sql(
            self.ledger, "SELECT id FROM allocations WHERE consumer_id "
            "NOT LIKE 'pcloud-host:%'"))
        self._after(UNREACHABLE)
        lease_id = self._lease(datetime.timedelta(hours=1))
        # An update Nova cannot serve is refused; the lease stays as is.
        self._arm('admission', 'update', UNREACHABLE)
        e = self.assertRaises(
            pcloud_client.PcloudError, self.demo._request, 'PUT',
            '/leases/%s' % lease_id, {'reservations': [{
                'id': fixture.reservation_of(self.sandbox, lease_id),
                'amount': 2}]})
        self.assertEqual(409, e.code, e)
        self.assertIn('cannot be reached', str(e))
        self._after(UNREACHABLE)
        self.assertEqual('PENDING', self._lease_status(lease_id))
