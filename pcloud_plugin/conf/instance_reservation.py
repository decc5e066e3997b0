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

"""The [pcloud_instance] group: the virtual:instance reservation plugin.

Placement is reached through [pcloud_placement]; Nova through
[pcloud_nova] (conf/nova.py).
"""

from oslo_config import cfg

from pcloud_plugin.conf import ledger

GROUP = 'pcloud_instance'

OPTS = [
    ledger.admission_retries_opt(
        're-reads the ledger and places its slots again'),
    cfg.IntOpt('max_amount',
               default=0, min=0,
               help='Most slots (instances) one virtual:instance '
                    'reservation may ask for, at creation and when it '
                    'grows (a larger amount is refused with a 400 naming '
                    'this option; policy pcloud:lease:exceed_limits lets '
                    'a caller past it). 0: no limit.'),
    cfg.IntOpt('max_candidates',
               default=20000, min=1,
               help='Most allocation candidates the engine generates for '
                    'one slot while placing a reservation; candidates are '
                    'taken from every host in turn, so this only needs to '
                    'exceed the number of hosts times the ways one host '
                    'can serve a slot.'),
    cfg.IntOpt('cleanup_interval',
               default=60, min=0,
               help='Seconds between retries of the Nova and Placement '
                    'clean-up that an ended reservation could not finish '
                    '(its custom resource class stays while instances that '
                    'were booted into the reservation still run). 0 turns '
                    'the periodic retry off; lease events still retry it.'),
]
