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

"""The [oslo_limit] group: where Keystone unified limits are read.

oslo.limit's own options (the endpoint whose limits apply, and a Keystone
auth allowed to read limits), listed here so the config generator shows
them with ours. Unset endpoint options leave the [pcloud] quota options
in force (pcloud_plugin.quota).
"""

from oslo_limit import opts as limit_opts

GROUP = 'oslo_limit'


def register_opts(conf):
    limit_opts.register_opts(conf)


def list_opts():
    return dict(limit_opts.list_opts())
