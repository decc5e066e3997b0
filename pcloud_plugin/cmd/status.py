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
"""pcloud-status upgrade check: is the ledger schema current, and do

Blazar's physical:host plugin and ours hold no host in common?
"""

import sys

from oslo_upgradecheck import upgradecheck

from pcloud_plugin.clients import nova as nova_client
from pcloud_plugin import conf
from pcloud_plugin import context
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import host_reservations as host_db
from pcloud_plugin.db import migration
from pcloud_plugin.pcloud import partition


class Checks(upgradecheck.UpgradeCommands):

    def _check_schema(self):
        try:
            current = migration.current_revision()
        except Exception as e:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Cannot read the ledger schema version: %s' % e)
        head = migration.head_revision()
        if current != head:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'Ledger schema is at %s, code expects %s: run '
                '"pcloud-manage db upgrade".' % (current, head))
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
        freepool = conf.CONF.pcloud.blazar_freepool_name
        both = partition.overlap(aggregates, freepool)
        held = []
        ctx = context.get_admin_context()
        for name in sorted(partition.blazar_hosts(aggregates, freepool)):
            until = host_db.held_until(ctx, name,
                                       not_holders=db_api.USAGE_PREFIX)
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
                       ('Hosts of Blazar and of pcloud-plugin apart',
                        _check_partition))


def main():
    return upgradecheck.main(conf.CONF, project='pcloud',
                             upgrade_command=Checks())


if __name__ == '__main__':
    sys.exit(main())
