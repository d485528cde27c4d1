"""Every output a user or an agent reads, produced from the recorded H100 fixtures on the CPU:
the contract, report.md, the structured summary and the files each mode writes when it reads a
recording back (annotation, ncu, nsys), the MCP tools' schemas and CPU-only tool answers, and
the CLI's help and CPU-only commands.

``collect(tmp)`` returns {name: text}. ``tests/unit/test_outputs_identical.py`` compares it with
``tests/fixtures/golden/outputs.json.gz``, recorded before the structure of issue 28 changed (at
b4dd435, with this same file): a refactor that changes one byte of what users see fails there.
Re-recorded only for an intended change, named in that commit (since b4dd435: the baseline verdict
without a measured floor, guarded by the profiles' own spread, 4 outputs; `kprof worker --json`, its help;
issue 36, 54 outputs: the root cause names the machine model's limiter, generic compute advice names the
limiting pipe, the timeline's idle causes are the replay's gains, result.json holds the new accounting
counters, resources' ir_ops and the idle breakdown's replay, classify_bottleneck takes arch, `kprof device`
has --calibrate; the batch what-if, the static SASS mix's loops, issue 37's allow_mismatch, suspect stages,
% of the FLOP peak at the clock, kernel_recorded, warning kinds, the datasheet peaks' clock and the Caveat
line; 2026-11-26, 14 outputs: issue 41's `--mode MODE` in the usage lines (cli/profile_help, run_help,
profile_vector_add_mode_warp, mcp/call_08_profile_kernel), two CLI errors without a stray empty line
(cli/profile_nope, profile_vector_add_version_v9), n/a instead of 0 for stages without a FLOP/byte model
(7 h100_commands/*.report.md), and a tool's argument errors in kprof's words (mcp/call_01_classify_bottleneck);
2026-11-26 11:10 UTC, 16 outputs: cli/list.txt's "without a GPU: ..." line per package whose CPU-sized defaults
differ, mcp/tool_profile_kernel.json's params description (CPU-sized when omitted without a GPU),
cli/profile_help.txt's --mode help (event mode's time is CUPTI's kernel time), mcp/tool_compare_versions.json's
recorded example verdict (1.111×), and the 12 ncu/nsys result.json files' `"timings": {}` (issue 40);
2026-11-26 14:15 UTC, 8 outputs: the ncu/annotation metrics.csv files' two new columns, sysmem_sectors and
host_link_pct (issue 36: the host link as a memory level), empty in the recordings, which predate them;
2026-11-26 20:50 UTC, 4 outputs: the nsys result.json files' idle replay gains `gpu_free_ns`, the step with every
GPU operation at its floor, which bounds generic advice on a command's step (issue 36); 2026-11-27 10:10 UTC,
24 outputs: the ncu/annotation metric_names.json, metrics.csv and result.json files' three L2-slice counters,
l2_slice_pct, l2_atomic_pct and l2_atomic_slice_pct (issue 36: the L2's busiest slice as a resource), values
where the recorded report holds them (--set full), empty where it predates them); 2026-11-27 13:10 UTC, 13 outputs:
cli/list.txt's matmul CPU-sized defaults (128^3: issue 40, the first hour's 15 s), and the 12 ncu/annotation/nsys
result.json files' `data_bytes` (null: the recordings predate it) and each stage's `dram_read_bytes` (issue 36: a
plan's stages reading the same data again); 2026-11-27 16:25 UTC, 12 outputs: the same result.json files'
`scratch_bytes` (null: the recordings predate it; issue 36, a workspace's round trip); 2026-11-27 19:45 UTC, 4 outputs:
the nsys result.json files' idle replay `round_trip_host_ns` (0.0: the host's work between a download and an
upload, issue 36's round trip through the host).
Intended changes awaiting the next re-recording, one line each (re-recorded 2026-11-26 14:15 UTC before them):
- none.
``python tests/outputs_snapshot.py DIR`` writes the snapshot into DIR as files (to diff -r two
checkouts); ``python tests/outputs_snapshot.py --golden`` records the golden file.

Only public entry points that exist before and after the refactor are used, so the one file
runs on both sides.
"""

from __future__ import annotations

import asyncio
import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"


