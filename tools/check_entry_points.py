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

"""Load every entry point of the installed pcloud-plugin the way the
service that reads it does, against the Nova and Blazar installed beside it:

    python tools/check_entry_points.py nova     # nova-scheduler's view
    python tools/check_entry_points.py blazar   # blazar-api and -manager's
    python tools/check_entry_points.py tools    # CLI, generators, scripts

One side per process: Nova and Blazar register the same global options
and cannot be imported into one. Prints what each entry point gave and
exits 1 at the first one that does not load, naming it.
"""

from importlib import metadata
import os
import sys
import tempfile

DIST = 'pcloud-plugin'
# Loaded by tempest only, which is not installed beside the services.
NOT_CHECKED = {'tempest.test_plugins'}


def _entry_points(group):
    found = [ep for ep in metadata.distribution(DIST).entry_points
             if ep.group == group]
    if not found:
        sys.exit('%s declares no %s entry point' % (DIST, group))
    return found


def _ok(group, name, what):
    print('ok  %-28s %-34s %s' % (group, name, what))


def check_nova():
    """nova-scheduler loads our filter, by class path, as it does."""
    import nova.conf
    from nova.scheduler import filters

    nova.conf.CONF([], project='nova', default_config_files=[])
    for ep in _entry_points('nova.scheduler.filters'):
        path = ep.value.replace(':', '.')
        classes = filters.HostFilterHandler().get_matching_classes([path])
        instance = classes[0]()
        assert isinstance(instance, filters.BaseHostFilter), path
        _ok(ep.group, ep.name, '%s, run_filter_once_per_request=%s' % (
            path, instance.run_filter_once_per_request))


def check_blazar():
    """Blazar's API and manager load our extensions and plugins.

    By Blazar's own code: its API app with our extensions enabled, and
    each plugin made as its manager makes it.
    """
    # As blazar-api's entry point: in releases before 2026.2 this applies
    # eventlet's patching, first.
    from blazar.api.v1 import app as blazar_app
    from blazar.manager import service as manager_service
    from blazar.plugins import base as plugin_base
    from oslo_config import cfg

    plugins = [ep.name for ep in _entry_points('blazar.resource.plugins')]
    ledger = os.path.join(tempfile.mkdtemp(), 'ledger.db')
    cfg.CONF([], project='blazar', default_config_files=[])
    cfg.CONF.set_override('plugins', plugins, group='manager')
    from pcloud_plugin import conf as pcloud_conf  # noqa: F401
    cfg.CONF.set_override('connection', 'sqlite:///%s' % ledger,
                          group='pcloud_database')

    app = blazar_app.make_app()
    for ep in _entry_points('blazar.api.v1.extensions'):
        blueprint = ep.load()()
        assert blueprint.name in app.blueprints, ep.name
        routes = [r.rule for r in app.url_map.iter_rules()
                  if r.endpoint.startswith(blueprint.name + '.')]
        _ok(ep.group, ep.name, 'blueprint %s registered by make_app, '
            '%d routes' % (blueprint.name, len(routes)))
    loaded = manager_service.ManagerService()._get_plugins()
    for ep in _entry_points('blazar.resource.plugins'):
        plugin = ep.load()
        assert issubclass(plugin, plugin_base.BasePlugin), ep.name
        # Blazar logs, and leaves out, a plugin it could not make.
        assert isinstance(loaded.get(plugin.resource_type), plugin), (
            '%s not made by blazar-manager' % ep.name)
        _ok(ep.group, ep.name, 'made by blazar-manager for %s'
            % plugin.resource_type)
    for ep in _entry_points('oslo.policy.enforcer'):
        enforcer = ep.load()()
        enforcer.load_rules()
        _ok(ep.group, ep.name, '%d rules' % len(enforcer.rules))


def check_tools():
    """The OSC plugin, generators' entry points and console scripts.

    The OSC plugin and its commands, the config and policy generators'
    entry points, and the console scripts.
    """
    from cliff import command
    from oslo_config import generator
    from oslo_policy import policy

    for ep in _entry_points('openstack.cli.extension'):
        module = ep.load()
        for attr in ('API_NAME', 'API_VERSIONS', 'make_client',
                     'build_option_parser'):
            assert hasattr(module, attr), '%s lacks %s' % (ep.name, attr)
        _ok(ep.group, ep.name, 'API %s' % module.API_NAME)
    commands = _entry_points('openstack.pcloud.v1')
    for ep in commands:
        assert issubclass(ep.load(), command.Command), ep.name
    _ok('openstack.pcloud.v1', '(%d commands)' % len(commands), 'loaded')
    for ep in _entry_points('oslo.config.opts'):
        with tempfile.NamedTemporaryFile('r') as out:
            generator.main(['--namespace', ep.name,
                            '--output-file', out.name])
            options = sum(1 for line in out if line.startswith('#') and
                          ' = ' in line)
        assert options, ep.name
        _ok(ep.group, ep.name, 'sample config with %d options' % options)
    for ep in _entry_points('oslo.policy.policies'):
        rules = list(ep.load()())
        assert rules and all(isinstance(r, policy.RuleDefault)
                             for r in rules), ep.name
        _ok(ep.group, ep.name, '%d policy defaults' % len(rules))
    for ep in _entry_points('console_scripts'):
        assert callable(ep.load()), ep.name
        _ok(ep.group, ep.name, ep.value)


SIDES = {'nova': check_nova, 'blazar': check_blazar, 'tools': check_tools}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SIDES:
        sys.exit('usage: %s {%s}' % (sys.argv[0], ','.join(SIDES)))
    groups = {ep.group for ep in metadata.distribution(DIST).entry_points}
    print('%s %s' % (DIST, metadata.version(DIST)))
    SIDES[sys.argv[1]]()
    if sys.argv[1] == 'tools':
        print('not checked here: %s' % ', '.join(sorted(
            groups & NOT_CHECKED)))


if __name__ == '__main__':
    main()
