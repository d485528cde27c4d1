"""nsys mode's plain pass (kprof_mcp.engine.plain, issue 36): a command's step timed without a profiler, and
the timeline's what-ifs taken against it (kprof_mcp.analysis.replay.gains' ``plain_ns``). The child's pass runs
for real here (a CPU command through ``python -m kprof_mcp.child command``); the replay on a hand-built trace
whose answer is known, and on the command pairs recorded with Nsight Systems on an H100, whose step was also
timed without a profiler by the recording (measured.json)."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from kprof_mcp import runner
from kprof_mcp.analysis import replay
from kprof_mcp.analysis.diagnosis.timeline import _replayed_shares
from kprof_mcp.engine.plain import step_of
from kprof_mcp.models import ProfileRequest
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace

ROOT = Path(__file__).resolve().parents[2]
CAL = ROOT / "tests" / "calibration"

STEPS = """import time
import kprof

for i in range(6):
    with kprof.range("step"):
        time.sleep(0.02)
    with kprof.range("log"):
        pass
with kprof.range("once"):
    pass
"""


def _request(tmp_path: Path, **kw) -> ProfileRequest:
    (tmp_path / "steps.py").write_text(STEPS)
    return ProfileRequest.model_validate(
        dict(
            kernel="command",
            kernel_source=str(tmp_path),
            params={},
            version="command",
            mode="nsys",
            command=["python", "steps.py"],
            command_cwd=str(tmp_path),
            out_root=str(tmp_path / "out"),
            force_cpu=True,
            **kw,
        )
    )


def test_the_plain_pass_records_each_ranges_entries_and_keeps_no_profile(tmp_path):
    req = _request(tmp_path, plain_steps_only=True)
    rec = runner.run_profile(req.model_dump_json(), 120, None, command="command", fresh=True)
    entries = rec.plain["entries"]
    assert {k: len(v) for k, v in entries.items()} == {"step": 6, "log": 6, "once": 1}
    step = step_of(rec.plain, [], 1)
    assert step["range"] == "step" and step["occurrences"] == 5
    assert 0.02e9 <= step["step_ns"] < 0.2e9  # a 20 ms sleep a step, on a loaded 2-core machine at most 10x
    spread = step["interval_ns"]
    assert 0.02e9 <= spread["min"] <= spread["median"] <= spread["max"] and spread["min"] <= step["step_ns"]
    assert not rec.work_dir and not list((tmp_path / "out").rglob("*.json"))  # nothing kept but the times


def test_the_step_is_the_most_entered_range_after_its_warm_up():
    plain = {"entries": {"a": [0, 10, 30, 50, 70], "b": [5, 100], "c": "junk", 3: [1, 2]}, "end_ns": 99}
    spread = {"min": 20.0, "median": 20.0, "max": 20.0}
    assert step_of(plain, [], 1) == {"range": "a", "occurrences": 4, "step_ns": 20.0, "interval_ns": spread}
    spread = {"min": 95.0, "median": 95.0, "max": 95.0}
    assert step_of(plain, ["b"], 0) == {
        "range": "b",
        "occurrences": 2,
        "step_ns": 95.0,
        "interval_ns": spread,
    }
    # one slow step: the mean is long, the median is not
    slow = step_of({"entries": {"s": [0, 10, 20, 130, 140]}}, [], 0)
    assert slow["step_ns"] == 35.0 and slow["interval_ns"] == {"min": 10.0, "median": 10.0, "max": 110.0}
    assert step_of(plain, ["b"], 1) is None  # one kept entry: no step
    assert step_of(plain, ["z*"], 0) is None and step_of(None, [], 0) is None and step_of({}, [], 0) is None


def test_on_the_gpu_the_step_is_timed_by_its_cuda_events_not_by_the_host_running_ahead():
    """A GPU-bound loop: the host enters a step every 10 ns while the GPU takes 50 ns a step (its launch
    queue not yet full). The entry times say 10 ns; the CUDA events say 50 ns, the first kept start to the
    last kept end over the four kept steps, as a loop timed from a synchronised start to a synchronised end."""
    gpu = [[0.0, 50.0], [50.0, 100.0], [100.0, 150.0], [150.0, 200.0], [200.0, 250.0]]
    plain = {"entries": {"s": [0, 10, 20, 30, 40]}, "gpu": {"s": gpu}}
    assert step_of(plain, [], 1) == {
        "range": "s",
        "occurrences": 4,
        "step_ns": 50.0,
        "interval_ns": {"min": 50.0, "median": 50.0, "max": 50.0},
        "clock": "cuda_events",
        "host_step_ns": 10.0,
    }
    # the first occurrence entered before CUDA was up: left out by the warm-up, the events still serve
    assert step_of({**plain, "gpu": {"s": [None, *gpu[1:]]}}, [], 1)["step_ns"] == 50.0
    # events that cannot stand for the kept steps (one missing, out of order, not one per entry): the host's
    for bad in ([gpu[0], None, *gpu[2:]], [gpu[0], gpu[2], gpu[1], *gpu[3:]], gpu[1:], [[0.0, 50.0]] * 5):
        got = step_of({**plain, "gpu": {"s": bad}}, [], 1)
        assert got["step_ns"] == 10.0 and "clock" not in got


def test_kprof_range_records_an_event_pair_per_occurrence_for_the_plain_pass(monkeypatch):
    """kprof.range with the plain pass on (ENTRIES and EVENTS set) and CUDA up (a stand-in torch whose events
    read a clock the test moves): a start event at each entry and an end event at its exit; the child's
    ``gpu_spans`` turns them into each occurrence's [start, end] from the first start; an occurrence entered
    before CUDA was up has none."""
    import types

    import kprof
    from kprof_mcp.child.command import gpu_spans

    clock = {"t": 0.0}

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = clock["t"]

        def elapsed_time(self, other):  # ms, as torch's
            return (other.t - self.t) / 1e6

    up = {"on": False}
    cuda = types.SimpleNamespace(
        is_available=lambda: True,
        is_initialized=lambda: up["on"],
        Event=Event,
        nvtx=types.SimpleNamespace(range_push=lambda n: None, range_pop=lambda: None),
    )
    fake = types.SimpleNamespace(cuda=cuda, profiler=types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(kprof, "ENTRIES", {})
    monkeypatch.setattr(kprof, "EVENTS", {})
    for i in range(4):
        up["on"] = i > 0
        clock["t"] = 1000.0 * i
        with kprof.range("step"):
            clock["t"] += 600.0
    assert len(kprof.ENTRIES["step"]) == len(kprof.EVENTS["step"]) == 4 and kprof.EVENTS["step"][0] is None
    assert gpu_spans(kprof.EVENTS["step"]) == [None, [0.0, 600.0], [1000.0, 1600.0], [2000.0, 2600.0]]
    assert gpu_spans([None, None]) is None
    got = step_of({"entries": kprof.ENTRIES, "gpu": {"step": gpu_spans(kprof.EVENTS["step"])}}, [], 1)
    assert got["step_ns"] == 2600.0 / 3 and got["clock"] == "cuda_events"


def test_a_request_without_the_plain_pass_keeps_its_serialised_keys(tmp_path):
    plain = _request(tmp_path, plain_steps={"range": "step", "occurrences": 5, "step_ns": 1e6})
    without = json.loads(_request(tmp_path).model_dump_json())
    assert "plain_steps" not in without and "plain_steps_only" not in without
    assert json.loads(plain.model_dump_json())["plain_steps"]["step_ns"] == 1e6
    assert ProfileRequest.model_validate_json(plain.model_dump_json()).plain_steps == plain.plain_steps


def _launch_bound() -> Trace:
    # 10 launches of 30 µs each 20 µs apart (the host's time between them), kernels of 5 µs: host-bound.
    api = pd.DataFrame(
        [
            {
                "name": "cudaLaunchKernel",
                "start": 50e3 * i,
                "dur": 30e3,
                "end": 50e3 * i + 30e3,
                "correlation": i,
            }
            | {"tid": 1}
            for i in range(10)
        ]
    )
    k = pd.DataFrame(
        [
            {**{c: None for c in KERNEL_COLUMNS}, "name": "k", "start": 50e3 * i + 35e3, "dur": 5e3}
            | {"end": 50e3 * i + 40e3, "stream": 7, "correlation": i}
            for i in range(10)
        ],
        columns=KERNEL_COLUMNS,
    )
    m = pd.DataFrame(columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"])
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    return Trace(k, m, api, empty, empty, 132, "NVIDIA H100 80GB HBM3")


def test_the_replay_takes_its_what_ifs_against_the_plain_step():
    tr = _launch_bound()
    traced = replay.gains(tr, 0.0, 500e3, 1)
    assert "base_ns" not in traced and traced["identity_ns"] == pytest.approx(traced["recorded_ns"])
    # The step ran in half the time without the profiler: the host's time is halved, about.
    plain = replay.gains(tr, 0.0, 500e3, 1, plain_ns=0.5 * traced["recorded_ns"])
    assert plain["recorded_ns"] == traced["recorded_ns"]  # the trace as recorded, still said
    assert plain["base_ns"] == pytest.approx(plain["plain_ns"], rel=0.01)
    assert 0.4 < plain["host_scale"] < 0.6
    # Each what-if against the plain step: the launches' share of a host-bound step stays about what it was
    # (the host's time and the launches' shrink together), not the traced step's share of a shorter one.
    s_traced, s_plain = _replayed_shares(traced)["launch"], _replayed_shares(plain)["launch"]
    assert 0.0 < s_plain < s_traced
    # A plain step no shorter than the traced one: nothing to undo.
    same = replay.gains(tr, 0.0, 500e3, 1, plain_ns=2 * traced["recorded_ns"])
    assert "base_ns" not in same and same["step_ns"] == traced["step_ns"]


# Command pairs recorded with Nsight Systems whose SQLite is kept (pair directory, measured.json's name).
KEPT = [
    ("recorded-accounting", "launch_bound_loop"),
    ("recorded-accounting", "host_bound_loop"),
    ("recorded-accounting", "sync_per_step"),
    ("recorded-replay", "alloc_per_step"),
    ("recorded-replay", "shape_sync"),
]


@pytest.mark.parametrize(("folder", "pair"), KEPT)
def test_recorded_steps_replayed_at_their_unprofiled_time(folder, pair):
    sys.path.insert(0, str(CAL))
    from replayed import idle_with_replay, plain_step

    plain = plain_step(CAL / folder / pair, "bad")
    rp = idle_with_replay(CAL / folder / pair, "bad")["replay"]
    traced = idle_with_replay(CAL / folder / pair, "bad", plain=False)["replay"]
    assert plain and rp["recorded_ns"] == traced["recorded_ns"] and "base_ns" not in traced
    if "base_ns" not in rp:
        # The profiler did not slow this step, or the trace's GPU work alone outlasts the plain step (shape
        # sync: the GPU busy 74 % of a step recorded at the locked base clock, 1,305 MHz on the H100, timed
        # plain at free clocks; the plain pass runs under the traced run's clock, the engine holds it for
        # both): the what-ifs stay against the traced step.
        assert rp["step_ns"] == traced["step_ns"] and rp["identity_ns"] == traced["identity_ns"]
        assert rp["recorded_ns"] <= plain * 1.002 or pair == "shape_sync"
        return
    assert rp["base_ns"] == pytest.approx(plain, rel=0.02)
    assert replay.PLAIN_MIN_SCALE < rp["host_scale"] < 1.0
    assert all(v <= rp["base_ns"] * 1.0001 for v in rp["step_ns"].values())  # no what-if slower than the step


def test_the_engine_times_the_plain_step_before_a_command_timeline_where_it_would_on_a_gpu(
    tmp_path, monkeypatch
):
    # On a GPU (here: the engine told it has one; the child still runs on the CPU) nsys mode's command profile runs
    # the plain pass first and the traced run gets its step (ProfileRequest.plain_steps); without one it does not.
    import shutil

    from kprof_mcp.engine import Config, Engine
    from kprof_mcp.engine import command as engine_command
    from kprof_mcp.engine import run as engine_run

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    tiny = ["--steps", "3", "--tokens", "64", "--dim", "32", "--vocab", "128"]
    calls = []
    real = engine_run.plain_pass
    monkeypatch.setattr(engine_run, "plain_pass", lambda *a, **k: calls.append(a[0].command) or real(*a, **k))
    engine = Engine(Config(workspace=tmp_path))
    out = engine.profile_command(["python", "examples/train_step/train.py", *tiny], mode="nsys")
    assert not calls and out.result.request.get("plain_steps") is None  # the CPU: no plain pass
    monkeypatch.setattr(engine_command, "target_cpu", lambda engine: False)
    out = engine.profile_command(["python", "examples/train_step/train.py", *tiny], mode="nsys")
    step = out.result.request["plain_steps"]
    assert calls and step["range"] in {"train_step", "linear", "softmax", "loss", "backward", "optimizer"}
    assert step["occurrences"] == 2 and step["step_ns"] > 0  # 3 steps, the first left out as warm-up
    assert out.result.timings["phases"].get("plain_pass", 0) > 0


def test_the_plain_pass_measures_a_reads_host_cost_in_the_commands_own_process():
    """child.command.read_floor_ns: torch.cuda.synchronize() with nothing pending, timed after the command in
    its process where the command brought CUDA up (a stand-in torch whose synchronize costs ~50 us); none where
    CUDA is not up or the call fails; step_of carries it to the traced run, the replay's sync what-if uses it."""
    import time as _time
    from types import SimpleNamespace

    from kprof_mcp.child.command import READ_FLOOR_CALLS, read_floor_ns

    calls = []

    def sync():
        calls.append(1)
        t = _time.perf_counter() + 50e-6
        while _time.perf_counter() < t:
            pass

    up = SimpleNamespace(cuda=SimpleNamespace(is_initialized=lambda: True, synchronize=sync))
    got = read_floor_ns(up)
    assert 45e3 <= got < 500e3 and len(calls) == READ_FLOOR_CALLS + 1  # one to drain, then the timed batches
    down = SimpleNamespace(cuda=SimpleNamespace(is_initialized=lambda: False, synchronize=sync))
    assert read_floor_ns(down) is None and read_floor_ns(None) is None

    def lost():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    assert (
        read_floor_ns(SimpleNamespace(cuda=SimpleNamespace(is_initialized=lambda: True, synchronize=lost)))
        is None
    )
    plain = {"entries": {"a": [0, 10, 30, 50, 70]}, "read_ns": 6500}
    assert step_of(plain, [], 1)["read_ns"] == 6500.0
    assert "read_ns" not in step_of({"entries": {"a": [0, 10, 30]}, "read_ns": "x"}, [], 0)
