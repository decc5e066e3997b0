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
"""The Horizon plugin inside the Horizon of each release we test (the

unit tests run on each): its enabled files load as Horizon's settings
load them, every panel's URLs resolve, its templates compile, and each
view asks the Pcloud API what it should and shows or posts what it got
(the API itself is a recording stand-in here; the browser tests drive
the real one).
"""

import datetime
import os
import sys
import tempfile
from unittest import mock

import django
from django.template import loader
from django.test import client as django_client
from django import urls
import fixtures

from pcloud_plugin.tests import base

NOW = '2031-01-01T10:00:00.000000'
PCLOUD = {'id': 'p1', 'name': 'web', 'own': True, 'owner': 'demo-id',
          'hosts': ['rack-a'], 'tenants': ['demo-id'],
          'cpu_allocation_ratio': None, 'ram_allocation_ratio': 2.0}
FLAVORS = [{'id': 'c16', 'units': 2, 'description': '', 'free_hosts': 1}]
TEMPLATES = ('pclouds/index.html', 'pclouds/detail.html',
             'reservations/index.html', 'availability/index.html',
             'host_timeline/index.html')


def _horizon():
    """Horizon's settings, as the sandbox sets them up (a local_settings

    of its own, in a temporary directory), once per process.
    """
    if os.environ.get('DJANGO_SETTINGS_MODULE'):
        return
    from pcloud_plugin.sandbox import dashboard_proc
    state = tempfile.mkdtemp(prefix='pcloud-dashboard-')
    spec = {'state_dir': state, 'ports': {'keystone': 5000}}
    sys.path.insert(0, dashboard_proc._write_local_settings(spec))
    os.environ['DJANGO_SETTINGS_MODULE'] = dashboard_proc.SETTINGS
    django.setup()


class Client(object):
    """A recording Pcloud API: canned answers, and the calls made."""

    def __init__(self, **answers):
        self.calls = []
        self.answers = answers

    def __getattr__(self, name):
        answers = {
            'list_pclouds': [PCLOUD],
            'show_pcloud': PCLOUD,
            'list_hosts': [{'name': 'rack-a', 'state': 'enabled',
                            'flavor_id': 'c16', 'instances': []}],
            'list_host_flavors': FLAVORS,
            'list_pool_hosts': [{'host': 'compute4', 'pcloud_id': None}],
            'list_lease_states': [{
                'id': 'l1', 'state': 'IN-PROGRESS', 'start_date': NOW,
                'end_date': NOW, 'reservations': [{
                    'id': 'r1', 'resource_type': 'pcloud:host',
                    'amount': 1, 'host_flavor': 'c16', 'state': 'IN-PROGRESS',
                    'lease_type': 'BEST-EFFORT'}]}],
            'list_leases': [{'id': 'l1', 'name': 'mine',
                             'status': 'ACTIVE'}],
            'show_host_availability': {
                'host_flavor': 'c16', 'start': NOW, 'step_minutes': 60,
                'hosts': 2, 'free': [0, 0, 1, 2]},
            'create_pcloud': PCLOUD,
            'allocate_host': {'name': 'rack-b'},
            'create_lease': {'name': 'mine'},
            'create_flexible_lease': {'name': 'mine', 'start_date': NOW,
                                      'end_date': NOW},
        }

        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self.answers.get(name, answers.get(name))
        return call


