"""The Python line behind each cause of the GPU's idle time (issue 36 item 5), on a real H100
recording made with Nsight Systems' Python backtraces (tests/fixtures/nsys-backtrace/README.md:
steps.py's loop, 8 steps, each a 32-launch storm at line 32, an allocation at line 37, a pageable
copy at line 38 and an ``.item()`` at line 39), and on recordings made without them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import packed

from kprof_mcp.analysis import idle
from kprof_mcp.analysis.diagnosis import Facts
from kprof_mcp.analysis.idle_sources import Call, Owned, attribute, source_of
from kprof_mcp.models import ProfileRequest
from kprof_mcp.parsers import nsys as P
from kprof_mcp.parsers import nsys_backtrace as B
from kprof_mcp.render.diagnosis.words import WORDS
from kprof_mcp.render.timeline import where_the_wall_time_went
from kprof_mcp.tools import nsys as N

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "nsys-backtrace"
OLD = ROOT / "calibration" / "recorded-replay" / "alloc_per_step" / "bad.sqlite.gz"
STEPS = "/work/main/tests/fixtures/nsys-backtrace/steps.py"  # the path it was recorded at


def _unzip(src: Path, dst: Path) -> Path:
    with packed(src) as f, open(dst, "wb") as out:
        shutil.copyfileobj(f, out)
    return dst


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return _unzip(FIX / "backtrace.sqlite.gz", tmp_path_factory.mktemp("bt") / "backtrace.sqlite")


@pytest.fixture(scope="module")
def trace(db):
    return P.load_sqlite(db)


def _steps(tr):
    r = tr.ranges[tr.ranges["name"] == "step"]
    return float(r["start"].min()), float(r["end"].max()), len(r)


def line(n: int, func: str = "step") -> str:
    return f"{STEPS}:{n} ({func})"


# ----------------------------------------------------------------------------- the parser


def test_every_backtraced_call_gets_its_python_line_and_op(db):
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    strings = dict(con.execute("SELECT id, value FROM StringIds"))
    src = B.sources(con, tables, strings)
    n_bt = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67").fetchone()[0]
    assert n_bt == 456 and len(src) == n_bt  # every Python backtrace matched to its CUDA call
    assert B.backtrace_class(con, tables) == 67
    names = dict(
        con.execute(
            "SELECT r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
            "ON s.id = r.nameId WHERE r.eventClass = 0"
        )
    )
    got = {(names[c].split("_v")[0], v["source"], v["op"]) for c, v in src.items()}
    assert ("cudaLaunchKernel", line(32, "launch_storm"), "mul_") in got
    assert ("cudaLaunchKernel", line(32, "launch_storm"), "add_") in got
    assert ("cudaMalloc", line(37), "empty") in got
    assert ("cudaMemcpyAsync", line(38), "copy_") in got  # the pageable copy
    assert ("cudaMemcpyAsync", line(39), "item") in got and ("cudaStreamSynchronize", line(39), "item") in got
    # torch.cuda.synchronize() is Python inside torch: the op is that library function
    assert ("cudaDeviceSynchronize", line(53, "main"), "torch.cuda.synchronize") in got
    assert ("cudaFree", line(39), "tensor freed") in got  # the scalar .sum() made, dropped by .item()


def test_the_trace_has_each_call_once_with_its_line(trace):
    api = trace.api
    assert list(api.columns) == P.API_COLS + P.SOURCE_COLS
    # the backtrace rows (a second row per call, event class 67) are left out: one row per launch
    assert (api["name"] == "cudaLaunchKernel").sum() == len(trace.kernels) == 364
    launches = api[api["name"] == "cudaLaunchKernel"]
    assert launches["source"].notna().all()
    # a driver call around or just before a backtraced one takes its line: the lazy library loads
    # of a first launch belong to it
    loads = api[api["name"] == "cuLibraryLoadData"]
    assert len(loads) == 4 and loads["source"].notna().all()
    assert api["source"].isna().sum() <= 5  # start-up calls before any Python backtrace


def test_old_recordings_have_no_lines_and_the_same_columns(tmp_path):
    tr = P.load_sqlite(_unzip(OLD, tmp_path / "old.sqlite"))
    assert list(tr.api.columns) == P.API_COLS
    lo, hi = float(tr.api["start"].min()), float(tr.api["end"].max())
    d = idle.breakdown(tr, lo, hi).to_dict()
    assert "sources" not in d and d["window_ns"] > 0


@pytest.mark.parametrize(
    "path, user",
    [
        ("/home/u/proj/train.py", True),
        ("train.py", True),
        ("/usr/lib/python3.12/runpy.py", False),
        ("<frozen runpy>", False),
        ("<string>", False),
        ("/opt/v/lib/python3.12/site-packages/torch/nn/modules/module.py", False),
        ("/usr/lib/python3/dist-packages/numpy/core/x.py", False),
        ("/work/main/kprof_mcp/child/command.py", False),
        ("/work/main/kprof/__init__.py", False),
        ("/src/torch/nn/functional.py", False),
        ("/src/triton/runtime/jit.py", False),
        ("", False),
    ],
)
def test_user_frames(path, user):
    assert B.is_user_file(path) is user


def test_user_source_and_op():
    lib = "/v/lib/python3.12/site-packages/torch/cuda/__init__.py"
    frames = [("synchronize", lib, 1040), ("main", "/p/train.py", 53), ("<module>", "/p/train.py", 75)]
    assert B.user_source(frames, ["THCPModule_cudaSynchronize(_object*, _object*)"]) == (
        "/p/train.py:53 (main)",
        "torch.cuda.synchronize",
    )
    native = [
        "cudaMalloc",
        "at::native::sum(at::Tensor const&)",
        "torch::autograd::THPVariable_sum(_object*)",
    ]
    assert B.user_source([("step", "/p/train.py", 39)], native) == ("/p/train.py:39 (step)", "sum")
    assert B.user_source([("step", "/p/t.py", 9)], ["THPVariable_dealloc(_object*)"])[1] == "tensor freed"
    # no frame of the user's: no line, the op stays
    assert B.user_source([("forward", "/v/site-packages/torch/nn/modules/linear.py", 125)], []) == (
        None,
        "torch.nn.modules.linear.forward",
    )
    assert B.binding_op(["cudaLaunchKernel", "at::native::add_kernel(x)"]) is None


# ----------------------------------------------------------------------------- the idle causes


def test_each_idle_cause_names_the_line_that_made_its_calls(trace):
    lo, hi, occ = _steps(trace)
    b = idle.breakdown(trace, lo, hi, occ)
    src = b.to_dict()["sources"]
    assert occ == 8
    assert src["sync"]["line"] == line(39) and src["sync"]["op"] == "item" and src["sync"]["calls"] == 8
    assert src["launch"]["line"] == line(32, "launch_storm") and src["launch"]["calls"] == 8 * 32
    assert set(src["launch"]["op"].split(", ")) == {"mul_", "add_"}
    assert src["other_api"]["line"] == line(37) and src["other_api"]["op"] == "empty"  # the cudaMalloc
    assert src["copy_h2d"]["line"] == line(38) and src["copy_h2d"]["share"] == 1.0  # the pageable copy
    for part, s in src.items():
        assert 0 < s["idle_ns"] <= b.parts_ns[part] + 1e-6 and 0 < s["share"] <= 1.0
    # the line never changes the accounting: the same parts without the lines
    plain = trace.api.drop(columns=P.SOURCE_COLS)
    tr2 = type(trace)(**{**trace.__dict__, "api": plain})
    b2 = idle.breakdown(tr2, lo, hi, occ)
    assert b2.parts_ns == b.parts_ns and b2.to_dict().keys() == b.to_dict().keys() - {"sources"}
    # what the diagnosis reads for each of its causes
    d = b.to_dict()
    assert source_of(d, "copy") == src["copy_h2d"] and source_of(d, "cuda_api") == src["other_api"]
    assert source_of(d, "sync")["line"] == line(39) and source_of({}, "sync") is None


def test_a_command_timeline_carries_the_lines(trace):
    from kprof_mcp.analysis.command import stage_static
    from kprof_mcp.modes.timeline_assemble import _command_timeline

    req = ProfileRequest(
        kernel="command",
        kernel_source="/tmp",
        version="command",
        params={},
        mode="nsys",
        out_root="/tmp",
        command=["python", "steps.py"],
        command_cwd="/tmp",
        python_backtrace=True,
    )
    dev = {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "kind": "cuda"}
    stages, tl, _, by, _ = _command_timeline(
        req, lambda n: stage_static(n, None, dev, {}), trace, "nsys", True, 132
    )
    assert by == "range" and [s.name for s in stages] == ["step"]
    assert tl.idle["occurrences"] == 7  # the first occurrence is warm-up
    assert tl.idle["sources"]["sync"]["line"] == line(39) and tl.idle["sources"]["sync"]["calls"] == 7


def test_attribution_on_a_hand_built_loop():
    # launch at 0-10 (line A), idle 10-20 issuing the next op, launch 20-30 (line B); a sync 40-60
    # (line C) whose gap runs 60-160; host work 160-400 then a launch at 400 (line D)
    calls = [
        Call(0, 10, "launch", "a.py:1 (f)", "add"),
        Call(20, 30, "launch", "a.py:2 (f)", "mul"),
        Call(40, 60, "sync", "a.py:3 (f)", "item"),
        Call(400, 410, "launch", "a.py:4 (f)", "add"),
    ]
    owned = Owned(
        intervals={"launch": [(0, 10), (20, 30)]},
        sync_gaps=[(60, 100.0)],
        short=[(10, 20)],
        host=[(160, 400)],
    )
    got = attribute(calls, owned, 0, 500, 20)
    assert got["sync"]["line"] == "a.py:3 (f)" and got["sync"]["idle_ns"] == 100.0
    assert (
        got["launch"]["line"] == "a.py:2 (f)" and got["launch"]["idle_ns"] == 20.0
    )  # its call + the stretch before it
    assert got["host"]["line"] == "a.py:4 (f)" and got["host"]["after"] == "a.py:3 (f)"
    assert "copy_h2d" not in got
    assert attribute([Call(0, 1, "launch", None, None)], owned, 0, 9, 20) == {}


# ----------------------------------------------------------------------------- what is read


def test_the_report_and_the_trigger_name_the_line(trace):
    lo, hi, occ = _steps(trace)
    d = idle.breakdown(trace, lo, hi, occ).to_dict()
    text = "\n".join(where_the_wall_time_went(d))
    assert "Where in the Python code" in text and f"`{line(39)}`, item | 8 |" in text
    old = {k: v for k, v in d.items() if k != "sources"}
    assert "Where in the Python code" not in "\n".join(where_the_wall_time_went(old))
    facts = Facts(idle_pct=20.0, gpu_busy_pct=20.6, calls=[], ops=[], source_line=d["sources"]["sync"])
    _, trigger, _ = WORDS["sync"](facts)
    assert f"source_line={line(39)} via item x8, 83% of its idle time" in trigger
    _, plain, _ = WORDS["sync"](Facts(idle_pct=20.0, gpu_busy_pct=20.6, calls=[], ops=[]))
    assert "source_line" not in plain and plain.endswith("gpu_busy_pct=20.6")
    host = Facts(
        idle_pct=2.0, gpu_busy_pct=20.6, source_line={"line": "b.py:9 (g)", "after": "b.py:3 (g)", "calls": 2}
    )
    assert "source_line=between b.py:3 (g) and b.py:9 (g) x2" in WORDS["host"](host)[1]


def test_the_option_and_the_command_line(tmp_path):
    nsys = tmp_path / "nsys"
    assert "--sample=none" in N.profile_prefix(nsys, tmp_path / "o")  # off by default
    cmd = N.profile_prefix(nsys, tmp_path / "o", python_backtrace=True)
    assert (
        "--sample=none" not in cmd
        and cmd[cmd.index(N.BACKTRACE_FLAGS[0]) :][:4] == list(N.BACKTRACE_FLAGS)
        and cmd[-2:] == ["-o", str(tmp_path / "o")]
    )
    base = dict(kernel="k", kernel_source="/k", version="v", params={}, out_root="/o", mode="nsys")
    assert ProfileRequest(**base).options.python_backtrace is False
    req = ProfileRequest(**base, python_backtrace=True)
    assert req.options.python_backtrace and ProfileRequest(**req.model_dump()).options.python_backtrace
    with pytest.raises(ValueError, match="python_backtrace='yes': true or false"):
        ProfileRequest(**base, python_backtrace="yes")
    from kprof_mcp.modes import get_mode

    launch = get_mode("nsys").launch(req.with_options(nsys_path=str(nsys)), [], tmp_path)
    assert (
        "--python-backtrace=cuda" in launch.prefix and "--python-backtrace=cuda" in launch.profiler["command"]
    )


def test_export_asks_for_the_json_payloads_only_with_backtraces(tmp_path):
    import stat

    rep = tmp_path / "r.nsys-rep"
    rep.write_bytes(b"rep")
    args = tmp_path / "args.txt"
    fake = tmp_path / "bin" / "nsys"
    fake.parent.mkdir()
    fake.write_text(
        f'#!/bin/sh\necho "$@" > "{args}"\nfor a; do last=$prev; prev=$a; done\necho x > "$last"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    N.export_sqlite(fake, rep, tmp_path / "a.sqlite", include_json=True)
    assert args.read_text().startswith("export --type sqlite --include-json true --force-overwrite true -o ")
    N.export_sqlite(fake, rep, tmp_path / "b.sqlite")
    assert args.read_text().startswith("export --type sqlite --force-overwrite true -o ")


def test_an_export_without_the_json_payloads_has_no_lines_but_each_call_once(db, tmp_path):
    # `nsys export` without --include-json: the marks are there, their stacks are not
    bare = tmp_path / "bare.sqlite"
    shutil.copy(db, bare)
    with sqlite3.connect(bare) as con:
        con.execute("UPDATE NVTX_EVENTS SET jsonText = NULL")
    tr = P.load_sqlite(bare)
    assert list(tr.api.columns) == P.API_COLS
    assert (tr.api["name"] == "cudaLaunchKernel").sum() == 364  # the backtrace rows still left out
    lo, hi, occ = _steps(tr)
    assert "sources" not in idle.breakdown(tr, lo, hi, occ).to_dict()
