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
"""Admin > Host Timeline: who holds each compute host when (pclouds for

good, whole-host leases, instance reservations, marked where healing
moved or could not move them), and the host flavors with their pools.
"""

import datetime

from django.utils.translation import gettext_lazy as _
from horizon import messages
from horizon import views
from oslo_utils import timeutils

from pcloud_plugin.dashboard import api
from pcloud_plugin.dashboard import timeline

SPANS = ((1, _('1 day')), (7, _('1 week')), (14, _('2 weeks')),
         (28, _('4 weeks')))
DEFAULT_DAYS = 14


def _marks(leases):
    """{reservation id: mark} from Blazar's leases: 'degraded' while a

    reservation misses resources on a failed host (healing could not
    move it), 'healing' once its resources were moved to other hosts.
    """
    marks = {}
    for lease in leases:
        for reservation in lease.get('reservations', ()):
            if reservation.get('missing_resources'):
                marks[reservation['id']] = 'degraded'
            elif reservation.get('resources_changed'):
                marks[reservation['id']] = 'healing'
    return marks


def _moment(value):
    """An API time (ISO 8601, naive UTC), or None for an open end."""
    return timeutils.parse_isotime(value).replace(tzinfo=None) if (
        value) else None


def _bar(held, marks):
    what = held.get('name') or held.get('lease_id') or held.get('id') or ''
    text = '%s of project %s' % (what, held.get('project_id'))
    if held.get('slots'):
        text += ', %d slot(s)' % held['slots']
    return {'start': _moment(held['start']), 'end': _moment(held['end']),
            'kind': held['type'], 'text': text,
            'mark': marks.get(held.get('id'))}


class IndexView(views.HorizonTemplateView):
    template_name = 'pcloud/host_timeline/index.html'
    page_title = _('Host Timeline')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        try:
            days = int(self.request.GET.get('days', DEFAULT_DAYS))
        except ValueError:
            days = DEFAULT_DAYS
        now = timeutils.utcnow().replace(second=0, microsecond=0)
        start = now.replace(minute=0)
        end = start + datetime.timedelta(days=days)
        client = api.client(self.request)
        try:
            held = client.list_allocations({
                'start': start.isoformat(), 'end': end.isoformat()})
            flavors = client.list_host_flavors()
            pools = [(f, client.list_pool_hosts(f['id'])) for f in flavors]
            marks = _marks(client.list_leases())
        except api.FAILURES as e:
            messages.error(self.request, api.reason(e))
            return context
        context.update(
            days=days, spans=SPANS, pools=pools,
            gantt=timeline.gantt_svg(
                start, end, [(h['host'], [_bar(a, marks)
                                          for a in h['allocations']])
                             for h in held], now=now))
        return context
