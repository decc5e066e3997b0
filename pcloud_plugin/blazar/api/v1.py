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
"""The routes of the Pcloud API: a Flask blueprint for Blazar's v1 API.

Blazar's app (blazar/api/v1/app.py) registers it from the
``blazar.api.v1.extensions`` entry point ``pcloud.host`` when blazar.conf
``[manager] plugins`` names ``pcloud.host``. keystonemiddleware has
authenticated every request by then.

Each view parses and checks its input here (JSON bodies of content type
application/json, query strings, both against schemas.py), then calls
handlers.API, and renders what it answers or the error it raised as
JSON: {"error_code", "error_message", "error_name"} as Blazar does.
Bad input is a 4xx; a 500 only ever means a bug, and says nothing more.
"""

import copy

from blazar.api.v1 import utils as blazar_utils
from blazar import context as blazar_context
import flask
import jsonschema
from jsonschema import exceptions as schema_exc
from oslo_config import cfg
from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from werkzeug import exceptions as http_exc

from pcloud_plugin.blazar.api import handlers
from pcloud_plugin.blazar.api import host_guard
from pcloud_plugin.blazar.api import lease_guard
from pcloud_plugin.blazar.api import lease_lock
from pcloud_plugin.blazar.api import schemas
from pcloud_plugin.blazar import errors  # noqa: blazar-api learns our codes
from pcloud_plugin import exception
from pcloud_plugin.reservations import terms

LOG = logging.getLogger(__name__)

JSON = 'application/json'
_MAX_MESSAGE = 300

_api = handlers.API()
_routes = []


def route(method, rule, status=200, body=None, query=schemas.NO_QUERY):
    """Declare a view: its method, rule, success status and schemas."""
    def decorator(func):
        _routes.append((method, rule, func, status, body, query))
        return func
    return decorator


def get_rest():
    """A new blueprint with every route (the entry point's target)."""
    bp = flask.Blueprint('pcloud_v1', __name__, url_prefix='/v1')
    bp.before_request(blazar_utils.set_api_version_request)
    bp.after_request(blazar_utils.add_vary_header)
    _guard_leases(bp)
    for method, rule, func, status, body, query in _routes:
        bp.add_url_rule(rule, endpoint='%s_%s' % (func.__name__, method),
                        view_func=_view(func, status, body, query),
                        methods=[method])
    return bp


def get_lease_guard():
    """The extension of the virtual:instance plugin: no route of its own,

    only the check of lease bodies, which get_rest's blueprint makes when
    ``pcloud.host`` is enabled too.
    """
    bp = flask.Blueprint('pcloud_lease_guard', __name__, url_prefix='/v1')
    if HOST_EXTENSION not in cfg.CONF.manager.plugins:
        _guard_leases(bp)
    return bp


def _guard_leases(bp):
    """Hooks on Blazar's own routes: lease body types, one change of a

    lease at a time (lease_lock), no host of ours for Blazar's
    physical:host plugin (host_guard).
    """
    bp.before_app_request(_check_lease_body)
    bp.before_app_request(_guard_hosts)
    bp.before_app_request(_lock_lease)
    # Last: it answers the request itself, through Blazar's view.
    bp.before_app_request(_book_flexible)
    bp.after_app_request(_event_met)
    bp.after_app_request(_before_end_kept)
    bp.after_app_request(_with_our_terms)
    bp.teardown_app_request(lease_lock.teardown)


def _lock_lease():
    """Before Blazar's PUT and DELETE of a lease: its lock, and a 409 while

    one of its events must run first (lease_lock).
    """
    wait = lease_lock.before()
    if wait is None:
        return None
    blazar_utils.set_api_version_request()
    return _busy(*wait)


