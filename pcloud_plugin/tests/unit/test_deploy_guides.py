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

"""The artefacts of the Kolla-Ansible and OpenStack-Ansible guides.

etc/kolla/ and etc/openstack-ansible/ hold what those guides
(doc/source/install/) include. Checked against our own code: the option
names of pcloud_plugin.conf, the entry points of setup.cfg, and Nova's
options where a file sets Nova's. Neither tool is run here: the Kolla
template override is rendered against stand-in parents that define only
the block each image defines, the kolla-ansible overrides with the
variables they name, and OpenStack-Ansible's nova.conf line for the
allocation ratios as its template writes it.
"""

import configparser
import io
import os
import re
import tempfile

import jinja2
from oslo_config import cfg
from oslo_utils import importutils
import yaml

from pcloud_plugin.conf import opts as pcloud_opts
from pcloud_plugin.tests import base

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
KOLLA = os.path.join(REPO, 'etc', 'kolla')
TEMPLATE_OVERRIDE = os.path.join(KOLLA, 'template-overrides.j2')
KOLLA_BUILD_CONF = os.path.join(KOLLA, 'kolla-build.conf')
KOLLA_NOVA_SCHEDULER = os.path.join(KOLLA, 'config', 'nova',
                                    'nova-scheduler.conf')
KOLLA_BLAZAR = os.path.join(KOLLA, 'config', 'blazar.conf')
KOLLA_DB_SYNC = os.path.join(KOLLA, 'pcloud-db-sync.conf')
OSA_VARIABLES = os.path.join(REPO, 'etc', 'openstack-ansible',
                             'user_variables_pcloud.yml')
GUIDES = tuple(os.path.join(REPO, 'doc', 'source', 'install', name)
               for name in ('kolla-ansible.rst', 'openstack-ansible.rst'))

# The images and the footer block each one's Dockerfile.j2 defines.
KOLLA_IMAGES = {
    'nova-scheduler': 'nova_scheduler_footer',
    'blazar-api': 'blazar_api_footer',
    'blazar-manager': 'blazar_manager_footer',
}
# Values for the kolla-ansible variables blazar.conf names (its globals,
# passwords.yml and the blazar role's defaults).
KOLLA_VARIABLES = {
    'pcloud_database_password': 'dbpass',
    'pcloud_keystone_password': 'kspass',
    'blazar_database_address': 'db.example.org:3306',
    'keystone_internal_url': 'https://keystone.example.org:5000',
    'openstack_region_name': 'RegionOne',
    'blazar_aggregate_pool_name': 'freepool',
}
# Blazar's own plugins a deployment may keep beside ours.
BLAZAR_PLUGINS = ('physical.host.plugin', 'virtual.floatingip.plugin',
                  'flavor.instance.plugin')
# The one Blazar plugin ours replaces (one plugin per resource type).
REPLACED_PLUGIN = 'virtual.instance.plugin'
ALL_FILTERS = 'nova.scheduler.filters.all_filters'


def _entry_points(group):
    """{name: target} of one entry point group of setup.cfg."""
    setup = configparser.ConfigParser(interpolation=None)
    setup.read(os.path.join(REPO, 'setup.cfg'))
    found = {}
    for line in setup['entry_points'][group].strip().splitlines():
        name, target = (part.strip() for part in line.split('=', 1))
        found[name] = target
    return found


def _filter():
    """(class path as nova.conf names it, class name) of our filter."""
    (target,) = _entry_points('nova.scheduler.filters').values()
    return target.replace(':', '.'), target.rsplit(':', 1)[1]


def _our_options():
    """{group: option names} of every option we register."""
    groups = {}
    for group, options in pcloud_opts.list_opts():
        names = groups.setdefault(group, set())
        for opt in options:
            names.update((opt.dest, opt.name.replace('-', '_')))
    return groups


def _ini_sections(path_or_text):
    """{section: {option: [values]}} as oslo.config reads the file."""
    if os.path.exists(path_or_text):
        path = path_or_text
    else:
        handle, path = tempfile.mkstemp(suffix='.conf')
        with os.fdopen(handle, 'w') as f:
            f.write(path_or_text)
    sections = {}
    try:
        cfg.ConfigParser(path, sections).parse()
    finally:
        if path != path_or_text:
            os.unlink(path)
    return sections


def _render(text, variables):
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return env.from_string(text).render(**variables)


