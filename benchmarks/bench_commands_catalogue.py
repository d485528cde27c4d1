"""Issue 26's commands through the MCP server's profile_command: for each case, opportunity 1 must
name the cause the fix removes; each stage's duration per occurrence and bandwidth (never above
100 % of the peak) and the idle breakdown are printed. GPU only; the server is started with
--allow-commands (stdio, the SDK's client).

    python benchmarks/bench_commands_catalogue.py [--json out.json] [--cases chain_nsys,sync ...]

Cases (the scripts are copied into a fresh workspace):

* ``chain_annotation``, ``chain_nsys``: examples/eager_chain/chain.py (eager bias + GELU + scale +
  residual, eager RMSNorm; fp32 8192 x 4096), stage byte models given → "fusion", with counters
  (annotation) and from kernel times alone (nsys).
* ``sync``: tests/calibration/commands/sync_loop.py --variant bad (loss.item() and host work every
  step) in nsys → "sync".
* ``host``: host_loop.py --variant bad (numpy batches each step) in nsys → "host".
* ``launch``: launch_loop.py --variant bad (100 tiny eager ops a step) in nsys → "launch".
* ``pytest``: ``python -m pytest test_lib.py`` (a Triton add and torch ops, checked against torch;
  no ranges: the whole process) in nsys → "host", worded as start-up and test collection, not launch
  overhead.
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ROOT / "tests" / "calibration" / "commands"
MODELS = {
    "chain": {"bytes": 3 * 4 * 2**25, "flops": 6 * 2**25, "dtype": "float32"},
    "rmsnorm": {"bytes": 2 * 4 * 2**25, "flops": 4 * 2**25, "dtype": "float32"},
}
TEST_LIB = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_add_matches_torch():
    x, y = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    torch.testing.assert_close(out, x + y)


def test_softmax_rows_sum_to_one():
    x = torch.randn(512, 1024, device="cuda")
    torch.testing.assert_close(torch.softmax(x, -1).sum(-1), torch.ones(512, device="cuda"))
'''
CASES = {
    "chain_annotation": (["python", "chain.py", "--steps", "4"], "annotation", MODELS, "fusion"),
    "chain_nsys": (["python", "chain.py", "--steps", "6"], "nsys", MODELS, "fusion"),
    "sync": (["python", "sync_loop.py", "--variant", "bad", "--steps", "20"], "nsys", None, "sync"),
    "host": (["python", "host_loop.py", "--variant", "bad", "--steps", "20"], "nsys", None, "host"),
    "launch": (["python", "launch_loop.py", "--variant", "bad", "--steps", "20"], "nsys", None, "launch"),
    "pytest": (
        ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_lib.py"],
        "nsys",
        None,
        "host",
    ),
}


def workspace() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="kprof-commands-"))
    shutil.copy(ROOT / "examples" / "eager_chain" / "chain.py", ws / "chain.py")
    for f in ("_common.py", "sync_loop.py", "host_loop.py", "launch_loop.py"):
        shutil.copy(COMMANDS / f, ws / f)
    (ws / "test_lib.py").write_text(TEST_LIB)
    return ws


async def main(out: Path | None, cases: list[str]) -> int:
    ws = workspace()
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp", "--workspace", str(ws), "--allow-commands"],
        env={"PYTHONPATH": f"{ROOT}:{':'.join(sys.path[1:])}"},
    )
    results, failures = {}, []
    async with Client(server, read_timeout_seconds=600) as c:
        for name in cases:
            command, mode, models, want = CASES[name]
            t0 = time.perf_counter()
            args = {"command": command, "mode": mode, "wait_s": 50}
            if models:
                args["stage_models"] = models
            r = await c.call_tool("profile_command", args)
            while not r.is_error and r.structured_content.get("status") in ("queued", "running"):
                r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 50})
            if r.is_error:
                print(f"[{name}] ERROR", r.content[0].text[:2000])
                failures.append(name)
                continue
            s = r.structured_content
            top = (s.get("opportunities") or [{}])[0]
            rows = [
                {
                    k: st.get(k)
                    for k in (
                        "name",
                        "duration_us",
                        "gbps",
                        "pct_of_peak_bw",
                        "dram_bytes_over_model",
                        "kernels",
                    )
                }
                for st in s["stages"]
            ]
            ok = top.get("cause") == want
            if not ok:
                failures.append(name)
            print(
                f"\n===== [{name}] {' '.join(command)} ({mode}): opportunity 1 cause {top.get('cause')!r}, "
                f"expected {want!r}: {'OK' if ok else 'WRONG'}; {time.perf_counter() - t0:.1f} s"
            )
            print(r.content[0].text[:2500])
            print("stages:", json.dumps(rows))
            report = Path(s["profile_dir"]) / "report.md"
            if report.is_file():
                text = report.read_text()
                if "### Where the wall time went" in text:
                    print(text[text.index("### Where the wall time went") :].split("\n### ")[0][:2500])
            results[name] = {
                "command": command,
                "mode": mode,
                "expected": want,
                "ok": ok,
                "summary": s,
                "contract": r.content[0].text,
            }
    print(
        f"\n{len(cases) - len(failures)} of {len(cases)} cases: opportunity 1 names the expected cause"
        + (f"; wrong or failed: {failures}" if failures else "")
    )
    if out:
        out.write_text(json.dumps(results, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    sys.exit(anyio.run(main, a.json, [c for c in a.cases.split(",") if c]))
