"""Issue 37, item 4: verdicts that say what they compare. A baseline or a devlog entry of other
parameters, another device or another mode is refused with the reason, or compared only with
``allow_mismatch`` (``--allow-mismatch``), which then heads the verdict; a CPU verdict is never bold and
is prefixed "CPU:" wherever one appears (the baseline's table, CI and verdict per stage, the devlog's
"vs Previous", compare_versions' sentences)."""

import subprocess
import sys

import pytest
from conftest import ROOT, h100_result

from kprof_mcp import render
from kprof_mcp.analysis.baseline import against, mismatch
from kprof_mcp.analysis.compare import Ratio
from kprof_mcp.engine import KprofError
from kprof_mcp.render.compare import comparison, verdict_sentence
from kprof_mcp.render.devlog import previous_entry


def _cpu(kernel: str, version: str):
    r = h100_result(kernel, version).model_copy(deep=True)
    r.device.kind, r.device.name = "cpu", "cpu"
    for s in r.stages:
        s.peak_bytes_per_s = s.peak_flops_per_s = None
        s.timing.method = "cpu_wall_clock"
    return r


def _vs(contract: str) -> str:
    return contract.split("### vs Baseline (if applicable)")[1]


def test_a_gpu_verdict_is_bold_and_a_cpu_verdict_is_not_and_says_cpu():
    gpu = _vs(render.render_contract(h100_result("matmul", "v1"), h100_result("matmul", "v0")))
    assert "| **faster** |" in gpu and "CPU:" not in gpu
    cpu = _vs(render.render_contract(_cpu("matmul", "v1"), _cpu("matmul", "v0")))
    assert "**" not in cpu
    assert "| CPU: faster |" in cpu  # the verdict per stage
    assert "(CPU: 1.07x faster)" in cpu  # the Duration row's change
    assert "; CPU: speed-up 1.069 (95 % CI" in cpu  # the bootstrap CI under the table


def test_a_baseline_of_another_mode_or_device_is_refused_with_the_reason():
    v0, v1 = h100_result("matmul", "v0"), h100_result("matmul", "v1")
    other_mode = v0.model_copy(update={"mode": "annotation"})
    text = _vs(render.render_contract(v1, other_mode))
    assert text.lstrip().startswith(
        "Refused: the baseline measured something else — another mode: the baseline "
    )
    assert "ran in annotation, this profile in event" in text and "allow_mismatch" in text
    assert "Verdict per stage" not in text and "| Duration (us) |" not in text
    assert "Baseline: matmul v0 (" in text  # which baseline was refused
    # Another device: a CPU baseline for a GPU profile, and another GPU model.
    assert (
        "another device: the baseline ran on the CPU (cpu: CPU wall time), this profile on a GPU"
        in mismatch(_cpu("matmul", "v0"), v1)
    )
    h200 = v0.model_copy(update={"device": v0.device.model_copy(update={"name": "NVIDIA H200"})})
    (why,) = mismatch(h200, v1)
    assert why.startswith("another device: the baseline ran on NVIDIA H200") and "another GPU model" in why
    assert "Refused: the baseline measured something else — another device" in render.render_contract(
        v1, h200
    )
    # A GPU baseline for a CPU profile.
    (why,) = mismatch(v0, _cpu("matmul", "v1"))
    assert "ran on a GPU (NVIDIA H100 80GB HBM3) and this machine has none" in why
    assert mismatch(v0, v1) == []


def test_allow_mismatch_compares_and_heads_the_verdict_with_what_differs():
    v0, v1 = h100_result("matmul", "v0"), h100_result("matmul", "v1")
    other = v0.model_copy(update={"mode": "annotation", "params": dict(v0.params, K=2048)})
    vs = against(v1, other, allow_mismatch=True)
    assert vs.refused is None and vs.stages and len(vs.mismatch) == 2
    text = _vs(render.render_contract(v1, other, vs=vs))
    head = text.strip().splitlines()[0]
    assert head.startswith("Compared despite a mismatch (allow_mismatch): other parameters (baseline, this ")
    assert "'K': (2048, 4096)" in head and "another mode" in head and "not of like with like" in head
    assert "| **faster** |" in text
    assert against(v1, other).refused  # not allowed: refused


def test_the_engine_refuses_a_baseline_of_other_parameters_unless_allowed(engine, workspace):
    a = engine.profile("vector_add", "v0", {"n": 2048}, mode="event")
    with pytest.raises(
        KprofError, match=r"other parameters \(baseline, this profile\): \{'n': \(2048, 4096\)\}"
    ):
        engine.check_profile("vector_add", "v1", {"n": 4096}, mode="event", baseline=str(a.profile_dir))
    with pytest.raises(KprofError, match="allow_mismatch"):
        engine.check_profile("vector_add", "v1", {"n": 4096}, mode="event", baseline=str(a.profile_dir))
    b = engine.profile(
        "vector_add", "v1", {"n": 4096}, mode="event", baseline=str(a.profile_dir), allow_mismatch=True
    )
    vs = _vs(b.contract)
    assert vs.strip().startswith("Compared despite a mismatch (allow_mismatch): other parameters")
    assert "**" not in vs and "| CPU: " in vs  # a CPU verdict, never bold
    # The same parameters, device and mode: compared, no heading.
    c = engine.profile("vector_add", "v1", {"n": 2048}, mode="event", baseline=str(a.profile_dir))
    assert "Compared despite" not in c.contract and "Verdict per stage" in c.contract


