"""Issue 29 ("the first hour"): CPU results labelled as CPU wall times, never as GPU figures;
no empty sections; rendered markdown valid CommonMark (GFM tables); no lock file left in the
workspace; the HTTP server says where it serves."""

import struct

import pytest
from conftest import h100_result

from kprof_mcp import render
from kprof_mcp.models import CompareResult, Comparison, VersionTiming


def _cpu(kernel: str, version: str):
    r = h100_result(kernel, version).model_copy(deep=True)
    r.device.kind, r.device.name = "cpu", "cpu"
    for s in r.stages:
        s.peak_bytes_per_s = s.peak_flops_per_s = None
        s.timing.method = "cpu_wall_clock"
    return r


def _compare(device, sentence="v1 is 6.142× faster than v0 (95 % CI 6.000–6.300)") -> CompareResult:
    timing = [
        VersionTiming(version=v, method="cpu_wall_clock", rounds_ns=[[1000.0, 1001.0]] * 3)
        for v in ("v0", "v1")
    ]
    c = Comparison(
        version="v1",
        baseline="v0",
        speedup=6.142,
        ci_low=6.0,
        ci_high=6.3,
        confidence=0.95,
        verdict="faster",
        sentence=sentence,
    )
    return CompareResult(
        kernel="vector_add",
        params={"n": 4096},
        param_order=["n"],
        device=device,
        versions=timing,
        comparisons=[c],
        rounds=3,
        runs_per_round=2,
        order="rotating",
        cache_control="none",
        created_at="t",
    )


# ----------------------------------------------------------------------------- 1. CPU labels


def test_a_cpu_contract_says_cpu_wall_time_and_not_triton():
    text = render.render_contract(_cpu("vector_add", "v0"))
    assert "CPU wall time, no GPU" in text
    assert "Triton interpreter" not in text  # not known from the result: torch on the CPU may have run


def test_a_cpu_devlog_entry_says_cpu_wall_time():
    from kprof_mcp.render.devlog import render_devlog_entry

    text = render_devlog_entry(_cpu("vector_add", "v0"), None, [], [], "out/x")
    assert "(cpu, CPU wall time, no GPU," in text and "Triton" not in text


def test_a_cpu_verdict_is_not_bold_and_says_cpu():
    from kprof_mcp.render.compare import render_compare, verdict_sentence

    res = _compare(_cpu("vector_add", "v0").device)
    (c,) = res.comparisons
    md = render_compare(res)
    verdicts = md.split("### Verdict")[1].split("###")[0]
    assert "**" not in verdicts
    line = "- CPU: v1 is 6.142× faster than v0 (95 % CI 6.000–6.300): CPU wall time, not a GPU figure"
    assert line in verdicts.splitlines()
    assert verdict_sentence(c, "cpu") == line[2:]
    gpu = render_compare(_compare(h100_result("vector_add", "v0").device))
    assert f"- **{c.sentence}**" in gpu and "CPU:" not in gpu and verdict_sentence(c, "cuda") == c.sentence


