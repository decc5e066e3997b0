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
"""The Pcloud API for a Horizon request, as its signed-in user."""

from django.conf import settings
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack_dashboard.api import base

from pcloud_plugin.osc import client as pcloud_client

Error = pcloud_client.PcloudError
# What a call may fail with: the API's refusal, or no answer at all.
FAILURES = (Error, ks_exceptions.ClientException)


def client(request):
    """A Pcloud API client with the user's token, on the catalog's

    reservation endpoint.
    """
    endpoint = base.url_for(request, pcloud_client.SERVICE_TYPE)
    session = ks_session.Session(
        auth=token_endpoint.Token(endpoint, request.user.token.id),
        verify=not getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False))
    return pcloud_client.Client(session, endpoint=endpoint)


def reason(error):
    """What to tell the user of a refusal."""
    return getattr(error, 'message', None) or str(error)
