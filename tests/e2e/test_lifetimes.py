"""No process outlives the server, and nobody's abandoned call keeps the GPU: through the real
server processes, on the CPU, with a kernel that starts a grandchild and then spins forever
(``scale.py`` in MODE "orphan", which writes both pids to ``KPROF_TEST_PIDFILE``).

* SIGTERM stops a stdio server (``kprof_mcp.server``, or the ``kprof-mcp`` launcher) with its
  clean-up, as Ctrl-C does: it exits, and its whole tree (warm workers, the job's child and
  grandchild) is gone.
* ``kill -9`` leaves the server no chance to clean up: its children see their lifeline (a pidfd of
  the server) become readable and kill their process groups themselves. Every child holds a pidfd of
  the server; a forked copy of the server drops it and hands its own children a pidfd of itself
  (checked in ``/proc/<pid>/fdinfo``). The lifeline reaches a child behind a profiler prefix, and
  ``kprof worker``'s Dask workers.
* Over streamable HTTP, a client that drops its TCP connection in the middle of a
  ``profile_kernel`` call has its job cancelled, as a clean disconnect does.
"""

import json
import os
import re
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import anyio
import psutil
import pytest
from conftest import PY, free_port, listening, process_gone, server_env, write_scale
from mcp import Client


def _orphan_kernel(workspace: Path) -> str:
    return str(write_scale(workspace / "mykernels" / "scale_orphan.py", "orphan").relative_to(workspace))


def _env(pidfile: Path) -> dict:
    return {**os.environ, **server_env(), "KPROF_FORCE_CPU": "1", "KPROF_TEST_PIDFILE": str(pidfile)}


def _profile_hanging_kernel(workspace: Path) -> dict:
    """The tools/call request of a profile_kernel that would wait 50 s for the hanging kernel."""
    arguments = {"kernel": _orphan_kernel(workspace), "params": {"n": 64}, "mode": "event", "wait_s": 50}
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "profile_kernel", "arguments": arguments, "_meta": {"progressToken": 2}},
    }


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "lifetimes", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _wait_for(what, timeout_s: float, message: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if got := what():
            return got
        time.sleep(0.1)
    raise AssertionError(message)


def _pids(pidfile: Path) -> list[int]:
    """The hanging job's child and grandchild, once it wrote them."""
    _wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2, 60, "the job never started")
    return [int(p) for p in pidfile.read_text().split()]


