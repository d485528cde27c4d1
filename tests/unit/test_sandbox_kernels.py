"""Issue 38, probe row 1 (docs/evidence/sandbox/probe-2026-11-26.md): a kernel package in the workspace
(which a confined command can write) was imported unconfined by profile_kernel's child — the command's
boundary one tool call away from void. Kernel children (the warm workers, fresh profiling children, the
package-describing worker) now run under Landlock too. Through the real MCP client over stdio, on the CPU."""

import os
import sys
from pathlib import Path

import anyio
import pytest
from conftest import FIXTURES, server_env
from mcp import Client, StdioServerParameters

from kprof_mcp import sandbox
from kprof_mcp.engine import Config, Engine, KprofError

needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")

# The confined command plants a kernel package (scale.py plus a write outside at import) in the workspace.
PLANT = """
import sys
src = open(sys.argv[1]).read() + "\\nopen(%r, 'w').write('pwned')\\n" % sys.argv[2]
open("kern/chained.py", "w").write(src)
print("planted", flush=True)
"""


def _text(r) -> str:
    return r.content[0].text if r.content else ""


@needs_landlock
@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_package_a_command_planted_cannot_write_outside_through_profile_kernel(tmp_path, warm):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "kern").mkdir(parents=True)
    outside.mkdir()
    (ws / "plant.py").write_text(PLANT)
    (ws / "kern" / "good.py").write_text((FIXTURES / "user_kernels" / "scale.py").read_text())
    pwn = outside / "chained_pwn.txt"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", str(ws), "--allow-commands"],
        env={**server_env(), "KPROF_FORCE_CPU": "1", "KPROF_WARM": warm},
    )

    async def main():
        async with Client(server) as c:
            scale = str(FIXTURES / "user_kernels" / "scale.py")
            r = await c.call_tool(
                "profile_command", {"command": ["python", "plant.py", scale, str(pwn)], "wait_s": 50}
            )
            assert (ws / "kern" / "chained.py").exists(), _text(r)
            r = await c.call_tool(
                "profile_kernel",
                {"kernel": "kern/chained.py", "params": {"n": 256}, "mode": "event", "wait_s": 50},
            )
            assert r.is_error and "PermissionError" in _text(r), _text(r)
            # a workspace package that behaves, and a built-in kernel, still profile
            for kernel in ("kern/good.py", "vector_add"):
                params = {"n": 256} if kernel.endswith(".py") else {"n": 1024}
                ok = await c.call_tool(
                    "profile_kernel", {"kernel": kernel, "params": params, "mode": "event", "wait_s": 50}
                )
                assert not ok.is_error, _text(ok)
                assert Path(ok.structured_content["profile_dir"]).is_dir()

    anyio.run(main)
    assert not pwn.exists(), "a planted package wrote outside the workspace through profile_kernel"


@needs_landlock
def test_kernel_children_write_only_their_runs_jobs_and_caches(tmp_path):
    """A package's own code (at import and in run) may not write outside its places, read the home
    directory or see the server's secrets; the run it profiles is written as before."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    devlog = ws / "docs" / "kernels" / "x.md"
    devlog.parent.mkdir(parents=True)
    devlog.write_text("# log\n")
    probe = f"""
import os
report = {{}}
for name, f in [
    ("write_outside", lambda: open({str(outside / "x")!r}, "w")),
    ("read_outside", lambda: open({str(outside / "secret.txt")!r}).read()),
    ("write_devlog", lambda: open({str(devlog)!r}, "a")),
    ("write_tmp", lambda: open(os.path.join(os.environ["TMPDIR"], "t"), "w")),
    ("write_triton_cache", lambda: os.makedirs(os.environ["TRITON_CACHE_DIR"], exist_ok=True)),
]:
    try:
        f()
        report[name] = "done"
    except OSError as e:
        report[name] = type(e).__name__
report["token_seen"] = "KPROF_MCP_TOKEN" in os.environ
REPORT = report
"""
    src = (FIXTURES / "user_kernels" / "scale.py").read_text()
    (ws / "probed.py").write_text(src + probe + "\nraise SystemExit(repr(REPORT))\n")
    cfg = Config.from_options(str(ws), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    os.environ["KPROF_MCP_TOKEN"] = "server-token"
    try:
        with pytest.raises(KprofError) as e:
            engine.profile("probed.py", params={"n": 256}, mode="event")
    finally:
        del os.environ["KPROF_MCP_TOKEN"]
    msg = str(e.value)
    for expected in (
        "'write_outside': 'PermissionError'",
        "'read_outside': 'PermissionError'",
        "'write_devlog': 'PermissionError'",
        "'write_tmp': 'done'",
        "'write_triton_cache': 'done'",
        "'token_seen': False",
    ):
        assert expected in msg, msg
    assert list(outside.iterdir()) == [outside / "secret.txt"] and devlog.read_text() == "# log\n"
