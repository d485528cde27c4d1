"""Issue 38, the eighth probe (docs/evidence/sandbox/probe-2026-11-26-eighth.md, P8-1): the lifeline was one pipe
whose only write end the server held; a confined job reopened the read end it had been handed *for writing*
through ``/proc/self/fd/N`` and kept that write end in a detached sleeper, so after ``kill -9`` of the server no
child read end of file: the sleeper, the warm worker and its supervisor lived on. Here a parent hands its lifeline
to a child that does the same (reopen every descriptor it can for reading and writing, hand them all to a sleeper
in a session of its own) before it watches; the parent is killed -9 and the child and the sleeper must be gone.
On the pipe lifeline this test fails (both live on); on the pidfd lifeline a reopened descriptor is one more
reference to the server's life and holds nothing open."""

import os
import subprocess
import sys
import time

from conftest import process_gone

from kprof_mcp import lifeline

HOLDS_ITS_LIFELINE = r"""
import os, subprocess, sys, time
spec = os.environ[sys.argv[1]]
fd = int(spec.split(":")[-2])
held = []
for flags in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR):
    try:
        held.append(os.open(f"/proc/self/fd/{fd}", flags))
    except OSError:
        pass
held.append(os.dup(fd))
sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], pass_fds=held,
                           start_new_session=True)
from kprof_mcp.lifeline import watch
watch()
print(os.getpid(), sleeper.pid, len(held), flush=True)
time.sleep(120)
"""

PARENT = r"""
import os, subprocess, sys, time
from kprof_mcp import lifeline
env, fds = lifeline.for_child(dict(os.environ))
subprocess.Popen([sys.executable, "-c", sys.argv[1], lifeline.ENV], env=env, pass_fds=fds,
                 start_new_session=True)
time.sleep(120)
"""


def test_a_child_that_reopens_its_lifeline_still_dies_with_a_killed_parent():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, HOLDS_ITS_LIFELINE],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    child = sleeper = None
    try:
        child, sleeper, held = (int(x) for x in parent.stdout.readline().split())
        assert held >= 2  # the dup, and a reopen where /proc allows one (a pidfd: Linux 6.9+)
        assert not process_gone(child) and not process_gone(sleeper)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while not (process_gone(child) and process_gone(sleeper)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_gone(child), "the child outlived its killed parent"
        assert process_gone(sleeper), "the sleeper holding the reopened lifeline outlived the killed parent"
    finally:
        parent.kill()
        for pid in (child, sleeper):
            if pid:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass


def test_the_lifeline_is_a_pidfd_of_the_process_that_hands_it():
    env, (fd,) = lifeline.for_child({})
    kind, number, _ = env[lifeline.ENV].split(":")
    assert (kind, int(number)) == ("pidfd", fd)
    with open(f"/proc/self/fdinfo/{fd}") as f:
        assert f"Pid:\t{os.getpid()}" in f.read()
    assert not os.get_inheritable(fd)  # only a child it is passed to (pass_fds) gets it


CONFINED_REPORTS = r"""
import os, re
held = set()
for fd in os.listdir("/proc/self/fd"):
    try:
        info = open(f"/proc/self/fdinfo/{fd}").read()
    except OSError:
        continue
    held.update(int(m) for m in re.findall(r"^Pid:\s*(-?\d+)$", info, re.M))
print(sorted(held), os.environ.get("KPROF_LIFELINE"), flush=True)
"""


def test_a_sandboxed_process_gets_nothing_of_the_server_its_supervisor_watches():
    """The supervisor takes the lifeline before it forks the confined process: the process (a job's)
    holds no pidfd of the server and no variable naming one; the supervisor kills it when the server dies."""
    from kprof_mcp import sandbox

    env, fds = lifeline.for_child(dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    out = subprocess.run(
        sandbox.wrap(None, [sys.executable, "-c", CONFINED_REPORTS]),
        env=env,
        pass_fds=fds,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "None"]
