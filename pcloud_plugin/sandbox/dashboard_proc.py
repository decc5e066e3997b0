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
"""Horizon with the pcloud dashboard, in a process of its own.

Set up as an operator sets up Horizon: a ``local_settings.py`` (written
into the state directory, which this process puts first on its path as
Horizon looks for ``local.local_settings``) names the cloud's Keystone,
and the plugin's files of ``pcloud_plugin.dashboard.enabled`` are added
to Horizon's own (an operator copies them into ``local/enabled``; the
sandbox leaves the installed Horizon as it is). Static files are served
from where they lie, and the stylesheets compiled once, before ready.
"""

import os
import sys
from urllib import request

from pcloud_plugin.sandbox import common

SETTINGS = 'pcloud_plugin.sandbox.dashboard_settings'

LOCAL_SETTINGS = '''# Written by pcloud-sandbox: Horizon on its cloud.
DEBUG = False
ALLOWED_HOSTS = [%(host)r, 'localhost']
SECRET_KEY = %(secret)r
OPENSTACK_KEYSTONE_URL = %(keystone)r
OPENSTACK_KEYSTONE_DEFAULT_ROLE = 'member'
SESSION_ENGINE = 'django.contrib.sessions.backends.signed_cookies'
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
STATIC_ROOT = %(static)r
STATIC_URL = '/static/'
COMPRESS_ROOT = %(static)r
COMPRESS_OFFLINE = False
TIME_ZONE = 'UTC'
LOGGING = {'version': 1, 'disable_existing_loggers': False,
           'handlers': {'console': {'class': 'logging.StreamHandler'}},
           'root': {'handlers': ['console'], 'level': 'WARNING'}}
'''


def url(spec):
    return common.url(spec, 'dashboard', '/')


def _write_local_settings(spec):
    root = os.path.join(spec['state_dir'], 'dashboard')
    os.makedirs(os.path.join(root, 'local'), exist_ok=True)
    with open(os.path.join(root, 'local', '__init__.py'), 'w'):
        pass
    secret_file = os.path.join(root, 'secret_key')
    if not os.path.exists(secret_file):
        with open(secret_file, 'w') as f:
            f.write(os.urandom(24).hex())
    with open(secret_file) as f:
        secret = f.read()
    with open(os.path.join(root, 'local', 'local_settings.py'), 'w') as f:
        f.write(LOCAL_SETTINGS % {
            'host': common.HOST, 'secret': secret,
            'keystone': common.auth_url(spec),
            'static': os.path.join(root, 'static')})
    return root


def start(spec):
    sys.path.insert(0, _write_local_settings(spec))
    os.environ['DJANGO_SETTINGS_MODULE'] = SETTINGS
    from django.contrib.staticfiles import handlers
    from django.core import wsgi

    app = handlers.StaticFilesHandler(wsgi.get_wsgi_application())
    server = common.serve('dashboard', app, spec['ports']['dashboard'])
    # The first page compiles Horizon's stylesheets (seconds): once,
    # here, not in a user's first request.
    opener = request.build_opener(request.ProxyHandler({}))
    with opener.open(common.url(spec, 'dashboard', '/auth/login/'),
                     timeout=spec['timeout']) as response:
        response.read()
    return [server]


if __name__ == '__main__':
    common.run('dashboard', start)
