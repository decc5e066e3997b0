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
"""Project > Pclouds: the project's pclouds and those it may use, each

with its hosts by the names the project gave them (never a compute
host's own name), projects and allocation ratios.
"""

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import messages
from horizon import views

from pcloud_plugin.dashboard import actions
from pcloud_plugin.dashboard import api

INDEX = 'horizon:project:pclouds:index'
DETAIL = 'horizon:project:pclouds:detail'
HOST_STATES = ('enabled', 'disabled')


def _detail(request, pcloud_id, **kwargs):
    return reverse(DETAIL, args=(pcloud_id,))


def _index(request, **kwargs):
    return reverse(INDEX)


class IndexView(views.HorizonTemplateView):
    template_name = 'pcloud/pclouds/index.html'
    page_title = _('Pclouds')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        try:
            context['pclouds'] = api.client(self.request).list_pclouds(
                self.request.user.project_id)
        except api.FAILURES as e:
            context['pclouds'] = []
            messages.error(self.request, api.reason(e))
        return context


class DetailView(views.HorizonTemplateView):
    template_name = 'pcloud/pclouds/detail.html'
    page_title = _('Pcloud {{ pcloud.name }}')

    def get_context_data(self, pcloud_id, **kwargs):
        context = super().get_context_data(**kwargs)
        client = api.client(self.request)
        try:
            context['pcloud'] = client.show_pcloud(pcloud_id)
            context['hosts'] = client.list_hosts(pcloud_id)
            context['host_flavors'] = client.list_host_flavors()
        except api.FAILURES as e:
            messages.error(self.request, api.reason(e))
            raise exceptions.Http302(reverse(INDEX))
        context['host_states'] = HOST_STATES
        return context


class Create(actions.Action):
    def act(self, request, client):
        pcloud = client.create_pcloud(request.POST.get('name', ''))
        return _('Created pcloud %s.') % pcloud['name']

    back = staticmethod(_index)


class Delete(actions.Action):
    def act(self, request, client, pcloud_id):
        client.delete_pcloud(pcloud_id)
        return _('Deleted the pcloud.')

    back = staticmethod(_index)


class TakeHost(actions.Action):
    def act(self, request, client, pcloud_id):
        host = client.allocate_host(
            pcloud_id, request.POST.get('name', ''),
            request.POST.get('flavor_id', ''),
            request.POST.get('availability_zone') or None)
        return _('Took host %s into the pcloud.') % host['name']

    back = staticmethod(_detail)


class SetHostState(actions.Action):
    def act(self, request, client, pcloud_id, name):
        state = request.POST.get('state', '')
        client.set_host_state(pcloud_id, name, state)
        return _('Host %(name)s is %(state)s.') % {'name': name,
                                                   'state': state}

    back = staticmethod(_detail)


class GiveBackHost(actions.Action):
    def act(self, request, client, pcloud_id, name):
        client.release_host(pcloud_id, name)
        return _('Gave host %s back.') % name

    back = staticmethod(_detail)


class AddProject(actions.Action):
    def act(self, request, client, pcloud_id):
        # A name too: the API looks it up (a member may not).
        project = request.POST.get('project_id', '').strip()
        client.add_tenant(pcloud_id, project)
        return _('Project %s may use the pcloud.') % project

    back = staticmethod(_detail)


class RemoveProject(actions.Action):
    def act(self, request, client, pcloud_id, project_id):
        client.remove_tenant(pcloud_id, project_id)
        return _('Project %s may no longer use the pcloud.') % project_id

    back = staticmethod(_detail)


class SetRatios(actions.Action):
    """Blank means the hosts' own ratio (unset)."""

    def act(self, request, client, pcloud_id):
        values, unset = {}, []
        for name in ('cpu', 'ram'):
            given = request.POST.get(name, '').strip()
            if not given:
                unset.append(name)
                continue
            try:
                values[name] = float(given)
            except ValueError:
                raise api.Error(400, _('%s ratio: a number, got %r')
                                % (name.upper(), given))
        client.set_allocation_ratios(pcloud_id, unset=unset, **values)
        return _('Allocation ratios set.')

    back = staticmethod(_detail)
