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

"""Per-project limits: Keystone unified limits, else our options.

Each resource below is looked up first as the project's limit in Keystone,
then as Keystone's registered (default) limit, both through oslo.limit for
the endpoint ``[oslo_limit]`` names; without either (or without
``[oslo_limit]``, or when Keystone does not answer) the option of the
``[pcloud]`` group applies. A project's answer is kept
``[pcloud] quota_cache_seconds``, so admissions do not wait on Keystone
and a limit changed there applies that long after, without a restart.

A limit below 0 is no limit: the check is skipped without reading any
reservation.
"""

import contextlib
import threading
import time

import cachetools
from oslo_config import cfg
from oslo_limit import limit as os_limit
from oslo_log import log as logging

from pcloud_plugin.capacity import window as window_mod
from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import locks
from pcloud_plugin.db import reservations as res_db
from pcloud_plugin import exception

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# The Keystone resource names (``openstack limit create --resource-name``).
HOST_UNITS = 'pcloud_host_units'
RESERVED_VCPUS = 'pcloud_reserved_vcpus'
RESERVED_MEMORY_MB = 'pcloud_reserved_memory_mb'
UNLIMITED = -1
INSTANCE_RESOURCES = (RESERVED_VCPUS, RESERVED_MEMORY_MB)
# Projects whose answers are kept at once; past that, the least recently
# asked is read again from Keystone when next asked.
_CACHED_PROJECTS = 10000
_UNREAD = object()


def _configured(conf_, project_id, resource):
    """The [pcloud] option's limit of the resource for the project."""
    opts = conf_.pcloud
    if resource == HOST_UNITS:
        return opts.project_units_quota.get(project_id, opts.units_quota)
    if resource == RESERVED_VCPUS:
        return opts.reserved_vcpus_quota
    if resource == RESERVED_MEMORY_MB:
        return opts.reserved_memory_mb_quota
    return UNLIMITED


class Limits(object):
    """Limits per project and resource, from Keystone or the options."""

    clock = staticmethod(time.monotonic)

    def __init__(self, conf_=None):
        self.conf = conf_ or CONF
        self._lock = threading.Lock()
        self._enforcer = None
        self._enforcer_failed_at = None
        # project id (None: the registered limits) -> limits (None when
        # Keystone could not be asked), for [pcloud] quota_cache_seconds
        self._cache = None

    def _keystone_configured(self):
        try:
            opts = self.conf.oslo_limit
        except cfg.NoSuchOptError:
            return False
        return bool(opts.endpoint_id or opts.endpoint_service_type
                    or opts.endpoint_service_name)

    def _get_enforcer(self):
        if self._enforcer is not None:
            return self._enforcer
        ttl = self.conf.pcloud.quota_cache_seconds
        if (self._enforcer_failed_at is not None
                and self.clock() - self._enforcer_failed_at < ttl):
            return None
        try:
            # Usage is ours to count (through the ledger's windows): only
            # the limit lookups of the enforcer are used, uncached there.
            self._enforcer = os_limit.Enforcer(lambda p, r: {}, cache=False)
        except Exception as e:
            self._enforcer_failed_at = self.clock()
            LOG.warning('Keystone unified limits unavailable, the [pcloud] '
                        'quota options apply: %s', e)
        return self._enforcer

    def _read(self, project_id):
        """{resource: limit} Keystone holds for the project (None: the

        registered limits); None when Keystone cannot be asked.
        """
        enforcer = self._get_enforcer()
        if enforcer is None:
            return None
        try:
            if project_id is None:
                found = enforcer.get_registered_limits(None)
            else:
                found = enforcer.get_project_limits(project_id, None)
        except Exception as e:
            LOG.warning('Could not read Keystone limits of %s, the [pcloud] '
                        'quota options apply: %s',
                        project_id or 'the registered defaults', e)
            return None
        return dict(found)

    def _cached(self, ttl):
        """The cache of answers, made again if the option changed."""
        if self._cache is None or self._cache.ttl != ttl:
            self._cache = cachetools.TTLCache(
                _CACHED_PROJECTS, ttl, timer=lambda: self.clock())
        return self._cache

    def _keystone_limits(self, project_id):
        # TTL 0: every answer has expired as soon as it is kept.
        ttl = self.conf.pcloud.quota_cache_seconds
        with self._lock:
            limits = self._cached(ttl).get(project_id, _UNREAD)
        if limits is _UNREAD:
            limits = self._read(project_id)
            with self._lock:
                self._cached(ttl)[project_id] = limits
        return limits

    def limit(self, project_id, resource):
        """The project's limit of the resource; below 0 when none."""
        if self._keystone_configured():
            for scope in (project_id, None):
                found = self._keystone_limits(scope)
                if found and resource in found:
                    return found[resource]
        return _configured(self.conf, project_id, resource)

    def forget(self):
        """Drop every cached answer (and a failed enforcer)."""
        with self._lock:
            self._cache = None
            self._enforcer = None
            self._enforcer_failed_at = None


