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
"""pcloud-manage: operator commands for the ledger.

  pcloud-manage db sync [--revision REV]   (also: db upgrade)
  pcloud-manage db version
  pcloud-manage placement sync

What a command needs and is not configured ([pcloud_database]
connection, [pcloud_placement] credentials), or a service it cannot
reach, is one line on stderr and exit status 1.
"""

import sys

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging

from pcloud_plugin.clients import placement as placement_client
from pcloud_plugin.cmd import configured
from pcloud_plugin import conf
from pcloud_plugin import context
from pcloud_plugin.db import migration
from pcloud_plugin.db import placement_sync
from pcloud_plugin import exception

CONF = conf.CONF


def db_sync():
    configured.database()
    migration.upgrade(CONF.command.revision)
    print('Ledger schema at %s' % migration.current_revision())
    return 0


def db_version():
    configured.database()
    print(migration.current_revision() or 'None (empty database)')
    return 0


def placement_sync_cmd():
    configured.database()
    forest = placement_client.read_forest(configured.placement_adapter())
    report = placement_sync.sync(context.get_admin_context(), forest)
    for label in ('created', 'updated', 'deleted'):
        print('%s: %d %s' % (label, len(getattr(report, label)),
                             ' '.join(getattr(report, label))))
    for uuid, why in report.problems:
        print('PROBLEM %s: %s' % (uuid, why))
    return 1 if report.problems else 0


def _add_commands(subparsers):
    db = subparsers.add_parser('db', help='ledger schema')
    db_sub = db.add_subparsers(dest='action')
    sync = db_sub.add_parser('sync', aliases=['upgrade'],
                             help='apply migrations')
    sync.add_argument('--revision', default='head')
    sync.set_defaults(func=db_sync)
    version = db_sub.add_parser('version', help='current revision')
    version.set_defaults(func=db_version)

    placement = subparsers.add_parser('placement', help='mirror Placement')
    placement_sub = placement.add_subparsers(dest='action')
    sync = placement_sub.add_parser(
        'sync', help='mirror providers, inventories, traits, aggregates')
    sync.set_defaults(func=placement_sync_cmd)


def main(argv=None):
    CONF.register_cli_opt(cfg.SubCommandOpt(
        'command', title='Commands', handler=_add_commands))
    logging.register_options(CONF)
    CONF(sys.argv[1:] if argv is None else argv, project='pcloud')
    logging.setup(CONF, 'pcloud')
    func = getattr(CONF.command, 'func', None)
    if func is None:
        print('Missing action: see pcloud-manage %s --help'
              % CONF.command.name, file=sys.stderr)
        return 2
    try:
        return func()
    except configured.Missing as e:
        return _fail(e)
    except exception.PcloudException as e:
        return _fail(e.message)
    except (db_exc.DBConnectionError, db_exc.DBNonExistentDatabase,
            db_exc.CantStartEngineError) as e:
        return _fail('cannot open the ledger database of [pcloud_database] '
                     'connection: %s' % e)
    except ks_exc.ClientException as e:
        return _fail('cannot reach Placement with [pcloud_placement]: %s'
                     % e)


def _fail(why):
    """One line on stderr (the first of a multi-line message); 1."""
    print('ERROR: %s' % str(why).strip().splitlines()[0], file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
