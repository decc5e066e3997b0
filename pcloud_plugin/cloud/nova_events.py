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
"""Nova's versioned notifications, followed as they happen.

Placement does not move a provider's generation when an allocation is
deleted, so without Nova's word a deleted server would stay counted in
the ledger until a mirror pass reads its host again. Each blazar-manager
listens on Nova's versioned notifications topic (``[pcloud]
nova_notifications_topic``) in a pool of its own (``[pcloud]
nova_notifications_pool``): the managers share the pool's queue, so each
event is handled once, and no other listener of the topic loses any.

An event is only a hint of where to look: the ledger is brought to what
Placement says now of the providers it names (cloud.mirror
``Mirror.follow``), never to what the payload says. So an event lost,
repeated or out of order cannot make the ledger count twice or too
little for longer than until the next one there or the next periodic
pass, which repairs what no event told (and says so).

- an instance created, deleted, resized, migrated, evacuated, shelved
  or unshelved: its host's providers, where Placement allocates to it
  now, where the mirror last saw it and, for a move, the source and
  destination of its last migration (from Nova); then ``on_instance``
  with where Placement has it now (the registry of instances in
  reservations, reservations.registry);
- a compute service changed (enabled, disabled, forced down, created,
  deleted): its host's providers, and ``on_service`` (the plugins' healing
  pass) at once. A service that stops reporting without being forced
  down sends nothing: healing's own pass finds it.
"""

import re
import threading

from oslo_log import log as logging
import oslo_messaging as messaging

from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import providers as db_providers

LOG = logging.getLogger(__name__)
CONF = conf.CONF

INSTANCE_EVENTS = frozenset((
    'instance.create.end', 'instance.delete.end',
    'instance.soft_delete.end', 'instance.restore.end',
    'instance.shelve_offload.end', 'instance.unshelve.end',
))
# Events after which an instance may be on two hosts' or on another's.
MOVE_EVENTS = frozenset((
    'instance.resize_finish.end', 'instance.resize_confirm.end',
    'instance.resize_revert.end', 'instance.live_migration_post.end',
    'instance.live_migration_rollback.end', 'instance.rebuild.end',
    'instance.evacuate',
))
SERVICE_EVENTS = frozenset(('service.update', 'service.create',
                            'service.delete'))
EVENTS = INSTANCE_EVENTS | MOVE_EVENTS | SERVICE_EVENTS


def _data(payload):
    """The fields of a versioned payload (a nova_object primitive)."""
    return (payload or {}).get('nova_object.data', payload or {})


