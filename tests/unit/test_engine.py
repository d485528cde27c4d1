"""The engine end to end on this machine (CPU path: Triton interpreter), errors included."""

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES

from kprof_mcp.engine import Config, Engine, KprofError

USER = FIXTURES / "user_kernels"


def _user_kernel(workspace: Path, mode: str = "ok", name: str = "scale.py") -> str:
    dst = workspace / "mykernels" / name
    dst.parent.mkdir(exist_ok=True)
    dst.write_text((USER / "scale.py").read_text().replace('MODE = "ok"', f'MODE = "{mode}"'))
    return str(dst.relative_to(workspace))


def test_event_profile_writes_the_artifact_layout(engine, workspace):
    o = engine.profile("vector_add", "v1", {"n": 4096}, "event")
    d = o.profile_dir
    assert d.parent == workspace / "out/profiles/event/vector_add/n=4096_dtype=float32"
    assert d.name.endswith("-v1") and not d.name.endswith(".partial")
    for f in (
        "params.json",
        "report.md",
        "contract.md",
        "samples.csv",
        "result.json",
        "tiling/add.json",
        "tiling/add/autotuning.json",
    ):
        assert (d / f).is_file(), f
    params = json.loads((d / "params.json").read_text())
    assert params["n"] == 4096 and params["dtype"] == "float32"
    assert params["device"]["kind"] == "cpu"
    assert {"torch", "triton", "python", "kprof_mcp"} <= set(params["versions"])
    assert "clock_state" in params and "cache_control" in params
    hist = json.loads((d / "tiling/add/autotuning.json").read_text())
    assert hist["best"]["BLOCK_SIZE"] in (1024, 2048, 4096, 8192, 16384) and hist["configs"]
    import pandas as pd

    samples = pd.read_csv(d / "samples.csv")
    assert list(samples.columns) == ["stage", "run", "time_ns", "method"] and len(samples) >= 3
    assert set(samples["method"]) == {"cpu_wall_clock"}
    assert o.result.stages[0].timing.method == "cpu_wall_clock"
    assert o.contract.startswith("## Profile: vector_add v1")
    assert "CPU timing" in o.contract
    assert not list(workspace.rglob("*.partial"))


def test_baseline_fills_the_comparison_table(engine):
    a = engine.profile("vector_add", "v0", {"n": 2048}, mode="event")
    b = engine.profile("vector_add", "v1", {"n": 2048}, mode="event", baseline=str(a.profile_dir))
    assert "| Duration (us) |" in b.contract and "Baseline: vector_add v0" in b.contract
    rows = b.contract.split("### vs Baseline (if applicable)")[1]
    assert "| Achieved GB/s |" in rows


def test_bad_input_errors_say_what_is_valid(engine, workspace):
    cases = [
        (
            dict(kernel="nope"),
            r"unknown kernel 'nope'; valid names: \['matmul', 'mla_decode', 'softmax', 'tiny_chain', 'two_streams', 'vector_add'\]",
        ),
        (dict(kernel="vector_add", version="v9"), r"no version 'v9'; valid: \['v0', 'v1'\]"),
        (dict(kernel="vector_add", mode="warp"), r"unknown mode 'warp'; modes: \["),
        (
            dict(kernel="vector_add", mode="ncu", ncu_launches=0),
            r"ncu_launches=0: give an integer from 1 to 20",
        ),
        (dict(kernel="vector_add", mode="annotation", clock_control="turbo"), r"clock_control='turbo'"),
        (dict(kernel="vector_add", params={"n": -5}), r"n=-5 is below its minimum 1"),
        (dict(kernel="vector_add", params={"m": 5}), r"unknown parameter\(s\) \['m'\]"),
        (dict(kernel="matmul", params={"dtype": "int3"}), r"dtype='int3' is not one of"),
        (dict(kernel="../../etc/passwd"), r"outside the allowed roots"),
        (dict(kernel="/etc"), r"outside the allowed roots"),
        (dict(kernel="vector_add", baseline="/etc"), r"outside the workspace"),
    ]
    for kwargs, pattern in cases:
        with pytest.raises(KprofError, match=pattern):
            engine.profile(**kwargs)


def test_sizes_that_cannot_fit_are_refused_before_launch(engine):
    # 2^32 float32 elements x 3 tensors = 48 GiB: more than this machine (or a CPU run) has free.
    with pytest.raises(KprofError, match=r"need about 48.00 GiB .* choose smaller sizes"):
        engine.profile("vector_add", "v0", {"n": 1 << 32}, mode="event")


def test_user_kernel_by_path_runs(engine, workspace):
    rel = _user_kernel(workspace)
    o = engine.profile(rel, None, {"n": 512}, mode="event")
    assert o.result.kernel == "scale" and o.result.stages[0].name == "scale"
    assert o.profile_dir.parent.parent.name == "scale"


