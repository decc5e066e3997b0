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

"""pcloud-sandbox: a real local cloud with the plugin set inside it.

Keystone, Nova (API, conductor, scheduler, fake computes) with Placement,
and Blazar, on loopback, SQLite and an in-process message bus by default.
It prints where the openstack, nova and blazar clients are (beside this
Python, e.g. .tox/sandbox/bin), the OS_* variables for them, and runs
until Ctrl-C. ``--demo`` runs the story of everything that exists so
far with those clients, stops the cloud and exits non-zero at the first
step that does not behave, naming it.
"""

import argparse
import importlib.util
import os
import signal
import sys
import time

from oslo_utils import timeutils

from pcloud_plugin import conf
from pcloud_plugin import context as context_mod
from pcloud_plugin.db import migration
try:
    from pcloud_plugin.sandbox import common as sandbox_common
    from pcloud_plugin.sandbox.demo import cloud_story
    from pcloud_plugin.sandbox.demo import ledger_story
    from pcloud_plugin.sandbox.demo import steps
    from pcloud_plugin.sandbox import supervisor
except ModuleNotFoundError as e:
    if (e.name or 'pcloud_plugin').startswith('pcloud_plugin'):
        raise  # ours: a bug, not a missing extra
    # Without the sandbox extra (psutil): main() says what to install.
    cloud_story = ledger_story = steps = supervisor = None
    sandbox_common = None
    _MISSING_AT_IMPORT = e.name

CONF = conf.CONF
INSTALL = "pip install 'pcloud-plugin[sandbox]'"
# (module, distribution) the sandbox extra brings beside the services
# supervisor.REQUIREMENTS lists; the last two are imported only in the
# service processes, where a missing one would be a crash in a log.
EXTRA_MODULES = (('psutil', 'psutil'), ('fixtures', 'fixtures'),
                 ('wsgi_intercept', 'wsgi-intercept'))
# The clients the sandbox prints the OS_* variables for.
CLIENTS = ('openstack', 'nova', 'blazar')


