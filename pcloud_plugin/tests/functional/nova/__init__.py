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

"""Tests inside a real Nova: its functional harness in this process.

Run them in a process of their own (Nova and Blazar register clashing
global options, e.g. [DEFAULT] host)::

    stestr --test-path ./pcloud_plugin/tests/functional/nova run

When test discovery reaches this package after Blazar was imported (a run
over all of tests/functional), the package is reported as one skip saying
so, instead of breaking discovery for everything else.

Importing Nova's functional test package applies eventlet monkey patching
to the whole process unless told not to. Our other functional tests may
share these worker processes and rely on real threads and blocking
database drivers, so Nova runs here in its native threading mode
(supported by Nova itself). The variable is set only for that import:
subprocesses started by other tests keep the mode they would have had.
"""

import os
import sys
import unittest

_VAR = 'OS_NOVA_DISABLE_EVENTLET_PATCHING'
CONFLICT = 'blazar'


def _threading_mode():
    """Whether this Nova's harness runs in threading mode.

    Nova 34 (2026.2) on. Earlier, Nova's own functional tests run under
    eventlet only (in threading mode its harness fails), as its services
    do by default there.
    """
    from importlib import metadata
    return int(metadata.version('nova').split('.')[0]) >= 34


def _import_nova():
    saved = os.environ.get(_VAR)
    if saved is None and _threading_mode():
        os.environ[_VAR] = '1'
    try:
        from nova import monkey_patch
        # Nova's guard against eventlet refuses threading mode if a
        # library loaded earlier imported eventlet (never patched in, e.g.
        # futurist does), and breaks later imports of it by other tests.
        monkey_patch.poison_eventlet = lambda: None
        # Both call monkey_patch.patch() when first imported.
        import nova.tests.functional  # noqa: F401
        import nova.tests.unit  # noqa: F401
    finally:
        if saved is None:
            os.environ.pop(_VAR, None)


if CONFLICT in sys.modules:
    raise unittest.SkipTest(
        '%s is loaded in this process, so Nova cannot be: run stestr '
        '--test-path %s' % (CONFLICT, os.path.relpath(
            os.path.dirname(__file__))))
_import_nova()
