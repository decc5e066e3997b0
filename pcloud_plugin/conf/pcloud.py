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


"""The [pcloud] group: host allocation and the per-project quotas."""

from oslo_config import cfg
from oslo_config import types

GROUP = 'pcloud'

OPTS = [
    cfg.IntOpt('allocate_retries',
               default=5, min=0,
               help='How many more times a host allocation is tried after '
                    'it lost a race: another allocation took the same free '
                    'host at the same moment, so both gave it back. Each '
                    'retry picks again at random among the free hosts.'),
    cfg.FloatOpt('allocate_retry_interval',
                 default=0.05, min=0.0,
                 help='Base, in seconds, of the random pause before a '
                      'retry, doubled at each retry (and never shorter '
                      'than the last attempt took), so allocations that '
                      'collided do not collide again; also how often a '
                      'collided allocation looks whether the others left.'),
    cfg.FloatOpt('allocate_settle_timeout',
                 default=5.0, min=0.0,
                 help='Of allocations that took one host at once, the one '
                      'of the lowest pcloud id waits this long, in '
                      'seconds, for the others to give the host back, '
                      'and keeps it if they do; the others give it back '
                      'at once. Without this all of them could give it '
                      'back and collide again.'),
    cfg.IntOpt('units_quota',
               default=10, min=-1,
               help='Quota units each project may hold across all its '
                    'pclouds; a host costs the units of its host flavor. '
                    '-1 means unlimited. A Keystone limit on '
                    'pcloud_host_units, when [oslo_limit] is set, takes '
                    'precedence.'),
    cfg.Opt('project_units_quota',
            type=types.Dict(value_type=types.Integer(min=-1)),
            default={},
            help='Per-project overrides of units_quota, as '
                 'project_id:units pairs, e.g. "abc123:40,def456:-1".'),
    cfg.IntOpt('reserved_vcpus_quota',
               default=-1, min=-1,
               help='VCPUs (vcpus x amount) a project\'s virtual:instance '
                    'reservations may hold at any moment, when Keystone '
                    'has no pcloud_reserved_vcpus limit for it. -1 means '
                    'unlimited.'),
    cfg.IntOpt('reserved_memory_mb_quota',
               default=-1, min=-1,
               help='Memory in MiB (memory_mb x amount) a project\'s '
                    'virtual:instance reservations may hold at any '
                    'moment, when Keystone has no pcloud_reserved_memory_mb '
                    'limit for it. -1 means unlimited.'),
    cfg.IntOpt('quota_cache_seconds',
               default=60, min=0,
               help='Seconds a project\'s limits read from Keystone '
                    'unified limits ([oslo_limit]) are kept: a limit '
                    'changed in Keystone applies at most this long after. '
                    '0 asks Keystone at every admission.'),
    cfg.IntOpt('operation_timeout',
               default=600, min=0,
               help='Seconds after which the reconciler (run by the '
                    'plugins\' periodic checks, and at blazar-manager '
                    'start) takes '
                    'over a lease start or end, a host allocation or a '
                    'release that has not finished, when it cannot tell '
                    'that its process died: that process runs on another '
                    'machine. One of this machine that died is taken '
                    'over at once.'),
    cfg.IntOpt('lease_event_margin',
               default=30, min=0,
               help='Seconds before a lease\'s start, end or before-end '
                    'event comes due from which blazar-api answers an '
                    'update of that lease 409 (with Retry-After) until '
                    'the event has run: Blazar puts a lease whose update '
                    'meets its own event in ERROR. A before-end event '
                    'holds back only an update that moves the lease\'s '
                    'dates. Longer than an update takes.'),
    cfg.IntOpt('flexible_lease_searches',
               default=10, min=1,
               help='How many times blazar-api searches a flexible lease\'s '
                    'window (POST /v1/leases with a duration): each time '
                    'another lease took the window found before this one\'s '
                    'claim, the creation is refused, nothing held, and the '
                    'next window is searched. Past this many, the last '
                    'refusal is the answer (409). As many as leases may '
                    'race for the same windows.'),
    cfg.IntOpt('lease_transition_timeout',
               default=600, min=0,
               help='Seconds after which the reconciler puts back a lease '
                    'left CREATING, UPDATING or DELETING (or STARTING or '
                    'TERMINATING before our plugin recorded the start or '
                    'end) by a blazar-manager that died: a creation is '
                    'undone, a deletion finished, an update back to the '
                    'state its events say. Longer than any of these '
                    'takes on a live manager.'),
    cfg.IntOpt('unreachable_patience',
               default=60, min=0,
               help='Seconds a lease start waits, trying again, for Nova '
                    'or Placement that cannot be reached (restarting, '
                    'say) or answers with a server error (5xx) before it '
                    'fails the lease. Blazar runs events one at a time: '
                    'the next ones wait as long.'),
    cfg.IntOpt('placement_mirror_interval',
               default=60, min=0,
               help='Seconds between two passes of blazar-manager\'s '
                    'Placement mirror, which keeps the ledger\'s providers, '
                    'inventories, traits and aggregates current and holds '
                    'there what instances running outside reservations '
                    'use. A pass reads again only the providers whose '
                    'Placement generation moved. 0 turns it off (then '
                    'only admissions\' freshness checks and pcloud-manage '
                    'placement sync update the ledger).'),
    cfg.IntOpt('placement_mirror_usage_rechecks',
               default=1000, min=0,
               help='How many providers holding usage of instances that '
                    'run outside reservations each mirror pass reads '
                    'again, in turn, one request each: Placement does not '
                    'tell that allocations were deleted (the provider '
                    'generation does not move), so this is how freed '
                    'capacity comes back to the ledger.'),
    cfg.BoolOpt('nova_notifications',
                default=True,
                help='Follow Nova\'s versioned notifications in '
                     'blazar-manager: an instance created, deleted, moved '
                     'or shelved, or a compute service changed, is read '
                     'again from Placement at once, so capacity a deleted '
                     'server frees is reservable within a second rather '
                     'than at a mirror pass. Needs nova.conf '
                     '[notifications] notification_format = versioned (or '
                     'both) and [oslo_messaging_notifications] driver = '
                     'messagingv2 on the transport blazar-manager\'s '
                     '[oslo_messaging_notifications] transport_url (or '
                     '[DEFAULT] transport_url) names. The mirror\'s '
                     'passes stay the safety net for events lost.'),
    cfg.StrOpt('nova_notifications_topic',
               default='versioned_notifications',
               help='The topic Nova sends versioned notifications on: '
                    'nova.conf [notifications] versioned_notifications_'
                    'topics.'),
    cfg.StrOpt('nova_notifications_exchange',
               default='nova',
               help='The exchange Nova sends them to: nova.conf '
                    '[DEFAULT] control_exchange.'),
    cfg.StrOpt('nova_notifications_pool',
               default='pcloud-plugin',
               help='The listener pool of blazar-managers: they share one '
                    'queue, so each event is handled by one of them, and '
                    'other listeners of the topic (Ceilometer, Blazar\'s '
                    'own monitor) still get every event.'),
    cfg.IntOpt('healing_interval',
               default=60, min=0,
               help='Seconds between two healing passes of each of our '
                    'Blazar plugins: reservations holding a compute whose '
                    'nova-compute service is down or disabled are placed '
                    'again on free capacity in their window (those not '
                    'started yet, and started ones whose instances do not '
                    'run there); those that cannot be are flagged '
                    'degraded (missing_resources) and notified. 0 turns '
                    'healing off. Blazar\'s own healing timer is not '
                    'used: its interval is in minutes.'),
    cfg.IntOpt('maintenance_interval',
               default=60, min=0,
               help='Seconds between two passes of the leading '
                    'blazar-manager over operators\' maintenance windows: '
                    'those whose start came have their hosts\' services '
                    'disabled, those whose end came have them enabled '
                    'again. 0 turns the passes off.'),
    cfg.IntOpt('backfill_interval',
               default=0, min=0,
               help='Seconds between two backfill passes of the leading '
                    'blazar-manager: capacity promised to instance '
                    'reservations that have not started is offered to '
                    'backfill flavors until the first of them starts, '
                    'and backfill servers are shelved when their time is '
                    'up. 0 (the default) turns backfill off.'),
    cfg.IntOpt('backfill_warning',
               default=600, min=0,
               help='Seconds before its time is up that a backfill '
                    'server\'s project is warned '
                    '(pcloud.backfill.warning).'),
    cfg.StrOpt('blazar_freepool_name',
               default='freepool',
               help='The aggregate where Blazar\'s physical:host plugin '
                    'keeps the hosts registered with it: blazar.conf '
                    '[nova] aggregate_freepool_name. Its hosts, and those '
                    'of aggregates with blazar:owner metadata, are that '
                    'plugin\'s alone: our plugins never use them.'),
    cfg.StrOpt('default_availability_zone',
               default='nova',
               help='The availability zone of a host that is in no '
                    'aggregate with an availability zone. Must match '
                    'nova.conf [DEFAULT] default_availability_zone.'),
]
