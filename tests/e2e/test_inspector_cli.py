"""End-to-end: drive the real kprof-mcp server through the real MCP Inspector CLI from npm.

Each call runs ``npx -y @modelcontextprotocol/inspector@<pinned> --cli <server command...>
--format json --method ...``; the inspector spawns the server over stdio, performs the MCP
handshake, makes one request, prints the result as one JSON object (``{"result": ...}``) on
stdout and exits (0 on success, 5 when a tool answers ``isError: true``).

Notes on the inspector CLI (v2) that this file relies on:

* ``--tool-arg k=v`` values are ``JSON.parse``d when they parse (``n=4096`` -> number,
  ``params={"n":4096}`` -> object) and kept as strings otherwise (``version=v0``).
* The stdio server does NOT inherit the inspector's environment: the MCP SDK passes only
  HOME, LOGNAME, PATH, SHELL, TERM and USER, plus what ``-e KEY=VALUE`` adds. PYTHONPATH is
  therefore handed to the server with ``-e`` as well as set in the inspector's environment.
* Unknown options after the server command (``-m``, ``--workspace``) are passed through to the
  server, so the server command goes right after ``--cli`` and the inspector's own options
  follow it.

Skipped only when ``npx`` is not on PATH, and even then it fails when ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.inspector

# Pinned Inspector release. 2.x declares node >=22.19 in "engines"; on Node 20 npm prints
# EBADENGINE warnings but the CLI (stdio transport) works. 0.15.0 is the last release whose
# engines admit Node 20, should 2.x ever stop running there (its output differs: no
# --format, and exit code 0 on a tool error).
INSPECTOR_VERSION = "2.12.0"
INSPECTOR_PACKAGE = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPECTED_TOOLS = {
    "list_kernels",
    "profile_kernel",
    "read_params",
    "classify_bottleneck",
    "update_devlog",
    "device_info",
    "profile_command",
}  # the server is started with --allow-commands

FIRST_CALL_TIMEOUT_S = 300  # the first npx call may download the package and its dependencies
CALL_TIMEOUT_S = 180  # later calls: package cached; profile_kernel runs the Triton interpreter on CPU
# kprof settings passed on to the server when set here (e.g. KPROF_FORCE_CPU=1 on a GPU machine)
FORWARDED_ENV = ("KPROF_FORCE_CPU", "KPROF_TIMEOUT_S")
EXIT_OK = 0
EXIT_TOOL_ERROR = 5  # inspector v2: the tool's result had isError: true

_state = {"first_call_done": False}


@pytest.fixture(scope="module")
def npx() -> str:
    path = shutil.which("npx")
    if path is None:
        reason = "npx is not on PATH: the MCP Inspector CLI (npm) cannot be run; install Node.js/npm to run this test"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return path


def _run_inspector(npx: str, workspace: Path, *inspector_args: str) -> tuple[int, Any, str]:
    """Run one inspector CLI call against a fresh server; return (exit code, parsed stdout, stderr)."""
    pythonpath = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath, "npm_config_yes": "true", "NO_COLOR": "1"}
    server_cmd = [sys.executable, "-m", "kprof_mcp.server", "--workspace", str(workspace), "--allow-commands"]
    # the server sees only what -e passes (plus HOME, PATH, ...): hand it PYTHONPATH and kprof's knobs
    server_env = {"PYTHONPATH": pythonpath, **{k: v for k in FORWARDED_ENV if (v := os.environ.get(k))}}
    env_args = [a for k, v in server_env.items() for a in ("-e", f"{k}={v}")]
    cmd = [npx, "-y", INSPECTOR_PACKAGE, "--cli", *server_cmd, *env_args, "--format", "json", *inspector_args]
    timeout = CALL_TIMEOUT_S if _state["first_call_done"] else FIRST_CALL_TIMEOUT_S
    try:
        proc = subprocess.run(
            cmd,
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(
            f"inspector call timed out after {timeout}s: {cmd}\nstdout:\n{e.stdout}\nstderr:\n{e.stderr}"
        )
    _state["first_call_done"] = True
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"inspector stdout is not JSON (exit {proc.returncode}): {cmd}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc.returncode, out, proc.stderr


def _result(rc: int, out: Any, stderr: str, expected_rc: int = EXIT_OK) -> dict[str, Any]:
    assert rc == expected_rc, (
        f"inspector exit {rc} (expected {expected_rc})\nstdout: {out}\nstderr:\n{stderr}"
    )
    assert isinstance(out, dict) and "result" in out, (
        f"no 'result' in inspector output: {out}\nstderr:\n{stderr}"
    )
    return out["result"]


def _text(result: dict[str, Any]) -> str:
    texts = [c["text"] for c in result.get("content", []) if c.get("type") == "text"]
    assert texts, f"no text content in {result}"
    return texts[0]


def test_tools_list(npx: str, tmp_path: Path) -> None:
    result = _result(*_run_inspector(npx, tmp_path, "--method", "tools/list"))
    names = {t["name"] for t in result["tools"]}
    assert EXPECTED_TOOLS <= names, f"missing tools: {EXPECTED_TOOLS - names}"


def test_classify_bottleneck_memory_bound(npx: str, tmp_path: Path) -> None:
    result = _result(
        *_run_inspector(
            npx,
            tmp_path,
            "--method",
            "tools/call",
            "--tool-name",
            "classify_bottleneck",
            "--tool-arg",
            "tc_pct=5",
            "dram_pct=85",
            "l2_hit_pct=60",
        )
    )
    assert result.get("isError") is not True, result
    structured = result["structuredContent"]
    assert structured["bottleneck"] == "Memory-bound", structured
    assert structured["locality_issue"] is True, structured
    # the text block mirrors the structured result
    assert json.loads(_text(result))["bottleneck"] == "Memory-bound"


def test_profile_kernel_vector_add(npx: str, tmp_path: Path) -> None:
    result = _result(
        *_run_inspector(
            npx,
            tmp_path,
            "--method",
            "tools/call",
            "--tool-name",
            "profile_kernel",
            "--tool-arg",
            "kernel=vector_add",
            "version=v0",
            'params={"n":4096}',
            "mode=event",
        )
    )
    assert result.get("isError") is not True, result
    assert _text(result).startswith("## Profile: vector_add v0"), _text(result)[:500]

    summary = result["structuredContent"]
    assert summary["kernel"] == "vector_add" and summary["version"] == "v0"
    assert summary["params"]["n"] == 4096  # the JSON-valued --tool-arg arrived as an object
    profile_dir = Path(summary["profile_dir"])
    assert profile_dir.is_dir(), profile_dir
    assert profile_dir.resolve().is_relative_to(tmp_path.resolve()), f"{profile_dir} is outside the workspace"
    params_file = profile_dir / "params.json"
    assert params_file.is_file(), (
        f"no params.json in {profile_dir}: {sorted(p.name for p in profile_dir.iterdir())}"
    )
    params = json.loads(params_file.read_text())
    assert params["params"]["n"] == 4096
    assert params["kernel"] == "vector_add" and params["version"] == "v0"


def test_profile_kernel_unknown_kernel_is_error(npx: str, tmp_path: Path) -> None:
    rc, out, stderr = _run_inspector(
        npx,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "profile_kernel",
        "--tool-arg",
        "kernel=no_such_kernel",
    )
    result = _result(rc, out, stderr, expected_rc=EXIT_TOOL_ERROR)
    assert result.get("isError") is True, result
    text = _text(result)
    assert "no_such_kernel" in text, text
    assert "'vector_add'" in text, text
    assert not list(tmp_path.rglob("params.json")), "a failed profile_kernel call wrote a profile"


def test_sweep_mla_decode_over_t_returns_its_plot(npx: str, tmp_path: Path) -> None:
    """The issue's check: a sweep of mla_decode over t returns its plot (PNG image content)
    through the Inspector CLI (small sizes: this runs in the Triton interpreter on the CPU)."""
    result = _result(
        *_run_inspector(
            npx,
            tmp_path,
            "--method",
            "tools/call",
            "--tool-name",
            "sweep",
            "--tool-arg",
            "kernel=mla_decode",
            "param=t",
            "values=[64,256]",
            'versions=["v1"]',
            'params={"b":1,"s":1,"h":16,"d":64,"p":16,"dtype":"float16"}',
            "budget_ms=20",
        )
    )
    assert result.get("isError") is not True, result
    assert _text(result).startswith("## Sweep: mla_decode v1 over t"), _text(result)[:500]
    images = [c for c in result["content"] if c.get("type") == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png"
    import base64

    assert base64.b64decode(images[0]["data"])[:8] == b"\x89PNG\r\n\x1a\n"
    rows = result["structuredContent"]["rows"]
    assert [(r["t"], r["version"]) for r in rows] == [(64, "v1"), (256, "v1")]
    sweep_dir = Path(result["structuredContent"]["sweep_dir"])
    assert (sweep_dir / "sweep.png").is_file() and (sweep_dir / "sweep.csv").is_file()


def test_profile_command_through_the_inspector(npx: str, tmp_path: Path) -> None:
    (tmp_path / "step.py").write_text(
        "import torch, kprof\nx = torch.randn(128, 128)\nfor _ in range(3):\n"
        "    with kprof.range('mm'):\n        y = x @ x\nprint('finished')\n"
    )
    result = _result(
        *_run_inspector(
            npx,
            tmp_path,
            "--method",
            "tools/call",
            "--tool-name",
            "profile_command",
            "--tool-arg",
            'command=["python","step.py"]',
            "mode=event",
            "wait_s=55",
        )
    )
    assert result.get("isError") is not True, result
    assert "| mm |" in _text(result), _text(result)[:800]
    summary = result["structuredContent"]
    assert Path(summary["profile_dir"]).resolve().is_relative_to(tmp_path.resolve())
