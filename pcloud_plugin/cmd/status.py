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
"""pcloud-status upgrade check: is the ledger schema current, can the

ledger reach Placement and is its mirror of Placement current, and do
Blazar's physical:host plugin and ours hold no host in common?
"""

import datetime
import sys

from keystoneauth1 import exceptions as ks_exc
from oslo_upgradecheck import upgradecheck
from oslo_utils import timeutils

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cmd import configured
from pcloud_plugin import conf
from pcloud_plugin import context
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import migration
from pcloud_plugin.db import placement_sync
from pcloud_plugin.pcloud import partition

CONF = conf.CONF
# A mirror that missed this many passes in a row has stopped: one late
# pass is a busy manager or a slow Placement, not yet a stale ledger.
STALE_AFTER_PASSES = 3
# Cheap, yet authenticated and allowed only to who may list providers,
# as the mirror does: no provider has the nil uuid.
_PROBE = '/resource_providers?uuid=00000000-0000-0000-0000-000000000000'


class Checks(upgradecheck.UpgradeCommands):

    def _check_schema(self):
        try:
            configured.database()
            current = migration.current_revision()
        except configured.Missing as e:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(e))
        except Exception as e:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Cannot read the ledger schema version: %s' % e)
        head = migration.head_revision()
        if current != head:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Ledger schema is at %s, code expects %s: run '
                '"pcloud-manage db sync".' % (current, head))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_placement(self):
        """Placement answers [pcloud_placement]'s user a provider listing."""
        group = '[pcloud_placement]'
        try:
            adapter = configured.placement_adapter()
        except configured.Missing as e:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(e))
        endpoint = 'the catalog\'s placement endpoint'
        try:
            endpoint = adapter.get_endpoint() or endpoint
            response = adapter.get(_PROBE,
                                   microversion=placement_client.MICROVERSION,
                                   raise_exc=False)
        except ks_exc.ClientException as e:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Cannot reach Placement (%s) with %s: %s'
                % (endpoint, group, e))
        if response.status_code != 200:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Placement at %s answered %s to %s\'s user listing '
                'resource providers (it needs the admin role): %s'
                % (endpoint, response.status_code, group,
                   response.text[:200]))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_freshness(self):
        """The ledger's mirror of Placement ran in the last few passes."""
        interval = CONF.pcloud.placement_mirror_interval
        if not interval:
            return upgradecheck.Result(
                upgradecheck.Code.SUCCESS,
                'Not checked: the Placement mirror is off ([pcloud] '
                'placement_mirror_interval = 0); only admissions\' '
                'freshness checks and "pcloud-manage placement sync" '
                'update the ledger.')
        try:
            configured.database()
            finished_at = placement_sync.last_pass(
                context.get_admin_context())
        except configured.Missing as e:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(e))
        except Exception as e:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Cannot read when the ledger last mirrored Placement: %s'
                % e)
        if finished_at is None:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'The ledger has never mirrored Placement: blazar-manager, '
                'with a pcloud-plugin plugin enabled, does every [pcloud] '
                'placement_mirror_interval (%d s).' % interval)
        age = timeutils.utcnow() - finished_at
        if age > datetime.timedelta(seconds=STALE_AFTER_PASSES * interval):
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'The ledger last mirrored Placement %d s ago (%s UTC), '
                'more than %d passes of [pcloud] '
                'placement_mirror_interval (%d s): is blazar-manager '
                'running, and reaching Placement? Its log says why.'
                % (age.total_seconds(),
                   finished_at.strftime('%Y-%m-%d %H:%M:%S'),
                   STALE_AFTER_PASSES, interval))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_partition(self):
        """pcloud.partition: no host is both Blazar's and ours."""
        try:
            aggregates = nova_client.get_client().aggregates.list()
        except Exception as e:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'Cannot list Nova\'s aggregates with [pcloud_nova] to '
                'check that Blazar\'s physical:host plugin and '
                'pcloud-plugin hold no host in common: %s' % e)
        freepool = CONF.pcloud.blazar_freepool_name
        both = partition.overlap(aggregates, freepool)
        held = []
        ctx = context.get_admin_context()
        for name in sorted(partition.blazar_hosts(aggregates, freepool)):
            until = host_db.held_until(ctx, name,
                                       not_holders=db_claims.USAGE_PREFIX)
            if name not in both and until is not None:
                held.append('%s (claimed in the ledger until %s)'
                            % (name, until.isoformat()))
        if both or held:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Hosts held both by Blazar\'s physical:host plugin (its '
                'freepool %s or a blazar:owner aggregate) and by '
                'pcloud-plugin: %s. Remove each from one of them.'
                % (freepool, ', '.join(both + held)))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    _upgrade_checks = (('Ledger schema', _check_schema),
                       ('Placement reachable', _check_placement),
                       ('Ledger mirror of Placement current',
                        _check_freshness),
                       ('Hosts of Blazar and of pcloud-plugin apart',
                        _check_partition))


def main():
    return upgradecheck.main(CONF, project='pcloud',
                             upgrade_command=Checks())


if __name__ == '__main__':
    sys.exit(main())