LIMITS = Limits()
_OTHERS = {}


def limits_for(conf_):
    """The Limits of a configuration (LIMITS for the global one)."""
    if conf_ is None or conf_ is CONF:
        return LIMITS
    return _OTHERS.setdefault(id(conf_), Limits(conf_))


@contextlib.contextmanager
def serialized(project_id, resources, limits=None):
    """One admission or update of a project's reservations at a time

    (a lock named after the project, db.locks), where one of
    ``resources`` is limited for it: each then checks the limit against
    everything the others committed. Without it two updates that each
    fit alone both passed their check (an update, unlike an admission,
    is not checked again after commit: undoing it is no simple release).
    """
    limits = limits or LIMITS
    if all(limits.limit(project_id, r) < 0 for r in resources):
        yield
        return
    held = locks.acquire('quota:%s' % project_id)
    try:
        yield
    finally:
        locks.release(held)


def _refuse(project_id, resource, limit, peak, at, asked):
    raise exception.QuotaRefused(reason=(
        'Quota exceeded for project %(project)s: %(resource)s limit is '
        '%(limit)d; %(held)d held at the peak (%(at)s), %(asked)d more '
        'requested.' % {'project': project_id, 'resource': resource,
                        'limit': limit, 'held': peak,
                        'at': at.isoformat(),
                        'asked': asked}))


def check_instance_reservation(project_id, params, start, end,
                               exclude=None, limits=None):
    """QuotaRefused (403) unless amount x (vcpus, memory_mb) of params

    fits, through [start, end), beside the most the project's other
    instance reservations (but ``exclude``) hold at once in that window.
    """
    limits = limits or LIMITS
    wanted = {RESERVED_VCPUS: params['vcpus'] * params['amount'],
              RESERVED_MEMORY_MB: params['memory_mb'] * params['amount']}
    bounded = {}
    for resource in wanted:
        limit = limits.limit(project_id, resource)
        if limit >= 0:
            bounded[resource] = limit
    if not bounded:
        return
    rows = [r for r in res_db.list_reservations(
            context_mod.get_admin_context(), ending_after=start,
            project_id=project_id)
            if r['reservation_id'] != exclude and r['start_time'] < end]
    per = {RESERVED_VCPUS: 'vcpus', RESERVED_MEMORY_MB: 'memory_mb'}
    for resource, limit in sorted(bounded.items()):
        spans = [(max(r['start_time'], start), r['end_time'],
                  r[per[resource]] * r['amount']) for r in rows]
        peak, at = (window_mod.max_in_sweep(spans, start, end)
                    if spans else (0, start))
        if peak + wanted[resource] > limit:
            _refuse(project_id, resource, limit, peak, at or start,
                    wanted[resource])


# Nova's quotas (os-quota-sets) a virtual:instance reservation is held
# to, with what each counts of one: seeds/003 refuses a reservation of
# more instances than the project's instance quota; so many instances of
# the flavor also take amount x vcpus cores.
_NOVA_QUOTAS = (
    ('instances', 'the number of instances reserved', 'instance',
     lambda p: p['amount']),
    ('cores', 'the cores reserved (amount x vcpus)', 'cores',
     lambda p: p['amount'] * p['vcpus']))


def check_nova_quota(project_id, nova_quota, params, current=None):
    """QuotaRefused (403) when the reservation asks for more instances or

    cores than Nova lets the project run (``nova_quota``: {'instances':
    n, 'cores': n}, below 0 none). ``current``: the reservation as it is,
    for an update, which is refused only for what it grows (a project
    whose quota was lowered may still shrink).
    """
    for resource, counted, name, count in _NOVA_QUOTAS:
        limit = nova_quota.get(resource, UNLIMITED)
        asked = count(params)
        if limit < 0 or asked <= limit or (
                current is not None and asked <= count(current)):
            continue
        raise exception.QuotaRefused(reason=(
            'Quota exceeded for project %s: %s (%d) is greater than the '
            '%s quota (%d) in Nova.' % (project_id, counted, asked, name,
                                        limit)))


def check_instance_update(row, params, start, end, limits=None):
    """As check_instance_reservation for an update of reservation row,

    only when it asks for more: more vcpus or memory in all, or a longer
    window (a project over a lowered limit may still shrink).
    """
    grows = (params['vcpus'] * params['amount']
             > row['vcpus'] * row['amount']
             or params['memory_mb'] * params['amount']
             > row['memory_mb'] * row['amount']
             or start < row['start_time'] or end > row['end_time'])
    if grows:
        check_instance_reservation(row['project_id'], params, start, end,
                                   exclude=row['reservation_id'],
                                   limits=limits)
