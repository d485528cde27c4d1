"""The fourth sandbox probe's P4-7, P4-8 and P4-12 through the real server over stdio and the MCP SDK's
own client: a command prints kprof's progress lines with NaN and infinities (the server sent them as a
null progress, which the client refused), then 40 MB without a newline on stdout and on stderr. The
job succeeds, every progress notification is a finite number, the output in its report is cut and
says so, and the server keeps answering."""

import logging
import math
import shutil
from pathlib import Path

import anyio
from mcp import Client
from test_stdio_client import _server

BOMB = Path(__file__).resolve().parents[2] / "docs/evidence/sandbox/probe4/ws/progress_bomb.py"


def test_progress_bomb_and_big_output_over_stdio(workspace, caplog):
    shutil.copy(BOMB, workspace / "progress_bomb.py")
    (workspace / "bomb_step.py").write_text(
        "import os, runpy, time\n"
        "runpy.run_path('progress_bomb.py')\n"
        "time.sleep(0.5)\n"
        "import torch, kprof\n"
        "x = torch.randn(64, 64)\n"
        "with kprof.range('mm'):\n"
        "    y = x @ x\n"
        "os.write(1, b'A' * (40 << 20))\n"
        "os.write(2, b'E' * (40 << 20))\n"
        "os.write(1, b'\\nthe end of stdout\\n')\n"
        "os.write(2, b'\\nthe end of stderr\\n')\n"
        "time.sleep(1.0)\n"
    )
    progress: list = []

    async def on_progress(p, total, msg):
        progress.append((p, msg))

    async def main():
        async with Client(_server(workspace, "--allow-commands")) as c:
            r = await c.call_tool(
                "profile_command",
                {"command": ["python", "bomb_step.py"], "mode": "event", "wait_s": 55},
                progress_callback=on_progress,
            )
            assert not r.is_error, r.content[0].text
            report = (workspace / r.structured_content["profile_dir"] / "report.md").read_text()
            assert "the end of stderr" in report and len(report) < 1 << 20
            log = (workspace / r.structured_content["profile_dir"] / "command.log").read_text()
            assert "MB of this line left out" in log and "the end of stdout" in log  # stdout: one line cut
            assert "MB of output left out" in log and len(log) < 12 << 20  # stderr: its two ends
            again = await c.call_tool("list_kernels", {})  # the server still answers
            assert not again.is_error

    with caplog.at_level(logging.WARNING):
        anyio.run(main)
    assert "Failed to validate notification" not in caplog.text
    assert progress and all(isinstance(p, float) and math.isfinite(p) and 0 <= p <= 1 for p, _ in progress)
    fake = [m for _, m in progress if "FAKE kprof" in (m or "")]  # the command's own last progress line
    assert fake and all("\x1b" not in m for m in fake)  # came through, without its escapes
