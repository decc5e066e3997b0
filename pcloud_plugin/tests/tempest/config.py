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

"""Our options in tempest.conf.

``[service_available] pcloud`` turns the scenarios on; ``[pcloud]``
says where the Pcloud API is (Blazar's ``reservation`` endpoint, under
``/v1``) and what the scenarios may use.
"""

from oslo_config import cfg

service_option = cfg.BoolOpt(
    'pcloud', default=True,
    help='Whether pcloud-plugin is deployed: the Pcloud API and '
         'pcloud.virtual.instance in Blazar, the PcloudFilter in '
         'nova-scheduler.')

pcloud_group = cfg.OptGroup(name='pcloud',
                            title='pcloud-plugin scenario options')

PcloudGroup = [
    cfg.StrOpt('catalog_type', default='reservation',
               help='Catalog type of Blazar, which serves the Pcloud API.'),
    cfg.StrOpt('endpoint_type', default='publicURL',
               choices=['public', 'admin', 'internal',
                        'publicURL', 'adminURL', 'internalURL'],
               help='The endpoint type of that service.'),
    cfg.StrOpt('region', default='',
               help='Its region; empty: [identity] region.'),
    cfg.StrOpt('pool_host',
               help='The compute host the pcloud scenario puts in a host '
                    'flavor pool for its run. It must be empty, up, '
                    'enabled and in no aggregate; its nova-compute service '
                    'is enabled again at the end. Unset: the first such '
                    'host.'),
    cfg.IntOpt('lease_timeout', default=300,
               help='Seconds to wait for what blazar-manager does in the '
                    'background: a lease to start, what its end removes to '
                    'go, a host emptied of servers to be free in the '
                    'ledger.'),
]
