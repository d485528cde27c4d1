"""Record the calibration set on a GPU: for every pair, the bad version's profile in the pair's
mode (the contract being judged), the good version's profile in the same mode, and both
versions timed in event mode for the measured gain of the fix (rounds alternate bad/good).

    python tests/calibration/record.py [--pairs "tail effect" ...] [--out tests/calibration/recorded]

Writes ``<out>/<pair>/{bad,good}.result.json`` (the full results: everything the assessment
reads), ``<out>/<pair>/bad.contract.md`` and ``<out>/measured.json`` (event medians per round,
device, versions, date). The CPU side (``table.py``, ``test_calibration.py``) re-assesses these
recordings with the current model, so the estimates can be re-checked without a GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from pairs import (  # noqa: E402
    ALL_PAIRS,
    COMMANDS_DIR,
    HELDOUT2_PAIRS,
    HELDOUT3_PAIRS,
    HELDOUT4_PAIRS,
    HELDOUT5_PAIRS,
    HELDOUT6_PAIRS,
    HELDOUT7_PAIRS,
    HELDOUT8_PAIRS,
    HELDOUT9_PAIRS,
    HELDOUT10_PAIRS,
    HELDOUT11_PAIRS,
    HELDOUT12_PAIRS,
    HELDOUT_PAIRS,
    HELDOUT_RANKS_PAIRS,
    KERNELS_DIR,
    REPLAY_PAIRS,
)
from pairs_ranks2 import HELDOUT_RANKS2_PAIRS  # noqa: E402
from pairs_ranks3 import HELDOUT_RANKS3_PAIRS  # noqa: E402

from kprof_mcp.engine import Config, Engine, KprofError  # noqa: E402

PROFILE_STEPS = 20


def record_command(eng, p, ws: Path, d: Path, rec: dict, rounds: int) -> None:
    """A command pair: both variants profiled through profile_command (its Nsight Systems SQLite
    kept, gzipped, so the timeline can be re-read on any machine), then both timed without a
    profiler in alternating rounds (wall time per step)."""
    import gzip
    import subprocess

    cdir = ws / "commands"
    if not cdir.exists():
        shutil.copytree(COMMANDS_DIR, cdir, ignore=shutil.ignore_patterns("__pycache__"))
    for role, variant in (("bad", p.bad), ("good", p.good)):
        o = eng.profile_command(
            ["python", p.kernel, "--variant", variant, "--steps", str(PROFILE_STEPS)],
            cwd="commands",
            mode=p.mode,
            stage_models=p.models or None,
            timeout_s=300,
        )
        shutil.copy(o.profile_dir / "result.json", d / f"{role}.result.json")
        (d / f"{role}.contract.md").write_text(o.contract)
        for f in o.profile_dir.glob("*.sqlite"):
            with open(f, "rb") as src, gzip.open(d / f"{role}.sqlite.gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
        rec.setdefault("device", o.result.device.name)
        rec.setdefault(
            "versions",
            {
                "torch": o.result.device.torch_version,
                "triton": o.result.device.triton_version,
                "driver": o.result.device.driver_version,
            },
        )
        print(
            f"[{p.name}] {role} {p.kernel} {variant} {p.mode}: {o.result.total_time_ns() / 1e3:.2f} us",
            flush=True,
        )
    steps = {"bad": [], "good": []}
    for _ in range(rounds):
        for role, variant in (("bad", p.bad), ("good", p.good)):
            cp = subprocess.run(
                [sys.executable, p.kernel, "--variant", variant, "--time", "--steps", "50", "--rounds", "5"],
                cwd=cdir,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if cp.returncode != 0:
                raise KprofError(f"{p.kernel} --variant {variant} --time failed: {cp.stderr[-1500:]}")
            steps[role].append(json.loads(cp.stdout.strip().splitlines()[-1])["step_ns_median"])
    rec["step_ns"] = steps
    tb, tg = statistics.median(steps["bad"]), statistics.median(steps["good"])
    rec["measured_gain_pct"] = 100.0 * (tb / tg - 1.0)
    rec["measured_how"] = (
        "wall time per step, 50 steps timed from a synchronised start to a synchronised end, "
        f"median of 5 such runs per process, {rounds} processes per variant alternating"
    )
    print(
        f"[{p.name}] wall per step bad {tb / 1e3:.1f} us, good {tg / 1e3:.1f} us, "
        f"measured gain {rec['measured_gain_pct']:.1f}%",
        flush=True,
    )


class _Done(Exception):
    """A pair recorded by its own path (commands)."""


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", nargs="*", default=None)
    ap.add_argument("--out", default=str(HERE / "recorded"))
    ap.add_argument("--rounds", type=int, default=3, help="alternating event-mode rounds per pair")
    ap.add_argument("--skip-good-profile", action="store_true")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="kprof-calib-"))
    eng = Engine(Config(workspace=ws, kernel_dirs=[KERNELS_DIR], timeout_s=300))
    measured_path = out / "measured.json"
    measured = json.loads(measured_path.read_text()) if measured_path.exists() else {"pairs": {}}
    for p in (
        ALL_PAIRS
        + REPLAY_PAIRS
        + HELDOUT_PAIRS
        + HELDOUT2_PAIRS
        + HELDOUT3_PAIRS
        + HELDOUT4_PAIRS
        + HELDOUT5_PAIRS
        + HELDOUT6_PAIRS
        + HELDOUT7_PAIRS
        + HELDOUT8_PAIRS
        + HELDOUT9_PAIRS
        + HELDOUT10_PAIRS
        + HELDOUT11_PAIRS
        + HELDOUT12_PAIRS
        + HELDOUT_RANKS_PAIRS
        + HELDOUT_RANKS2_PAIRS
        + HELDOUT_RANKS3_PAIRS
    ):
        if a.pairs and p.name not in a.pairs:
            continue
        d = out / slug(p.name)
        d.mkdir(exist_ok=True)
        t0 = time.time()
        rec = {"kernel": p.kernel, "bad": p.bad, "good": p.good, "mode": p.mode, "params": p.params}
        try:
            if p.command:
                record_command(eng, p, ws, d, rec, a.rounds)
                raise _Done
            for role, version in (("bad", p.bad), ("good", p.good)):
                if version is None or (role == "good" and a.skip_good_profile):
                    continue
                o = eng.profile(p.kernel, version, p.params, p.mode, timeout_s=300)
                shutil.copy(o.profile_dir / "result.json", d / f"{role}.result.json")
                (d / f"{role}.contract.md").write_text(o.contract)
                print(
                    f"[{p.name}] {role} {p.kernel} {version} {p.mode}: {o.result.total_time_ns() / 1e3:.2f} us",
                    flush=True,
                )
            rounds = {"bad": [], "good": []}
            for _ in range(a.rounds if p.good else 1):
                for role, version in (("bad", p.bad), ("good", p.good)):
                    if version is None:
                        continue
                    o = eng.profile(p.kernel, version, p.params, "event", timeout_s=300)
                    rounds[role].append(o.result.total_time_ns())
                    rec.setdefault("device", o.result.device.name)
                    rec.setdefault(
                        "versions",
                        {
                            "torch": o.result.device.torch_version,
                            "triton": o.result.device.triton_version,
                            "driver": o.result.device.driver_version,
                        },
                    )
            rec["event_ns"] = rounds
            tb = statistics.median(rounds["bad"])
            if rounds["good"]:
                tg = statistics.median(rounds["good"])
                rec["measured_gain_pct"] = 100.0 * (tb / tg - 1.0)
            print(
                f"[{p.name}] event medians bad {tb / 1e3:.2f} us"
                + (
                    f", good {tg / 1e3:.2f} us, measured gain {rec['measured_gain_pct']:.1f}%"
                    if rounds["good"]
                    else ""
                ),
                flush=True,
            )
        except _Done:
            pass
        except KprofError as e:
            rec["error"] = str(e)[:2000]
            print(f"[{p.name}] ERROR {e}", flush=True)
        rec["wall_s"] = round(time.time() - t0, 1)
        rec["recorded_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        measured["pairs"][p.name] = rec
        measured_path.write_text(json.dumps(measured, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
