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
"""pcloud-status upgrade check: is the ledger schema current?"""

import sys

from oslo_upgradecheck import upgradecheck

from pcloud_plugin import conf
from pcloud_plugin.db import migration


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

    _upgrade_checks = (('Ledger schema', _check_schema),)


def main():
    return upgradecheck.main(conf.CONF, project='pcloud',
                             upgrade_command=Checks())


if __name__ == '__main__':
    sys.exit(main())
