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

"""The demo's first chapter: the capacity ledger on its own, no cloud.

Claims, refusals and usage of two hosts with Placement-style
inventories, through db.api (``pcloud-sandbox --demo --ledger-only``
tells this chapter alone).
"""

import datetime

from pcloud_plugin.capacity.inventory import Inventory
from pcloud_plugin.db import claims as db_claims
from pcloud_plugin.db import providers as db_providers
from pcloud_plugin import exception


def tell(context, story, now):
    day = datetime.timedelta(days=1)
    monday, tuesday, wednesday = now + day, now + 2 * day, now + 3 * day

    def make_hosts():
        for name in ('cn1', 'cn2'):
            db_providers.create_provider(context, 'sandbox-' + name, name,
                                         can_host=True)
            db_providers.set_inventories(context, 'sandbox-' + name, {
                'VCPU': Inventory(8, allocation_ratio=2.0),
                'MEMORY_MB': Inventory(16384, reserved=512),
                'DISK_GB': Inventory(500, min_unit=10, step_size=10)})
        return '2 hosts of 16 VCPU (8 x ratio 2.0), 15872 MB, 500 GB'
    story.step('create hosts with Placement-style inventories', make_hosts)

    cn1, cn2 = 'sandbox-cn1', 'sandbox-cn2'
    story.step('lease A takes 12 VCPU of cn1 for tomorrow', lambda: str(
        db_claims.claim(context, 'lease-A', {cn1: {'VCPU': 12}},
                        monday, tuesday)))
    story.refused('lease B cannot take 8 more VCPU of cn1 overlapping A',
                  exception.CapacityExceeded,
                  lambda: db_claims.claim(context, 'lease-B',
                                          {cn1: {'VCPU': 8}},
                                          monday + day / 2, wednesday))
    story.step('lease B fits once A has ended', lambda: str(
        db_claims.claim(context, 'lease-B', {cn1: {'VCPU': 8}, cn2: {
            'VCPU': 16, 'DISK_GB': 100}}, tuesday, wednesday)))
    story.refused('a 15 GB disk breaks step_size 10',
                  exception.UnitRuleViolation,
                  lambda: db_claims.claim(context, 'lease-C',
                                          {cn2: {'DISK_GB': 15}}))
    story.refused('moving A into B\'s window is refused, A stays put',
                  exception.CapacityExceeded,
                  lambda: db_claims.change_claim(context, 'lease-A',
                                                 start=tuesday, end=wednesday))

    def a_unchanged():
        claims = db_claims.get_claims(context, 'lease-A')
        if claims['start'] != monday.replace(microsecond=0):
            raise AssertionError('lease A moved to %s' % claims['start'])
        return 'A still starts %s' % claims['start']
    story.step('the refused move left nothing half-written', a_unchanged)
    story.refused('cn2 cannot shrink below what B holds',
                  exception.InventoryInUse,
                  lambda: db_providers.set_inventories(context, cn2, {
                      'VCPU': Inventory(4)}))
    story.step('releasing A frees tomorrow', lambda: str(
        db_claims.release(context, 'lease-A') and db_claims.claim(
            context, 'lease-D', {cn1: {'VCPU': 16}}, monday, tuesday)))

    def usage():
        return ', '.join('%s %s' % (name, db_claims.get_usage(
            context, cn1, *window)) for name, window in (
                ('tomorrow', (monday, tuesday)),
                ('the day after', (tuesday, wednesday))))
    story.step('cn1 usage per window', usage)