class _GuideTest(base.TestCase):

    def assertOursOnly(self, groups, allowed_other=()):
        """Every group but ``allowed_other`` is ours, and so its options."""
        ours = _our_options()
        for group, options in groups.items():
            if group in allowed_other:
                continue
            self.assertIn(group, ours, 'no option group [%s] of ours'
                          % group)
            unknown = set(options) - ours[group]
            self.assertEqual(set(), unknown,
                             'not options of ours in [%s]' % group)

    def assertPlugins(self, plugins):
        ours = set(_entry_points('blazar.resource.plugins'))
        self.assertLessEqual(ours, set(plugins))
        self.assertNotIn(REPLACED_PLUGIN, plugins)
        self.assertLessEqual(set(plugins) - ours, set(BLAZAR_PLUGINS))

    def assertBlazarConfLoads(self, text):
        """Our options read from ``text`` as blazar-manager reads them."""
        handle, path = tempfile.mkstemp(suffix='.conf')
        with os.fdopen(handle, 'w') as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        conf = cfg.ConfigOpts()
        for module in pcloud_opts.MODULES:
            pcloud_opts.register(conf, module)
        # keystoneauth registers its auth plugin's options when it loads
        # the plugin: here, from the listed ones.
        written = _ini_sections(path)
        for group, options in pcloud_opts.list_opts():
            for opt in options if group in written else ():
                try:
                    conf.register_opt(opt, group=group)
                except cfg.DuplicateOptError:
                    pass
        conf(['--config-file', path], project='pcloud-test')
        for group, names in _our_options().items():
            for name in names & set(written.get(group, ())):
                getattr(conf[group], name)
        return conf


class TestKollaTemplateOverride(_GuideTest):

    def _parent(self, block):
        return ('FROM base\n{%% block %s %%}{%% endblock %%}\n'
                '{%% block footer %%}{%% endblock %%}\nUSER service\n'
                % block)

    def _dockerfile(self, block):
        with open(TEMPLATE_OVERRIDE) as f:
            override = f.read()
        env = jinja2.Environment(
            loader=jinja2.DictLoader({'parent': self._parent(block),
                                      'override': override}),
            undefined=jinja2.StrictUndefined)
        return env.get_template('override').render(parent_template='parent')

    def test_each_image_installs_the_wheel(self):
        for image, block in KOLLA_IMAGES.items():
            dockerfile = self._dockerfile(block)
            self.assertIn('ADD additions-archive /', dockerfile, image)
            self.assertEqual(1, len(re.findall(r'\bpip\b.* install ',
                                               dockerfile)), image)
            self.assertIn('/additions/pcloud/pcloud_plugin-*.whl',
                          dockerfile, image)
            # Installed before the image drops to its service's user.
            self.assertLess(dockerfile.index('pcloud_plugin-'),
                            dockerfile.index('USER service'), image)
            if image.startswith('blazar'):
                self.assertIn('[blazar]', dockerfile, image)

    def test_additions_reach_the_path_the_template_installs_from(self):
        build = configparser.ConfigParser(interpolation=None)
        build.read(KOLLA_BUILD_CONF)
        with open(TEMPLATE_OVERRIDE) as f:
            override = f.read()
        self.assertEqual(
            {'%s-additions-pcloud' % image for image in KOLLA_IMAGES},
            set(build.sections()))
        for section in build.sections():
            self.assertEqual('local', build[section]['type'])
            folder = os.path.basename(build[section]['location'])
            self.assertIn('/additions/%s/pcloud_plugin-' % folder, override)


class TestKollaConfig(_GuideTest):

    def test_nova_scheduler_filters(self):
        sections = _ini_sections(KOLLA_NOVA_SCHEDULER)
        self.assertEqual({'filter_scheduler'}, set(sections))
        scheduler = sections['filter_scheduler']
        self.assertEqual({'available_filters', 'enabled_filters'},
                         set(scheduler))
        path, name = _filter()
        self.assertIn(ALL_FILTERS, scheduler['available_filters'])
        self.assertIn(path, scheduler['available_filters'])
        (enabled,) = scheduler['enabled_filters']
        self.assertIn(name, enabled.split(','))
        for available in scheduler['available_filters']:
            if available != ALL_FILTERS:
                importutils.import_class(available)

    def test_nova_scheduler_conf_loads_in_nova(self):
        scheduler_conf = importutils.import_module('nova.conf.scheduler')
        conf = cfg.ConfigOpts()
        scheduler_conf.register_opts(conf)
        conf(['--config-file', KOLLA_NOVA_SCHEDULER], project='nova-test')
        path, name = _filter()
        self.assertIn(path, conf.filter_scheduler.available_filters)
        self.assertIn(name, conf.filter_scheduler.enabled_filters)

    def _blazar_conf(self):
        with open(KOLLA_BLAZAR) as f:
            return _render(f.read(), KOLLA_VARIABLES)

    def test_blazar_conf_names_our_options_only(self):
        sections = _ini_sections(self._blazar_conf())
        self.assertOursOnly(sections, allowed_other=('manager',))
        self.assertEqual({'plugins'}, set(sections['manager']))
        (plugins,) = sections['manager']['plugins']
        self.assertPlugins(plugins.split(','))
        for group in ('pcloud_database', 'pcloud_nova', 'pcloud_placement',
                      'pcloud'):
            self.assertIn(group, sections)

    def test_blazar_conf_loads(self):
        conf = self.assertBlazarConfLoads(self._blazar_conf())
        self.assertEqual('mysql+pymysql://pcloud:dbpass@db.example.org:3306'
                         '/pcloud', conf.pcloud_database.connection)
        self.assertEqual('freepool', conf.pcloud.blazar_freepool_name)

    def test_db_sync_conf(self):
        sections = _ini_sections(KOLLA_DB_SYNC)
        self.assertEqual({'pcloud_database': {'connection'}},
                         {g: set(o) for g, o in sections.items()})
        self.assertOursOnly(sections)