def _book_flexible():
    """Before Blazar's POST /v1/leases of a flexible lease

    (lease_guard.flexible): the earliest window that fits now, created
    by Blazar's own view with those dates. The claim's compare-and-swap
    is what books it: when another lease took the window between the
    search and the claim, the creation is refused (409) and nothing is
    held; searched again, a later window answers, up to [pcloud]
    flexible_lease_searches times. A 409 whose window is still the
    earliest is not about the window (Blazar's own): it is the answer.
    """
    wanted = flask.g.get('pcloud_flexible')
    if wanted is None:
        return None
    blazar_utils.set_api_version_request()
    view = flask.current_app.view_functions[flask.request.endpoint]
    refused = None
    for _search in range(cfg.CONF.pcloud.flexible_lease_searches):
        now = timeutils.utcnow().replace(microsecond=0)
        try:
            with _context() as ctx:
                window = _api.flexible_window(
                    ctx, wanted.reservation, wanted.duration,
                    max(wanted.earliest, now), wanted.latest_end)
        except Exception as e:
            return _failure(e)
        if refused is not None and window == refused:
            break
        body = copy.deepcopy(wanted.body)
        body['start_date'], body['end_date'] = (
            moment.strftime(terms.LEASE_DATE) for moment in window)
        flask.request.parsed_data = body
        response = flask.make_response(view(**flask.request.view_args))
        if response.status_code != 409:
            return response
        refused = window
    return response


def _event_met(response):
    """After Blazar's PUT and DELETE of a lease: its 500 for a change

    that met an event of the lease as it began is a 409 (lease_lock).
    """
    wait = lease_lock.met_an_event(response)
    return response if wait is None else _busy(*wait)


def _before_end_kept(response):
    """After Blazar's update of a lease that moved none of its dates: a

    before-end that had run is not run again (lease_lock).
    """
    lease_lock.keep_before_end(response)
    return response


def _with_our_terms(response):
    """Blazar's answer with a lease or leases: our reservations in it with

    their terms and seeds/001 state (lease_states.shown_in_blazar).
    """
    if (response.status_code not in (200, 201, 202)
            or not response.is_json
            or not lease_guard.lease_route(flask.request.path)):
        return response
    body = response.get_json(silent=True)
    if not isinstance(body, dict):
        return response
    leases = body.get('leases') or [body.get('lease') or {}]
    _api.with_our_terms([lease for lease in leases
                         if isinstance(lease, dict)])
    response.set_data(jsonutils.dump_as_bytes(body))
    return response


def _busy(message, seconds):
    response = _error(409, message, 'LeaseBusy')
    response.headers['Retry-After'] = str(seconds)
    return response


def _guard_hosts():
    """Before Blazar's POST /v1/os-hosts: none of our hosts (host_guard)."""
    why = host_guard.refusal()
    if why is None:
        return None
    blazar_utils.set_api_version_request()
    return _error(409, why, 'HostHeldByPcloud')


HOST_EXTENSION = 'pcloud.host'


def _check_lease_body():
    """Before Blazar's own lease routes: a 400 naming the field for a

    body Blazar would mishandle, 404 for an id no lease has
    (lease_guard).
    """
    try:
        lease_guard.check(
            _validate, lambda: _api.may_exceed_limits(_context()),
            _api.reservation_type)
    except lease_guard.NotFound:
        # Blazar's blueprint hooks run after ours, and its after_request
        # needs what its before_request sets.
        blazar_utils.set_api_version_request()
        return _error(404, 'No lease has this id.', 'NotFound')
    except exception.SchemaViolation as e:
        blazar_utils.set_api_version_request()
        return _error(400, e.message, type(e).__name__)
    return None


# Input.

def _field(error, default):
    path = [str(p) for p in error.absolute_path]
    if error.validator == 'required' and isinstance(error.instance, dict):
        missing = [p for p in error.validator_value
                   if p not in error.instance]
        path.extend(missing[:1])
    elif (error.validator == 'additionalProperties'
            and isinstance(error.instance, dict)):
        known = error.schema.get('properties', {})
        extra = sorted(str(k) for k in error.instance if k not in known)
        path.extend(extra[:1])
    return '.'.join(path) or default