def _tree(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def _all_gone(pids, timeout_s: float, what: str = "processes outlived the server") -> None:
    _wait_for(lambda: all(process_gone(p) for p in pids), timeout_s, what)


def _pidfds(pid: int) -> set[int]:
    """The processes a process holds pidfds of (their pids, from ``/proc/<pid>/fdinfo``)."""
    out: set[int] = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        if m := re.search(r"^Pid:\s*(-?\d+)$", info, re.M):
            out.add(int(m[1]))
    return out


class StdioServer:
    """A stdio server process spoken to in raw JSON-RPC lines (its pid is what these tests need)."""

    def __init__(self, module: str, workspace: Path, pidfile: Path):
        self.proc = subprocess.Popen(
            [PY, "-m", module, "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(pidfile),
            start_new_session=True,
        )
        self.send(INITIALIZE)
        assert json.loads(self.proc.stdout.readline())["id"] == 1
        self.send(INITIALIZED)

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()


@pytest.fixture
def hanging_job(workspace, tmp_path, request):
    """A stdio server (``python -m <param>``) whose only GPU slot runs the hanging kernel; yields
    the server, the processes of its tree and the job's child and grandchild."""
    pidfile = workspace / "out" / "profiles" / "pids"  # a kernel child writes only there (issue 38)
    server = StdioServer(request.param, workspace, pidfile)
    tree = [psutil.Process(server.proc.pid)]
    try:
        server.send(_profile_hanging_kernel(workspace))
        job = _pids(pidfile)
        tree += _tree(server.proc.pid)
        yield server, tree[1:], job
    finally:
        _kill(tree)  # whatever the test did: nothing left behind
        server.proc.wait(10)


def _kill(processes: list[psutil.Process]) -> None:
    for p in processes:
        try:
            p.kill()  # psutil checks it is still the same process
        except psutil.NoSuchProcess:
            pass


@pytest.mark.parametrize("hanging_job", ["kprof_mcp.server", "kprof_mcp"], indirect=True)
def test_sigterm_stops_the_server_and_its_whole_tree(hanging_job):
    server, tree, job = hanging_job
    assert len(tree) >= 3 and set(job) <= {p.pid for p in tree}  # warm workers, the job's grandchild
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(30) == 128 + signal.SIGTERM  # its own exit, after its clean-up (not killed)
    _all_gone([p.pid for p in tree], 5)


@pytest.mark.parametrize("hanging_job", ["kprof_mcp.server"], indirect=True)
def test_kill_9_leaves_no_child_the_lifeline_kills_them(hanging_job):
    server, tree, _ = hanging_job
    assert server.proc.pid in _pidfds(server.proc.pid)  # its lifeline: a pidfd of itself
    children = [p for p in tree if p.ppid() == server.proc.pid]
    assert len(children) >= 2  # the warm workers (the package-loading one and the CPU's)
    for child in children:
        assert server.proc.pid in _pidfds(child.pid), "a child must hold its lifeline: a pidfd of the server"
    server.proc.kill()
    server.proc.wait(10)
    _all_gone([p.pid for p in tree], 5)


FORKS_AFTER_MAKING_ITS_LIFELINE = """\
import os, sys, time
from kprof_mcp import lifeline
env, fds = lifeline.for_child({})
ready_r, ready_w = os.pipe()
if os.fork() == 0:
    lifeline.for_child({})  # the copy's own lifeline, for its own children
    os.write(ready_w, b"x")  # os.fork has returned here: the fork hooks have run
    time.sleep(60)
os.read(ready_r, 1)  # the copy is past its fork hooks before anyone looks at its descriptors
print(os.getpid(), flush=True)
os.wait()
"""


def test_a_forked_copy_hands_its_children_its_own_lifeline():
    parent = subprocess.Popen(
        [PY, "-c", FORKS_AFTER_MAKING_ITS_LIFELINE],
        stdout=subprocess.PIPE,
        env={**os.environ, **server_env()},
        start_new_session=True,
    )
    tree = [psutil.Process(parent.pid)]
    try:
        assert int(parent.stdout.readline()) == parent.pid
        tree += _tree(parent.pid)
        assert _pidfds(parent.pid) == {parent.pid}
        assert _pidfds(tree[1].pid) == {tree[1].pid}, "the copy must drop the parent's lifeline for its own"
    finally:
        _kill(tree)


# A profiler prefix as ncu and nsys are: a process of the child's group that starts the child and
# waits for it (a shell here, which keeps inherited descriptors as they do).
PREFIX = ["sh", "-c", '"$@"; exit $?', "profiler"]
STARTS_A_CHILD_BEHIND_A_PREFIX = """\
import sys
from kprof_mcp.runner import _run_once
_run_once(["describe", "--source", sys.argv[1]], 600, prefix=sys.argv[2:])
"""


def test_a_child_behind_a_profiler_prefix_dies_with_its_parent(workspace, tmp_path):
    pidfile = tmp_path / "pid"
    package = workspace / "hangs_at_import.py"
    package.write_text(
        f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "while True:\n    time.sleep(1)\n"
    )
    parent = subprocess.Popen(
        [PY, "-c", STARTS_A_CHILD_BEHIND_A_PREFIX, str(package), *PREFIX],
        env=_env(pidfile),
        start_new_session=True,
    )
    tree = [psutil.Process(parent.pid)]
    try:
        _wait_for(lambda: pidfile.exists() and pidfile.read_text(), 60, "the child never started")
        tree += _tree(parent.pid)
        child = psutil.Process(int(pidfile.read_text()))
        assert psutil.Process(child.ppid()).name() == "sh"  # behind the prefix
        parent.kill()
        parent.wait(10)
        _all_gone([p.pid for p in tree[1:]], 5)
    finally:
        _kill(tree)


def test_kprof_worker_takes_its_dask_workers_with_it(tmp_path):
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=0, dashboard_address=":0", protocol="tcp://")
    launcher = subprocess.Popen(
        [PY, "-m", "kprof_mcp.cli", "worker", "--scheduler", cluster.scheduler_address, "--gpus", "cpu"],
        env={**_env(tmp_path / "unused"), "KPROF_WARM": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    tree = [psutil.Process(launcher.pid)]
    try:
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as c:
            c.wait_for_workers(1, timeout=60)
        tree += _tree(launcher.pid)
        assert len(tree) == 2  # the launcher and its one Dask worker
        launcher.kill()
        launcher.wait(10)
        _all_gone([p.pid for p in tree[1:]], 5, "a Dask worker outlived kprof worker")
    finally:
        _kill(tree)
        cluster.close()


# ----------------------------------------------------------------------------- streamable HTTP


class RawHttp:
    """A minimal MCP client over raw HTTP/1.1, so the test decides how a connection ends."""

    def __init__(self, port: int):
        self.port, self.session = port, None

    def post(self, message: dict) -> socket.socket:
        body = json.dumps(message).encode()
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        if self.session:
            head += [f"Mcp-Session-Id: {self.session}", "Mcp-Protocol-Version: 2025-06-18"]
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        return s

    def exchange(self, message: dict) -> bytes:
        """Post ``message`` and read the whole response (the server then closes the connection)."""
        with self.post(message) as s:
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        if m := re.search(rb"(?i)\r\nmcp-session-id: *([^\r]+)", data):
            self.session = m[1].decode()
        return data


def _drop(s: socket.socket) -> None:
    """Close abruptly: a TCP reset, as when the client's process or network dies."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_a_dropped_http_connection_cancels_its_job(workspace, tmp_path):
    pidfile, port = workspace / "out" / "profiles" / "pids", free_port()  # a kernel child writes only there
    proc = subprocess.Popen(
        [
            PY,
            "-m",
            "kprof_mcp.server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(workspace),
        ],
        env=_env(pidfile),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(lambda: listening(port), 30, "the HTTP server did not start")
        client = RawHttp(port)
        client.exchange(INITIALIZE)
        client.exchange(INITIALIZED)
        call = client.post(_profile_hanging_kernel(workspace))
        job_pids = _pids(pidfile)
        assert call.recv(4096).startswith(b"HTTP/1.1 200")  # the answer's SSE stream is open
        _drop(call)
        _all_gone(job_pids, 10, "the dropped call's job kept running")
        assert anyio.run(_job_status, port) == "cancelled"
    finally:
        proc.terminate()
        proc.wait(30)


async def _job_status(port: int) -> str:
    """The final state of the server's only job, asked by another client (an unknown id lists the
    recent jobs): "cancelled", or what it still is after 10 s."""
    async with Client(f"http://127.0.0.1:{port}/mcp") as c:
        listing = (await c.call_tool("get_profile", {"job_id": "?"})).content[0].text
        (job_id,) = re.findall(r"recent jobs: \['([0-9a-f]+)'\]", listing)
        with anyio.move_on_after(10):
            while not (r := await c.call_tool("get_profile", {"job_id": job_id})).is_error:
                await anyio.sleep(0.2)
        return (
            "cancelled"
            if r.is_error and "was cancelled" in r.content[0].text
            else r.structured_content["status"]
        )


STARTS_A_CHILD_WITH_A_THEN = """
import subprocess, sys
from kprof_mcp import lifeline
env, fds = lifeline.for_child(dict(__import__("os").environ), then=[sys.executable, "-c",
                              "open(%r, 'w').write('reset')" % sys.argv[1]])
subprocess.Popen([sys.executable, "-c", "from kprof_mcp import lifeline; lifeline.watch(); import time; "
                  "time.sleep(120)"], env=env, pass_fds=fds, start_new_session=True)
import time; time.sleep(120)
"""


def test_an_orphaned_child_leaves_its_then_behind(tmp_path):
    """A child behind a clock-locking profiler leaves `nvidia-smi -rgc` behind when its parent dies
    (SIGKILL stops the profiler from restoring the clocks itself): here a marker file stands for it."""
    marker = tmp_path / "reset"
    parent = subprocess.Popen(
        [PY, "-c", STARTS_A_CHILD_WITH_A_THEN, str(marker)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        start_new_session=True,
    )
    try:
        _wait_for(lambda: len(_tree(parent.pid)) >= 1, 30, "the child never started")
        children = _tree(parent.pid)
        time.sleep(1.0)  # the child's watch is running
        parent.kill()
        parent.wait(10)
        _all_gone([p.pid for p in children], 5)
        _wait_for(marker.exists, 10, "the orphaned child did not start its `then`")
        assert marker.read_text() == "reset"
    finally:
        _kill([psutil.Process(parent.pid)] if psutil.pid_exists(parent.pid) else [])


def _gpu_facts() -> dict[str, str]:
    """The GPU's compute processes and SM clock as nvidia-smi reports them."""
    q = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    clocks = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    locked = subprocess.run(
        ["nvidia-smi", "-q", "-d", "CLOCK"], capture_output=True, text=True, timeout=30
    ).stdout
    return {
        "compute_apps": q,
        "sm_clock": clocks,
        "locked": " | ".join(
            ln.strip() for ln in locked.splitlines() if "Locked" in ln or "lock" in ln.lower()
        ),
    }


def _gpu_and_ncu() -> bool:
    from kprof_mcp.tools.ncu import find_ncu
    from kprof_mcp.tools.nvidia_smi import gpu_present

    return gpu_present() and find_ncu() is not None and os.environ.get("KPROF_FORCE_CPU") != "1"


@pytest.mark.skipif(not _gpu_and_ncu(), reason="needs an NVIDIA GPU and Nsight Compute")
def test_kill_9_while_ncu_profiles_on_the_gpu_leaves_nothing(workspace, capsys):
    """On a GPU: the server killed with SIGKILL while Nsight Compute profiles a matmul (clocks locked
    to base): ncu, the profiled child and the warm workers die within seconds, the GPU has no compute
    process left, and the clocks are reset by what the orphaned child left behind."""
    port = free_port()
    env = {
        k: v
        for k, v in {**os.environ, **server_env(), "KPROF_FORCE_CPU": ""}.items()
        if k != "TRITON_INTERPRET"
    }  # conftest sets it for this process's CPU kernels
    proc = subprocess.Popen(
        [
            PY,
            "-m",
            "kprof_mcp",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(workspace),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    tree = [psutil.Process(proc.pid)]
    try:
        _wait_for(lambda: listening(port), 60, "the HTTP server did not start")

        async def submit():
            async with Client(f"http://127.0.0.1:{port}/mcp") as c:
                r = await c.call_tool(
                    "profile_kernel",
                    {
                        "kernel": "matmul",
                        "version": "v3",
                        "mode": "ncu",
                        "params": {"M": 8192, "N": 8192, "K": 8192},
                        "wait_s": 0,
                    },
                )
                assert not r.is_error, r.content[0].text

        anyio.run(submit)
        ncu = _wait_for(
            lambda: [p for p in _tree(proc.pid) if p.name().startswith("ncu")], 120, "ncu never started"
        )
        time.sleep(3)  # ncu is replaying the kernel now, clocks locked
        before = _gpu_facts()
        tree += _tree(proc.pid)
        t0 = time.monotonic()
        proc.kill()
        proc.wait(10)
        _all_gone([p.pid for p in tree[1:]], 15, "processes outlived the killed server")
        gone_s = time.monotonic() - t0
        time.sleep(3)  # the clock reset the child left behind runs a second after the kill
        after = _gpu_facts()
        with capsys.disabled():
            print(
                f"\nkill -9 during ncu: {len(tree) - 1} processes (ncu pids {[p.pid for p in ncu]}) gone in "
                f"{gone_s:.2f} s; before: {before}; after: {after}"
            )
        assert after["compute_apps"] == "", after
    finally:
        _kill(tree)