class PluginTest(base.TestCase):

    def setUp(self):
        super().setUp()
        _horizon()
        self.api = Client()
        self.useFixture(_patch('pcloud_plugin.dashboard.api.client',
                               lambda request: self.api))

    def _request(self, path='/', data=None, method='get'):
        # Read Django's settings as it is imported (4.2): after _horizon.
        from django.contrib.messages.storage import cookie
        factory = django_client.RequestFactory()
        request = getattr(factory, method)(path, data or {})
        request.user = mock.Mock(project_id='demo-id')
        request._messages = cookie.CookieStorage(request)
        return request

    def _context(self, view_class, query=None, **kwargs):
        view = view_class()
        view.setup(self._request(data=query), **kwargs)
        return view.get_context_data(**kwargs)

    def _post(self, view_class, data, **kwargs):
        response = view_class.as_view()(
            self._request(data=data, method='post'), **kwargs)
        self.assertEqual(302, response.status_code)
        return response['Location']

    def test_every_panel_is_enabled_and_its_urls_resolve(self):
        from django.conf import settings
        panels = {c.get('PANEL') for c in
                  settings.HORIZON_CONFIG['panel_customization']}
        self.assertLessEqual({'pclouds', 'pcloud_reservations',
                              'pcloud_availability',
                              'pcloud_host_timeline'}, panels)
        self.assertIn('pcloud_plugin.dashboard', settings.INSTALLED_APPS)
        self.assertEqual('/project/pclouds/p1/hosts/rack-a/state/',
                         urls.reverse('horizon:project:pclouds:host_state',
                                      args=('p1', 'rack-a')))
        for name in ('project:pcloud_reservations', 'project:pclouds',
                     'project:pcloud_availability',
                     'admin:pcloud_host_timeline'):
            urls.reverse('horizon:%s:index' % name)

    def test_the_templates_compile(self):
        for name in TEMPLATES:
            loader.get_template('pcloud/' + name)

    def test_pclouds(self):
        from pcloud_plugin.dashboard.pclouds import views
        self.assertEqual([PCLOUD], self._context(views.IndexView)['pclouds'])
        shown = self._context(views.DetailView, pcloud_id='p1')
        self.assertEqual('rack-a', shown['hosts'][0]['name'])
        self.assertEqual('/project/pclouds/p1/', self._post(
            views.TakeHost, {'name': 'rack-b', 'flavor_id': 'c16'},
            pcloud_id='p1'))
        self._post(views.SetRatios, {'cpu': '4', 'ram': ''}, pcloud_id='p1')
        self.assertEqual([
            ('allocate_host', ('p1', 'rack-b', 'c16', None), {}),
            ('set_allocation_ratios', ('p1',), {'unset': ['ram'],
                                                'cpu': 4.0})],
            [c for c in self.api.calls
             if c[0] in ('allocate_host', 'set_allocation_ratios')])

    def test_a_refusal_is_told_not_raised(self):
        from pcloud_plugin.dashboard import api
        from pcloud_plugin.dashboard.pclouds import views

        def refused(request):
            raise api.Error(409, 'pcloud web still holds hosts')
        self.useFixture(_patch('pcloud_plugin.dashboard.api.client',
                               refused))
        request = self._request(method='post')
        response = views.Delete.as_view()(request, pcloud_id='p1')
        self.assertEqual(302, response.status_code)
        self.assertEqual(['pcloud web still holds hosts'],
                         [str(m) for m in request._messages])
        self.assertEqual([], self._context(views.IndexView)['pclouds'])

    def test_reservations_book_hosts_or_slots(self):
        from pcloud_plugin.dashboard.reservations import views
        (lease,) = self._context(views.IndexView)['leases']
        self.assertEqual(('mine', 'ACTIVE', 'IN-PROGRESS'),
                         (lease['name'], lease['status'], lease['state']))
        self._post(views.Create, {
            'kind': 'hosts', 'name': 'h', 'amount': '2', 'host_flavor': 'c16',
            'pcloud_id': 'p1', 'start': '2000-01-01T00:00',
            'end': '2031-01-02T10:00'})
        self._post(views.Create, {
            'kind': 'slots', 'name': 's', 'amount': '3', 'vcpus': '2',
            'memory_mb': '512', 'disk_gb': '0', 'affinity': 'false',
            'start': '2031-01-01T10:00', 'end': '2031-01-02T10:00'})
        self._post(views.Create, {
            'kind': 'slots', 'name': 'f', 'amount': '1', 'vcpus': '2',
            'memory_mb': '512', 'disk_gb': '0', 'duration': '90',
            'start': '2031-01-01T10:00', 'end': ''})
        self._post(views.Update, {'end': '2031-01-03T10:00', 'amount-r1': '4',
                                  'amount-r2': ''}, lease_id='l1')
        made = [c for c in self.api.calls if c[0] in (
            'create_lease', 'create_flexible_lease', 'update_lease')]
        self.assertEqual([
            ('create_lease', ('h', 'now', '2031-01-02 10:00', [{
                'resource_type': 'pcloud:host', 'amount': 2,
                'host_flavor': 'c16', 'pcloud_id': 'p1',
                'lease_type': 'SCHEDULE'}]), {}),
            ('create_lease', ('s', '2031-01-01 10:00', '2031-01-02 10:00', [{
                'resource_type': 'virtual:instance', 'amount': 3,
                'vcpus': 2, 'memory_mb': 512, 'disk_gb': 0,
                'resource_properties': '', 'affinity': 'false'}]), {}),
            ('create_flexible_lease', ('f', 90, '2031-01-01 10:00', None, [{
                'resource_type': 'virtual:instance', 'amount': 1,
                'vcpus': 2, 'memory_mb': 512, 'disk_gb': 0,
                'resource_properties': ''}]), {}),
            ('update_lease', ('l1', {'end_date': '2031-01-03 10:00',
                                     'reservations': [{'id': 'r1',
                                                       'amount': 4}]}), {})],
            made)

    def test_availability_offers_the_first_free_hour(self):
        from pcloud_plugin.dashboard.availability import views
        shown = self._context(views.IndexView, {'flavor': 'c16'})
        self.assertEqual(('2031-01-01T12:00', '2031-01-01T13:00'),
                         (shown['start'], shown['end']))
        self.assertEqual(4, shown['timeline'].count('class="pcloud-hour"'))
        self.assertIn('start=2031-01-01T13%3A00', shown['timeline'])
        picked = self._context(views.IndexView, {
            'flavor': 'c16', 'start': '2031-01-01T13:00'})
        self.assertEqual('2031-01-01T13:00', picked['start'])
        # A flavor of the other kind (the kind changed): the first.
        self.assertEqual('c16', self._context(
            views.IndexView, {'flavor': 'm1.small'})['flavor'])

    def test_availability_of_a_flavors_slots(self):
        from pcloud_plugin.dashboard.availability import views
        small = mock.Mock(id='f1', vcpus=2, ram=1024, disk=10)
        small.name = 'm1.small'
        big = mock.Mock(id='f2', vcpus=8, ram=8192, disk=80)
        big.name = 'm1.big'
        self.useFixture(_patch(
            'openstack_dashboard.api.nova.flavor_list',
            lambda request: [big, small]))
        self.api.answers['show_instance_availability'] = {
            'start': NOW, 'step_minutes': 60, 'free': [0, 4, 8]}
        shown = self._context(views.IndexView, {'kind': 'slots'})
        # The smallest flavor unless one is asked for.
        self.assertEqual(('f1', small), (shown['flavor'], shown['size']))
        self.assertEqual(('show_instance_availability', ({
            'vcpus': 2, 'memory_mb': 1024, 'disk_gb': 10,
            'hours': '336'},), {}), self.api.calls[-1])
        self.assertEqual('2031-01-01T11:00', shown['start'])
        self.assertIn('4 slots free', shown['timeline'])
        self.assertIn('kind=slots', shown['timeline'])
        self.assertEqual('f2', self._context(
            views.IndexView, {'kind': 'slots', 'flavor': 'f2'})['flavor'])

    def test_the_host_timeline_draws_every_holder(self):
        from pcloud_plugin.dashboard.host_timeline import views
        soon = datetime.datetime.utcnow().replace(
            microsecond=0) + datetime.timedelta(hours=1)
        self.api.answers['list_allocations'] = [{
            'host': 'compute4', 'host_uuid': 'u4', 'allocations': [{
                'type': 'pcloud:host', 'id': 'r1', 'lease_id': 'l1',
                'project_id': 'demo-id', 'state': 'ACTIVE',
                'start': soon.isoformat(), 'end': None}]}]
        shown = self._context(views.IndexView, {'days': '7'})
        self.assertIn('data-host="compute4"', shown['gantt'])
        self.assertIn('data-start="%s"' % soon.strftime('%Y-%m-%dT%H:%M'),
                      shown['gantt'])
        self.assertIn('data-end="forever"', shown['gantt'])
        self.assertNotIn('data-mark', shown['gantt'])
        # Healing could not move it: marked degraded, as Blazar's lease
        # says.
        self.api.answers['list_leases'] = [{
            'id': 'l1', 'reservations': [{'id': 'r1',
                                          'missing_resources': True}]}]
        shown = self._context(views.IndexView, {'days': '7'})
        self.assertIn('data-mark="degraded"', shown['gantt'])
        self.assertEqual([(FLAVORS[0], [{'host': 'compute4',
                                         'pcloud_id': None}])],
                         shown['pools'])


def _patch(target, new):
    return fixtures.MonkeyPatch(target, new)
