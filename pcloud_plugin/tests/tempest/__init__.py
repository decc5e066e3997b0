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

"""Our tempest plugin: cross-service scenarios run against a real cloud.

Tempest loads it from the ``tempest.test_plugins`` entry point
``pcloud_plugin``; the DevStack job (.zuul.yaml) runs it against DevStack,
and tools/run_tempest.py under the sandbox tests against the sandbox.

Runs only where tempest is installed, in tempest's own Python, which has
neither nova nor blazar: its modules may import tempest (tempest.lib for
the clients), oslo.config and the standard library, nothing else of
ours. No stestr run of ours collects it: it is outside
pcloud_plugin/tests/unit and pcloud_plugin/tests/functional.
"""
