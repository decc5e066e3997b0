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

"""Blazar's API refuses to give its physical:host plugin a host of ours

(blazar.api.host_guard): Blazar's own app, our extension loaded.
"""

import datetime

from oslo_utils import timeutils

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin.tests.functional.blazar import pcloud_api_base as base


class HostGuardTests(base.PcloudAPITestCase):

    def register(self, name):
        return self.call('admin', 'POST', '/os-hosts', {'name': name})

    def test_a_pool_host_is_refused(self):
        self.make_pool()
        resp = self.register('cn1')
        self.assertEqual(409, resp.status_code, resp.text)
        self.assertEqual('HostHeldByPcloud', resp.json()['error_name'])
        self.assertIn('pcloud or host flavor pool',
                      resp.json()['error_message'])

    def test_a_host_our_reservations_hold_is_refused_saying_until_when(self):
        ctx = context_mod.get_admin_context()
        db_providers.create_provider(ctx, 'rp-spare', 'cn4.example.com')
        db_providers.set_inventories(ctx, 'rp-spare', {'VCPU': Inventory(8)})
        end = (timeutils.utcnow() + datetime.timedelta(days=2)).replace(
            microsecond=0)
        db_claims.claim(ctx, 'a-reservation', {'rp-spare': {'VCPU': 2}},
                        end - datetime.timedelta(days=1), end)
        resp = self.register('cn4.example.com')
        self.assertEqual(409, resp.status_code, resp.text)
        self.assertIn('until %s' % end.isoformat(),
                      resp.json()['error_message'])
        # Instances running outside reservations are no holder of ours.
        db_claims.release(ctx, 'a-reservation')
        db_claims.record_usage(ctx, 'placement:rp-spare',
                               {'rp-spare': {'VCPU': 1}})
        self.assertNotEqual(409, self.register('cn4.example.com').status_code)

    def test_who_may_not_add_hosts_learns_nothing_of_ours(self):
        """Blazar's policy answers first: a member or reader probing our

        hosts gets Blazar's answer (403; 404 here, where its physical:host
        plugin is off), never what holds a host or until when.
        """
        self.make_pool()
        for token in ('alice-member', 'alice-reader'):
            for name in ('cn1', 'cn4.example.com'):
                resp = self.call(token, 'POST', '/os-hosts', {'name': name})
                self.assertIn(resp.status_code, (403, 404), resp.text)
                self.assertNotIn('pcloud', resp.text)
        self.assertEqual(409, self.register('cn1').status_code)

    def test_other_hosts_go_on_to_blazar(self):
        resp = self.register('cn4.example.com')
        self.assertNotEqual(409, resp.status_code, resp.text)


class EmptyHandoverTests(base.PcloudAPITestCase):
    """A pcloud is handed only hosts that run no instance: instances

    outlive the leases they were booted in (seeds/001).
    """

    def test_a_host_an_ended_lease_left_instances_on_is_not_allocated(self):
        self.make_pool()
        for host in base.POOL_HOSTS[1:]:
            self.nova.nodes[host]['servers'] = ['left-behind']
        pcloud_id = self.make_pcloud()
        self.allocate(pcloud_id, 'h1')
        (agg,) = [a for a in self.nova.aggregates.list()
                  if a.metadata.get('pcloud:id') == pcloud_id]
        self.assertEqual([base.POOL_HOSTS[0]], list(agg.hosts))
        error = self.call('alice-member', 'POST',
                          '/pclouds/%s/hosts' % pcloud_id,
                          {'name': 'h2', 'flavor_id': 'big'},
                          expect=409).json()
        self.assertEqual('NoFreeHost', error['error_name'])
        self.assertIn('runs 1 instance(s) an ended lease left',
                      error['error_message'])
