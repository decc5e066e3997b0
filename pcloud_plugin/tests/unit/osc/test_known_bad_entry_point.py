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
"""The OSC plugin silences python-blazarclient's reservation_host_unset

(an entry point whose class UnsetAttributeHost does not exist), as
stevedore logs its load failure, and nothing else.
"""

import importlib.metadata
import logging
from unittest import mock

import fixtures
from stevedore import extension

from pcloud_plugin.osc import plugin
from pcloud_plugin.tests import base

GROUP = 'openstack.reservation.v1'


def _entry_point(name, value):
    return importlib.metadata.EntryPoint(name=name, value=value, group=GROUP)


class KnownBadEntryPointTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=plugin.STEVEDORE_LOGGER, level=logging.INFO,
            format='%(message)s'))

    def _load(self, *entry_points):
        """Load the entry points as cliff does: stevedore, no callback."""
        with mock.patch.object(extension.ExtensionManager,
                               'list_entry_points',
                               return_value=list(entry_points)):
            return extension.ExtensionManager(GROUP)

    def test_installed_on_import_once(self):
        plugin.silence_known_bad_entry_point()
        self.assertEqual(1, len([
            f for f in logging.getLogger(plugin.STEVEDORE_LOGGER).filters
            if isinstance(f, plugin.KnownBadEntryPointFilter)]))

    def test_drops_exactly_that_record_and_keeps_others(self):
        manager = self._load(
            # What python-blazarclient declares: a class its module lacks.
            _entry_point('reservation_host_unset',
                         'pcloud_plugin.osc.pclouds:UnsetAttributeHost'),
            # Another entry point missing its class: still logged.
            _entry_point('reservation_host_other',
                         'pcloud_plugin.osc.pclouds:UnsetAttributeHost'),
            # The same name failing for another reason: still logged.
            _entry_point('reservation_host_unset',
                         'pcloud_no_such_module:UnsetAttributeHost'),
            _entry_point('pcloud_list',
                         'pcloud_plugin.osc.pclouds:ListPcloud'))
        self.assertEqual(['pcloud_list'], manager.names())
        lines = self.log.output.splitlines()
        self.assertEqual(2, len(lines), self.log.output)
        self.assertTrue(lines[0].startswith(
            "Could not load 'reservation_host_other': module "
            "'pcloud_plugin.osc.pclouds' has no attribute "
            "'UnsetAttributeHost'"), lines[0])
        self.assertTrue(lines[1].startswith(
            "Could not load 'reservation_host_unset': No module named "
            "'pcloud_no_such_module'"), lines[1])

    def test_the_filter_alone(self):
        def record(msg, *args):
            return logging.LogRecord(plugin.STEVEDORE_LOGGER, logging.ERROR,
                                     __file__, 1, msg, args, None)

        keep = plugin.KnownBadEntryPointFilter().filter
        missing = AttributeError("module 'blazarclient.v1.shell_commands."
                                 "hosts' has no attribute "
                                 "'UnsetAttributeHost'")
        self.assertFalse(keep(record('Could not load %r: %s',
                                     'reservation_host_unset', missing)))
        self.assertTrue(keep(record('Could not load %r: %s',
                                    'reservation_host_set', missing)))
        self.assertTrue(keep(record('found extension %r',
                                    'reservation_host_unset')))