def _validate(schema, data, default_field):
    validator = jsonschema.Draft202012Validator(schema)
    error = schema_exc.best_match(validator.iter_errors(data))
    if error is not None:
        reason = error.message
        if len(reason) > _MAX_MESSAGE:
            reason = reason[:_MAX_MESSAGE] + '...'
        raise exception.SchemaViolation(
            field=_field(error, default_field), reason=reason)
    return data


def _query(schema):
    args = flask.request.args
    query = {}
    for key in args:
        values = args.getlist(key)
        if len(values) > 1:
            raise exception.SchemaViolation(
                field=key, reason='given more than once')
        query[key] = values[0]
    return _validate(schema, query, 'query')


def _body(schema):
    raw = flask.request.get_data(cache=True)
    if not raw.strip():
        raise exception.SchemaViolation(
            field='body', reason='a JSON object is required')
    mimetype = flask.request.mimetype
    if mimetype != JSON:
        raise exception.UnsupportedMediaType(content_type=mimetype or '',
                                             use=JSON)
    return _validate(schema, lease_guard.parse_json(raw), 'body')


def _context():
    headers = flask.request.headers
    try:
        catalog = jsonutils.loads(headers.get('X-Service-Catalog') or '[]')
    except ValueError:
        catalog = []
    return blazar_context.BlazarContext.from_environ(
        flask.request.environ, service_catalog=catalog)


# Output.

def _render(status, result=None):
    if status == 204:
        return flask.Response(status=204)
    return flask.Response(jsonutils.dump_as_bytes(result), status=status,
                          mimetype=JSON)


def _error(code, message, name):
    return _render(code, {'error_code': code, 'error_message': message,
                          'error_name': name})


# Another service failed a request: what the caller is told (the first
# that matches; the logs have the rest).
_UPSTREAM_FAILURES = (
    (exception.NovaUnreachable, 'Nova cannot be reached; try again later.'),
    (exception.NovaError, 'Nova refused or failed a call the request '
                          'needed; see the service logs.'),
    (exception.PlacementUnreachable, 'Placement cannot be reached; try '
                                     'again later.'),
    (exception.KeystoneUnreachable, 'Keystone cannot be reached; try again '
                                    'later.'),
    (exception.KeystoneError, 'Keystone refused or failed a look-up the '
                              'request needed; see the service logs.'),
)
_UPSTREAM = tuple(kind for kind, _said in _UPSTREAM_FAILURES)


def _failure(error):
    """The answer to what a handler raised (in an except clause)."""
    if isinstance(error, _UPSTREAM):
        LOG.warning('Pcloud API call failed: %s', error)
        return _error(error.code, next(
            said for kind, said in _UPSTREAM_FAILURES
            if isinstance(error, kind)), type(error).__name__)
    if isinstance(error, exception.PcloudException) and error.code < 500:
        return _error(error.code, error.message, type(error).__name__)
    LOG.exception('Pcloud API call failed')
    return _error(500, 'Internal Server Error', 'InternalServerError')


def _view(func, status, body_schema, query_schema):
    def view(**path):
        try:
            kwargs = dict(path)
            kwargs['query'] = _query(query_schema)
            if body_schema is not None:
                kwargs['body'] = _body(body_schema)
            with _context() as ctx:
                result = func(ctx, **kwargs)
        except http_exc.HTTPException:
            raise
        except Exception as e:
            return _failure(e)
        return _render(status, result)

    view.__name__ = func.__name__
    view.__doc__ = func.__doc__
    return view


# Maintenance windows on compute hosts (cloud admins).

MAINTENANCES = '/pcloud-maintenances'
MAINTENANCE = MAINTENANCES + '/<maintenance_id>'


@route('GET', MAINTENANCES)
def maintenances_list(ctx, query):
    return {'maintenances': _api.list_maintenances(ctx)}


