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

"""Every option module: registered on import of the package, and listed

for oslo-config-generator (its oslo.config.opts entry point).
"""

from pcloud_plugin.conf import coordination
from pcloud_plugin.conf import database
from pcloud_plugin.conf import host_reservation
from pcloud_plugin.conf import instance_reservation
from pcloud_plugin.conf import ledger
from pcloud_plugin.conf import nova
from pcloud_plugin.conf import oslo_limit
from pcloud_plugin.conf import pcloud
from pcloud_plugin.conf import placement

MODULES = (coordination, database, host_reservation, instance_reservation,
           ledger, nova, oslo_limit, pcloud, placement)


# A module of plain options says GROUP and OPTS; one whose options come
# with more to register (keystoneauth's, oslo.limit's) has its own
# register_opts and list_opts.
def register(conf, module):
    if hasattr(module, 'OPTS'):
        conf.register_opts(module.OPTS, group=module.GROUP)
    else:
        module.register_opts(conf)


def _listed(module):
    if hasattr(module, 'OPTS'):
        return {module.GROUP: module.OPTS}
    return module.list_opts()


def list_opts():
    groups = {}
    for module in MODULES:
        for group, opts in _listed(module).items():
            groups.setdefault(group, []).extend(opts)
    return sorted(groups.items())
