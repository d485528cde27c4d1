"""Property-based fuzzing of every tool through the real MCP client over stdio (hypothesis).

At least 1,000 calls with arbitrary JSON arguments (wrong types, huge and negative numbers,
NaN/inf, path escapes, flag-like strings, unicode, unknown keys), hostile ones (path components
of 300+ bytes, integer strings of 5,000+ digits, lists and dicts of 10,000 entries), argument
vectors for ``profile_command`` (the server runs with ``--allow-commands``: scripts, ``-m``
modules, ``-c``, paths outside, long names) and some valid calls, whose jobs are cancelled at
once. Every answer must be a result or a tool error that says what was wrong, in at most 2,000
characters, naming no path outside the workspace the input did not contain (see
:mod:`fuzzing`); a dead server (any transport error) fails the test. The figures are printed.
"""

import time

import anyio
import anyio.from_thread
import pytest
from conftest import PY, server_env
from fuzzing import Tally, call, job_to_cancel, prepare_workspace, untouched
from hypothesis import HealthCheck, given, settings
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

N_CALLS = 1000


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """The workspace, and the directory outside it that its links point to."""
    ws = tmp_path_factory.mktemp("fuzzws")
    return ws, prepare_workspace(ws)


@pytest.fixture(scope="module")
def session(dirs):
    server = StdioServerParameters(
        command=PY,
        args=["-m", "kprof_mcp.server", "--workspace", str(dirs[0]), "--timeout", "60", "--allow-commands"],
        env={**server_env(), "KPROF_FORCE_CPU": "1"},
    )
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(server)) as client:
            yield portal, client


@pytest.fixture(scope="module")
def tally(session, dirs):
    portal, client = session
    t = Tally(dirs[0])
    t.publish(portal.call(client.call_tool, "list_kernels", {}).structured_content)
    return t


def _call(portal, client, tally, name, args):
    try:
        r = portal.call(client.call_tool, name, args)
    except MCPError as e:
        tally.protocol_error(name, args, e)
        return
    except Exception as e:  # noqa: BLE001 — a broken transport means the server died
        tally.transport_error(name, args, e)
        return
    tally.answer(name, args, r)
    job_id = job_to_cancel(r)
    if job_id:
        _call(portal, client, tally, "cancel_profile", {"job_id": job_id})


@settings(
    max_examples=N_CALLS,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
@given(c=call)
def test_fuzz_every_tool(session, tally, c):
    portal, client = session
    _call(portal, client, tally, *c)


def test_fuzz_figures_and_the_server_still_answers(session, tally, dirs, capsys):
    portal, client = session
    t0 = time.monotonic()
    r = portal.call(client.call_tool, "classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
    assert r.structured_content["bottleneck"] == "Compute-bound"
    with capsys.disabled():  # the figures show in every run's log, not only with -s
        print(f"\nfuzz figures: {tally.stats} ({time.monotonic() - t0:.2f} s for the final call)")
    assert tally.stats["calls"] >= 1000, tally.stats
    assert not tally.failures, f"{len(tally.failures)} failures: {tally.failures[:10]}"
    assert untouched(dirs[1]), sorted(p.name for p in dirs[1].iterdir())
