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
"""Project > Availability: how many whole hosts of a host flavor are

free each hour over the next weeks, from the ledger, counted only (no
host, no project). A click on an hour fills the booking form below it,
which books from there in one step.
"""

import datetime
from urllib import parse

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import messages
from horizon import views

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
        client = api.client(self.request)
        try:
            flavors = client.list_host_flavors()
            pclouds = [p for p in client.list_pclouds(
                self.request.user.project_id) if p['own']]
        except api.FAILURES as e:
            messages.error(self.request, api.reason(e))
            flavors, pclouds = [], []
        flavor = query.get('host_flavor') or (
            flavors[0]['id'] if flavors else None)
        hours = query.get('hours') or str(DEFAULT_HOURS)
        context.update(host_flavors=flavors, pclouds=pclouds, flavor=flavor,
                       hours=hours, spans=SPANS)
        if not flavor:
            return context
        try:
            shown = client.show_host_availability(
                {'host_flavor': flavor, 'hours': hours})
        except api.FAILURES as e:
            messages.error(self.request, api.reason(e))
            return context
        first = _parse(shown['start'])
        link = '%s?%s&start={start}#book' % (
            reverse(INDEX), parse.urlencode({'host_flavor': flavor,
                                             'hours': hours}))
        context['timeline'] = timeline.availability_svg(
            first, shown['free'], shown['hosts'], booking_url=link)
        context['hosts'] = shown['hosts']
        # The window to book: the hour clicked, or the first with a host
        # free.
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
