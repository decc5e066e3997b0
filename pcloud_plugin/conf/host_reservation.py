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

"""The [pcloud_host] group: whole-host leases into pclouds (pcloud:host).

Nova is reached through [pcloud_nova] (conf/nova.py), the ledger through
[pcloud_database].
"""

from oslo_config import cfg

from pcloud_plugin.conf import ledger

GROUP = 'pcloud_host'

OPTS = [
    ledger.admission_retries_opt(
        'for the same hosts reads the ledger again and picks other hosts'),
    cfg.IntOpt('max_amount',
               default=0, min=0,
               help='Most hosts one pcloud:host reservation may ask for, '
                    'at creation and when it grows (a larger amount is '
                    'refused with a 400 naming this option; policy '
                    'pcloud:lease:exceed_limits lets a caller past it). 0: '
                    'no limit.'),
    cfg.IntOpt('immediate_tolerance',
               default=120, min=0,
               help='Seconds after now within which the window of an '
                    'IMMEDIATE lease must start (Blazar takes lease dates '
                    'to the minute).'),
    cfg.IntOpt('best_effort_timeout',
               default=60, min=1,
               help='Minutes a BEST-EFFORT reservation that gives no '
                    'timeout waits, from the start of its lease, for its '
                    'hosts to become free before it is TIMEDOUT.'),
    cfg.IntOpt('retry_interval',
               default=60, min=0,
               help='Seconds between the checks of waiting (IN-PROGRESS) '
                    'BEST-EFFORT reservations run by blazar-manager\'s '
                    'polling monitor; they are also checked whenever a '
                    'pcloud:host reservation starts or ends. 0 turns the '
                    'periodic check off.'),
    cfg.BoolOpt('live_migrate_others',
                default=False,
                help='Whether a BEST-EFFORT reservation may live-migrate '
                     'instances of other projects (left running on a host '
                     'by an ended lease) off the hosts it picked, once it '
                     'has checked that hosts outside every pool and pcloud '
                     'have room for all of them. Off: it waits for empty '
                     'hosts.'),
    cfg.IntOpt('hand_over_timeout',
               default=10, min=1,
               help='Minutes a pcloud:host reservation that is not '
                    'BEST-EFFORT waits (IN-PROGRESS) at its start, with '
                    'live_migrate_others on, for the instances an earlier '
                    'holder left on its hosts to move away, when neither '
                    'they nor other empty hosts can be had at once; then '
                    'it is TIMEDOUT, its hosts given back.'),
    cfg.IntOpt('hand_over_warning',
               default=30, min=0,
               help='Minutes before the end of an active pcloud:host '
                    'reservation whose hosts another holder has next at '
                    'which its lessee is told, once: the event '
                    'pcloud.host_reservation.hand_over and hand_over in '
                    '"openstack pcloud lease show" name those hosts and '
                    'from when the next holder has them, so that the '
                    'lessee\'s instances can leave them in time; with '
                    'live_migrate_others on, those the lessee left on '
                    'hosts another reservation has within this many '
                    'minutes of its end are live-migrated at its end. 0 '
                    'tells nothing and moves only at the next start.'),
]
