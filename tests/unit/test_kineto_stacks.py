"""Each CUDA call's Python line from a Kineto trace recorded with Python stacks (``with_stack=True``: the
timeline's Kineto engine with ``python_backtrace``; kprof_mcp/parsers/kineto_stacks.py)."""

from __future__ import annotations

import json
import warnings

import pytest

from kprof_mcp.parsers import kineto
from kprof_mcp.parsers.kineto_stacks import call_sources, frame_of


def _ev(name, start, end, tid=1):
    return {"name": name, "start": float(start), "end": float(end), "tid": tid}


def test_frame_names_are_read_and_builtins_are_not_frames():
    assert frame_of("train.py(42): step") == ("step", "train.py", 42)
    assert frame_of("torch/nn/modules/module.py(1751): _call_impl") == (
        "_call_impl",
        "torch/nn/modules/module.py",
        1751,
    )
    assert frame_of("<built-in function linear>") is None


def test_the_innermost_user_frame_is_the_source_and_the_library_its_op():
    python = [
        _ev("train.py(10): <module>", 0, 100),
        _ev("train.py(3): step", 10, 60),
        _ev("torch/nn/modules/linear.py(124): forward", 20, 40),
        _ev("train.py(7): log", 70, 90),
        _ev("train.py(3): step", 0, 100, tid=2),  # another thread's frame encloses nothing of thread 1
    ]
    ops = [_ev("aten::linear", 21, 39), _ev("aten::item", 72, 88)]
    calls = [
        _ev("cudaLaunchKernel", 25, 30),
        _ev("cudaMemcpyAsync", 75, 80),
        _ev("cudaFree", 95, 99),
        _ev("x", 5, 6, 3),
    ]
    sources, op = call_sources(python, calls, ops)
    assert sources == ["train.py:3 (step)", "train.py:7 (log)", "train.py:10 (<module>)", None]
    # a library function between the user's line and the call names it; else the PyTorch operator around it
    assert op == ["torch.nn.modules.linear.forward", "aten::item", None, None]


def test_a_real_kineto_trace_with_stacks_names_the_user_function(tmp_path):
    """A CPU trace from torch.profiler with with_stack=True (its python_function and cpu_op events as recorded),
    with a runtime call placed inside each aten::mm of the user's function (the CPU records no CUDA call):
    the parser names the function and the operator."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    def user_step(x):
        return torch.nn.functional.linear(x, torch.ones(16, 16))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            for _ in range(2):
                user_step(torch.ones(4, 16))
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    mms = [e for e in data["traceEvents"] if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"]
    assert len(mms) == 2
    for i, e in enumerate(mms):
        data["traceEvents"].append(
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": e["pid"], "tid": e["tid"],
             "ts": e["ts"] + e["dur"] / 4, "dur": e["dur"] / 4, "args": {"correlation": i + 1}}
        )  # fmt: skip
    path.write_text(json.dumps(data))
    tr = kineto.load_trace(path)
    assert list(tr.api["op"]) == ["aten::mm", "aten::mm"]
    line = user_step.__code__.co_firstlineno  # Kineto records calls: the function's own line
    want = f"test_kineto_stacks.py:{line} (user_step)"
    assert all(s.endswith(want) for s in tr.api["source"]), list(tr.api["source"])


def test_a_trace_without_stacks_has_no_source_column(tmp_path):
    path = tmp_path / "t.json"
    ev = {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "tid": 1,
        "ts": 1.0,
        "dur": 1.0,
        "args": {},
    }
    path.write_text(json.dumps({"traceEvents": [ev]}))
    assert "source" not in kineto.load_trace(path).api.columns
