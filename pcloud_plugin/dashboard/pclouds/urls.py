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
from django.urls import re_path

from pcloud_plugin.dashboard.pclouds import views

PCLOUD = r'^(?P<pcloud_id>[^/]+)/'
HOST = PCLOUD + r'hosts/(?P<name>[^/]+)/'
urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^create/$', views.Create.as_view(), name='create'),
    re_path(PCLOUD + r'$', views.DetailView.as_view(), name='detail'),
    re_path(PCLOUD + r'delete/$', views.Delete.as_view(), name='delete'),
    re_path(PCLOUD + r'hosts/$', views.TakeHost.as_view(), name='take_host'),
    re_path(HOST + r'state/$', views.SetHostState.as_view(),
            name='host_state'),
    re_path(HOST + r'release/$', views.GiveBackHost.as_view(),
            name='give_back'),
    re_path(PCLOUD + r'projects/$', views.AddProject.as_view(),
            name='add_project'),
    re_path(PCLOUD + r'projects/(?P<project_id>[^/]+)/remove/$',
            views.RemoveProject.as_view(), name='remove_project'),
    re_path(PCLOUD + r'ratios/$', views.SetRatios.as_view(), name='ratios'),
]
