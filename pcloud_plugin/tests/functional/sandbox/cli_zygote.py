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

"""``openstack`` commands for the sandbox stories, a fork each.

Each command of a story is still a process of its own running the
client's own ``main()`` with the command's arguments and environment, as
a user's is. What it skips is importing the client: 1.2 s of CPU of the
1.6 s a command costs, and the stories run hundreds of commands, on two
cores beside the cloud they test. A server process imports the client
once and forks a child per connection on a Unix socket.

Protocol: the client sends one JSON line ``{"argv": [...], "env": {...}}``;
the child answers one JSON line ``{"pid": N}``, runs the command, then
one line ``{"rc": N, "stdout": "...", "stderr": "..."}``.
"""

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

_LOCK = threading.Lock()
_SERVER = {}
# Taken at import: each test's own temporary directory goes with it.
_TMP = tempfile.gettempdir()


def _server_path():
    """The socket of this process's server, started on first use."""
    with _LOCK:
        proc = _SERVER.get('proc')
        if proc is None or proc.poll() is not None:
            directory = tempfile.mkdtemp(prefix='pcloud-cli-', dir=_TMP)
            path = os.path.join(directory, 'socket')
            proc = subprocess.Popen(
                [sys.executable, '-m', __name__, path],
                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
            if proc.stdout.readline() != b'ready\n':
                proc.wait()
                shutil.rmtree(directory, ignore_errors=True)
                raise RuntimeError('the openstack client server did not '
                                   'start (exit %s)' % proc.returncode)
            if not _SERVER:
                atexit.register(_stop)
            _stop()
            _SERVER.update(proc=proc, path=path, directory=directory)
        return _SERVER['path']


def _stop():
    proc = _SERVER.pop('proc', None)
    if proc is not None:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    directory = _SERVER.pop('directory', None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def run(argv, env, timeout):
    """CompletedProcess of ``openstack argv[1:]`` with ``env`` as its

    environment, as subprocess.run gives;
    raises subprocess.TimeoutExpired (the command killed) past timeout.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(_server_path())
        conn.sendall(json.dumps({'argv': list(argv), 'env': env}).encode()
                     + b'\n')
        reader = conn.makefile('rb')
        pid = None
        try:
            pid = json.loads(reader.readline())['pid']
            answer = json.loads(reader.readline())
        except socket.timeout:
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise subprocess.TimeoutExpired(argv, timeout)
        finally:
            reader.close()
    return subprocess.CompletedProcess(argv, answer['rc'], answer['stdout'],
                                       answer['stderr'])


def _command(conn):
    """In the forked child: run one command, answer, never return."""
    rc = 1
    try:
        reader = conn.makefile('rb')
        request = json.loads(reader.readline())
        conn.sendall(json.dumps({'pid': os.getpid()}).encode() + b'\n')
        os.environ.clear()
        os.environ.update(request['env'])
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.argv = list(request['argv'])
        from openstackclient import shell
        try:
            rc = shell.main(sys.argv[1:])
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
        answer = {'rc': rc or 0}
        for name, f in (('stdout', out), ('stderr', err)):
            f.seek(0)
            answer[name] = f.read().decode(errors='replace')
        conn.sendall(json.dumps(answer).encode() + b'\n')
    finally:
        os._exit(rc if isinstance(rc, int) else 1)


def _serve(path):
    # What every command imports, once; the plugins' clients load as a
    # command asks for them, in the child, as the real client does.
    from openstackclient import shell  # noqa: F401
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    # Children are not waited for: the kernel reaps them.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    parent = os.getppid()
    listener.settimeout(5)
    while True:
        try:
            conn, _addr = listener.accept()
        except socket.timeout:
            # The tests' process is gone (killed): so is our use.
            if os.getppid() != parent:
                shutil.rmtree(os.path.dirname(path), ignore_errors=True)
                return
            continue
        conn.settimeout(None)
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _command(conn)
        conn.close()


if __name__ == '__main__':
    _serve(sys.argv[1])
