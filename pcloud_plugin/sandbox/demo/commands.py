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

"""The real command-line clients, run as a user runs them, for the demo

(and the sandbox's functional tests): Cli, with the sandbox's OS_*
variables; the checks that a command or a boot is refused; the dates a
lease is given.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time


class CommandFailed(Exception):
    pass


class Cli:
    """The real command-line clients, with the sandbox's OS_* variables."""

    # The longest pause between two tries of wait(), in seconds.
    MAX_PAUSE = 4.0

    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.path = os.pathsep.join((os.path.dirname(sys.executable),
                                     os.environ.get('PATH', '')))

    def run(self, *args, user='admin'):
        command = shutil.which(args[0], path=self.path)
        if command is None:
            raise CommandFailed('%s is not installed' % args[0])
        result = self._process((command,) + args[1:],
                               self.sandbox.client_env(user))
        if result.returncode:
            lines = [line for line in result.stderr.splitlines()
                     if not line.startswith('Could not load')]
            raise CommandFailed('"%s" exited %d: %s' % (
                ' '.join(args), result.returncode,
                ' / '.join(lines[-3:]) or result.stdout[-300:]))
        return result.stdout

    def _process(self, argv, env):
        return subprocess.run(argv, capture_output=True, text=True,
                              env=env, timeout=120)

    def json(self, *args, user='admin'):
        return json.loads(self.run(*args, '-f', 'json', user=user))

    def wait(self, title, args, done, user='admin', timeout=60):
        """Run ``args`` again until ``done(output)``; return the output.

        Half a second between the first tries, then longer, up to
        MAX_PAUSE: each try is a new client process (a second or more of
        CPU), and a lease's start is minutes away.
        """
        deadline = time.monotonic() + timeout
        pause = 0.5
        while True:
            output = self.json(*args, user=user)
            if done(output):
                return output
            if time.monotonic() > deadline:
                raise AssertionError('%s: still %s after %ds'
                                     % (title, output, timeout))
            time.sleep(pause)
            pause = min(pause * 1.5, self.MAX_PAUSE)


def boot_fails(cli, name, flavor, user, *options):
    """Ask for a server that must not be made; say how it was refused."""
    try:
        server = cli.json('openstack', 'server', 'create', '--flavor',
                          flavor, '--image', 'cirros', '--nic', 'none',
                          *options, name, user=user)
    except CommandFailed as e:
        return 'refused: %s' % e
    found = cli.wait('server %s' % name, ('openstack', 'server', 'show',
                                          server['id']),
                     lambda found: found['status'] in ('ACTIVE', 'ERROR'),
                     user=user)
    if found['status'] != 'ERROR':
        raise AssertionError('%s is %s' % (name, found['status']))
    cli.run('openstack', 'server', 'delete', '--wait', server['id'],
            user=user)
    return '%s went to ERROR (no valid host)' % name


def refused(cli, args, user, *saying):
    """A command that must fail, saying each of ``saying``."""
    try:
        cli.run(*args, user=user)
    except CommandFailed as e:
        missing = [text for text in saying if text not in str(e)]
        if missing:
            raise AssertionError('refused, but without %s: %s'
                                 % (missing, e))
        return 'refused: %s' % e
    raise AssertionError('"%s" was not refused' % ' '.join(args))


def conflict(cli, args, user, *saying):
    """A command of ours that the Pcloud API must refuse with a 409."""
    return refused(cli, args, user, 'HTTP 409', *saying)


def lease_date(delta):
    """A lease date ``delta`` from now, to the whole minute (UTC)."""
    return (datetime.datetime.now(datetime.timezone.utc)
            + delta).strftime('%Y-%m-%d %H:%M')


def in_an_hour():
    return lease_date(datetime.timedelta(hours=1))
