"""Property-based fuzzing of every tool through the real MCP client over stdio (hypothesis).

At least 500 calls with arbitrary JSON arguments (wrong types, huge and negative numbers,
NaN/inf, path escapes, flag-like strings, unicode, unknown keys) plus some valid ones.
Every answer must be a result or a tool error that says what was wrong: an unexpected
exception reaches the client as the bare "Error executing tool <name>", which fails the test;
so does a dead server (any transport error). The figures are printed.
"""

import time

import anyio
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from conftest import PY, server_env

N_CALLS = 520

json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
    st.sampled_from(["../../etc/passwd", "/etc", "--set full", "-o /tmp/x", "; rm -rf /", "$(id)", "\x00", "~",
                     "vector_add", "matmul", "v0", "v1", "event", "annotation", "ncu", "nsys", "base", "none",
                     "float32", "bfloat16", "out/profiles", "docs/kernels/x.md", "é" * 300]))
json_value = st.recursive(json_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                               st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=8)
names = st.sampled_from(["vector_add", "matmul", "softmax", "mla_decode", "tiny_chain", "two_streams", "nope",
                         "../kernels/matmul", "/etc", "kernels/vector_add", ""])


def maybe(strategy):
    return st.one_of(strategy, json_value)


TOOLS = {
    "list_kernels": st.fixed_dictionaries({}),
    "device_info": st.fixed_dictionaries({}),
    "classify_bottleneck": st.fixed_dictionaries(
        {"tc_pct": maybe(st.floats(-10, 110)), "dram_pct": maybe(st.floats(-10, 110))},
        optional={"occupancy_pct": maybe(st.floats(0, 100)), "l2_hit_pct": json_value,
                  "local_spill_bytes": json_value, "waves_per_sm": json_value, "compute_pct": json_value,
                  "dram_bytes_over_model": json_value}),
    "read_params": st.fixed_dictionaries({"profile_dir": maybe(st.text(max_size=60))}),
    "update_devlog": st.fixed_dictionaries({"kernel": maybe(names), "profile_dir": maybe(st.text(max_size=40))},
                                           optional={"issues": json_value, "insights": json_value}),
    "profile_kernel": st.fixed_dictionaries(
        {"kernel": maybe(names)},
        optional={"version": maybe(st.sampled_from(["v0", "v1", "v9", ""])),
                  "params": maybe(st.dictionaries(st.sampled_from(["n", "M", "N", "K", "dtype", "b", "t", "x"]),
                                                  json_scalar, max_size=4)),
                  "mode": maybe(st.sampled_from(["event", "annotation", "ncu", "nsys", "EVENT"])),
                  "baseline": json_value, "ncu_launches": json_value, "clock_control": json_value,
                  "timeline_iters": json_value, "timeout_s": json_value,
                  "wait_s": st.one_of(st.just(0), json_value)}),
    "get_profile": st.fixed_dictionaries({"job_id": maybe(st.text(max_size=20))},
                                         optional={"wait_s": st.one_of(st.floats(0, 0.5), json_value)}),
    "cancel_profile": st.fixed_dictionaries({"job_id": maybe(st.text(max_size=20))}),
    "compare_versions": st.fixed_dictionaries(
        {"kernel": maybe(names), "versions": maybe(st.lists(st.sampled_from(["v0", "v1", "v9", ""]), max_size=4)),
         "wait_s": st.just(0)},  # valid comparisons run on as jobs; the call must answer at once
        optional={"params": maybe(st.dictionaries(st.sampled_from(["n", "dtype", "x"]), json_scalar, max_size=2)),
                  "budget_ms": json_value, "rounds": json_value, "timeout_s": json_value,
                  "param_sets": st.one_of(json_value, st.lists(st.dictionaries(st.sampled_from(["n", "dtype"]),
                                                                                json_scalar, max_size=2), max_size=3)),
                  "mode": maybe(st.sampled_from(["event", "annotation", "nsys", "warp"]))}),
    "sweep": st.fixed_dictionaries(
        {"kernel": maybe(names), "param": maybe(st.sampled_from(["n", "t", "x", ""])),
         "values": maybe(st.lists(json_scalar, max_size=3)), "wait_s": st.just(0)},
        optional={"versions": json_value, "params": json_value, "budget_ms": json_value, "timeout_s": json_value}),
}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    ws = tmp_path_factory.mktemp("fuzzws")
    server = StdioServerParameters(command=PY, args=["-m", "kprof_mcp.server", "--workspace", str(ws),
                                                     "--timeout", "60"],
                                   env={**server_env(), "KPROF_FORCE_CPU": "1"})
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(server)) as client:
            yield portal, client


STATS = {"calls": 0, "ok": 0, "tool_error": 0, "protocol_error": 0, "unexpected": 0, "transport": 0}
FAILURES: list[str] = []


def _call(portal, client, name, args):
    STATS["calls"] += 1
    try:
        r = portal.call(client.call_tool, name, args)
    except MCPError as e:  # a JSON-RPC error answer (e.g. arguments the protocol layer rejects): the server lives
        STATS["protocol_error"] += 1
        return str(e)
    except Exception as e:  # noqa: BLE001 — a broken transport means the server died
        STATS["transport"] += 1
        FAILURES.append(f"{name}({args!r}): transport {type(e).__name__}: {e}")
        return None
    if not r.is_error:
        STATS["ok"] += 1
        return r
    text = r.content[0].text if r.content else ""
    if text.strip() in (f"Error executing tool {name}", "") or text.rstrip().endswith(f"Error executing tool {name}"):
        STATS["unexpected"] += 1
        FAILURES.append(f"{name}({args!r}): unexpected exception (no message)")
    else:
        STATS["tool_error"] += 1
    return r


@settings(max_examples=N_CALLS, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_fuzz_every_tool(session, data):
    portal, client = session
    name = data.draw(st.sampled_from(sorted(TOOLS)), label="tool")
    args = data.draw(TOOLS[name], label="args")
    _call(portal, client, name, args)


def test_fuzz_figures_and_the_server_still_answers(session, capsys):
    portal, client = session
    t0 = time.monotonic()
    r = portal.call(client.call_tool, "classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
    assert r.structured_content["bottleneck"] == "Compute-bound"
    with capsys.disabled():  # the figures show in every run's log, not only with -s
        print(f"\nfuzz figures: {STATS} ({time.monotonic() - t0:.2f} s for the final call)")
    assert STATS["calls"] >= 500, STATS
    assert STATS["transport"] == 0 and STATS["unexpected"] == 0, FAILURES[:10]