@route('POST', MAINTENANCES, 201, body=schemas.MAINTENANCE_CREATE)
def maintenances_create(ctx, query, body):
    return {'maintenance': _api.create_maintenance(ctx, body)}


@route('GET', MAINTENANCE)
def maintenances_show(ctx, query, maintenance_id):
    return {'maintenance': _api.show_maintenance(ctx, maintenance_id)}


@route('DELETE', MAINTENANCE, 204)
def maintenances_delete(ctx, query, maintenance_id):
    _api.delete_maintenance(ctx, maintenance_id)


# Host flavors and their pools (cloud admins; anyone may read flavors).

HOST_FLAVORS = '/pcloud-host-flavors'
HOST_FLAVOR = HOST_FLAVORS + '/<flavor_id>'
POOL_HOSTS = HOST_FLAVOR + '/hosts'


@route('GET', HOST_FLAVORS)
def host_flavors_list(ctx, query):
    return {'host_flavors': _api.list_host_flavors(ctx)}


@route('POST', HOST_FLAVORS, 201, body=schemas.HOST_FLAVOR_CREATE)
def host_flavors_create(ctx, query, body):
    return {'host_flavor': _api.create_host_flavor(ctx, body)}


@route('GET', HOST_FLAVOR)
def host_flavors_show(ctx, query, flavor_id):
    return {'host_flavor': _api.show_host_flavor(ctx, flavor_id)}


@route('DELETE', HOST_FLAVOR, 204)
def host_flavors_delete(ctx, query, flavor_id):
    _api.delete_host_flavor(ctx, flavor_id)


@route('GET', POOL_HOSTS)
def pool_hosts_list(ctx, query, flavor_id):
    return {'hosts': _api.list_pool_hosts(ctx, flavor_id)}


@route('POST', POOL_HOSTS, 201, body=schemas.POOL_HOST_ADD)
def pool_hosts_add(ctx, query, body, flavor_id):
    return {'host': _api.add_pool_host(ctx, flavor_id, body['host'])}


@route('DELETE', POOL_HOSTS + '/<host>', 204)
def pool_hosts_remove(ctx, query, flavor_id, host):
    _api.remove_pool_host(ctx, flavor_id, host)


# Pclouds (their owners' members; readers read).

PCLOUDS = '/pclouds'
PCLOUD = PCLOUDS + '/<pcloud_id>'
HOSTS = PCLOUD + '/hosts'
HOST = HOSTS + '/<name>'
TENANTS = PCLOUD + '/tenants'
RATIOS = PCLOUD + '/allocation-ratios'


@route('GET', PCLOUDS, query=schemas.PCLOUD_LIST_QUERY)
def pclouds_list(ctx, query):
    return {'pclouds': _api.list_pclouds(ctx, query.get('project_id'))}


@route('POST', PCLOUDS, 201, body=schemas.PCLOUD_CREATE)
def pclouds_create(ctx, query, body):
    return {'pcloud': _api.create_pcloud(ctx, body['name'])}


@route('GET', PCLOUD)
def pclouds_show(ctx, query, pcloud_id):
    return {'pcloud': _api.show_pcloud(ctx, pcloud_id)}


@route('DELETE', PCLOUD, 204)
def pclouds_delete(ctx, query, pcloud_id):
    _api.delete_pcloud(ctx, pcloud_id)


@route('GET', HOSTS, query=schemas.HOST_LIST_QUERY)
def hosts_list(ctx, query, pcloud_id):
    return {'hosts': _api.list_hosts(ctx, pcloud_id, query.get('state'))}


@route('POST', HOSTS, 201, body=schemas.HOST_ALLOCATE)
def hosts_allocate(ctx, query, body, pcloud_id):
    return {'host': _api.allocate_host(ctx, pcloud_id, body)}


@route('GET', HOST)
def hosts_show(ctx, query, pcloud_id, name):
    return {'host': _api.show_host(ctx, pcloud_id, name)}


