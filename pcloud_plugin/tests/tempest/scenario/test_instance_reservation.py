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

"""An instance reservation (virtual:instance, our plugin in Blazar)."""

import datetime

from tempest import config
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from pcloud_plugin.tests.tempest.scenario import base

CONF = config.CONF
# One slot, small enough for any compute host.
SLOT = {'vcpus': 1, 'memory_mb': 512, 'disk_gb': 1}
# The metadata key of a reservation's aggregate: its reservation id.
RESERVATION_KEY = 'reservation'


# Serial: the hosts in Blazar's freepool (its host scenarios) and in our
# pools (the pcloud scenario) are closed to this reservation meanwhile; on
# a cloud of one compute host it would find none.
@decorators.serial
class InstanceReservationScenarioTest(base.ScenarioTest):

    def _lease_one_slot(self):
        """The member's ACTIVE lease of one slot; its reservation."""
        end = (datetime.datetime.now(datetime.timezone.utc)
               + datetime.timedelta(hours=1)).strftime('%Y-%m-%d %H:%M')
        lease = self.pcloud.create_lease(
            data_utils.rand_name(prefix='pcloud-tempest', name='lease'),
            'now', end, [dict(SLOT, resource_type='virtual:instance',
                              amount=1, affinity=None,
                              resource_properties='')])
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.pcloud.delete_lease, lease['id'])
        lease = self.wait_for(
            'lease %s to start' % lease['id'],
            lambda: self.pcloud.show_lease(lease['id']),
            lambda found: found['status'] in ('ACTIVE', 'ERROR'),
            CONF.pcloud.lease_timeout)
        self.assertEqual('ACTIVE', lease['status'])
        (reservation,) = lease['reservations']
        return lease, reservation

    def _aggregate_hosts(self, reservation_id):
        """The hosts of the reservation's aggregate (the slots' hosts)."""
        (aggregate,) = [
            a for a in self.os_admin.aggregates_client.list_aggregates()[
                'aggregates']
            if a['metadata'].get(RESERVATION_KEY) == reservation_id]
        return aggregate['hosts']

    @staticmethod
    def _gone(read):
        try:
            read()
        except lib_exc.NotFound:
            return True
        return False

    @decorators.idempotent_id('00aafa58-0220-4669-8a47-74d6060e43d2')
    def test_reserved_flavor_boots_only_in_its_slots(self):
        lease, reservation = self._lease_one_slot()
        # Blazar's reserved flavor has the reservation's id.
        flavor = reservation['id']

        # The member's boot with the reserved flavor lands in its slot.
        server = self.boot(self.servers, flavor)
        self.assert_on(server, self._aggregate_hosts(reservation['id']))
        # The one slot is taken: a second boot finds no host.
        self.assert_no_valid_host(self.boot(self.servers, flavor))
        # Another project cannot use the flavor at all: Nova does not
        # find it for them (400 naming it).
        refusal = self.assertRaises(lib_exc.BadRequest, self.boot,
                                    self.alt_servers, flavor)
        self.assertIn(flavor, str(refusal))

        # The end removes the flavor and leaves the server running.
        self.pcloud.delete_lease(lease['id'])
        self.wait_for('lease %s to go' % lease['id'],
                      lambda: self._gone(lambda: self.pcloud.show_lease(
                          lease['id'])), bool, CONF.pcloud.lease_timeout)
        flavors = self.os_admin.flavors_client
        self.wait_for('flavor %s to go' % flavor,
                      lambda: self._gone(lambda: flavors.show_flavor(
                          flavor)), bool, CONF.pcloud.lease_timeout)
        self.assertEqual('ACTIVE', self.servers.show_server(server['id'])[
            'server']['status'])
