"""A user's command behind Nsight Compute is the profiler's own child. ncu runs with
``--target-processes application-only`` (kprof_mcp.tools.ncu.build_command): it profiles its direct child
and nothing below it. Where a command is only supervised (``kprof run``: no workspace; or no Landlock), the
supervisor used to stand between ncu and the command: ncu profiled the supervisor, the command's CUDA
initialisation waited for a profiler that never answered, and `kprof run --mode annotation` of any
command hung until its time limit (seen on an H200, 2026-11-29: docs/evidence/machine-model/). On the CPU,
with a stand-in ncu that starts its target as its child, as ncu does."""

import sys
from pathlib import Path

import pytest

from kprof_mcp import runner, sandbox
from kprof_mcp.models import ProfileRequest

FAKE_NCU = """#!{python}
import os, subprocess, sys
open({pid_file!r}, "w").write(str(os.getpid()))
sys.exit(subprocess.run(sys.argv[1:]).returncode)
"""

COMMAND = """import os
import kprof

open({ppid_file!r}, "w").write(str(os.getppid()))
with kprof.range("step"):
    pass
"""


def _request(tmp_path: Path) -> str:
    (tmp_path / "cmd.py").write_text(COMMAND.format(ppid_file=str(tmp_path / "ppid")))
    return ProfileRequest.model_validate(
        dict(
            kernel="command",
            kernel_source=str(tmp_path),
            params={},
            version="command",
            mode="nsys",
            command=["python", "cmd.py"],
            command_cwd=str(tmp_path),
            out_root=str(tmp_path / "out"),
            force_cpu=True,
            plain_steps_only=True,
        )
    ).model_dump_json()


@pytest.mark.parametrize("landlock", [True, False])
def test_the_command_is_the_profilers_direct_child(tmp_path, monkeypatch, landlock):
    ncu = tmp_path / "bin" / "ncu"
    ncu.parent.mkdir()
    ncu.write_text(FAKE_NCU.format(python=sys.executable, pid_file=str(tmp_path / "ncu_pid")))
    ncu.chmod(0o755)
    if (
        not landlock
    ):  # `kprof run` is supervised only either way (no workspace); a server without Landlock too
        monkeypatch.setattr(sandbox.confine, "available", lambda: False)
    req = _request(tmp_path)
    rec = runner.run_profile(req, 120, None, prefix=[str(ncu)], command="command", fresh=True)
    assert rec.returncode == 0, rec.log[-2000:]
    ncu_pid = int((tmp_path / "ncu_pid").read_text())
    assert int((tmp_path / "ppid").read_text()) == ncu_pid, "the command is not the profiler's own child"
