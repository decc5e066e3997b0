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
"""Project > Reservations: the project's leases of whole hosts and of

instance slots, their terms and their state as seeds/001 names it
(IN-PROGRESS and TIMEDOUT, which Blazar shows as ACTIVE, and INACTIVE),
beside Blazar's own status; create, extend, grow or shrink, delete.
"""

import datetime

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import messages
from horizon import views
from oslo_utils import timeutils

from pcloud_plugin.dashboard import actions
from pcloud_plugin.dashboard import api

INDEX = 'horizon:project:pcloud_reservations:index'
KINDS = ('hosts', 'slots')
LEASE_TYPES = ('SCHEDULE', 'IMMEDIATE', 'BEST-EFFORT')


def _index(request, **kwargs):
    return reverse(INDEX)


def _date(value):
    """A form's date ('YYYY-MM-DDTHH:MM' of a datetime-local input) as

    Blazar's lease API takes it; blank is now.
    """
    value = (value or '').strip().replace('T', ' ')
    return value or 'now'


def _start(value):
    """A start: one already past (the hour picked a minute ago) is now,

    not a lease Blazar refuses for starting in the past.
    """
    value = _date(value)
    try:
        moment = datetime.datetime.strptime(value[:16], '%Y-%m-%d %H:%M')
    except ValueError:
        return value  # 'now', or what the API will name as wrong
    return 'now' if moment <= timeutils.utcnow() else value


class IndexView(views.HorizonTemplateView):
    template_name = 'pcloud/reservations/index.html'
    page_title = _('Reservations')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        client = api.client(self.request)
        try:
            leases = client.list_lease_states(self.request.user.project_id)
            statuses = {lease['id']: lease for lease in client.list_leases()}
            context['pclouds'] = [
                p for p in client.list_pclouds(self.request.user.project_id)
                if p['own']]
            context['host_flavors'] = client.list_host_flavors()
        except api.FAILURES as e:
            leases, statuses = [], {}
            messages.error(self.request, api.reason(e))
        for lease in leases:
            blazars = statuses.get(lease['id'], {})
            lease['name'] = blazars.get('name', '')
            lease['status'] = blazars.get('status', '')
        context['leases'] = leases
        context['lease_types'] = LEASE_TYPES
        return context


class Create(actions.Action):
    """Whole hosts of a host flavor into a pcloud, or N instance slots;

    with a duration, at the earliest window that long that fits.
    """

    def act(self, request, client):
        form = request.POST
        if form.get('kind') == 'slots':
            reservation = {
                'resource_type': 'virtual:instance',
                'amount': form.get('amount', ''),
                'vcpus': form.get('vcpus', ''),
                'memory_mb': form.get('memory_mb', ''),
                'disk_gb': form.get('disk_gb', ''),
                'resource_properties': '',
            }
            if form.get('affinity'):
                reservation['affinity'] = form['affinity']
        else:
            reservation = {
                'resource_type': 'pcloud:host',
                'amount': form.get('amount', ''),
                'host_flavor': form.get('host_flavor', ''),
                'pcloud_id': form.get('pcloud_id', ''),
                'lease_type': form.get('lease_type') or 'SCHEDULE',
            }
        reservation['amount'] = _number(reservation['amount'], 'amount')
        for field in ('vcpus', 'memory_mb', 'disk_gb'):
            if field in reservation:
                reservation[field] = _number(reservation[field], field)
        duration = form.get('duration', '').strip()
        if duration:
            # Flexible: the earliest window this long between the two.
            lease = client.create_flexible_lease(
                form.get('name', ''), _number(duration, 'duration'),
                _start(form.get('start')),
                _date(form['end']) if form.get('end', '').strip() else None,
                [reservation])
            return _('Created lease %(name)s from %(start)s to %(end)s.') % {
                'name': lease['name'], 'start': lease['start_date'],
                'end': lease['end_date']}
        lease = client.create_lease(
            form.get('name', ''), _start(form.get('start')),
            _date(form.get('end')), [reservation])
        return _('Created lease %s.') % lease['name']

    back = staticmethod(_index)


class Update(actions.Action):
    """A new end (extend or shorten) and, for each reservation, a new

    amount (grow or shrink).
    """

    def act(self, request, client, lease_id):
        form = request.POST
        body = {}
        if form.get('end', '').strip():
            body['end_date'] = _date(form['end'])
        changes = [{'id': key[len('amount-'):],
                    'amount': _number(value, 'amount')}
                   for key, value in form.items()
                   if key.startswith('amount-') and value.strip()]
        if changes:
            body['reservations'] = changes
        client.update_lease(lease_id, body)
        return _('Updated the lease.')

    back = staticmethod(_index)


class Delete(actions.Action):
    def act(self, request, client, lease_id):
        client.delete_lease(lease_id)
        return _('Deleted the lease.')

    back = staticmethod(_index)


def _number(value, field):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise api.Error(400, _('%(field)s: a whole number, got %(value)r')
                        % {'field': field, 'value': value})
