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
"""Project > Availability: how many whole hosts of a host flavor, or

instance slots of a flavor's size, are free each hour over the next
weeks, from the ledger, counted only (no host, no project). A click on
an hour fills the booking form below it, which books from there in one
step.
"""

import datetime
from urllib import parse

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import messages
from horizon import views
from openstack_dashboard.api import nova

from pcloud_plugin.dashboard import api
from pcloud_plugin.dashboard import timeline

INDEX = 'horizon:project:pcloud_availability:index'
SPANS = ((24, _('1 day')), (168, _('1 week')), (336, _('2 weeks')),
         (672, _('4 weeks')))
DEFAULT_HOURS = 336
MINUTES = '%Y-%m-%dT%H:%M'


def _parse(value):
    return datetime.datetime.strptime(value[:16], MINUTES)


class IndexView(views.HorizonTemplateView):
    template_name = 'pcloud/availability/index.html'
    page_title = _('Availability')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        query = self.request.GET
        kind = 'slots' if query.get('kind') == 'slots' else 'hosts'
        hours = query.get('hours') or str(DEFAULT_HOURS)
        context.update(kind=kind, hours=hours, spans=SPANS)
        client = api.client(self.request)
        try:
            if kind == 'hosts':
                shown = self._hosts(client, query, context)
            else:
                shown = self._slots(client, query, context)
        except api.FAILURES as e:
            messages.error(self.request, api.reason(e))
            return context
        if shown is None:
            return context
        first = _parse(shown['start'])
        link = '%s?%s&start={start}#book' % (reverse(INDEX), parse.urlencode(
            {'kind': kind, 'flavor': context['flavor'], 'hours': hours}))
        if kind == 'hosts':
            context['timeline'] = timeline.availability_svg(
                first, shown['free'], shown['hosts'], booking_url=link)
        else:
            context['timeline'] = timeline.availability_svg(
                first, shown['free'], max(shown['free'], default=0) or 1,
                booking_url=link, unit=('slot', 'slots'), out_of=False)
        # The window to book: the hour clicked, or the first with room.
        start = query.get('start')
        if not start:
            free = [i for i, n in enumerate(shown['free']) if n]
            start = ((first + datetime.timedelta(hours=free[0])).strftime(
                MINUTES) if free else None)
        if start:
            context['start'] = start
            context['end'] = (_parse(start) + datetime.timedelta(
                hours=1)).strftime(MINUTES)
        return context

    def _hosts(self, client, query, context):
        """Whole hosts of the host flavor asked (or the first)."""
        flavors = client.list_host_flavors()
        context['host_flavors'] = flavors
        context['pclouds'] = [p for p in client.list_pclouds(
            self.request.user.project_id) if p['own']]
        ids = [f['id'] for f in flavors]
        # One of the other kind's (the kind changed) is the first.
        flavor = context['flavor'] = (
            query['flavor'] if query.get('flavor') in ids else
            (ids[0] if ids else None))
        if not flavor:
            return None
        shown = client.show_host_availability(
            {'host_flavor': flavor, 'hours': context['hours']})
        context['hosts'] = shown['hosts']
        return shown

    def _slots(self, client, query, context):
        """Slots of the size of the Nova flavor asked (or the first)."""
        try:
            flavors = nova.flavor_list(self.request)
        except Exception:
            exceptions.handle(self.request, _('Unable to list flavors.'))
            flavors = []
        flavors = sorted(flavors,
                         key=lambda f: (f.vcpus, f.ram, f.disk, f.name))
        context['flavors'] = flavors
        wanted = query.get('flavor')
        chosen = [f for f in flavors if f.id == wanted] or flavors[:1]
        if not chosen:
            context['flavor'] = None
            return None
        size = context['size'] = chosen[0]
        context['flavor'] = size.id
        return client.show_instance_availability({
            'vcpus': size.vcpus, 'memory_mb': size.ram, 'disk_gb': size.disk,
            'hours': context['hours']})
