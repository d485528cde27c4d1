import tempfile
from pathlib import Path
from kprof_mcp.engine import Config, Engine
eng = Engine(Config(workspace=Path(tempfile.mkdtemp())))
for k, v in (("matmul", "v3"), ("vector_add", "v1")):
    o = eng.profile(k, v, {}, "event")
    t = o.result.stages[0].timing
    print(k, v, f"{t.median_ns/1e3:.2f} us", "energy mJ/run", [round(x, 3) for x in t.energy_mj_per_run], "power W",
          [round(x) for x in t.power_w], "lock", o.result.device.sm_clock_lock_mhz)
    print(o.contract[:0])
c = eng.compare("matmul", ["v1", "v3"], {})
print(c.markdown[c.markdown.find("Energy"):][:600])
eng.close()
