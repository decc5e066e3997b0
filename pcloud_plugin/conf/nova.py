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

The usual keystoneauth session, auth and adapter options, so it is
configured like any service's [nova] section. Its own group because the
Pcloud service runs inside blazar processes, whose [nova] group is
Blazar's, and its credentials must be an admin's (aggregates, services and
hypervisors are admin APIs) whatever Blazar itself uses.
"""

from keystoneauth1 import loading as ks_loading

GROUP = 'pcloud_nova'
DEFAULT_SERVICE_TYPE = 'compute'


def _adapter_opts():
    """keystoneauth's adapter options, with Nova's defaults built in

    (not set_default: a config reset would forget those).
    """
    opts = ks_loading.get_adapter_conf_options(include_deprecated=False)
    for opt in opts:
        if opt.dest == 'service_type':
            opt.default = DEFAULT_SERVICE_TYPE
        elif opt.dest == 'valid_interfaces':
            opt.default = ['internal', 'public']
    return opts


_ADAPTER_OPTS = _adapter_opts()


def register_opts(conf):
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    conf.register_opts(_ADAPTER_OPTS, group=GROUP)


def list_opts():
    return {GROUP: (
        ks_loading.get_session_conf_options()
        + ks_loading.get_auth_common_conf_options()
        + ks_loading.get_auth_plugin_conf_options('password')
        + _ADAPTER_OPTS)}
