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
"""What pcloud-manage and pcloud-status need configured, checked before

use, so that a missing option is one line naming its section and option
instead of a traceback from deep inside oslo.db or keystoneauth.
"""

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin import conf
from pcloud_plugin.conf import database as database_conf
from pcloud_plugin.conf import placement as placement_conf

CONF = conf.CONF


class Missing(Exception):
    """An option the command needs is not set; str() is the one line."""


def database():
    """Raise Missing unless [pcloud_database] connection is set."""
    if not CONF[database_conf.GROUP].connection:
        raise Missing(
            '[%s] connection is not set: the URL of the ledger database, '
            'e.g. mysql+pymysql://pcloud:SECRET@HOST/pcloud'
            % database_conf.GROUP)


def placement_adapter():
    """The keystoneauth adapter for Placement from [pcloud_placement], or

    Missing when its credentials are not (all) configured.
    """
    group = placement_conf.GROUP
    # The credentials may live in another section (auth_section), known
    # only now that the files are read: its auth_type is registered now.
    ks_loading.register_auth_conf_options(CONF, group)
    auth_group = CONF[group].auth_section or group
    try:
        adapter = placement_client.get_adapter()
    except ks_exc.MissingRequiredOptions as e:
        raise Missing('[%s] %s not set (auth_type %s needs it)' % (
            auth_group, ', '.join(o.dest for o in e.options),
            CONF[auth_group].auth_type))
    except ks_exc.NoMatchingPlugin as e:
        raise Missing('[%s] auth_type: no auth plugin is named %r'
                      % (auth_group, e.name))
    if adapter.auth is None:
        raise Missing(
            '[%s] auth_type is not set: Placement is reached with a '
            'Keystone user of the admin role (auth_type password, '
            'auth_url, username, password, project_name, and their '
            'domains), as in nova\'s [placement]' % auth_group)
    return adapter
