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

"""Option groups that reach an OpenStack service through keystoneauth.

The usual session, auth and adapter options, as in any service's section
for another one ([placement], [nova], ...), with the service's defaults
built into the options themselves (not set_default: a config reset would
forget those).
"""

from keystoneauth1 import loading as ks_loading


class ServiceGroup(object):
    """The options of one group that reaches one service type."""

    def __init__(self, group, service_type):
        self.group = group
        self.adapter_opts = ks_loading.get_adapter_conf_options(
            include_deprecated=False)
        for opt in self.adapter_opts:
            if opt.dest == 'service_type':
                opt.default = service_type
            elif opt.dest == 'valid_interfaces':
                opt.default = ['internal', 'public']

    def register_opts(self, conf):
        ks_loading.register_session_conf_options(conf, self.group)
        ks_loading.register_auth_conf_options(conf, self.group)
        conf.register_opts(self.adapter_opts, group=self.group)

    def list_opts(self):
        return {self.group: (
            ks_loading.get_session_conf_options()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')
            + self.adapter_opts)}