def _png_width(path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", data[16:20])[0]


def test_a_cpu_sweep_draws_only_the_time_panel(tmp_path):
    from kprof_mcp.render.plots import plot_sweep

    def rows(pct, method):
        return [
            {"n": n, "version": "v0", "time_us": t, "pct_roofline": pct, "timing_method": method}
            for n, t in ((1024, 10.0), (4096, 30.0))
        ]

    plot_sweep(rows(None, "cpu_wall_clock"), "n", tmp_path / "cpu.png", "cpu")
    plot_sweep(rows(80.0, "cupti_kernel_sum"), "n", tmp_path / "gpu.png", "gpu")
    # one panel (6.5 in) on the CPU, time and roofline side by side (12 in) on a GPU, at 110 dpi
    assert _png_width(tmp_path / "cpu.png") == round(6.5 * 110)
    assert _png_width(tmp_path / "gpu.png") == 12 * 110


# ----------------------------------------------------------------------------- 2./3. markdown


def _recorded_markdown(tmp_path) -> dict[str, str]:
    """Every contract and report.md rendered from the recorded H100 results and read-backs (the
    same set as tests/outputs_snapshot.py), and the markdown files the modes write."""
    import outputs_snapshot

    out: dict[str, str] = {}
    outputs_snapshot.results(out, tmp_path)
    outputs_snapshot.read_back(out, tmp_path)
    return {k: v for k, v in out.items() if k.endswith(".md") and "/files/" not in k}  # files/: as recorded


def test_every_recorded_contract_and_report_is_clean_markdown(tmp_path):
    from mdcheck import problems

    md = _recorded_markdown(tmp_path)
    assert len([k for k in md if k.endswith("contract.md")]) >= 20
    bad = {k: p for k, v in md.items() if (p := problems(v))}
    assert not bad, bad


def test_no_baseline_is_one_line_under_specs_heading():
    from kprof_mcp.render.contract import NO_BASELINE

    text = render.render_contract(h100_result("vector_add", "v0"))
    assert text.endswith("### vs Baseline (if applicable)\n" + NO_BASELINE + "\n")
    assert "| Metric | Previous |" not in text


def test_the_checker_finds_what_a_renderer_would_swallow():
    from mdcheck import problems

    assert problems("| a |\n|---|\n| 1 |\n**Bottleneck**: x\n")  # a paragraph after the last row
    assert problems("| a |\n|---|\n\ntext\n")  # a table without rows
    assert problems("## A\n\n## B\ntext\n")  # an empty section
    assert not problems("## A\n### B\n| a |\n|---|\n| 1 |\n\n**Bottleneck**: x\n")


def test_devlog_compare_and_sweep_are_clean_markdown():
    from mdcheck import problems

    from kprof_mcp.models import SweepResult
    from kprof_mcp.render.compare import render_compare
    from kprof_mcp.render.devlog import devlog_metrics, render_devlog_entry
    from kprof_mcp.render.sweep import render_sweep, sweep_rows

    v0, v1 = h100_result("vector_add", "v0"), h100_result("vector_add", "v1")
    for r, prev in ((v0, None), (v1, devlog_metrics(v0)), (_cpu("vector_add", "v0"), None)):
        entry = render_devlog_entry(r, prev, ["an issue"], ["an insight"], "out/x")
        assert not problems("# vector_add devlog\n\n" + entry), entry
        assert not problems(render_devlog_entry(r, prev, [], [], "out/x"))
    for dev in (v0.device, _cpu("vector_add", "v0").device):
        assert not problems(render_compare(_compare(dev)))
    sw = SweepResult(
        kernel="vector_add",
        param="n",
        values=[v0.params["n"]],
        versions=["v0"],
        points=[v0],
        device=v0.device,
        created_at="x",
    )
    assert not problems(render_sweep(sw, sweep_rows(sw)))


def test_a_devlog_entry_renders_as_its_template_reads():
    """CommonMark: the Bottleneck line is a paragraph of its own, not a row of the table, and
    Insights is not part of the Issues list."""
    MarkdownIt = pytest.importorskip("markdown_it").MarkdownIt

    from kprof_mcp.render.devlog import render_devlog_entry

    html = (
        MarkdownIt("commonmark")
        .enable("table")
        .render(
            render_devlog_entry(h100_result("vector_add", "v0"), None, ["an issue"], ["an insight"], "out/x")
        )
    )
    assert "<p><strong>Bottleneck</strong>:" in html and "<td><strong>Bottleneck" not in html
    assert "<p><strong>Issues</strong>:</p>" in html and "<p><strong>Insights</strong>:</p>" in html


# ----------------------------------------------------------------------------- 4. lock files


def test_a_devlog_append_leaves_no_lock_file_in_the_workspace(tmp_path, monkeypatch):
    from kprof_mcp import store

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    ws.mkdir()
    log = ws / "docs" / "kernels" / "vector_add.md"
    for n in range(2):
        store.append_devlog(ws, log, "# vector_add\n", lambda text, n=n: f"entry {n}\n")
    assert log.read_text().count("entry") == 2
    assert sorted(p.name for p in ws.rglob("*")) == ["docs", "kernels", "vector_add.md"]
    assert list((tmp_path / "cache" / "kprof-mcp" / "locks").glob("devlog-*.lock"))  # the lock: in the cache


# ----------------------------------------------------------------------------- 5. the HTTP URL


def test_the_http_serving_line_is_one_line_with_the_url():
    from kprof_mcp.face.http import serving_line

    assert serving_line("127.0.0.1", 8000, None) == (
        "kprof-mcp: serving MCP over streamable HTTP at http://127.0.0.1:8000/mcp"
    )
    assert "http://[::1]:8000/mcp" in serving_line("::1", 8000, None)
    line = serving_line("0.0.0.0", 9000, "s3cret")
    assert "http://0.0.0.0:9000/mcp (Authorization: Bearer <token> required)" in line and "s3cret" not in line
    assert all("\n" not in serving_line(h, 1, t) for h in ("localhost", "::1") for t in (None, "x"))


def test_a_gpu_report_without_triton_compiles_does_not_say_cpu(tmp_path):
    """A command's torch kernels on an H100 have no Triton resources: that is no CPU run."""
    md = _recorded_markdown(tmp_path)
    report = md["h100_commands/event_train_models.report.md"]
    assert "n/a: no Triton compile recorded for the stage" in report
    assert not [k for k, v in md.items() if "CPU interpreter" in v or "Triton interpreter" in v]