class _Terminated(BaseException):
    """SIGTERM, handled like Ctrl-C."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def _port(text):
    name, _, port = text.partition('=')
    try:
        return name, int(port)
    except ValueError:
        raise argparse.ArgumentTypeError('expected NAME=PORT, got %r' % text)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='pcloud-sandbox',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--state-dir', default='.sandbox',
                        help='configuration, databases and logs of the '
                             'running cloud (default: %(default)s)')
    parser.add_argument('--cache-dir',
                        help='where the Keystone snapshot is kept between '
                             'runs (default: $PCLOUD_SANDBOX_CACHE or '
                             '~/.cache/pcloud-sandbox)')
    parser.add_argument('--db', help='a MySQL/MariaDB server URL, e.g. '
                        'mysql+pymysql://user:pass@127.0.0.1/pcloud_sandbox:'
                        ' Nova, Placement, Blazar and the ledger get '
                        'databases named after it there (default: SQLite '
                        'under --state-dir; Keystone always runs from its '
                        'SQLite snapshot)')
    parser.add_argument('--transport', help='oslo.messaging URL, e.g. '
                        'rabbit://guest:guest@127.0.0.1:5672/ (default: '
                        'fake://, in each process)')
    parser.add_argument('--computes', type=int, default=4,
                        help='number of fake computes, of sizes 4, 8, 16 '
                             'and 32 vCPUs in turn (default: %(default)s)')
    parser.add_argument('--base-port', type=int,
                        default=supervisor.DEFAULT_BASE_PORT,
                        help='first of the ports, in order %s (default: '
                             '%%(default)s)'
                             % ', '.join(supervisor.PORT_NAMES))
    parser.add_argument('--port', type=_port, action='append', default=[],
                        metavar='NAME=PORT',
                        help='the port of one service, e.g. keystone=5000')
    parser.add_argument('--timeout', type=int, default=180,
                        help='seconds to wait for the services to be ready '
                             '(default: %(default)s)')
    parser.add_argument('--fresh', action='store_true',
                        help='start a new cloud even if the state '
                             'directory holds one (a start there carries '
                             'on with it otherwise)')
    parser.add_argument('--blazar-filters', action='store_true',
                        help="also run Blazar's scheduler filters "
                             '(BlazarFilter, AggregateInstanceExtraSpecs'
                             'Filter, AggregateMultiTenancyIsolation) '
                             'beside the PcloudFilter; needs blazar-nova')
    parser.add_argument('--dashboard', action='store_true',
                        help='also serve Horizon with the pcloud dashboard '
                             '(needs horizon in this Python)')
    parser.add_argument('--demo', action='store_true',
                        help='run the end-to-end story, stop, and exit '
                             'with its status')
    parser.add_argument('--ledger-only', action='store_true',
                        help='with --demo: only the ledger part of the '
                             'story, without starting the cloud')
    return parser.parse_args(argv)


def _prepare_story_ledger(state_dir, url):
    if url.startswith('sqlite:///') and os.path.exists(url[10:]):
        # The story starts from an empty ledger every time.
        os.remove(url[10:])
    config_file = os.path.join(state_dir, 'demo-ledger.conf')
    with open(config_file, 'w') as f:
        f.write('[pcloud_database]\nconnection = %s\n' % url)
    CONF(['--config-file', config_file], project='pcloud')
    migration.upgrade()


def _run_story(story, parts):
    try:
        for part in parts:
            part()
    except steps.DemoFailed as e:
        print('Demo FAILED at %s' % e)
        return 1
    print('Demo passed: %d steps.' % story.number)
    return 0


def clients_line(bin_dir=None):
    """Where the openstack, nova and blazar clients are: beside this

    Python (e.g. .tox/sandbox/bin), seldom on the user's PATH.
    """
    bin_dir = bin_dir or os.path.dirname(os.path.abspath(sys.executable))
    found = [os.path.join(bin_dir, name) for name in CLIENTS
             if os.path.exists(os.path.join(bin_dir, name))]
    line = 'Clients: %s' % (', '.join(found) if found else
                            'none of %s in %s' % (', '.join(CLIENTS),
                                                  bin_dir))
    activate = os.path.join(bin_dir, 'activate')
    if found and os.path.exists(activate):
        line += ' (or "source %s" to have them on your PATH)' % activate
    return line + '.'


def _print_ready(sandbox):
    ports = sandbox.ports
    if sandbox.resumed:
        print('Carrying on with the cloud in %s (--fresh starts a new one).'
              % sandbox.state_dir)
    print('Sandbox ready in %.1fs, %d MB resident: Keystone :%d, Nova :%d, '
          'Placement :%d, Blazar :%d on 127.0.0.1, %d fake computes; logs '
          'in %s.' % (sandbox.started_in, sandbox.rss() // 2 ** 20,
                      ports['keystone'], ports['nova'], ports['placement'],
                      ports['blazar'], len(sandbox.computes),
                      sandbox.path('logs')))
    print(clients_line())
    print('Use them with these (also in %s; %s is the "demo" member):' % (
        sandbox.path('admin-openrc'), sandbox.path('demo-openrc')))
    for key, value in sorted(sandbox.env().items()):
        print('export %s=%s' % (key, value))
    if sandbox.dashboard_url():
        print('Dashboard: %s, as %s, each with the password %s.' % (
            sandbox.dashboard_url(),
            ', '.join('%s (project %s)' % (user, project)
                      for user, project in sorted(
                          sandbox_common.PROJECT_OF.items())),
            sandbox_common.PASSWORD))
    sys.stdout.flush()


def _serve(sandbox):
    print('Ctrl-C stops it.')
    sys.stdout.flush()
    while True:
        dead = sandbox.dead()
        if dead:
            print('%s exited: see %s. Stopping the sandbox; a later start '
                  'on the same --state-dir carries on with its cloud.'
                  % (', '.join(dead), sandbox.log(dead[0])))
            # A crash: the databases stay, even on a server (--db).
            sandbox.stop(keep=True)
            return 1
        time.sleep(1)


def missing_modules():
    """The modules of the sandbox extra this Python lacks."""
    if supervisor is None:
        return [_MISSING_AT_IMPORT]
    return [module for module, _dist in supervisor.REQUIREMENTS
            + EXTRA_MODULES if importlib.util.find_spec(module) is None]


def main(argv=None):
    missing = missing_modules()
    if missing:
        print('ERROR: pcloud-sandbox needs %s, missing from this Python '
              '(%s): %s, or run it through "tox -e sandbox".'
              % (', '.join(missing), sys.executable, INSTALL),
              file=sys.stderr)
        return 2
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(args.state_dir, exist_ok=True)
    state_dir = os.path.abspath(args.state_dir)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        sandbox = supervisor.Sandbox(
            state_dir, cache_dir=args.cache_dir, db=args.db,
            transport=args.transport, computes=args.computes,
            base_port=args.base_port, ports=dict(args.port),
            timeout=args.timeout, fresh=args.fresh or args.demo,
            blazar_filters=args.blazar_filters, dashboard=args.dashboard)
    except supervisor.SandboxError as e:
        print('ERROR: %s' % e, file=sys.stderr)
        return 2
    story = steps.Story()

    def ledger_part():
        _prepare_story_ledger(state_dir, sandbox.databases.story_ledger)
        ledger_story.tell(context_mod.get_admin_context(), story,
                          timeutils.utcnow())

    if args.demo and args.ledger_only:
        return _run_story(story, [ledger_part])

    print('Starting the sandbox in %s ...' % state_dir)
    sys.stdout.flush()
    try:
        sandbox.start()
        _print_ready(sandbox)
        if args.demo:
            return _run_story(story, [ledger_part, lambda: cloud_story.tell(
                story, sandbox)])
        return _serve(sandbox)
    except supervisor.SandboxError as e:
        print('ERROR: %s' % e, file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Terminated):
        print('Stopping the sandbox.')
        return 0
    finally:
        sandbox.stop()


if __name__ == '__main__':
    sys.exit(main())
