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


"""The [pcloud_nova] group: how the Pcloud service reaches Nova's API.

The usual keystoneauth options (conf/keystone_client.py), so it is
configured like any service's [nova] section. Its own group because the
Pcloud service runs inside blazar processes, whose [nova] group is
Blazar's, and its credentials must be an admin's (aggregates, services and
hypervisors are admin APIs) whatever Blazar itself uses.
"""

from pcloud_plugin.conf import keystone_client

GROUP = 'pcloud_nova'
_OPTS = keystone_client.ServiceGroup(GROUP, 'compute')
register_opts = _OPTS.register_opts
list_opts = _OPTS.list_opts
