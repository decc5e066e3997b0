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

"""pcloud-sandbox: a local capacity ledger to try, and its demo story.

Today the sandbox is the ledger alone (SQLite by default, ``--db`` for a
real server); it grows into a whole local cloud as the services land.
``--demo`` runs the story end to end and exits non-zero at the first step
that does not behave, naming it.
"""

import argparse
import datetime
import os
import sys

from oslo_utils import timeutils

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import api as db_api
from pcloud_plugin.db import migration
from pcloud_plugin import exception

CONF = conf.CONF


class DemoFailed(Exception):
    pass


class Story:
    """Numbered steps that print what they show and stop at the first

    one that does not hold.
    """

    def __init__(self, out=sys.stdout):
        self.out = out
        self.number = 0

    def step(self, title, check):
        self.number += 1
        try:
            detail = check()
        except Exception as e:
            self.out.write('[FAIL] %d. %s: %s: %s\n'
                           % (self.number, title, type(e).__name__, e))
            raise DemoFailed('step %d, %s' % (self.number, title))
        self.out.write('[ ok ] %d. %s%s\n'
                       % (self.number, title,
                          ': %s' % detail if detail else ''))

    def refused(self, title, error, call):
        """A step whose point is that ``call`` is refused with ``error``."""
        def check():
            try:
                call()
            except error as e:
                return 'refused: %s' % e.message
            raise AssertionError('was not refused')
        self.step(title, check)


def ledger_story(context, story, now):
    day = datetime.timedelta(days=1)
    monday, tuesday, wednesday = now + day, now + 2 * day, now + 3 * day

    def make_hosts():
        for name in ('cn1', 'cn2'):
            db_api.create_provider(context, 'sandbox-' + name, name,
                                   can_host=True)
            db_api.set_inventories(context, 'sandbox-' + name, {
                'VCPU': Inventory(8, allocation_ratio=2.0),
                'MEMORY_MB': Inventory(16384, reserved=512),
                'DISK_GB': Inventory(500, min_unit=10, step_size=10)})
        return '2 hosts of 16 VCPU (8 x ratio 2.0), 15872 MB, 500 GB'
    story.step('create hosts with Placement-style inventories', make_hosts)

    cn1, cn2 = 'sandbox-cn1', 'sandbox-cn2'
    story.step('lease A takes 12 VCPU of cn1 for tomorrow', lambda: str(
        db_api.claim(context, 'lease-A', {cn1: {'VCPU': 12}},
                     monday, tuesday)))
    story.refused('lease B cannot take 8 more VCPU of cn1 overlapping A',
                  exception.CapacityExceeded,
                  lambda: db_api.claim(context, 'lease-B',
                                       {cn1: {'VCPU': 8}},
                                       monday + day / 2, wednesday))
    story.step('lease B fits once A has ended', lambda: str(
        db_api.claim(context, 'lease-B', {cn1: {'VCPU': 8}, cn2: {
            'VCPU': 16, 'DISK_GB': 100}}, tuesday, wednesday)))
    story.refused('a 15 GB disk breaks step_size 10',
                  exception.UnitRuleViolation,
                  lambda: db_api.claim(context, 'lease-C',
                                       {cn2: {'DISK_GB': 15}}))
    story.refused('moving A into B\'s window is refused, A stays put',
                  exception.CapacityExceeded,
                  lambda: db_api.change_claim(context, 'lease-A',
                                              start=tuesday, end=wednesday))

    def a_unchanged():
        claims = db_api.get_claims(context, 'lease-A')
        if claims['start'] != monday.replace(microsecond=0):
            raise AssertionError('lease A moved to %s' % claims['start'])
        return 'A still starts %s' % claims['start']
    story.step('the refused move left nothing half-written', a_unchanged)
    story.refused('cn2 cannot shrink below what B holds',
                  exception.InventoryInUse,
                  lambda: db_api.set_inventories(context, cn2, {
                      'VCPU': Inventory(4)}))
    story.step('releasing A frees tomorrow', lambda: str(
        db_api.release(context, 'lease-A') and db_api.claim(
            context, 'lease-D', {cn1: {'VCPU': 16}}, monday, tuesday)))

    def usage():
        return ', '.join('%s %s' % (name, db_api.get_usage(
            context, cn1, *window)) for name, window in (
                ('tomorrow', (monday, tuesday)),
                ('the day after', (tuesday, wednesday))))
    story.step('cn1 usage per window', usage)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='pcloud-sandbox',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--state-dir', default='.sandbox',
                        help='where the sandbox keeps its files')
    parser.add_argument('--db', help='database URL of the ledger '
                        '(default: SQLite under --state-dir)')
    parser.add_argument('--demo', action='store_true',
                        help='run the end-to-end story, then exit')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(args.state_dir, exist_ok=True)
    state_dir = os.path.abspath(args.state_dir)
    url = args.db or 'sqlite:///%s' % os.path.join(state_dir, 'ledger.db')
    if args.demo and not args.db:
        # The story starts from an empty ledger every time.
        url = 'sqlite:///%s' % os.path.join(state_dir, 'demo.db')
        if os.path.exists(url[len('sqlite:///'):]):
            os.remove(url[len('sqlite:///'):])
    config_file = os.path.join(state_dir, 'pcloud.conf')
    with open(config_file, 'w') as f:
        f.write('[pcloud_database]\nconnection = %s\n' % url)
    CONF(['--config-file', config_file], project='pcloud')
    migration.upgrade()
    print('Ledger ready at %s (schema %s).' % (
        url, migration.current_revision()))
    print('Use it with: pcloud-manage --config-file %s ...' % config_file)
    if not args.demo:
        return 0
    story = Story()
    try:
        ledger_story(context_mod.get_admin_context(), story,
                     timeutils.utcnow())
    except DemoFailed as e:
        print('Demo FAILED at %s' % e)
        return 1
    print('Demo passed: %d steps.' % story.number)
    return 0


if __name__ == '__main__':
    sys.exit(main())
