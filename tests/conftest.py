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
# process the tests start (servers over stdio included: server_env) inherits it. Under pytest-xdist (the
# default: pyproject's addopts) each worker is a session of its own: the controller's directory, which
# the workers inherit, gets one subdirectory per worker, so two workers never wait on each other's
# "cpu" lock. A KPROF_LOCK_DIR given from outside is kept as it is (shared by the workers then).
if not os.environ.get("KPROF_LOCK_DIR"):
    import tempfile

    os.environ["KPROF_LOCK_DIR"] = os.environ["KPROF_TEST_SESSION_LOCKS"] = tempfile.mkdtemp(
        prefix="kprof-test-locks-"
    )
_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and os.environ["KPROF_LOCK_DIR"] == os.environ.get("KPROF_TEST_SESSION_LOCKS"):
    os.environ["KPROF_LOCK_DIR"] = os.path.join(os.environ["KPROF_TEST_SESSION_LOCKS"], _worker)
    os.makedirs(os.environ["KPROF_LOCK_DIR"], exist_ok=True)


# Parallel by default (issue 40: the suite in minutes on a 2-core CPU): without -n/--numprocesses the
# suite runs on WORKERS pytest-xdist workers, one module (or class) per worker at a time (loadscope: a
# module's shared server or cluster starts once). 3 on 2 cores: most tests wait on the processes they
# start (the server, kernel children, time limits), and a third worker fills that wait (measured on 140
# tests: 3 workers 168 s, 2 workers 236 s; tests/README.md). Here rather than in pyproject's addopts, which would
# reach the example suites that kprof runs from this checkout (`kprof run -- python -m pytest
# examples/...`). Not on a machine with an NVIDIA GPU, where two workers would time kernels at once;
# `-n 0` runs in one process, `-n N` on N workers. `-m quick` (one test) and runs of named tests only
# (`file::test`) stay in one process: starting workers would cost more than it saves.
WORKERS = 3


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    args = config.args or []
    if (
        getattr(config.option, "numprocesses", 0) is None
        and not hasattr(config, "workerinput")
        and not config.getoption("usepdb", False)
        and not os.path.exists("/dev/nvidiactl")
        and (config.option.markexpr or "").strip() != "quick"
        and not (args and all("::" in a for a in args))
    ):
        config.option.numprocesses = WORKERS
        if config.option.dist == "no":
            config.option.dist = "loadscope"
            config.option.loadscopereorder = False  # the order below, not xdist's (most tests first)


