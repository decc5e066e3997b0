#!/usr/bin/env python3
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

"""Run our tempest plugin's scenarios against a running sandbox.

Start a sandbox first (``pcloud-sandbox --state-dir DIR``, see
README.rst), and install tempest and this package into a Python of their
own (tempest is not one of our requirements). Then, with that Python::

    python tools/run_tempest.py --state-dir DIR --workspace WS

makes a tempest workspace WS (``tempest init``) if there is none, writes
its etc/tempest.conf and etc/accounts.yaml for the sandbox (its admin,
demo and alt users as pre-provisioned accounts, no Neutron, the image
and flavor named), and runs ``tempest run --regex`` on our tests there.
Arguments after ``--`` go to ``tempest run``. Standard library only.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import urllib.request

REGEX = r'^pcloud_plugin\.tests\.tempest\.'
USERS = ('admin', 'demo', 'alt')
# The services the sandbox runs; Neutron, Cinder and Swift it does not.
AVAILABLE = {'nova': True, 'glance': True, 'neutron': False,
             'cinder': False, 'swift': False, 'pcloud': True}


def read_openrc(path):
    """{OS_* name: value} of an openrc file of the sandbox."""
    found = {}
    with open(path) as f:
        for line in f:
            words = shlex.split(line)
            if len(words) == 2 and words[0] == 'export' and '=' in words[1]:
                name, value = words[1].split('=', 1)
                found[name] = value
    return found


class Cloud(object):
    """The sandbox as its admin sees it, over plain HTTP on loopback."""

    def __init__(self, openrc):
        # No proxy: one from the environment cannot reach our loopback.
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}))
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': openrc['OS_USERNAME'],
                'password': openrc['OS_PASSWORD'],
                'domain': {'id': openrc['OS_USER_DOMAIN_ID']}}}},
            'scope': {'project': {
                'name': openrc['OS_PROJECT_NAME'],
                'domain': {'id': openrc['OS_PROJECT_DOMAIN_ID']}}}}}
        response, token = self._request(
            'POST', openrc['OS_AUTH_URL'] + '/auth/tokens', body)
        self.token = response.headers['X-Subject-Token']
        self.catalog = {
            service['type']: endpoint['url']
            for service in token['token']['catalog']
            for endpoint in service['endpoints']
            if endpoint['interface'] == 'public'}

    def _request(self, method, url, body=None):
        headers = {'Content-Type': 'application/json',
                   'Accept': 'application/json'}
        if getattr(self, 'token', None):
            headers['X-Auth-Token'] = self.token
        request = urllib.request.Request(
            url, method=method, headers=headers,
            data=None if body is None else json.dumps(body).encode())
        with self.opener.open(request, timeout=30) as response:
            return response, json.loads(response.read())

    def get(self, service, path):
        return self._request('GET', self.catalog[service] + path)[1]

    def image_id(self, name):
        (image,) = [i for i in self.get('image', '/v2/images')['images']
                    if i['name'] == name]
        return image['id']

    def flavor_id(self, name):
        (flavor,) = [f for f in self.get('compute', '/flavors')['flavors']
                     if f['name'] == name]
        return flavor['id']


def accounts_yaml(openrcs):
    """Pre-provisioned accounts: admin with its role, the others members.

    YAML written by hand: the values are plain names, JSON-quoted.
    """
    lines = []
    for user, openrc in openrcs.items():
        role = 'admin' if user == 'admin' else 'member'
        lines += ['- username: %s' % json.dumps(openrc['OS_USERNAME']),
                  '  project_name: %s' % json.dumps(openrc['OS_PROJECT_NAME']),
                  '  user_domain_name: Default',
                  '  project_domain_name: Default',
                  '  password: %s' % json.dumps(openrc['OS_PASSWORD']),
                  '  roles: [%s]' % role]
    return '\n'.join(lines) + '\n'


def tempest_conf(workspace, admin, image, flavor):
    sections = {
        'DEFAULT': {'log_dir': os.path.join(workspace, 'logs'),
                    'log_file': 'tempest.log'},
        'oslo_concurrency': {
            'lock_path': os.path.join(workspace, 'tempest_lock')},
        'auth': {'use_dynamic_credentials': False,
                 'test_accounts_file': os.path.join(workspace, 'etc',
                                                    'accounts.yaml'),
                 'default_credentials_domain_name': 'Default'},
        'identity': {'uri_v3': admin['OS_AUTH_URL'],
                     'auth_version': 'v3',
                     'region': admin['OS_REGION_NAME'],
                     'admin_role': 'admin'},
        'identity-feature-enabled': {'api_v2': False},
        'compute': {'image_ref': image, 'flavor_ref': flavor,
                    'min_microversion': '2.1',
                    'max_microversion': 'latest',
                    # Fake computes: servers build in seconds.
                    'build_timeout': 120},
        'service_available': AVAILABLE,
        'pcloud': {'lease_timeout': 180},
    }
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        lines += ['%s = %s' % (name, value)
                  for name, value in options.items()]
        lines.append('')
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--state-dir', default='.sandbox',
                        help='the running sandbox\'s --state-dir')
    parser.add_argument('--workspace', default='.tempest',
                        help='the tempest workspace, made if missing')
    parser.add_argument('--image', default='cirros')
    parser.add_argument('--flavor', default='m1.tiny')
    parser.add_argument('--regex', default=REGEX,
                        help='the tests to run (default: ours)')
    parser.add_argument('tempest_args', nargs='*',
                        help='more arguments of tempest run, after --')
    args = parser.parse_args(argv)

    tempest = shutil.which('tempest', path=os.pathsep.join((
        os.path.dirname(sys.executable), os.environ.get('PATH', ''))))
    if tempest is None:
        parser.error('tempest is not installed beside %s nor in PATH'
                     % sys.executable)
    openrcs = {user: read_openrc(os.path.join(args.state_dir,
                                              '%s-openrc' % user))
               for user in USERS}
    cloud = Cloud(openrcs['admin'])
    workspace = os.path.abspath(args.workspace)
    if not os.path.isdir(os.path.join(workspace, 'etc')):
        # Registered in a file of its own, not ~/.tempest/workspace.yaml:
        # removing the directory forgets it.
        subprocess.run([tempest, 'init', '--workspace-path',
                        os.path.join(workspace, '.workspace.yaml'),
                        workspace], check=True)
    with open(os.path.join(workspace, 'etc', 'accounts.yaml'), 'w') as f:
        f.write(accounts_yaml(openrcs))
    with open(os.path.join(workspace, 'etc', 'tempest.conf'), 'w') as f:
        f.write(tempest_conf(workspace, openrcs['admin'],
                             cloud.image_id(args.image),
                             cloud.flavor_id(args.flavor)))
    return subprocess.run([tempest, 'run', '--regex', args.regex]
                          + args.tempest_args, cwd=workspace).returncode


if __name__ == '__main__':
    sys.exit(main())
