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

"""The [pcloud_database] group: where the capacity ledger lives.

Its own group (not [database]) because the plugin runs inside nova-scheduler
and blazar-manager, whose [database] is theirs.
"""

from oslo_config import cfg
from oslo_db import options as db_options

GROUP = 'pcloud_database'
OPTS = db_options.database_opts + [
    cfg.IntOpt('galera_lock_ttl',
               default=30, min=2,
               help='On a Galera multi-writer cluster, seconds a named '
                    'lock of ours (a lease, a pcloud, a project\'s quota) '
                    'stays held by a process that stopped renewing it, '
                    'so the longest a killed process blocks others there. '
                    'A row lock holds on one Galera node only, so there '
                    'the lock is a row each holder takes with a committed '
                    'write, renewed every third of this while it is held. '
                    'Elsewhere a lock ends with the connection of its '
                    'holder and this is not used.'),
]