# The longest modules first (issue 40): loadscope hands out modules in collection order (above: xdist's
# own reordering, by number of tests, put one-test modules of minutes, the fuzzers and the quick subset,
# last, where one worker ran on alone). Longest processing time first leaves the short modules to fill
# the end. Their cost: the sum of their tests' times in the 2026-11-27 05:34 run (3 workers; seconds).
SLOW_FIRST = (
    "unit/test_cluster.py",  # 464
    "unit/test_first_hour.py",  # 335
    "unit/test_first_hour_cpu.py",  # 295
    "unit/test_warm.py",  # 265
    "calibration/test_calibration_ranks_heldout2.py",  # 262
    "e2e/test_fuzz_http.py",  # 225
    "calibration/test_calibration.py",  # 225
    "e2e/test_fuzz.py",  # 218
    "e2e/test_stdio_client.py",  # 204
    "unit/test_command.py",  # 202
    "unit/test_faults.py",  # 197
    "e2e/test_ranks_e2e.py",  # 170
    "unit/test_engine.py",  # 169
    "calibration/test_calibration_ranks_heldout.py",  # 169
    "unit/test_kernels.py",  # 124
    "e2e/test_inspector_cli.py",  # 110
    "unit/test_integrity.py",  # 108
    "e2e/test_security.py",  # 100
    "e2e/test_quick.py",  # 99
    "unit/test_outputs_identical.py",  # 96
    "unit/test_counters_fallback.py",  # 94
    "unit/test_readme_examples.py",  # 92
    "calibration/test_calibration_kernels_heldout5.py",  # 92
    "unit/test_sandbox_kernels.py",  # 89
)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Python's cyclic collector in a test process (issue 40: the suite's CPU): what exists once the tests
    are collected (modules, the test items) is frozen out of its walks, and it runs after 20,000 net
    allocations instead of 700, so the hundreds of thousands of objects a test keeps are walked far less
    often. Only when cycles are freed changes (each process its own: the processes the tests start keep
    Python's defaults). Measured with -n 0: test_fuzz.py 39-44 s of CPU -> 34 s, test_outputs_identical.py
    28.7 -> 26.2 s (tests/README.md)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_modifyitems(config, items):
    if getattr(config.option, "dist", "no") == "no" and not hasattr(config, "workerinput"):
        return  # one process: the order collected
    rank = {("tests/" + m): i for i, m in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(it.nodeid.split("::")[0], len(rank)))  # stable: the rest as collected


# Tests that time the product against a wall-clock bound or compare machine-wide state before and after
# (`@pytest.mark.alone`) run while no other test of the session runs: the other workers finish their
# current test and wait. Every other test holds the
# session's lock shared; a turnstile taken first keeps a waiting `alone` test from being starved.
if not os.environ.get("KPROF_TEST_SESSION"):
    import tempfile

    os.environ["KPROF_TEST_SESSION"] = tempfile.mkdtemp(prefix="kprof-test-session-")


@pytest.fixture(autouse=True)
def _alone_or_shared(request):
    import fcntl

    d = Path(os.environ["KPROF_TEST_SESSION"])
    alone = request.node.get_closest_marker("alone") is not None
    with open(d / "turnstile.lock", "w") as gate, open(d / "tests.lock", "w") as tests:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(tests, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
            yield
            return
        import time

        # a process forked by another test that outlives it holds that test's share: wait 5 minutes at
        # most for it, then run anyway
        deadline = time.monotonic() + 300
        while True:
            try:
                fcntl.flock(tests, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        yield


def packed(path: Path):
    """A kept compressed recording opened for reading: ``path`` as named (gzip or xz by its suffix), or, where
    a ``.gz`` is named and only its ``.xz`` sibling is kept, that one (the Nsight Systems SQLite files were
    recompressed with xz on 2026-11-27: the device tool carries the tree, 64 MiB at most)."""
    import gzip
    import lzma

    path = Path(path)
    if not path.exists() and path.suffix == ".gz" and path.with_suffix(".xz").exists():
        path = path.with_suffix(".xz")
    return (lzma.open if path.suffix == ".xz" else gzip.open)(path, "rb")


def unpack_in_place(root: Path = FIXTURES) -> list[Path]:
    """Every ``*.ncu-rep.xz`` (and, since 2026-11-29, ``*.trace.json.xz``: the NCCL ranks' Kineto traces, read as a
    folder by the rank collector) under ``root`` decompressed beside itself where the file is missing (they
    compress 17-40x, and the device tool carries the tree, 64 MiB at most; .gitignore keeps the copies out of the
    tree): written under a temporary name and renamed into place, so pytest-xdist workers doing it at once never
    see a partial file. Runs when this conftest is imported; returns what it wrote."""
    wrote = []
    for xz in sorted([*root.rglob("*.ncu-rep.xz"), *root.rglob("*.trace.json.xz")]):
        out = xz.with_name(xz.name[: -len(".xz")])
        if not out.is_file():
            _decompress(xz, out)
            wrote.append(out)
    return wrote


def _decompress(xz: Path, out: Path) -> None:
    """``xz`` decompressed to ``out``, written under a temporary name beside it and renamed into place."""
    import lzma
    import shutil
    import tempfile

    fd, part = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as dst, lzma.open(xz, "rb") as src:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.chmod(part, 0o644)
        os.replace(part, out)
    except BaseException:
        if os.path.exists(part):
            os.unlink(part)
        raise


unpack_in_place()


def unpacked(path: Path) -> Path:
    """A readable ``path`` for a SQLite recording kept as ``<path>.xz`` (tests/fixtures/h100_nsys since
    2026-11-28: the device tool carries the tree, 64 MiB at most): ``path`` itself where it exists,
    otherwise a decompressed copy of the same file name in a per-user cache under the temporary
    directory, one folder per content hash of the ``.xz``. The copy is written under a temporary name
    and renamed into place, so pytest-xdist workers decompressing at once never see a partial file.
    Only the file: where a reader wants its siblings (capture.json, profiler.json, ...), copy the folder
    and write this into the copy."""
    import hashlib
    import tempfile

    path = Path(path)
    if path.exists():
        return path
    xz = path.with_name(path.name + ".xz")
    digest = hashlib.sha256(xz.read_bytes()).hexdigest()[:16]
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    cache = Path(tempfile.gettempdir()) / f"kprof-fixtures-{user}" / digest
    out = cache / path.name
    if out.is_file():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    _decompress(xz, out)
    return out


def h100_dir(kernel: str, version: str) -> Path:
    (d,) = [p for p in (H100 / kernel).glob(f"*/*-{version}") if p.is_dir()]
    return d


def h100_result(kernel: str, version: str):
    from kprof_mcp.models import ProfileResult

    return ProfileResult.model_validate_json((h100_dir(kernel, version) / "result.json").read_text())


def recorded_metrics(path: Path):
    """A recorded result's first stage as the classifier sees it (its machine, the H100/H200 maximum SM clock
    of 1980 MHz): the machine-model what-if tests read the recordings through this."""
    from kprof_mcp.analysis.assessment import stage_metrics
    from kprof_mcp.analysis.machine_inputs import machine_for
    from kprof_mcp.models import ProfileResult

    r = ProfileResult.model_validate_json(Path(path).read_text())
    return stage_metrics(r.stages[0], 1980.0, 1.0, r, machine_for(r))


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
