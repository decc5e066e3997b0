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

"""A test hook: interrupt an operation at a named step (fault injection).

The operations that change Nova and Placement in several steps call
``step(operation, name)`` before each. It does nothing unless the process
was started with ``PCLOUD_FAULTS`` naming a file, as the sandbox does for
the crash tests. Then every step reached is appended to ``<file>.trace``,
and when ``<file>`` holds ``{"operation": ..., "step": ..., "fault": ...}``
naming this step, the fault fires once (the file is renamed
``<file>.fired``):

``kill``
    the process exits at once, as if killed (no clean-up, no reply)
``unreachable``
    from then on every HTTP request of this process to a URL starting
    with one of ``"urls"`` fails to connect, as when Nova or Placement is
    down, until ``<file>.outage`` is removed
"""

import json
import os
import threading

ENV = 'PCLOUD_FAULTS'
KILLED = 137  # the status of a process killed by SIGKILL, as shells show it

_lock = threading.Lock()
_cut = []  # (url prefixes, outage file) of the outage under way


def step(operation, name):
    path = os.environ.get(ENV)
    if not path:
        return
    with _lock:
        with open(path + '.trace', 'a') as trace:
            trace.write('%s %s\n' % (operation, name))
        try:
            with open(path) as f:
                fault = json.load(f)
        except (OSError, ValueError):
            return
        if (fault.get('operation'), fault.get('step')) != (operation, name):
            return
        os.rename(path, path + '.fired')
    if fault['fault'] == 'kill':
        os._exit(KILLED)
    _cut_off(tuple(fault['urls']), path + '.outage')


def _cut_off(prefixes, outage):
    import requests
    from requests import adapters

    with open(outage, 'w'):
        pass
    if not _cut:
        send = adapters.HTTPAdapter.send

        def unreachable(adapter, request, *args, **kwargs):
            prefixes, outage = _cut[-1]
            if request.url.startswith(prefixes) and os.path.exists(outage):
                raise requests.exceptions.ConnectionError(
                    'Connection refused (fault injected): %s' % request.url,
                    request=request)
            return send(adapter, request, *args, **kwargs)
        adapters.HTTPAdapter.send = unreachable
    _cut.append((prefixes, outage))
