"""The ``nsys`` mode's two recorders on the same plans: Nsight Systems vs CUPTI via
torch.profiler (Kineto), alternating, through the engine (GPU only).

    python benchmarks/bench_timeline_engines.py [--out DIR] [--rounds 2] [--iters 10]

For each of ``two_streams`` v0/v1 and ``tiny_chain`` v0/v1 (defaults), ``rounds`` times in the
order nsys, kineto: ``Engine.profile(..., mode="nsys", timeline_engine=...)``. Prints, per
stage, the median over rounds of each engine's per-iteration kernel time (sum of the stage's
kernel durations) and GPU span, their ratio, and whether the diagnosis (bottleneck, root cause's
first words, the top opportunity) is the same; PASS when the kernel times agree within 2 %.
The first Nsight Systems profile of each version is copied to ``DIR/fixtures/<kernel>_<version>/``
(``timeline.sqlite.xz``, ``capture.json``, ``profiler.json``, ``result.json``, ``contract.md``) to
become a CPU test fixture (tests/fixtures/h100_nsys/; the SQLite export kept xz-compressed there since
2026-11-28, as the device tool carries the tree, 64 MiB at most).
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TARGET = 0.02
PAIRS = [("two_streams", "v0"), ("two_streams", "v1"), ("tiny_chain", "v0"), ("tiny_chain", "v1")]
KEEP = ("capture.json", "profiler.json", "result.json", "contract.md")  # and timeline.sqlite, as .xz


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "evidence" / "timeline-engines"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args()
    from kprof_mcp.engine import Config, Engine, KprofError

    out = Path(a.out)
    (out / "fixtures").mkdir(parents=True, exist_ok=True)
    eng = Engine(Config(workspace=Path(tempfile.mkdtemp(prefix="kprof-engines-")), timeout_s=300))
    rows: dict[tuple, dict] = {}
    t0 = time.time()
    for rnd in range(a.rounds):
        for kernel, version in PAIRS:
            for engine in ("nsys", "kineto"):
                try:
                    o = eng.profile(
                        kernel,
                        version,
                        {},
                        "nsys",
                        timeline_iters=a.iters,
                        timeline_engine=engine,
                        timeout_s=300,
                    )
                except KprofError as e:
                    print(f"{kernel} {version} {engine}: {e}", flush=True)
                    continue
                r, tl = o.result, o.result.timeline
                print(
                    f"round {rnd} {kernel} {version} {engine}: {tl.get('engine')} ({time.time() - t0:.0f} s)",
                    flush=True,
                )
                if engine == "nsys" and rnd == 0:
                    dst = out / "fixtures" / f"{kernel}_{version}"
                    dst.mkdir(parents=True, exist_ok=True)
                    for f in KEEP:
                        if (o.profile_dir / f).is_file():
                            shutil.copy(o.profile_dir / f, dst / f)
                    if (o.profile_dir / "timeline.sqlite").is_file():  # as `xz -9e` writes it
                        (dst / "timeline.sqlite.xz").write_bytes(
                            lzma.compress(
                                (o.profile_dir / "timeline.sqlite").read_bytes(),
                                preset=9 | lzma.PRESET_EXTREME,
                            )
                        )
                first = (
                    o.contract.split("**Root cause**: ")[1].split(".")[0]
                    if "**Root cause**" in o.contract
                    else ""
                )
                top = o.assessment.opportunities[0].name if o.assessment.opportunities else None
                for st in tl.get("stages", []):
                    d = rows.setdefault((kernel, version, st["stage"]), {"nsys": [], "kineto": []})
                    d[engine].append(
                        {
                            "kernel_ns": st["gpu_time_ns_median"],
                            "span_ns": st["gpu_span_ns_median"],
                            "bottleneck": o.assessment.bottleneck,
                            "root": first,
                            "top": top,
                            "overlap_pct": max((s["overlap_pct"] for s in tl.get("streams", [])), default=0),
                            "launch_bound": (tl.get("launch") or {}).get("launch_bound"),
                            "engine_name": tl.get("engine"),
                        }
                    )
    lines = [
        "| Kernel | Version | Stage | Nsight Systems kernel time (µs) | Kineto kernel time (µs) | ratio | "
        "Nsight Systems span (µs) | Kineto span (µs) | launch-bound (nsys / kineto) | same diagnosis | Target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for (k, v, s), d in rows.items():
        n, kk = d["nsys"], d["kineto"]
        if not n or not kk:
            lines.append(f"| {k} | {v} | {s} | missing | | | | | | | FAIL |")
            verdicts.append(False)
            continue
        med = lambda xs, f: statistics.median(x[f] for x in xs if x[f] is not None)  # noqa: E731
        nk, kk_ = med(n, "kernel_ns"), med(kk, "kernel_ns")
        ratio = nk / kk_
        same = all((x["bottleneck"], x["top"]) == (n[0]["bottleneck"], n[0]["top"]) for x in n + kk)
        ok = abs(ratio - 1) <= TARGET
        verdicts.append(ok)
        lines.append(
            f"| {k} | {v} | {s} | {nk / 1e3:.2f} | {kk_ / 1e3:.2f} | {ratio:.4f} | "
            f"{med(n, 'span_ns') / 1e3:.2f} | {med(kk, 'span_ns') / 1e3:.2f} | "
            f"{n[0]['launch_bound']} / {kk[0]['launch_bound']} | "
            f"{'yes' if same else 'NO'}: {n[0]['bottleneck']}, top: {n[0]['top']} | "
            f"{'PASS' if ok else 'FAIL'} |"
        )
    summary = (
        f"Stages whose kernel time agrees within {100 * TARGET:.0f} % between the engines: "
        f"{sum(verdicts)} of {len(verdicts)}; engines: "
        f"{sorted({x['engine_name'] for d in rows.values() for e in d.values() for x in e})}"
    )
    text = "\n".join(lines + ["", summary])
    print(text)
    (out / "timeline_engines.md").write_text(text + "\n")
    (out / "timeline_engines.json").write_text(
        json.dumps({f"{k}|{v}|{s}": d for (k, v, s), d in rows.items()}, indent=2, default=str)
    )
    return 0 if verdicts and all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
