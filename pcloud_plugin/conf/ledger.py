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

from oslo_config import cfg

GROUP = 'ledger'

OPTS = [
    cfg.IntOpt('claim_retries',
               default=10, min=0,
               help='How many times a claim, release or change that lost a '
                    'generation race with a concurrent writer is retried '
                    'before it fails with ConcurrentUpdateDetected.'),
    cfg.IntOpt('usage_snapshot_interval',
               default=60, min=0,
               help='Seconds between passes of the leading '
                    'blazar-manager that write, for each host whose '
                    'reservations changed since, its usage over time to '
                    'the database, so that a manager or API worker that '
                    'starts reads those rather than every reservation. '
                    '0 writes none: each process then reads every '
                    'reservation at its start.'),
]


def admission_retries_opt(replanned):
    """[pcloud_host] and [pcloud_instance] admission_retries: how many

    times an admission that lost a race plans again; ``replanned`` says
    what planning again does for that kind of reservation.
    """
    return cfg.IntOpt(
        'admission_retries', default=5, min=0,
        help='How many times an admission that lost a race with a '
             'concurrent lease %s before the lease is refused.' % replanned)
