"""Does kprof's confinement slow a host-bound command's step? (issue 36: nsys mode's plain pass measured the 23rd
held-back set's hooked step at 3,790 µs in the server's confined child where the script's own timing gave 2,222 µs.)

For each variant of tests/calibration/commands/stat_hooks.py, alternating, three times: the script's own timing
(``--time``: 50 steps from a synchronised start to a synchronised end, median of 5 runs), the plain pass's child
unconfined (``kprof run``'s: no workspace) and confined (the server's: Landlock and the seccomp filter, the
workspace a temporary copy of the commands). Prints one JSON line per measurement (µs a step). Run from the
repository root on the GPU machine: python3 docs/evidence/machine-model/plain_confinement_2026-11-28.py

Ran once (2026-11-28, H200; plain_confinement_2026-11-28_h200.jsonl) with a trial ``spec_allow`` parameter of
kprof_mcp/sandbox/seccomp.py.install (the filter installed by seccomp(2) with SECCOMP_FILTER_FLAG_SPEC_ALLOW), not
kept: the machine's kernel (spec_store_bypass_disable by prctl, mitigations=auto) turns no mitigation on for a
filtered process ("thread vulnerable" with and without the filter) and a CPU op's host time did not move
(6.6-7.0 µs a torch add_ with no filter, the filter, or the flagged filter; one 4.2). The confined, unconfined
and script timings of the same step differ by up to ±30 % from process to process in both directions: the
machine's host, not the confinement."""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kprof_mcp import runner, sandbox
from kprof_mcp.engine.plain import step_of
from kprof_mcp.models import ProfileRequest

ROOT = Path.cwd()
ws = Path(tempfile.mkdtemp(prefix="kprof-plain-"))
shutil.copytree(ROOT / "tests" / "calibration" / "commands", ws / "commands")
print(json.dumps({"landlock": sandbox.available()}), flush=True)


def plain(variant: str, confined: bool) -> float:
    req = ProfileRequest.model_validate(
        dict(
            kernel="command",
            kernel_source=str(ws / "commands"),
            params={},
            version="command",
            mode="nsys",
            command=["python", "stat_hooks.py", "--variant", variant, "--steps", "20"],
            command_cwd=str(ws / "commands"),
            out_root=str(ws / "out"),
            plain_steps_only=True,
            command_root=str(ws) if confined else None,
        )
    )
    control = runner.RunControl()
    control.workspace = ws if confined else None
    rec = runner.run_profile(req.model_dump_json(), 300, None, control=control, command="command", fresh=True)
    return step_of(rec.plain, [], 1)["step_ns"] / 1e3


def script(variant: str) -> float:
    cp = subprocess.run(
        [sys.executable, "stat_hooks.py", "--variant", variant, "--time", "--steps", "50", "--rounds", "5"],
        cwd=ws / "commands",
        capture_output=True,
        text=True,
        timeout=300,
    )
    return json.loads(cp.stdout.strip().splitlines()[-1])["step_ns_median"] / 1e3


SPEC = """
import sys, time
from kprof_mcp.sandbox import seccomp
if sys.argv[1] != "none":
    seccomp.install(spec_allow=sys.argv[1] == "allow")
status = [x.strip() for x in open("/proc/self/status") if "Specul" in x or x.startswith("Seccomp:")]
import torch
x = torch.zeros(1)
for _ in range(2000):
    x.add_(1)
t = time.perf_counter()
for _ in range(20000):
    x.add_(1)
print(status, round((time.perf_counter() - t) / 20000 * 1e6, 3))
"""


def spec(how: str) -> dict:
    """A CPU tensor op's host time under no filter, the filter as before (prctl), the filter with SPEC_ALLOW."""
    cp = subprocess.run(
        [sys.executable, "-c", SPEC, how], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    return {"filter": how, "out": (cp.stdout or cp.stderr).strip()[-400:]}


for _ in range(3):
    for how in ("none", "prctl", "allow"):
        print(json.dumps(spec(how)), flush=True)
for r in range(3):
    for variant in ("bad", "good"):
        row = {"round": r, "variant": variant, "script_us": script(variant)}
        row["plain_unconfined_us"] = plain(variant, False)
        row["plain_confined_us"] = plain(variant, True)
        print(json.dumps(row), flush=True)
