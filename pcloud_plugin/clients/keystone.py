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
"""Project look-ups in Keystone's v3 API, for the Pcloud service.

Over the session and credentials of [pcloud_nova]: an admin's, whom
Keystone lets read every project (a member may not look other projects
up, so names are resolved here, not by the client). Keystone itself is
found in their catalog: no group of its own to configure.
"""

import re
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from pcloud_plugin import conf
from pcloud_plugin.conf import nova as nova_conf
from pcloud_plugin import exception

CONF = conf.CONF

# Only such a value is asked for as an id: it cannot step out of
# /projects/ (no "/", no "..") and is what the Pcloud service can store.
_ID_RE = re.compile(r'^[A-Za-z0-9_-]{1,64}$')


def get_adapter(conf_=None):
    """A keystoneauth adapter for Keystone's v3 API, on [pcloud_nova]'s

    session and auth; its interfaces, region and retries, not its
    service type or endpoint (Nova's).
    """
    conf_ = conf_ or CONF
    group = nova_conf.GROUP
    auth = ks_loading.load_auth_from_conf_options(conf_, group)
    session = ks_loading.load_session_from_conf_options(
        conf_, group, auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf_, group, session=session, auth=auth, service_type='identity',
        service_name=None, endpoint_override=None, version=None,
        min_version='3.0', max_version='3.latest')


def _get(adapter, url, action, key):
    """``key`` of Keystone's answer (None for a 404); our errors for the

    rest: down, restarting (its 503) or not answering is to try again
    later, anything else is its refusal or failure.
    """
    try:
        response = adapter.get(url, raise_exc=False)
    except ks_exc.ConnectionError as e:
        raise exception.KeystoneUnreachable(action=action, reason=e)
    except ks_exc.ClientException as e:
        # No token for our credentials, no identity endpoint...
        raise exception.KeystoneError(action=action, reason=e)
    status = response.status_code
    if status == 404:
        return None
    if status != 200:
        kind = (exception.KeystoneUnreachable if status == 503
                else exception.KeystoneError)
        raise kind(action=action,
                   reason='HTTP %d: %s' % (status, response.text[:200]))
    try:
        return response.json()[key]
    except (ValueError, TypeError, KeyError):
        raise exception.KeystoneError(
            action=action, reason='an answer without "%s"' % key)


def _project(found):
    """A project of Keystone's answer; None for a domain (Keystone keeps

    domains as projects too, but no token is scoped to one as a project).
    """
    if (isinstance(found, dict) and isinstance(found.get('id'), str)
            and not found.get('is_domain')):
        return found
    return None


def resolve_project(adapter, name_or_id):
    """The id of the project ``name_or_id`` is the id or the name of.

    An id first; else a name, which must be unique across domains:
    ProjectNameAmbiguous (409) names the count, ProjectNotFound (404)
    says that Keystone knows no such project.
    """
    if _ID_RE.match(name_or_id):
        project = _project(_get(
            adapter, '/projects/%s' % parse.quote(name_or_id, safe=''),
            'show project %s' % name_or_id, 'project'))
        if project is not None:
            return project['id']
    found = _get(adapter, '/projects?%s' % parse.urlencode(
        {'name': name_or_id}), 'list the projects named %s' % name_or_id,
        'projects')
    if not isinstance(found, (list, type(None))):
        raise exception.KeystoneError(
            action='list the projects named %s' % name_or_id,
            reason='"projects" is not a list')
    named = [p for p in map(_project, found or ())
             if p is not None and p.get('name') == name_or_id]
    if not named:
        raise exception.ProjectNotFound(project=name_or_id)
    if len(named) > 1:
        raise exception.ProjectNameAmbiguous(project=name_or_id,
                                             count=len(named))
    return named[0]['id']
