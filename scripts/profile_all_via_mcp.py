"""Profile every shipped kernel version through the real MCP server over stdio.

Used for the GPU evidence in docs/ (and runs on a CPU too, with small sizes):

    python scripts/profile_all_via_mcp.py WORKSPACE OUTFILE [--small] [--mode MODE] [--no-devlog]
                                          [--kernels vector_add,matmul]

For each kernel: v0, then v1 with v0 as baseline; read_params of each; update_devlog.
Writes every contract (verbatim) and the structured summaries to OUTFILE (markdown).
"""

import json
import os
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

SMALL = {
    "vector_add": {"n": 1 << 16},
    "matmul": {"M": 128, "N": 128, "K": 128, "dtype": "float16"},
    "two_streams": {"n": 2048, "iters": 20},
    "tiny_chain": {"n": 1024, "k": 20},
}


async def main(
    workspace: str, outfile: str, small: bool, mode: str, devlog: bool, kernels: list[str]
) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", workspace],
        # the SDK passes only a safe subset of the environment to the server
        env={
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            # where Nsight Systems and its importer's libraries are
            **{k: os.environ[k] for k in ("LD_LIBRARY_PATH", "KPROF_NSYS", "PATH") if k in os.environ},
        },
    )
    out = []
    async with Client(server) as c:
        info = await c.call_tool("device_info", {})
        active = info.structured_content["info"].get("active")
        out.append(f"Device: `{json.dumps(active)}`\n")
        for kernel in kernels:
            prev = None
            for version in ("v0", "v1"):
                args = {"kernel": kernel, "version": version, "mode": mode}
                if small:
                    args["params"] = SMALL[kernel]
                if prev:
                    args["baseline"] = prev
                t0 = time.perf_counter()
                r = await c.call_tool("profile_kernel", args)
                wall = time.perf_counter() - t0
                if r.is_error:
                    out.append(f"### {kernel} {version}: ERROR\n\n```\n{r.content[0].text}\n```\n")
                    print(r.content[0].text, file=sys.stderr)
                    continue
                s = r.structured_content
                params = await c.call_tool("read_params", {"profile_dir": s["profile_dir"]})
                out.append(f"### {kernel} {version}, mode {mode} (profile_kernel wall time {wall:.1f} s)\n")
                out.append(r.content[0].text)
                out.append(f"profile_dir: `{s['profile_dir']}`\n")
                out.append(
                    "params.json (device, clocks, versions): `"
                    + json.dumps(
                        {
                            k: params.structured_content['params'][k]
                            for k in ('device', 'clock_state', 'versions')
                        }
                    )
                    + "`\n"
                )
                if not devlog:
                    prev = s["profile_dir"]
                    print(
                        f"{kernel} {version}: {s['total_duration_us']:.2f} us  ({wall:.1f} s wall)",
                        flush=True,
                    )
                    continue
                est = (
                    "event-mode roofline estimate"
                    if mode == "event"
                    else f"{mode} mode, Nsight Compute counters"
                )
                dl = await c.call_tool(
                    "update_devlog",
                    {
                        "kernel": kernel,
                        "profile_dir": s["profile_dir"],
                        "issues": [
                            f"{st['name']}: {st['bottleneck']}, {st['pct_peak_bandwidth'] or 0:.1f}% of peak BW, "
                            f"{st['pct_peak_flops'] or 0:.1f}% of peak FLOP/s ({est})"
                            for st in s["stages"]
                        ],
                        "insights": [f"{version}: recorded by scripts/profile_all_via_mcp.py"],
                    },
                )
                if dl.is_error:
                    print(dl.content[0].text, file=sys.stderr)
                prev = s["profile_dir"]
                print(f"{kernel} {version}: {s['total_duration_us']:.2f} us  ({wall:.1f} s wall)", flush=True)
    with open(outfile, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    argv = sys.argv
    mode_arg = argv[argv.index("--mode") + 1] if "--mode" in argv else "event"
    kernels_arg = (
        argv[argv.index("--kernels") + 1].split(",") if "--kernels" in argv else ["vector_add", "matmul"]
    )
    anyio.run(main, argv[1], argv[2], "--small" in argv, mode_arg, "--no-devlog" not in argv, kernels_arg)
