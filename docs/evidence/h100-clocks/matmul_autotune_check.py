import json, tempfile
from pathlib import Path
from kprof_mcp.engine import Config, Engine
eng = Engine(Config(workspace=Path(tempfile.mkdtemp())))
for i in range(8):
    o = eng.profile("matmul", "v3", {}, "event", clock_control="base" if i % 2 == 0 else "none")
    tl = next(iter((o.profile_dir / "tiling").glob("*.json")), None)
    cfg = json.loads(tl.read_text()) if tl else None
    keep = {k: v for k, v in (cfg or {}).items() if k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "EPILOGUE_SUBTILE", "config", "best")}
    print(i, "locked" if i % 2 == 0 else "free", f"{o.result.total_time_ns()/1e3:.1f} us", keep or str(cfg)[:300],
          [w.kind for w in o.result.warnings])
eng.close()
