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

"""The tempest plugin of pcloud-plugin (entry point tempest.test_plugins)."""

import os

from tempest.test_discover import plugins

from pcloud_plugin.tests.tempest import config as pcloud_config


class PcloudTempestPlugin(plugins.TempestPlugin):

    def load_tests(self):
        test_dir = os.path.dirname(os.path.abspath(__file__))
        # This is pcloud_plugin/tests/tempest; the top level is what holds
        # pcloud_plugin, so test ids start with pcloud_plugin.tests.tempest.
        top_level = os.path.abspath(os.path.join(test_dir, '..', '..', '..'))
        return test_dir, top_level

    def register_opts(self, conf):
        conf.register_opt(pcloud_config.service_option,
                          group='service_available')
        conf.register_group(pcloud_config.pcloud_group)
        conf.register_opts(pcloud_config.PcloudGroup,
                           group=pcloud_config.pcloud_group)

    def get_opt_lists(self):
        return [(pcloud_config.pcloud_group.name, pcloud_config.PcloudGroup),
                ('service_available', [pcloud_config.service_option])]
