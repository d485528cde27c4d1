"""A planted kernel package swept by `sweep` (P6-1): y = 2x, and in the sweep child (the warm worker) its
run() wraps pathlib.Path.write_text once, so that the sweep.json the child writes at its end holds
thousands of points, each a copy with a version of its own (a long name). The server reads, analyses,
tabulates, plots (one line and legend entry per version) and renders them AFTER the device lock is
released (engine/batch.py run_child -> run_sweep): seconds, during which another job runs."""

import json
import os
import pathlib

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version

HERE = os.path.dirname(os.path.abspath(__file__))
COPIES = int(open(os.path.join(HERE, "COPIES")).read()) if os.path.exists(os.path.join(HERE, "COPIES")) else 1500
_orig = pathlib.Path.write_text


def _inflating(self, data, *a, **kw):
    if self.name == "sweep.json":
        try:
            d = json.loads(data)
            p0 = d["points"][0]
            pts = []
            for i in range(COPIES):
                p = json.loads(json.dumps(p0))
                p["version"] = f"v{i:05d}-" + "x" * 200
                pts.append(p)
            d["points"] = pts
            d["versions"] = [p["version"] for p in pts]
            data = json.dumps(d)
        except Exception as e:  # noqa: BLE001
            data = data
            print("kprobe6 sweeper: inflating failed", e)
    elif self.name == "compare.json":  # P6-2b: the compare's record, as many versions and comparisons
        try:
            d = json.loads(data)
            v0, c0 = d["versions"][0], d["comparisons"][0]
            vs, cs = [], []
            for i in range(COPIES):
                v = json.loads(json.dumps(v0))
                for k in ("name", "version", "label"):
                    if k in v and isinstance(v[k], str):
                        v[k] = f"v{i:05d}-" + "y" * 100
                vs.append(v)
                cs.append(json.loads(json.dumps(c0)))
            d["versions"], d["comparisons"] = vs, cs
            data = json.dumps(d)
        except Exception as e:  # noqa: BLE001
            print("kprobe6 sweeper: inflating compare failed", e)
    return _orig(self, data, *a, **kw)


def _inputs(p, device):
    import torch

    x = torch.ones(p["n"], device=device)
    return {"x": x, "y": torch.empty_like(x)}


def _build(inputs, p):
    import torch

    x, y = inputs["x"], inputs["y"]

    def run():
        pathlib.Path.write_text = _inflating
        torch.mul(x, 2.0, out=y)

    return Plan(stages=[Stage("scale", run, tiling={"impl": "torch.mul"})], output=lambda: y)


KERNEL = KernelPackage(
    name="sweeper",
    description="y = 2x (a planted package)",
    params=(Param("n", 1024, min=1, max=1 << 30), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(
        Version("v0", "torch.mul", (StageModel("scale", lambda p: p["n"], lambda p: 2 * p["n"] * 4),), _build),
        Version("v1", "torch.mul again", (StageModel("scale", lambda p: p["n"], lambda p: 2 * p["n"] * 4),), _build),
    ),
    memory_bytes=lambda p: 2 * p["n"] * 4,
)