def _norm(text: str, tmp: Path, root: bool = False) -> str:
    """The run's temporary directory, and for what the CLI and the server print the checkout's
    path, as placeholders (recorded fixtures keep the paths they were recorded with)."""
    text = text.replace(str(tmp), "<TMP>").replace(sys.prefix, "<PREFIX>")  # where ncu_report was found
    return text.replace(str(ROOT), "<ROOT>") if root else text


def _rendered(out: dict, key: str, result, baseline=None) -> None:
    from kprof_mcp.engine import render_profile
    from kprof_mcp.render.summary import profile_summary

    r = render_profile(result, baseline)
    out[f"{key}.contract.md"] = r.contract
    out[f"{key}.report.md"] = r.report
    out[f"{key}.summary.json"] = json.dumps(
        profile_summary(result, r.assessment).model_dump(mode="json"), indent=1, sort_keys=True
    )


def _files(out: dict, key: str, work: Path, tmp: Path) -> None:
    """The files a mode wrote while reading a recording back (text ones)."""
    for f in sorted(work.rglob("*")):
        if f.is_file() and f.suffix in (".md", ".json", ".csv", ".txt"):
            try:
                out[f"{key}/{f.relative_to(work)}"] = _norm(f.read_text(), tmp)
            except UnicodeDecodeError:
                pass


def results(out: dict, tmp: Path) -> None:
    from kprof_mcp.models import ProfileResult

    def load(p: Path):
        return ProfileResult.model_validate_json(p.read_text())

    ev = {}
    for p in sorted((FIX / "h100_event").glob("*/*/*/result.json")):
        r = load(p)
        ev[(r.kernel, r.version)] = r
    for (k, v), r in sorted(ev.items()):
        _rendered(out, f"event/{k}_{v}", r)
        prev = ev.get((k, f"v{int(v[1:]) - 1}")) if v[1:].isdigit() else None
        if prev is not None:
            _rendered(out, f"event/{k}_{v}_vs_prev", r, prev)
    for folder in ("h100_timeline", "h100_commands"):
        for p in sorted((FIX / folder).glob("*/result.json")):
            _rendered(out, f"{folder}/{p.parent.name}", load(p))


def read_back(out: dict, tmp: Path) -> None:
    from kprof_mcp.models import ProfileRequest
    from kprof_mcp.modes import get_mode

    for src in sorted((FIX / "h100_ncu").glob("*_*_v*")):
        if not src.is_dir():
            continue
        mode = src.name.split("_")[0]
        work = tmp / "ncu" / f"{src.name}.partial"
        shutil.copytree(src, work)
        fields = json.loads((work / "capture.json").read_text())["result"]
        req = ProfileRequest.model_validate(fields["request"])
        profiler = json.loads((work / "profiler.json").read_text())
        result = get_mode(mode).read_output(req, work, (work / "ncu.log").read_text(), profiler)
        _rendered(out, f"ncu/{src.name}", result)
        _files(out, f"ncu/{src.name}/files", work, tmp)
    from kprof_mcp.models import ProfileResult

    for src in sorted((FIX / "h100_nsys").glob("*_v*")):
        work = tmp / "nsys" / src.name
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("*.xz"))
        if not (work / "timeline.sqlite").exists():  # kept as timeline.sqlite.xz (h100_nsys/README.md)
            (work / "timeline.sqlite").write_bytes(lzma.decompress((src / "timeline.sqlite.xz").read_bytes()))
        recorded = ProfileResult.model_validate_json((src / "result.json").read_text())
        req = ProfileRequest(**recorded.request)
        profiler = json.loads((work / "profiler.json").read_text())
        result = get_mode("nsys").read_output(req, work, "", profiler)
        _rendered(out, f"nsys/{src.name}", result)
        _files(out, f"nsys/{src.name}/files", work, tmp)


CLASSIFY = [
    {},
    {"tc_pct": 41.5, "dram_pct": 22.0, "occupancy_pct": 12.5, "l2_hit_pct": 55.0},
    {
        "tc_pct": 3.0,
        "dram_pct": 91.0,
        "occupancy_pct": 60.0,
        "l2_hit_pct": 30.0,
        "dram_bytes_over_model": 1.1,
    },
    {
        "tc_pct": 0.0,
        "dram_pct": 20.0,
        "occupancy_pct": 10.0,
        "local_spill_bytes": 4096,
        "waves_per_sm": 0.4,
        "grid_blocks": 40,
    },
    {"tc_pct": 5.0, "compute_pct": 85.0, "dram_pct": 10.0, "duration_us": 120.0, "sol_us": 60.0},
]

