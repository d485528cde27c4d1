"""Issue 38, the re-run probe's gap 3: a kernel child (profile_kernel's, which imports workspace packages)
has no PID namespace (kprof follows it by its pid). What may it read of other processes? Landlock's
ptrace scope refuses ``environ``, ``maps`` and ``mem`` of a process outside its domain (the server's
token in its environment included) whatever the user; ``cmdline`` and ``status`` were readable — as
root a kernel child now has a ``/proc`` of its own mounted ``hidepid=ptraceable``, where such a process
is not there at all. Real kernel children on the CPU."""

import os
import subprocess

import pytest
from conftest import FIXTURES

from kprof_mcp import sandbox
from kprof_mcp.engine import Config, Engine, KprofError

needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")


@needs_landlock
def test_a_kernel_child_reads_nothing_of_the_server_or_other_processes(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    other = subprocess.Popen(["sleep", "60"], env={"OTHER_SECRET": "x"})
    probe = f"""
import os
report = {{}}
for pid, who in (({os.getpid()}, "server"), ({other.pid}, "other")):
    for name in ("environ", "cmdline", "status", "maps", "mem"):
        try:
            open(f"/proc/{{pid}}/{{name}}", "rb").read(1)
            report[who + "_" + name] = "done"
        except OSError as e:
            report[who + "_" + name] = type(e).__name__
report["own_status"] = "done" if open("/proc/self/status").read() else "empty"
report["server_listed"] = str({os.getpid()}) in os.listdir("/proc")
REPORT = report
"""
    src = (FIXTURES / "user_kernels" / "scale.py").read_text()
    (ws / "probed.py").write_text(src + probe + "\nraise SystemExit(repr(REPORT))\n")
    engine = Engine(Config(workspace=ws, timeout_s=120, force_cpu=True, warm=False))
    try:
        with pytest.raises(KprofError) as e:
            engine.profile("probed.py", params={"n": 256}, mode="event")
    finally:
        engine.close()
        other.kill()
        other.wait()
    msg = str(e.value)
    root_user = os.geteuid() == 0  # its own /proc: the others are not there
    hidden, refused = "FileNotFoundError", "PermissionError"
    for who in ("server", "other"):
        for name in ("environ", "maps", "mem"):
            assert f"'{who}_{name}': '{hidden if root_user else refused}'" in msg, msg
        for name in ("cmdline", "status"):  # Landlock alone leaves these readable
            assert f"'{who}_{name}': '{hidden if root_user else 'done'}'" in msg, msg
    assert "'own_status': 'done'" in msg and f"'server_listed': {not root_user}" in msg, msg
