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
"""The sandbox's Django settings: Horizon's own, with the plugin's

enabled files added as if copied into ``openstack_dashboard/local/enabled``
(dashboard_proc puts the sandbox's ``local_settings`` on the path first).
"""

from openstack_dashboard.settings import *  # noqa: F401,F403,H303
from openstack_dashboard.utils import settings as settings_utils

from pcloud_plugin.dashboard import enabled as pcloud_enabled

_pcloud_config = {}
_pcloud_apps = []
settings_utils.update_dashboards([pcloud_enabled], _pcloud_config,
                                 _pcloud_apps)
HORIZON_CONFIG['panel_customization'] += (  # noqa: F405
    _pcloud_config['panel_customization'])
INSTALLED_APPS[0:0] = _pcloud_apps  # noqa: F405
