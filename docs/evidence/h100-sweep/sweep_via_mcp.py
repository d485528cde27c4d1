"""One sweep through the real MCP server over stdio; saves its markdown, plot and structured rows.

python docs/evidence/h100-sweep/sweep_via_mcp.py WORKSPACE OUTDIR KERNEL PARAM V1 V2 ... [--versions v2 v3] [--params JSON]
"""

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


async def main(a) -> None:
    env = {
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        **{k: os.environ[k] for k in ("LD_LIBRARY_PATH", "KPROF_NSYS", "PATH") if k in os.environ},
    }
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "kprof_mcp.server", "--workspace", a.workspace], env=env
    )
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    values = [int(v) if v.lstrip("-").isdigit() else v for v in a.values]
    async with Client(server) as c:
        t0 = time.time()
        args = {"kernel": a.kernel, "param": a.param, "values": values, "wait_s": 50}
        if a.versions:
            args["versions"] = a.versions
        if a.params:
            args["params"] = json.loads(a.params)
        r = await c.call_tool("sweep", args)
        while not r.is_error and r.structured_content.get("status") != "done":
            r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 50})
        if r.is_error:
            raise SystemExit(r.content[0].text)
        text = next(x.text for x in r.content if x.type == "text")
        images = [x for x in r.content if x.type == "image"]
        (out / f"sweep_{a.kernel}_{a.param}.md").write_text(text)
        for x in images:
            (out / f"sweep_{a.kernel}_{a.param}.png").write_bytes(base64.b64decode(x.data))
        (out / f"sweep_{a.kernel}_{a.param}.json").write_text(json.dumps(r.structured_content, indent=2))
        print(text)
        print(
            f"images returned: {len(images)} ({', '.join(x.mime_type for x in images)}); wall {time.time() - t0:.1f} s"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("outdir")
    ap.add_argument("kernel")
    ap.add_argument("param")
    ap.add_argument("values", nargs="+")
    ap.add_argument("--versions", nargs="+", default=None)
    ap.add_argument("--params", default=None)
    anyio.run(main, ap.parse_args())