CLI = [
    ["--help"],
    *[
        [c, "--help"]
        for c in (
            "list",
            "profile",
            "compare",
            "sweep",
            "run",
            "init",
            "worker",
            "noise",
            "device",
            "read-params",
            "classify",
            "devlog",
        )
    ],
    ["list"],
    ["--cpu", "device"],
    ["classify", "--tc", "41.5", "--dram", "22", "--occupancy", "12.5", "--l2-hit", "55"],
    ["classify", "--dram", "91", "--tc", "3", "--dram-over-model", "1.1"],
    ["profile", "nope"],
    ["profile", "vector_add", "--version", "v9"],
    ["profile", "vector_add", "--mode", "warp"],
    ["read-params", "/nonexistent"],
]


def cli(out: dict, tmp: Path) -> None:
    ws = tmp / "ws"
    ws.mkdir()
    env = {**os.environ, "COLUMNS": "100", "KPROF_FORCE_CPU": "1", "PYTHONPATH": str(ROOT)}
    for args in CLI:
        cp = subprocess.run(
            [sys.executable, "-m", "kprof_mcp.cli", *args],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        text = f"exit {cp.returncode}\n--- stdout\n{cp.stdout}--- stderr\n{cp.stderr}"
        out[f"cli/{'_'.join(a.strip('-/') for a in args) or 'none'}.txt"] = _norm(text, tmp, root=True)


def mcp(out: dict, tmp: Path) -> None:
    from kprof_mcp.engine import Config
    from kprof_mcp.server import build_server

    ws = tmp / "mcpws"
    ws.mkdir()
    cfg = Config.from_options(str(ws), force_cpu=True)
    cfg.warm = False
    server = build_server(cfg)

    async def go():
        tools = await server.list_tools()
        for t in tools:
            d = t.model_dump(mode="json", exclude_none=True, by_alias=True)
            out[f"mcp/tool_{t.name}.json"] = json.dumps(d, indent=1, sort_keys=True)
        calls = [("list_kernels", {})] + [("classify_bottleneck", c) for c in CLASSIFY]
        calls += [
            ("profile_kernel", {"kernel": "nope"}),
            ("profile_kernel", {"kernel": "vector_add", "version": "v9"}),
            ("profile_kernel", {"kernel": "vector_add", "mode": "warp"}),
            ("get_profile", {"job_id": "nope"}),
        ]
        for i, (name, args) in enumerate(calls):
            try:
                res = await server.call_tool(name, args)
                text = repr(res) if not hasattr(res, "model_dump") else res.model_dump_json(indent=1)
                if isinstance(res, tuple):
                    text = json.dumps(
                        [[c.model_dump(mode="json") for c in res[0]], res[1]],
                        indent=1,
                        sort_keys=True,
                        default=str,
                    )
                elif isinstance(res, list):
                    text = json.dumps([c.model_dump(mode="json") for c in res], indent=1, sort_keys=True)
            except Exception as e:  # the error a client would see
                text = f"{type(e).__name__}: {e}"
            out[f"mcp/call_{i:02d}_{name}.txt"] = _norm(text, tmp, root=True)

    asyncio.run(go())


def collect(tmp: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    results(out, tmp)
    read_back(out, tmp)
    cli(out, tmp)
    mcp(out, tmp)
    return {k: _norm(v, tmp) for k, v in out.items()}


def write(outdir: Path, snap: dict[str, str]) -> None:
    for name, text in snap.items():
        p = outdir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


GOLDEN = FIX / "golden" / "outputs.json.gz"


def read_golden() -> dict[str, str]:
    import gzip

    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def write_golden(snap: dict[str, str]) -> None:
    import gzip

    GOLDEN.write_bytes(gzip.compress(json.dumps(snap, indent=0, sort_keys=True).encode(), mtime=0))


if __name__ == "__main__":
    import tempfile

    os.environ.setdefault("TRITON_INTERPRET", "1")
    with tempfile.TemporaryDirectory() as t:
        snap = collect(Path(t).resolve())
    if sys.argv[1] == "--golden":
        write_golden(snap)
        print(f"{len(snap)} outputs recorded in {GOLDEN}")
    else:
        write(Path(sys.argv[1]), snap)
        print(f"{len(snap)} outputs written to {sys.argv[1]}")
