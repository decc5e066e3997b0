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

"""Blazar API and manager, in one process of their own.

Configured through blazar.conf like a deployment and started as blazar-api
and blazar-manager start: the manager as Blazar's ``ManagerService`` (its
resource plugins loaded by name from their entry points, as ``[manager]
plugins`` says), the API as Blazar's versioned WSGI app behind
keystonemiddleware. Nova and Placement are found in the Keystone catalog.
"""

import os
import shutil

from pcloud_plugin.sandbox import common

# Blazar's own plugin for each resource type, until ours for that type
# lands (an entry point named pcloud.*). The API loads the extension of
# each listed plugin that has one.
BLAZAR_PLUGINS = {'physical:host': 'physical.host.plugin',
                  'virtual:instance': 'virtual.instance.plugin'}
PLUGIN_NAMESPACE = 'blazar.resource.plugins'
# Blazar polls its lease events every 10 s; the sandbox does not want its
# users (or its demo) to wait that long for a lease to start.
EVENT_INTERVAL = 2
# The Placement mirror's pass (60 s by default): a compute resized or an
# instance booted outside reservations is in the ledger within seconds.
MIRROR_INTERVAL = 5
HEALING_INTERVAL = 5
# Keystone limits (60 s by default) apply within seconds of a change.
QUOTA_CACHE_SECONDS = 5
# One manager, and its lease changes take seconds: a lease its crash left
# midway is put back within a minute, not ten.
LEASE_TRANSITION_TIMEOUT = 60


def plugins():
    """The names for [manager] plugins: ours where we have one."""
    from importlib import metadata

    chosen = dict(BLAZAR_PLUGINS)
    for entry_point in metadata.entry_points(group=PLUGIN_NAMESPACE):
        if entry_point.name.startswith('pcloud.'):
            chosen[entry_point.load().resource_type] = entry_point.name
    return sorted(chosen.values())


def _service_auth(spec):
    auth = common.authtoken_conf(spec, 'blazar')
    del auth['www_authenticate_uri']
    return auth


def _write_conf(spec, run_dir):
    sections = _sections(spec)
    for group, options in spec.get('blazar_options', {}).items():
        sections.setdefault(group, {}).update(options)
    return common.write_conf(os.path.join(run_dir, 'blazar.conf'), sections)


def _sections(spec):
    return {
        'DEFAULT': {
            'host': 'sandbox',
            'transport_url': spec['transport'],
            'use_stderr': True,
            'os_auth_protocol': 'http',
            'os_auth_host': common.HOST,
            'os_auth_port': spec['ports']['keystone'],
            'os_auth_version': 'v3',
            'os_admin_username': 'blazar',
            'os_admin_password': common.PASSWORD,
            'os_admin_project_name': common.SERVICE_PROJECT,
            'os_admin_user_domain_name': 'Default',
            'os_admin_project_domain_name': 'Default',
            'os_region_name': common.REGION,
        },
        'manager': {'plugins': plugins()},
        'database': dict(common.NO_FSYNC, connection=common.patient(
            spec['databases']['blazar'])),
        'keystone_authtoken': common.authtoken_conf(spec, 'blazar'),
        # Logged: the events users are sent can be read in blazar.log.
        'oslo_messaging_notifications': {'driver': 'log'},
        # Short: a compute disabled or down is healed within seconds.
        'pcloud': {'placement_mirror_interval': MIRROR_INTERVAL,
                   'healing_interval': HEALING_INTERVAL,
                   'quota_cache_seconds': QUOTA_CACHE_SECONDS,
                   'lease_transition_timeout': LEASE_TRANSITION_TIMEOUT,
                   'nova_notifications': common.carries_notifications(
                       spec)},
        # Per-project limits from Keystone unified limits, registered on
        # the catalog's reservation service (the blazar user is an admin,
        # so it may read every project's). Without any there, the
        # [pcloud] quota options apply as before.
        'oslo_limit': dict(_service_auth(spec),
                           endpoint_service_type='reservation',
                           endpoint_region_name=common.REGION),
        # Our plugins': the ledger, and admin access to Nova and Placement.
        'pcloud_database': dict(common.NO_FSYNC, connection=common.patient(
            spec['databases']['ledger'])),
        'pcloud_nova': _service_auth(spec),
        # The demo shows a BEST-EFFORT lease moving others' servers away;
        # waiting leases and the reconciler run often.
        'pcloud_host': {'live_migrate_others': True, 'retry_interval': 5},
        'pcloud_placement': _service_auth(spec),
        'pcloud_instance': {'cleanup_interval': 5},
    }


def start(spec):
    run_dir = os.path.join(spec['state_dir'], 'blazar')
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    conf = _write_conf(spec, run_dir)

    from oslo_config import cfg

    from blazar.api import app as api_app
    from blazar.db import api as db_api
    from blazar.manager import service as manager_service
    from blazar.notification import notifier
    from blazar.utils import service as service_utils

    common.sqlite_writes_in_turn()
    # What blazar-manager's main does, minus its oslo.service launcher.
    cfg.CONF(['--config-file', conf], project='blazar', prog='blazar-sandbox')
    service_utils.prepare_service()
    notifier.init()
    # Blazar's own schema builder (its tests' too): one call, no alembic.
    db_api.setup_db()
    manager_service.EVENT_INTERVAL = EVENT_INTERVAL
    common.wait_for_token(spec, 'blazar', timeout=spec['timeout'])
    manager = manager_service.ManagerService()
    manager.start()
    return [common.serve('blazar', api_app.VersionSelectorApplication(),
                         spec['ports']['blazar'])]


if __name__ == '__main__':
    common.run('blazar', start)
