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
"""python -m bench [--quick] [--db URL] [name ...]: run the benchmarks,

print tables.
"""

import argparse
import importlib
import sys

from oslo_config import cfg

from bench import database
from pcloud_plugin import conf  # noqa: F401  (registers the options)

BENCHES = ('ledger', 'candidates', 'filter', 'instance_plugin', 'mirror',
           'offerings', 'lease_create')


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m bench')
    parser.add_argument('--quick', action='store_true',
                        help='fewer iterations, for a smoke run')
    parser.add_argument('--db', metavar='URL',
                        help='keep the ledger in a new database on this '
                        'server (e.g. mysql+pymysql://root@127.0.0.1, '
                        'postgresql://postgres@127.0.0.1), dropped after; '
                        'default: SQLite files (filter has no ledger)')
    parser.add_argument('names', nargs='*', metavar='name',
                        help='which to run: %s (default: all)'
                        % ', '.join(BENCHES))
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(BENCHES)
    if unknown:
        parser.error('unknown benchmark(s): %s' % ', '.join(sorted(unknown)))
    cfg.CONF([], project='pcloud')
    database.SERVER = args.db
    for name in args.names or BENCHES:
        module = importlib.import_module('bench.bench_%s' % name)
        module.run(quick=args.quick)
    return 0


if __name__ == '__main__':
    sys.exit(main())
