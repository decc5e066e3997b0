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

"""The [coordination] group: where blazar-managers elect the one that

runs the periodic work (cloud.coordination), as Cinder and Designate
name it.
"""

from oslo_config import cfg

GROUP = 'coordination'

OPTS = [
    cfg.StrOpt('backend_url',
               secret=True,
               help='The tooz URL of the coordination backend where '
                    'several blazar-managers elect the one that runs the '
                    'periodic work of our plugins (the Placement mirror, '
                    'clean-ups, healing): etcd3+http://, redis://, '
                    'zookeeper://, mysql://, postgresql:// or file:// '
                    '(processes of one machine). Unset, it is the '
                    'ledger\'s [pcloud_database] connection (its MySQL '
                    'or PostgreSQL server, as tooz\'s mysql:// or '
                    'postgresql://); with a SQLite ledger (one machine) '
                    'there is no election and every process runs its '
                    'passes. On a Galera multi-writer ledger, where tooz\'s '
                    'mysql driver (GET_LOCK) would lock on one node only, '
                    'the ledger\'s own lock (which holds across nodes, see '
                    '[pcloud_database] galera_lock_ttl) elects instead. '
                    'Passes run twice are harmless (they are idempotent), '
                    'only wasteful. A backend that cannot be reached never '
                    'stops the periodic work: each manager then runs it '
                    'and tries to join again at its next poll.'),
]