class NovaEvents(object):
    """The listener's endpoint: each event becomes a Mirror.follow.

    :param mirror: a callable answering the process's cloud.mirror.Mirror
    :param nova: a callable answering python-novaclient (admin)
    ``on_service``: what to call after a compute service changed (each
    plugin's healing pass); ``on_instance``: what to call with (context,
    instance uuid, {provider: {class: n}} Placement allocates it now)
    after an instance event.
    """

    filter_rule = messaging.NotificationFilter(
        event_type='^(%s)$' % '|'.join(re.escape(e) for e in sorted(EVENTS)))

    def __init__(self, mirror, nova):
        self._mirror = mirror
        self._nova = nova
        self.on_service = []
        self.on_instance = []

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        try:
            self.handle(event_type, payload)
        except Exception as e:
            # The periodic pass repairs what this event would have.
            LOG.warning('Nova event %s not followed: %s', event_type, e)

    def handle(self, event_type, payload):
        """Follow one event; the mirror's PassReport, or None."""
        data = _data(payload)
        context = context_mod.get_admin_context()
        if event_type in SERVICE_EVENTS:
            if data.get('binary') != 'nova-compute':
                return None
            report = self._mirror().follow(
                context, self._host_providers(context, data.get('host')))
            LOG.info('Nova event %s: the compute service of %s is %s%s; '
                     'healing now', event_type, data.get('host'),
                     'disabled' if data.get('disabled') else 'enabled',
                     ', forced down' if data.get('forced_down') else '')
            for call in self.on_service:
                try:
                    call()
                except Exception:
                    LOG.exception('After Nova event %s: %s failed',
                                  event_type, call)
            return report
        uuid = data.get('uuid')
        roots = set()
        if data.get('node'):
            roots.add(db_providers.provider_uuid_named(context,
                                                       data['node']))
        if event_type in MOVE_EVENTS:
            roots |= self._migration_providers(context, uuid)
        roots.discard(None)
        report = self._mirror().follow(context, roots, [uuid] if uuid
                                       else [])
        for call in self.on_instance if uuid else ():
            call(context, uuid, report.consumers.get(uuid, {}))
        LOG.debug('Nova event %s of %s: usage read again on %d '
                  'provider(s), written on %d, %d request(s), %.3f s',
                  event_type, uuid, len(report.read),
                  len(report.usage_written), report.requests,
                  report.seconds)
        return report

    def _migration_providers(self, context, instance_uuid):
        """The root providers of the last migration of an instance."""
        found = self._nova().migrations.list(instance_uuid=instance_uuid)
        if not found:
            return set()
        last = max(found, key=lambda m: (m.created_at, m.id))
        return {db_providers.provider_uuid_named(context, node)
                for node in (last.source_node, last.dest_node) if node}

    def _host_providers(self, context, host):
        """The root providers of a compute service's host."""
        if not host:
            return set()
        nodes = {h.hypervisor_hostname
                 for h in self._nova().hypervisors.list(detailed=True)
                 if getattr(h, 'service', {}).get('host') == host}
        found = {db_providers.provider_uuid_named(context, node)
                 for node in nodes | {host}}
        found.discard(None)
        return found


def listener(endpoint, transport=None):
    """A notification listener of ``endpoint`` on Nova's topic, not

    started; None when ``[pcloud] nova_notifications`` is off.
    """
    if not CONF.pcloud.nova_notifications:
        return None
    transport = transport or messaging.get_notification_transport(CONF)
    return messaging.get_notification_listener(
        transport,
        [messaging.Target(topic=CONF.pcloud.nova_notifications_topic,
                          exchange=CONF.pcloud.nova_notifications_exchange)],
        [endpoint], executor='threading',
        pool=CONF.pcloud.nova_notifications_pool)


_ENDPOINT = None
_LISTENER = None
_GUARD = threading.Lock()


def listen(mirror, nova, on_service, on_instance):
    """Follow Nova's events in this process: the first call starts the

    listener (one for both plugins), each adds its ``on_service`` and
    ``on_instance`` (see NovaEvents).
    """
    global _ENDPOINT, _LISTENER
    with _GUARD:
        if _ENDPOINT is None:
            _ENDPOINT = NovaEvents(mirror, nova)
            _LISTENER = listener(_ENDPOINT)
            if _LISTENER is not None:
                # In a thread: with the bus down, start() waits for it,
                # and the caller (the first periodic poll) must not.
                threading.Thread(target=_start, args=(_LISTENER,),
                                 name='pcloud-nova-events',
                                 daemon=True).start()
        for calls, call in ((_ENDPOINT.on_service, on_service),
                            (_ENDPOINT.on_instance, on_instance)):
            if call not in calls:
                calls.append(call)
        return _ENDPOINT


def _start(started):
    try:
        started.start()
    except Exception:
        LOG.exception('Cannot follow Nova\'s notifications: the mirror\'s '
                      'passes alone keep the ledger current')
        return
    LOG.info('Following Nova\'s notifications on topic %s, pool %s',
             CONF.pcloud.nova_notifications_topic,
             CONF.pcloud.nova_notifications_pool)


def stop():
    """Stop following (tests, and a manager that stops)."""
    global _ENDPOINT, _LISTENER
    with _GUARD:
        if _LISTENER is not None:
            _LISTENER.stop()
            _LISTENER.wait()
        _ENDPOINT = _LISTENER = None