class TestOpenStackAnsibleVariables(_GuideTest):

    def setUp(self):
        super().setUp()
        with open(OSA_VARIABLES) as f:
            self.variables = yaml.safe_load(f)

    def test_expected_variables(self):
        self.assertLessEqual(
            {'nova_user_pip_packages', 'nova_scheduler_extra_filters',
             'nova_cpu_allocation_ratio', 'nova_ram_allocation_ratio',
             'nova_nova_conf_overrides', 'blazar_pip_packages',
             'blazar_manager_plugins', 'blazar_blazar_conf_overrides'},
            set(self.variables))

    def test_packages(self):
        (nova,) = [p for p in self.variables['nova_user_pip_packages']
                   if p.startswith('pcloud-plugin')]
        self.assertTrue(nova.startswith('pcloud-plugin @ '), nova)
        (blazar,) = [p for p in self.variables['blazar_pip_packages']
                     if p.startswith('pcloud-plugin')]
        self.assertTrue(blazar.startswith('pcloud-plugin[blazar] @ '),
                        blazar)
        # The role's own list, which this variable replaces, stays in.
        self.assertTrue(any('#egg=blazar' in p
                            for p in self.variables['blazar_pip_packages']))

    def test_nova_filters(self):
        path, name = _filter()
        self.assertIn(name, self.variables['nova_scheduler_extra_filters'])
        available = self.variables['nova_nova_conf_overrides'][
            'filter_scheduler']['available_filters']
        # A mapping without values: config_template writes one line per
        # key, as nova.conf's multi-valued option needs.
        self.assertIsInstance(available, dict)
        self.assertEqual({None}, set(available.values()))
        self.assertIn(ALL_FILTERS, available)
        self.assertIn(path, available)

    def test_blazar_plugins_and_options(self):
        self.assertPlugins(self.variables['blazar_manager_plugins'])
        overrides = self.variables['blazar_blazar_conf_overrides']
        self.assertOursOnly(overrides)
        for group in ('pcloud_database', 'pcloud_nova', 'pcloud_placement',
                      'pcloud'):
            self.assertIn(group, overrides)

    def test_blazar_overrides_load(self):
        # As config_template writes them (after Ansible rendered the
        # variables they name).
        parser = configparser.ConfigParser(interpolation=None)
        for group, options in self.variables[
                'blazar_blazar_conf_overrides'].items():
            parser[group] = {k: str(v) for k, v in options.items()}
        text = io.StringIO()
        parser.write(text)
        rendered = _render(text.getvalue(), {
            'pcloud_galera_password': 'dbpass',
            'blazar_galera_address': 'db.example.org',
            'blazar_galera_port': '3306',
            'keystone_service_internaluri': 'https://ks.example.org:5000',
            'pcloud_service_password': 'kspass',
            'blazar_service_region': 'RegionOne',
            'blazar_nova_aggregate_name': 'freepool'})
        conf = self.assertBlazarConfLoads(rendered)
        self.assertEqual('mysql+pymysql://pcloud:dbpass@db.example.org:3306'
                         '/pcloud', conf.pcloud_database.connection)

    def test_compute_allocation_ratios_unset(self):
        # os_nova's nova.conf.j2 writes "cpu_allocation_ratio = {{
        # nova_cpu_allocation_ratio }}" (and the same for RAM) on every
        # compute; with our value Nova must read the option as unset.
        compute_conf = importutils.import_module('nova.conf.compute')
        conf = cfg.ConfigOpts()
        compute_conf.register_opts(conf)
        lines = ['[DEFAULT]']
        for resource in ('cpu', 'ram'):
            lines.append(_render(
                '%s_allocation_ratio = {{ value }}' % resource,
                {'value': self.variables['nova_%s_allocation_ratio'
                                         % resource]}))
        for name, value in self.variables['nova_nova_conf_overrides'][
                'DEFAULT'].items():
            lines.append('%s = %s' % (name, value))
        handle, path = tempfile.mkstemp(suffix='.conf')
        with os.fdopen(handle, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        self.addCleanup(os.unlink, path)
        conf(['--config-file', path], project='nova-test')
        self.assertIsNone(conf.cpu_allocation_ratio)
        self.assertIsNone(conf.ram_allocation_ratio)
        self.assertIsNotNone(conf.initial_cpu_allocation_ratio)
        self.assertIsNotNone(conf.initial_ram_allocation_ratio)


class TestGuides(base.TestCase):

    def test_literalincludes_exist(self):
        for guide in GUIDES:
            with open(guide) as f:
                included = re.findall(r'^\s*\.\. literalinclude::\s*(\S+)',
                                      f.read(), re.MULTILINE)
            self.assertNotEqual([], included, guide)
            for name in included:
                if name.startswith('/'):
                    path = os.path.join(REPO, 'doc', 'source',
                                        name.lstrip('/'))
                else:
                    path = os.path.join(os.path.dirname(guide), name)
                self.assertTrue(os.path.isfile(path),
                                '%s includes %s: no such file'
                                % (guide, name))
