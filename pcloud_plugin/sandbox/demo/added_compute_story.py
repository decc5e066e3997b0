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

"""The demo's last chapter: a compute added to the running cloud is

reservable with no command of ours run (blazar-manager's Placement
mirror finds it).
"""

import time

from pcloud_plugin.sandbox import common
from pcloud_plugin.sandbox.demo import commands
from pcloud_plugin.sandbox.demo import placement


def tell(story, sandbox, cli):
    """A compute added to the running cloud is reservable with no command

    of ours run: blazar-manager's Placement mirror finds it.
    """
    demo = common.DEMO_USER
    made = {}

    def slot_lease():
        return ('openstack', 'reservation', 'lease', 'create',
                '--reservation', 'resource_type=virtual:instance,vcpus=1,'
                'memory_mb=%d,disk_gb=1,amount=1,affinity=None'
                % (made['memory'] + 1024), '--start-date', 'now',
                '--end-date', commands.in_an_hour(), 'demo-big-slot')

    def too_big():
        made['memory'] = max(placement.free(sandbox, 'MEMORY_MB').values())
        return commands.refused(cli, slot_lease(), demo, 'Cannot reserve',
                                'MEMORY_MB')
    story.step('a slot 1 GB more than any compute has free is refused',
               too_big)

    def add():
        made['host'] = sandbox.add_compute(
            vcpus=4, memory_mb=made['memory'] + 4096, disk_gb=100)
        return '%s is up with %d MB' % (made['host'], made['memory'] + 4096)
    story.step('the operator adds a compute: nova-compute starts on it '
               'and reports to Placement', add)

    def reservable():
        began = time.monotonic()
        while True:
            try:
                cli.run(*slot_lease(), user=demo)
                break
            except commands.CommandFailed:
                if time.monotonic() - began > 60:
                    raise
                time.sleep(1)
        found = cli.wait('demo-big-slot', (
            'openstack', 'reservation', 'lease', 'show', 'demo-big-slot'),
            lambda lease: lease['status'] in ('ACTIVE', 'ERROR'), user=demo)
        if found['status'] != 'ACTIVE':
            raise AssertionError('demo-big-slot is %s' % found['status'])
        cli.run('openstack', 'reservation', 'lease', 'delete',
                'demo-big-slot', user=demo)
        return ('the slot was admitted %.0f s later (no command run): '
                'only %s can hold it' % (time.monotonic() - began,
                                         made['host']))
    story.step('within the mirror\'s interval the slot is reservable, on '
               'the new compute', reservable)
