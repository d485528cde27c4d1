"""Issue 29, "the first hour": what a newcomer meets in the CLI. Paths are never wrapped when
output is piped; every command speaks JSON; one kernel name works everywhere; a failed command
carries its evidence; errors speak of CLI options."""

import json
import os
import subprocess
import sys

from conftest import ROOT


def _kprof(workspace, *args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=600,
        env={**os.environ, "KPROF_FORCE_CPU": "1", **(env or {})},
    )


# 1. Paths are never wrapped


def test_profile_dir_is_one_line_when_piped_narrow(workspace):
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "4096", env={"COLUMNS": "40"})
    assert cp.returncode == 0, cp.stderr
    (line,) = [ln for ln in cp.stderr.splitlines() if ln.startswith("profile_dir: ")]
    path = line.removeprefix("profile_dir: ")
    assert os.path.isdir(path) and path.startswith(str(workspace)), cp.stderr
    assert any(ln.startswith("No GPU: ") and ln.endswith("GPU performance.") for ln in cp.stderr.splitlines())


def test_server_log_is_not_wrapped_when_piped(workspace):
    long = "/very/long/" + "n=1048576_dtype=float32/" * 8 + "20261124T015403"
    code = (
        "import logging; from kprof_mcp.engine import Config; from kprof_mcp.server import build_server; "
        f"build_server(Config(workspace={str(workspace)!r})); logging.getLogger('kprof').warning({long!r})"
    )
    cp = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "KPROF_FORCE_CPU": "1", "COLUMNS": "40"},
    )
    assert cp.returncode == 0, cp.stderr
    assert any(ln.endswith(long) for ln in cp.stderr.splitlines()), cp.stderr
