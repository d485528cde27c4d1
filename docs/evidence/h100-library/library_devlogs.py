"""Profile the kernel library version by version through the real MCP server and write each
kernel's development log with ``update_devlog`` (issue 5's evidence; run on the GPU machine).

    python docs/evidence/h100-library/library_devlogs.py WORKSPACE OUTFILE [--mode annotation] [--kernels softmax,matmul,mla_decode]
                                      [--small]

For every series (a kernel at one parameter set) each version is profiled with the previous
version as baseline; the devlog entry records the contract's numbers (the tool fills the
table), the stage issues and top-ranked opportunities as **Issues**, and as **Insights** what
the version changed (its doc) and what the counters say moved compared with the previous
version. OUTFILE (markdown) gets every contract verbatim. ``--small`` uses CPU-sized shapes.
"""

import json
import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

SERIES = {
    "softmax": [{}],
    "matmul": [{}],
    "mla_decode": [{}, {"s": 1, "h": 16}],
}
SMALL = {
    "softmax": [{"M": 64, "N": 1000, "dtype": "float32"}],
    "matmul": [{"M": 64, "N": 64, "K": 64, "dtype": "float16"}],
    "mla_decode": [{"b": 2, "s": 1, "t": 600, "h": 16, "d": 64, "p": 16, "dtype": "float16"}],
}
COUNTERS = [
    ("duration_us", "duration", "µs", 2),
    ("tc_pct", "TC", "%", 1),
    ("sm_pct", "SM", "%", 1),
    ("dram_pct", "DRAM", "%", 1),
    ("occupancy_pct", "occupancy", "%", 1),
    ("l2_hit_pct", "L2 hit", "%", 1),
    ("dram_bytes_over_model", "DRAM bytes ÷ model", "", 2),
]


def _fmt(v, unit, nd):
    return "n/a" if v is None else f"{v:.{nd}f}{unit}"


def stage_line(st):
    return f"{st['name']}: {st['bottleneck'] or 'n/a'}; " + ", ".join(
        f"{label} {_fmt(st.get(k), u, nd)}" for k, label, u, nd in COUNTERS
    )


def moved(prev, cur):
    """What changed, stage by stage, between two structured contracts."""
    out = []
    p_st = {s["name"]: s for s in prev["stages"]}
    for st in cur["stages"]:
        ps = p_st.get(st["name"])
        if not ps:
            continue
        parts = []
        for k, label, u, nd in COUNTERS:
            a, b = ps.get(k), st.get(k)
            if a is None or b is None:
                continue
            if k == "duration_us":
                parts.append(f"{label} {a:.{nd}f} → {b:.{nd}f} µs ({a / b:.2f}×)" if b else "")
            elif abs(b - a) >= (0.05 if k == "dram_bytes_over_model" else 2.0):
                parts.append(f"{label} {a:.{nd}f} → {b:.{nd}f}{u}")
        out.append(f"{st['name']}: " + (", ".join(p for p in parts if p) or "no counter moved by 2 points"))
    out.append(
        f"whole plan {prev['total_duration_us']:.2f} → {cur['total_duration_us']:.2f} µs "
        f"({prev['total_duration_us'] / cur['total_duration_us']:.2f}× vs {prev['version']})"
    )
    return out


async def main(workspace, outfile, mode, kernels, small):
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", workspace],
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    out = []
    async with Client(server) as c:
        listing = (await c.call_tool("list_kernels", {})).structured_content
        docs = {k["name"]: {v["name"]: v["doc"] for v in k["versions"]} for k in listing["kernels"]}
        info = await c.call_tool("device_info", {})
        out.append(f"Device: `{json.dumps(info.structured_content['info'].get('active'))}`\n")
        for kernel in kernels:
            for params in (SMALL if small else SERIES)[kernel]:
                prev = None
                for version, doc in docs[kernel].items():
                    args = {"kernel": kernel, "version": version, "mode": mode, "params": params}
                    if prev:
                        args["baseline"] = prev["profile_dir"]
                    t0 = time.perf_counter()
                    r = await c.call_tool("profile_kernel", args)
                    wall = time.perf_counter() - t0
                    if r.is_error:
                        out.append(
                            f"### {kernel} {version} {params}: ERROR\n\n```\n{r.content[0].text}\n```\n"
                        )
                        print(
                            f"{kernel} {version}: ERROR {r.content[0].text[:500]}",
                            file=sys.stderr,
                            flush=True,
                        )
                        continue
                    s = r.structured_content
                    out.append(f"### {kernel} {version} {params}, mode {mode} (wall {wall:.1f} s)\n")
                    out.append(r.content[0].text)
                    out.append(f"profile_dir: `{s['profile_dir']}`\n")
                    issues = [stage_line(st) for st in s["stages"]]
                    issues += [
                        f"opportunity: {o['name']} (est. {o['est_gain_pct']}% gain; {o['trigger']})"
                        for o in s["opportunities"][:2]
                    ]
                    insights = [f"changed in {version}: {doc}"]
                    insights += moved(prev, s) if prev else ["first version: the baseline of this log"]
                    insights += [f"warning: {w}" for w in s["warnings"][:2]]
                    dl = await c.call_tool(
                        "update_devlog",
                        {
                            "kernel": kernel,
                            "profile_dir": s["profile_dir"],
                            "issues": issues,
                            "insights": insights,
                        },
                    )
                    if dl.is_error:
                        print(dl.content[0].text, file=sys.stderr)
                    prev = s
                    print(
                        f"{kernel} {version} {params}: {s['total_duration_us']:.2f} us ({wall:.1f} s wall)",
                        flush=True,
                    )
    with open(outfile, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    argv = sys.argv
    mode_arg = argv[argv.index("--mode") + 1] if "--mode" in argv else "annotation"
    kernels_arg = (
        argv[argv.index("--kernels") + 1].split(",")
        if "--kernels" in argv
        else ["softmax", "matmul", "mla_decode"]
    )
    anyio.run(main, argv[1], argv[2], mode_arg, kernels_arg, "--small" in argv)
