"""Issue 27's noise floor and baseline verdict on a GPU, in one engine (the server's, in-process):

1. the noise floor: `kprof noise`'s measurement (8 alternating event profiles each of matmul v3,
   softmax v2, vector_add v1, SM clock locked), stored for this GPU;
2. A/A verdicts: 6 more alternating profiles of each, each judged against the previous profile of the
   same kernel as its baseline (the contract's verdict: CI of both profiles' samples + the floor):
   "no significant change" expected in >= 95 % of the pairs;
3. matmul v1 -> v3 with v1 as the baseline: "faster" expected.

    python benchmarks/bench_noise_verdict.py [--json out.json]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kprof_mcp import noise  # noqa: E402
from kprof_mcp.engine import Config, Engine  # noqa: E402


def verdicts(contract: str) -> list[str]:
    part = contract.split("Verdict per stage")[1] if "Verdict per stage" in contract else ""
    return [
        ln.split("|")[3].strip().strip("*")
        for ln in part.splitlines()
        if ln.startswith("| ") and "Stage" not in ln
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--aa", type=int, default=6)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    eng = Engine(Config(workspace=Path(tempfile.mkdtemp(prefix="kprof-noise-"))))
    out = {"floor": noise.measure(eng, rounds=a.rounds)}
    for s in out["floor"]["series"]:
        print(
            f"floor: {s['kernel']} {s['version']}: median {s['median_ns'] / 1e3:.3f} us, (max - min) / median "
            f"{s['range_pct']:.2f} %, sd {s['rel_sd_pct']:.2f} % ({s['clock']}, {s.get('bound')}-bound)",
            flush=True,
        )
    prev, rows = {}, []
    for r in range(a.aa):
        for kernel, version, params in noise.DEFAULT_CASES:
            o = eng.profile(kernel, version, params, "event", baseline=prev.get(kernel))
            if kernel in prev:
                v = verdicts(o.contract)
                rows.append(
                    {
                        "kernel": kernel,
                        "round": r,
                        "verdicts": v,
                        "time_us": o.result.total_time_ns() / 1e3,
                        "floor": o.result.noise_floor,
                    }
                )
                f = next(iter((o.result.noise_floor or {}).get("stages", {}).values()), {})
                print(
                    f"A/A {kernel} {version} round {r}: {o.result.total_time_ns() / 1e3:.3f} us -> {v} (floor "
                    f"{f.get('pct', float('nan')):.2f} % from {f.get('from')}, {f.get('bound')}-bound, class "
                    f"{f.get('class')})",
                    flush=True,
                )
            prev[kernel] = str(o.profile_dir)
    judged = [v for row in rows for v in row["verdicts"]]
    same = sum(v == "no significant change" for v in judged)
    b = eng.profile("matmul", "v1", {}, "event")
    c = eng.profile("matmul", "v3", {}, "event", baseline=str(b.profile_dir))
    mv = verdicts(c.contract)
    print(
        f"\nA/A verdicts 'no significant change': {same} of {len(judged)} ({100 * same / max(1, len(judged)):.0f} %, "
        f"target >= 95 %) — {'PASS' if judged and same >= 0.95 * len(judged) else 'FAIL'}"
    )
    print(
        f"matmul v1 -> v3: {b.result.total_time_ns() / 1e3:.3f} -> {c.result.total_time_ns() / 1e3:.3f} us, verdict "
        f"{mv} — {'PASS' if mv == ['faster'] else 'FAIL'}"
    )
    print(c.contract[c.contract.find("Verdict per stage") :][:800])
    out.update({"aa": rows, "matmul_v1_v3": {"verdicts": mv, "contract": c.contract}})
    if a.json:
        a.json.write_text(json.dumps(out, indent=1, default=str))
    eng.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
