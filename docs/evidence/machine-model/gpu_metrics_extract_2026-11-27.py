"""Issue 36, GPU metrics probe (gpu_metrics_probe_2026-11-27.sh): from each run's Nsight Systems SQLite, the metric
names and, per kernel name (the ten longest by total time inside the "step" ranges), the mean of every GPU metric's
samples that fall inside its instances; and a trimmed copy of the SQLite (GPU metric samples only inside the steps'
span, VACUUMed) for the tests. Usage: python3 gpu_metrics_extract_2026-11-27.py OUT_DIR file.sqlite ..."""

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def one(path: Path, out: Path) -> dict:
    c = sqlite3.connect(path)
    info = pd.read_sql("select * from TARGET_INFO_GPU_METRICS", c)
    gm = pd.read_sql("select * from GPU_METRICS", c)
    strings = dict(c.execute("select id, value from StringIds").fetchall())
    k = pd.read_sql("select start, end, shortName, demangledName, gridX*gridY*gridZ as grid from CUPTI_ACTIVITY_KIND_KERNEL", c)
    k["name"] = k["demangledName"].map(strings).fillna(k["shortName"].map(strings))
    r = pd.read_sql("select start, end, text, textId from NVTX_EVENTS where eventType in (59, 60)", c)
    r["name"] = r["text"].fillna(r["textId"].map(strings))
    steps = r[r["name"] == "step"].sort_values("start")
    lo, hi = float(steps["start"].min()), float(steps["end"].max())
    inside = k[(k["start"] >= lo) & (k["start"] <= hi + 50e6)]
    names = dict(zip(info["metricId"], info["metricName"]))
    gm["metric"] = gm["metricId"].map(names)
    ts = gm["timestamp"].to_numpy()
    per = {}
    for name, g in inside.groupby("name"):
        mask = np.zeros(len(gm), dtype=bool)
        for s, e in zip(g["start"], g["end"]):
            mask |= (ts >= s) & (ts <= e)
        per[name] = {
            "instances": int(len(g)),
            "total_ns": float((g["end"] - g["start"]).sum()),
            "grid": int(g["grid"].iloc[0]),
            "samples": int(mask.sum() // max(1, len(names))),
            "metrics": gm[mask].groupby("metric")["value"].mean().round(2).to_dict(),
        }
    top = dict(sorted(per.items(), key=lambda kv: -kv[1]["total_ns"])[:10])
    c.close()
    trimmed = out / (path.stem + ".trimmed.sqlite")
    shutil.copy(path, trimmed)
    t = sqlite3.connect(trimmed)
    t.execute("delete from GPU_METRICS where timestamp < ? or timestamp > ?", (lo - 1e6, hi + 50e6))
    t.commit()
    t.execute("vacuum")
    t.close()
    return {"metrics": sorted(set(names.values())), "steps_span_ns": hi - lo, "kernels": top}


if __name__ == "__main__":
    out = Path(sys.argv[1])
    res = {}
    for f in sys.argv[2:]:
        try:
            res[Path(f).stem] = one(Path(f), out)
        except Exception as e:  # one run's failure leaves the others'
            res[Path(f).stem] = {"error": repr(e)}
    (out / "gpu_metrics.json").write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1)[:6000])
