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

"""A small stand-in for Keystone's v3 project reads, as an admin sees them.

Answers GET /projects/<id> and GET /projects?name=<name> (an exact match
in every domain, domains themselves left out unless asked for) like
clients.keystone's adapter; ``fail_next`` makes the next call raise, or
answer with an HTTP status.
"""

import copy
import types
from urllib import parse


def _response(status, body=None):
    return types.SimpleNamespace(status_code=status, text=str(body),
                                 json=lambda: copy.deepcopy(body))


class FakeKeystone(object):

    def __init__(self, projects=()):
        self.projects = {}
        self.calls = []
        self._failures = []
        for project_id, name, *domain in projects:
            self.add_project(project_id, name, *domain)

    def add_project(self, project_id, name, domain_id='default',
                    is_domain=False):
        self.projects[project_id] = {
            'id': project_id, 'name': name, 'domain_id': domain_id,
            'is_domain': is_domain, 'enabled': True}

    def fail_next(self, error):
        """An exception to raise, or an HTTP status to answer with."""
        self._failures.append(error)

    def get(self, url, raise_exc=True):
        assert not raise_exc, 'clients.keystone reads the status itself'
        self.calls.append(url)
        if self._failures:
            error = self._failures.pop(0)
            if isinstance(error, int):
                return _response(error, {'error': {'code': error}})
            raise error
        path, _, query = url.partition('?')
        parts = path.strip('/').split('/')
        assert parts[0] == 'projects', url
        if len(parts) == 2:
            found = self.projects.get(parse.unquote(parts[1]))
            if found is None:
                return _response(404, {'error': {'code': 404}})
            return _response(200, {'project': found})
        assert len(parts) == 1, url
        name = parse.parse_qs(query).get('name', [None])[0]
        return _response(200, {'projects': [
            p for p in self.projects.values()
            if (name is None or p['name'] == name) and not p['is_domain']]})