def _hosts_update(ctx, query, body, pcloud_id, name):
    return {'host': _api.update_host(ctx, pcloud_id, name, body['state'])}


route('PUT', HOST, body=schemas.HOST_UPDATE)(_hosts_update)
route('PATCH', HOST, body=schemas.HOST_UPDATE)(_hosts_update)


@route('DELETE', HOST, 204)
def hosts_release(ctx, query, pcloud_id, name):
    _api.release_host(ctx, pcloud_id, name)


@route('GET', TENANTS)
def tenants_list(ctx, query, pcloud_id):
    return {'tenants': _api.list_tenants(ctx, pcloud_id)}


@route('POST', TENANTS, 201, body=schemas.TENANT_ADD)
def tenants_add(ctx, query, body, pcloud_id):
    return {'tenants': _api.add_tenant(ctx, pcloud_id, body['tenant_id'])}


@route('DELETE', TENANTS + '/<tenant_id>', 204)
def tenants_remove(ctx, query, pcloud_id, tenant_id):
    _api.remove_tenant(ctx, pcloud_id, tenant_id)


@route('GET', RATIOS)
def allocation_ratios_show(ctx, query, pcloud_id):
    return {'allocation_ratios': _api.show_allocation_ratios(ctx, pcloud_id)}


def _allocation_ratios_set(ctx, query, body, pcloud_id):
    return {'allocation_ratios': _api.set_allocation_ratios(
        ctx, pcloud_id, body)}


route('PUT', RATIOS, body=schemas.ALLOCATION_RATIOS)(_allocation_ratios_set)
route('PATCH', RATIOS, body=schemas.ALLOCATION_RATIOS)(
    _allocation_ratios_set)


# Offerings (any project member): when a reservation could be had.

OFFERINGS = '/pcloud-offerings'


@route('GET', OFFERINGS + '/hosts', query=schemas.HOST_OFFERINGS_QUERY)
def host_offerings_list(ctx, query):
    return _api.host_offerings(ctx, query)


@route('GET', OFFERINGS + '/instances',
       query=schemas.INSTANCE_OFFERINGS_QUERY)
def instance_offerings_list(ctx, query):
    return _api.instance_offerings(ctx, query)


# Availability (any project member): how many whole hosts or instance
# slots are free each hour, counts only.

AVAILABILITY = '/pcloud-availability'


@route('GET', AVAILABILITY + '/hosts', query=schemas.HOST_AVAILABILITY_QUERY)
def host_availability_show(ctx, query):
    return {'availability': _api.host_availability(ctx, query)}


@route('GET', AVAILABILITY + '/instances',
       query=schemas.INSTANCE_AVAILABILITY_QUERY)
def instance_availability_show(ctx, query):
    return {'availability': _api.instance_availability(ctx, query)}


# Allocations (cloud admins): what holds each host in a window.

@route('GET', '/pcloud-allocations', query=schemas.ALLOCATIONS_QUERY)
def allocations_list(ctx, query):
    return {'allocations': _api.list_allocations(ctx, query)}


# Leases (their project's readers): states as seeds/001 names them.

LEASES = '/pcloud-leases'


@route('GET', LEASES, query=schemas.LEASE_LIST_QUERY)
def leases_list(ctx, query):
    return {'leases': _api.list_leases(ctx, query.get('project_id'))}


@route('GET', LEASES + '/<lease_id>')
def leases_show(ctx, query, lease_id):
    return {'lease': _api.show_lease(ctx, lease_id)}


# Why a boot would be refused (any project member): the PcloudFilter's
# rule, Nova's compute services and Placement, for a hint and a flavor.

@route('GET', '/pcloud-boot-check', query=schemas.BOOT_CHECK_QUERY)
def boot_check(ctx, query):
    return {'boot_check': _api.check_boot(ctx, query)}


# What a lease may ask for (seeds/001's hints), to any reader.

@route('GET', '/pcloud-hints')
def hints_show(ctx, query):
    return {'hints': _api.lease_hints(ctx)}