def test_the_cli_takes_allow_mismatch(workspace, engine):
    a = engine.profile("vector_add", "v0", {"n": 1024}, mode="event")
    args = [sys.executable, "-m", "kprof_mcp.cli", "--workspace", str(workspace), "profile", "vector_add"]
    args += ["--mode", "event", "--n", "2048", "--baseline", str(a.profile_dir), "--quiet"]
    cp = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert cp.returncode != 0 and "other parameters" in cp.stderr and "--allow-mismatch" in cp.stderr
    cp = subprocess.run(args + ["--allow-mismatch"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert cp.returncode == 0, cp.stderr
    assert "Compared despite a mismatch (allow_mismatch): other parameters" in cp.stdout


def test_a_devlog_entry_of_another_device_or_mode_is_not_compared_unless_allowed():
    h100 = h100_result("vector_add", "v0").model_copy(update={"mode": "annotation"})
    cpu_v1 = _cpu("vector_add", "v1")
    text = "# vector_add\n\n" + render.render_devlog_entry(h100, None, [], [], "h")
    prev = previous_entry(text, cpu_v1)
    assert prev.metrics is None and prev.refused.startswith(
        "not compared with the log's last entry (v0): it measured "
    )
    assert "another device (NVIDIA H100 80GB HBM3 vs the CPU (cpu))" in prev.refused
    assert "another mode (annotation vs event)" in prev.refused
    entry = render.render_devlog_entry(cpu_v1, prev, [], [], "c")
    assert f"vs Previous: {prev.refused}." in entry and "| Duration |" in entry
    assert "faster" not in entry and "slower" not in entry  # nothing compared: "--"
    # Allowed: compared with the last entry, headed by what differs, the CPU verdict said so.
    prev = previous_entry(text, cpu_v1, allow_mismatch=True)
    assert prev.metrics["version"] == "v0" and len(prev.mismatch) == 2
    entry = render.render_devlog_entry(cpu_v1, prev, [], [], "c")
    assert "vs Previous compared despite a mismatch (allow_mismatch): another device" in entry
    assert "| CPU: " in entry.split("| Duration |")[1].splitlines()[0]
    # An earlier entry measured the same way is the one compared with, the newer mismatched one skipped.
    cpu_v0 = _cpu("vector_add", "v0")
    text = (
        "# vector_add\n\n"
        + render.render_devlog_entry(cpu_v0, None, [], [], "c0")
        + "\n"
        + text.split("\n\n", 1)[1]
    )
    prev = previous_entry(text, cpu_v1)
    assert prev.metrics["version"] == "v0" and prev.metrics["device"] == "cpu" and not prev.refused
    duration = render.render_devlog_entry(cpu_v1, prev, [], [], "c1").split("| Duration |")[1].splitlines()[0]
    assert "| CPU: " in duration and ("faster" in duration or "slower" in duration)


def test_an_entry_that_does_not_record_its_device_or_parameters_matches_nothing():
    cpu_v1 = _cpu("vector_add", "v1")
    old = '<!-- kprof-devlog {"version": "v0", "duration_us": 10.0, "mode": "event"} -->'
    prev = previous_entry(old, cpu_v1)
    assert prev.metrics is None and "(the entry does not record them)" in prev.refused
    assert "another device (not recorded vs the CPU (cpu))" in prev.refused


def test_update_devlog_refuses_an_h100_entry_for_a_cpu_profile(engine, workspace):
    """The issue's case: `kprof devlog` set a CPU run against an H100 annotation entry ("5805.6 % slower")."""
    o = engine.profile("vector_add", "v1", {"n": 2048}, mode="event")
    log = workspace / "docs" / "kernels" / "vector_add.md"
    log.parent.mkdir(parents=True)
    h100 = h100_result("vector_add", "v0").model_copy(update={"mode": "annotation"})
    log.write_text("# vector_add — development log\n\n" + render.render_devlog_entry(h100, None, [], [], "h"))
    _, entry = engine.update_devlog("vector_add", str(o.profile_dir))
    assert "vs Previous: not compared with the log's last entry (v0)" in entry and "% slower" not in entry
    h100_entry = render.render_devlog_entry(h100, None, [], [], "h")
    log.write_text(log.read_text() + "\n" + h100_entry)  # the H100 entry is the last one again
    _, entry = engine.update_devlog("vector_add", str(o.profile_dir), allow_mismatch=True)
    head = next(ln for ln in entry.splitlines() if ln.startswith("vs Previous compared despite a mismatch"))
    assert (
        "(allow_mismatch): other parameters" in head and "another device" in head and "another mode" in head
    )
    assert "(previous: v0)" in entry and "| CPU: " in entry.split("| Duration |")[1].splitlines()[0]
    _, entry = engine.update_devlog("vector_add", str(o.profile_dir))  # the last entry is this CPU one
    assert "(previous: v1)" in entry and "not compared" not in entry and "despite" not in entry


def test_compare_sentences_on_the_cpu_say_cpu_in_the_structured_output_too():
    r = Ratio("v1", "v0", 2.0, 1.9, 2.1, 0.95, "faster")
    cpu, gpu = comparison(r, "cpu"), comparison(r)
    assert (
        cpu.sentence
        == "CPU: v1 is 2.000× faster than v0 (95 % CI 1.900–2.100): CPU wall time, not a GPU figure"
    )
    assert gpu.sentence == "v1 is 2.000× faster than v0 (95 % CI 1.900–2.100)"
    assert verdict_sentence(cpu, "cpu") == cpu.sentence  # not prefixed twice
    refused = comparison(r, "cuda", refused="v1 failed its integrity checks after timing")
    assert refused.verdict == "refused" and "faster" not in refused.sentence
