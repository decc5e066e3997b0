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

"""python-novaclient over a keystoneauth session built from [pcloud_nova]."""

from keystoneauth1 import loading as ks_loading
from novaclient import client as nova_client
from novaclient import exceptions as nova_exc

from pcloud_plugin import conf
from pcloud_plugin.conf import nova as nova_conf

CONF = conf.CONF

# 2.41: aggregates carry uuids; 2.53: services and hypervisors addressed by
# uuid, hypervisors listed with their servers.
MICROVERSION = '2.53'

# What a Nova call raises when Nova answers with an error.
ClientException = nova_exc.ClientException
NotFound = nova_exc.NotFound
Conflict = nova_exc.Conflict


def get_client(conf_=None, auth=None):
    """A novaclient Client configured from [pcloud_nova].

    ``auth`` replaces the configured auth plugin (tests reach an in-process
    Nova API with a plugin of their own); session and adapter options still
    come from the config.
    """
    conf_ = conf_ or CONF
    group = nova_conf.GROUP
    if auth is None:
        auth = ks_loading.load_auth_from_conf_options(conf_, group)
    session = ks_loading.load_session_from_conf_options(
        conf_, group, auth=auth)
    adapter = ks_loading.load_adapter_from_conf_options(
        conf_, group, session=session, auth=auth)
    return nova_client.Client(
        MICROVERSION, session=session, auth=auth,
        service_type=adapter.service_type,
        service_name=adapter.service_name,
        endpoint_type=adapter.interface,
        region_name=adapter.region_name,
        endpoint_override=adapter.endpoint_override,
        connect_retries=adapter.connect_retries,
        status_code_retries=adapter.status_code_retries)