@pytest.mark.parametrize(
    "mode,pattern",
    [
        (
            "wrong",
            r"scale v0 produced wrong results, so it was not profiled: output 0: relative L2 error 0.25",
        ),
        ("raise", r"kernel process failed .*RuntimeError: kernel exploded on purpose"),
        ("segfault", r"kernel process died with SIGSEGV"),
    ],
)
def test_faulty_kernels_are_reported_and_leave_no_profile(engine, workspace, mode, pattern):
    rel = _user_kernel(workspace, mode, f"scale_{mode}.py")
    with pytest.raises(KprofError, match=pattern):
        engine.profile(rel, None, {"n": 256}, mode="event")
    assert not list((workspace / "out").rglob("result.json")) if (workspace / "out").exists() else True
    # The engine keeps working afterwards.
    assert engine.profile("vector_add", "v0", {"n": 256}, mode="event").profile_dir.is_dir()


def test_a_hanging_kernel_hits_the_time_limit(workspace):
    eng = Engine(Config(workspace=workspace, timeout_s=20))
    rel = _user_kernel(workspace, "hang", "scale_hang.py")
    with pytest.raises(KprofError, match=r"did not finish within 20 s; the kernel process tree was killed"):
        eng.profile(rel, None, {"n": 256}, mode="event")


def test_read_params_confinement_and_symlink_escape(engine, workspace, tmp_path):
    o = engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    assert engine.read_params(str(o.profile_dir))["n"] == 256
    rel = str(o.profile_dir.relative_to(workspace))
    assert engine.read_params(rel)["dtype"] == "float32"
    assert engine.read_params(rel + "/params.json")["n"] == 256
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "params.json").write_text("{}")
    os.symlink(outside, workspace / "sneaky")
    for bad in ("/etc", "../outside"):
        with pytest.raises(KprofError, match="outside the workspace"):
            engine.read_params(bad)
    for bad in ("sneaky", str(workspace / "sneaky" / "params.json")):  # a link is refused, never followed
        with pytest.raises(KprofError, match="'sneaky' is a symbolic link") as e:
            engine.read_params(bad)
        assert str(outside) not in str(e.value)  # nor does the message say where it points
    with pytest.raises(KprofError, match="not a directory"):
        engine.read_params("does/not/exist")
    (o.profile_dir / "params.json").write_text("{not json")
    with pytest.raises(KprofError, match="not valid JSON"):
        engine.read_params(rel)


def test_update_devlog_appends_and_compares(engine, workspace):
    a = engine.profile("vector_add", "v0", {"n": 1024}, mode="event")
    b = engine.profile("vector_add", "v1", {"n": 1024}, mode="event")
    p1, e1 = engine.update_devlog("vector_add", str(a.profile_dir), ["issue A"], ["insight A"])
    p2, e2 = engine.update_devlog("vector_add", str(b.profile_dir), [], ["insight B"])
    assert p1 == p2 == (workspace / "docs/kernels/vector_add.md").resolve()
    text = p1.read_text()
    assert text.count("**Performance**") == 2 and "- issue A" in text and "- insight B" in text
    assert "| Duration |" in e2 and ("faster" in e2 or "slower" in e2)
    for bad in ("../evil", "a/b", "", "x" * 100):
        with pytest.raises(KprofError, match="must be a plain name"):
            engine.update_devlog(bad, str(a.profile_dir))
    with pytest.raises(KprofError, match="holds a profile of 'vector_add', not 'matmul'"):
        engine.update_devlog("matmul", str(a.profile_dir))


def test_classify_validates_ranges(engine):
    assert engine.classify(5, 85).bottleneck == "Memory-bound"
    with pytest.raises(KprofError, match=r"tc_pct=250 is outside 0..100"):
        engine.classify(250, 10)


def test_device_info_without_gpu(engine):
    info = engine.device_info()
    if not info["gpus"]:
        assert info["active"] is None and "CPU" in info["timing"]
    assert info["modes"]["event"]["built"] is True and info["modes"]["ncu"]["built"] is True
    assert info["modes"]["nsys"]["built"] is True
    assert "NVIDIA H100 SXM5 80GB" in info["known_devices"]


def test_list_kernels_describes_versions_params_and_stages(engine):
    ks = {k["name"]: k for k in engine.list_kernels()}
    assert set(ks) >= {"vector_add", "matmul"}
    mm = ks["matmul"]
    assert [p["name"] for p in mm["params"]] == ["M", "N", "K", "dtype"]
    assert mm["params"][0]["default"] == 4096
    assert [s["name"] for s in mm["versions"][1]["stages"]] == ["matmul"]
