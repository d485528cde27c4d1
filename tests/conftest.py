import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
H100 = FIXTURES / "h100_event"

# Kernels in this process (tests/unit/test_kernels.py) run on the CPU through Triton's interpreter.
os.environ.setdefault("TRITON_INTERPRET", "1")
# The device locks of this test session are its own (issue 40): another kprof process on the machine — a
# user's server, another checkout's suite — must not make a test wait for "cpu" or fail on it. Every
# process the tests start (servers over stdio included: server_env) inherits it.
if not os.environ.get("KPROF_LOCK_DIR"):
    import tempfile

    os.environ["KPROF_LOCK_DIR"] = tempfile.mkdtemp(prefix="kprof-test-locks-")


def h100_dir(kernel: str, version: str) -> Path:
    (d,) = [p for p in (H100 / kernel).glob(f"*/*-{version}") if p.is_dir()]
    return d


def h100_result(kernel: str, version: str):
    from kprof_mcp.models import ProfileResult

    return ProfileResult.model_validate_json((h100_dir(kernel, version) / "result.json").read_text())


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def engine(workspace):
    from kprof_mcp.engine import Config, Engine

    e = Engine(Config(workspace=workspace, timeout_s=600))
    yield e
    e.close()  # its warm workers


def server_env() -> dict:
    """The MCP SDK passes only a safe subset of the environment to a stdio server."""
    return {
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "KPROF_FORCE_CPU": os.environ.get("KPROF_FORCE_CPU", ""),
        "KPROF_LOCK_DIR": os.environ["KPROF_LOCK_DIR"],
    }


PY = sys.executable


def write_scale(path: Path, mode: str, extra: str = "") -> Path:
    """tests/fixtures/user_kernels/scale.py with another MODE (see its run()), plus ``extra`` code."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text().replace('MODE = "ok"', f'MODE = "{mode}"')
        + extra
    )
    return path


def process_gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a test's HTTP server)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Something accepts connections on 127.0.0.1:``port``."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False
