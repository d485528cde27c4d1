"""The plain pass with either recorder (2026-11-28, H200): the 23rd held-back set's hooked inference step
(tests/calibration/commands/stat_hooks.py --variant bad) profiled in nsys mode through the engine (confined, as the
server runs it), once recorded by torch.profiler (timeline_engine="kineto") and once by Nsight Systems; prints the
plain step, the traced step, the host scale and the top opportunity of each. Run from the repository root on the GPU
machine with the wheels and Nsight Systems' libraries unpacked (tests/calibration/heldout_kit/gpu_call.sh's first
lines): python3 docs/evidence/machine-model/kineto_plain_2026-11-28.py"""

import json
import shutil
import tempfile
from pathlib import Path

from kprof_mcp.engine import Config, Engine

ws = Path(tempfile.mkdtemp(prefix="kprof-kin-"))
shutil.copytree("tests/calibration/commands", ws / "commands")
eng = Engine(Config(workspace=ws, timeout_s=300))
for engine_name in ("kineto", "nsys"):
    o = eng.profile_command(
        ["python", "stat_hooks.py", "--variant", "bad", "--steps", "20"],
        cwd="commands",
        mode="nsys",
        timeline_engine=engine_name,
    )
    rp = (o.result.timeline.get("idle") or {}).get("replay") or {}
    top = o.assessment.opportunities[0] if o.assessment.opportunities else None
    print(
        json.dumps(
            {
                "engine": o.result.timeline.get("engine"),
                "plain_steps": o.result.request.get("plain_steps"),
                **{k: rp.get(k) for k in ("recorded_ns", "plain_ns", "host_scale", "base_ns")},
                "top": [top.cause, round(top.est_gain_pct, 1)] if top else None,
                "phases": {k: v for k, v in o.result.timings["phases"].items() if v > 0.5},
            }
        ),
        flush=True,
    )
