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

"""Blazar's manager and v1 API in-process with our plugins, real
Placement over HTTP; Nova is a recording fake (fake_nova). Imports
blazar, never nova.
"""


def _patch_as_blazar_does():
    """Patch the process with eventlet first where Blazar runs under it.

    Blazar before 2026.2 (18) runs under eventlet: its API app patches
    the process when imported, too late for threads and sockets made
    before. Patched first, as blazar-api's and blazar-manager's entry
    points do, so our plugins run here as they run there.
    """
    from importlib import metadata
    if int(metadata.version('blazar').split('.')[0]) < 18:
        import eventlet
        eventlet.monkey_patch()


_patch_as_blazar_does()
