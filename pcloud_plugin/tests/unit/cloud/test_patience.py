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

"""Which failures of Nova and Placement a lease start waits out."""

from keystoneauth1 import exceptions as ks_exc
from novaclient import exceptions as nova_exc

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cloud import patience
from pcloud_plugin import exception
from pcloud_plugin.tests import base


def _placement(status):
    return placement_client.PlacementFailure(
        status=status, method='PUT', url='/x', body='')


class PassingTest(base.TestCase):

    def test_out_of_reach_or_a_server_error_may_pass(self):
        for error in (
                ks_exc.ConnectFailure('refused'),
                nova_exc.ClientException(500, 'Unexpected API Error'),
                nova_exc.ClientException(503, 'restarting'),
                _placement(500), _placement(502),
                ks_exc.http.InternalServerError(),
                exception.NovaError(action='create a flavor',
                                    reason=nova_exc.ClientException(500))):
            self.assertTrue(patience.passing(error), repr(error))

    def test_a_refusal_or_our_own_error_does_not(self):
        for error in (
                nova_exc.Forbidden(403), nova_exc.Conflict(409),
                nova_exc.BadRequest(400), _placement(409), _placement(400),
                exception.NovaError(action='create a flavor',
                                    reason=nova_exc.Forbidden(403)),
                exception.PcloudNotFound(pcloud_id='x'),
                ValueError('a bug')):
            self.assertFalse(patience.passing(error), repr(error))
