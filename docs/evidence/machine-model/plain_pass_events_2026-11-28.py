"""The plain pass's step on the GPU's clock (CUDA events at each kprof.range entry and exit) against its entry
times and against the command's own synchronised timing (--time: a loop of steps between two synchronisations,
as the calibration measures a fix), for command pairs whose entries' step disagreed with that timing in their
recordings (the 24th-26th held-back sets). Run on the GPU machine from the repository root:

    PYTHONPATH=/tmp/site:$PWD python3 docs/evidence/machine-model/plain_pass_events_2026-11-28.py
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kprof_mcp import runner
from kprof_mcp.engine.plain import step_of
from kprof_mcp.models import ProfileRequest

CMD = Path("tests/calibration/commands").resolve()
ITEMS = [
    a.split(":")
    for a in (
        sys.argv[1:]
        or [
            "layer_timing_sync.py:bad",
            "layer_timing_sync.py:good",
            "activation_offload.py:good",
            "activation_offload.py:bad",
            "line_tracer.py:good",
        ]
    )
]

for script, variant in ITEMS:
    with tempfile.TemporaryDirectory() as out:
        req = ProfileRequest.model_validate(
            dict(
                kernel="command",
                kernel_source=str(CMD),
                params={},
                version="command",
                mode="nsys",
                command=["python", script, "--variant", variant, "--steps", "20"],
                command_cwd=str(CMD),
                out_root=out,
                plain_steps_only=True,
            )
        )
        try:
            rec = runner.run_profile(req.model_dump_json(), 120, None, command="command", fresh=True)
            step = step_of(rec.plain, [], 1)
        except Exception as e:  # noqa: BLE001
            step = {"error": str(e)[:300]}
    cp = subprocess.run(
        [sys.executable, script, "--variant", variant, "--time", "--steps", "20", "--rounds", "5"],
        cwd=CMD,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        timed = json.loads(cp.stdout.strip().splitlines()[-1])
        timed = {
            "median_ms": timed["step_ns_median"] / 1e6,
            "rounds_ms": [round(t / 1e6, 3) for t in timed["step_ns"]],
        }
    except Exception:  # noqa: BLE001
        timed = {"error": cp.stderr[-300:]}
    ms = {
        k: (round(v / 1e6, 3) if isinstance(v, float) else v)
        for k, v in (step or {}).items()
        if k != "interval_ns"
    }
    iv = {k: round(v / 1e6, 3) for k, v in ((step or {}).get("interval_ns") or {}).items()}
    print(f"{script} {variant}: plain {ms} interval_ms {iv} | --time {timed}", flush=True)
