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

"""Which packages may import what (doc/source/contributor/layout.rst).

Read from the source (every import, at the top or inside a function), not
by importing it. The services' libraries each have their packages: Blazar
only in the adapter Blazar loads, Nova only in the scheduler filter,
novaclient and keystoneauth1 only where we talk to the cloud or to the
user; the sandbox runs them all. The capacity core and the reservation
domain import none of them. Imports of ours run one way: no circles.
"""

import ast
import os

from pcloud_plugin.tests import base

PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ROOT = os.path.dirname(PACKAGE)

# A service's library: the packages of ours that may import it.
ALLOWED = {
    'blazar': ('pcloud_plugin.blazar', 'pcloud_plugin.sandbox'),
    'nova': ('pcloud_plugin.scheduler', 'pcloud_plugin.sandbox'),
    'novaclient': ('pcloud_plugin.clients', 'pcloud_plugin.cloud',
                   'pcloud_plugin.sandbox'),
    'keystoneauth1': ('pcloud_plugin.clients', 'pcloud_plugin.conf',
                      'pcloud_plugin.osc', 'pcloud_plugin.cmd',
                      'pcloud_plugin.dashboard', 'pcloud_plugin.sandbox'),
    'horizon': ('pcloud_plugin.dashboard',),
    'openstack_dashboard': ('pcloud_plugin.dashboard',
                            'pcloud_plugin.sandbox'),
    'django': ('pcloud_plugin.dashboard', 'pcloud_plugin.sandbox'),
}
# Packages that import no service library at all.
PURE = ('pcloud_plugin.capacity', 'pcloud_plugin.reservations')
# The packages top to bottom, as the layout page's table has them: a
# module imports modules of its own package and of those below, never
# above. The sandbox runs everything and is started by one console
# script (SANDBOX_SCRIPT) only.
LAYERS = (('scheduler', 'dashboard'), ('blazar',), ('cmd', 'osc'),
          ('reservations',), ('cloud',), ('pcloud',), ('clients', 'quota'),
          ('db',), ('capacity',), ('conf', 'policies', 'notifications',
                                   'exception', 'context', 'faults'))
SANDBOX_SCRIPT = 'pcloud_plugin.cmd.sandbox'


def _modules():
    """{module name: its path} of the package, tests left out."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs
                         if d not in ('tests', '__pycache__'))
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(
                    os.sep, '.')
                if module.endswith('.__init__'):
                    module = module[:-len('.__init__')]
                found[module] = path
    return found


def _imported(module, path, modules):
    """The names ``module`` imports (``from a import b`` as ``a.b`` when

    that is a module of ours, else ``a``).
    """
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith('__init__.py') else \
        module.rpartition('.')[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base_name = node.module or ''
            if node.level:
                parts = package.split('.')
                base_name = '.'.join(
                    parts[:len(parts) - node.level + 1] +
                    ([base_name] if base_name else []))
            for alias in node.names:
                full = '%s.%s' % (base_name, alias.name)
                names.add(full if full in modules else base_name)
    return names


def _graph():
    modules = _modules()
    return {m: _imported(m, p, modules) for m, p in modules.items()}


def _within(module, packages):
    return any(module == p or module.startswith(p + '.') for p in packages)


def _library(name):
    return name.split('.')[0]


def _package(module):
    """The package of ours a module is in (``blazar`` for

    pcloud_plugin.blazar.api.v1; ``quota`` for pcloud_plugin.quota).
    """
    return module.split('.')[1] if module.count('.') else None


def _upward(graph):
    """(module, what it imports) pairs against LAYERS."""
    rank = {package: n for n, layer in enumerate(LAYERS)
            for package in layer}
    found = set()
    for module, names in graph.items():
        if _package(module) in (None, 'sandbox'):
            continue
        for name in names & set(graph):
            package = _package(name)
            if package == 'sandbox' and module == SANDBOX_SCRIPT:
                continue
            if package is None or rank.get(package, -1) < rank.get(
                    _package(module), len(LAYERS)):
                if package != _package(module):
                    found.add((module, name))
    return found


def _circles(graph):
    """The import circles among our modules (Tarjan's strongly connected

    components of more than one module, or a module importing itself).
    """
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph[module] & set(graph)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1 or module in graph[module]:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


class ImportRulesTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.graph = _graph()

    def _against_rules(self):
        found = set()
        for module, names in self.graph.items():
            for name in names:
                library = _library(name)
                if library in ALLOWED and not _within(module,
                                                      ALLOWED[library]):
                    found.add((module, library))
        return found

    def test_service_libraries_only_where_they_belong(self):
        self.assertEqual(set(), self._against_rules())

    def test_the_core_and_the_domain_import_no_service(self):
        for module, names in self.graph.items():
            if _within(module, PURE):
                self.assertEqual(set(), {_library(n) for n in names} &
                                 set(ALLOWED), module)

    def test_packages_import_only_those_below_them(self):
        self.assertEqual(set(), _upward(self.graph))

    def test_no_import_circles(self):
        self.assertEqual([], _circles(self.graph))

    def test_the_rules_see_what_they_check(self):
        # A reader that missed imports would pass every rule above.
        self.assertIn('pcloud_plugin.capacity.request',
                      self.graph['pcloud_plugin.capacity.candidates'])
        self.assertIn('blazar', {_library(n) for n in self.graph[
            'pcloud_plugin.blazar.reconcile']})
        self.assertIn('nova', {_library(n) for n in self.graph[
            'pcloud_plugin.scheduler.filters.pcloud_filter']})
        self.assertEqual({('pcloud_plugin.db.x', 'pcloud_plugin.cloud.y'),
                          ('pcloud_plugin.cmd.z', 'pcloud_plugin.sandbox.s'),
                          ('pcloud_plugin.new.m', 'pcloud_plugin.db.x')},
                         _upward({
                             'pcloud_plugin.db.x': {'pcloud_plugin.cloud.y'},
                             'pcloud_plugin.cloud.y': {'pcloud_plugin.db.x'},
                             'pcloud_plugin.cmd.z': {
                                 'pcloud_plugin.sandbox.s'},
                             SANDBOX_SCRIPT: {'pcloud_plugin.sandbox.s'},
                             'pcloud_plugin.sandbox.s': {
                                 'pcloud_plugin.blazar.b'},
                             'pcloud_plugin.blazar.b': set(),
                             'pcloud_plugin.new.m': {'pcloud_plugin.db.x'},
                         }))
        self.assertEqual([['a', 'b']], _circles(
            {'a': {'b'}, 'b': {'a'}, 'c': {'a'}}))
