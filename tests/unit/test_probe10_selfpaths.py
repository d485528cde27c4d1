"""Issue 38, the tenth probe's P10-1 (docs/evidence/sandbox/probe-2026-11-27-tenth.md): a command may write its
working directory (the workspace root by default), and where the server's own venv, kprof's source, or a directory
on its PYTHONPATH or PATH lies in the workspace, it wrote a ``.pth`` in the venv's site-packages, a line into
``kprof_mcp/lifeline.py``, a ``src/sitecustomize.py`` or a ``.venv/bin/nvidia-smi`` there; the next unconfined
supervisor (``python -P -m kprof_mcp.sandbox``) or the server's own preflight ran it. Now none of the server's own
paths is writable to a job (kprof_mcp.sandbox.selfpaths); a directory of them that is the working directory itself
is sealed (nothing created in it, its start-up files kept). The end-to-end repro is
docs/evidence/sandbox/probe10/repro_selfws.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import selfpaths

PYTHONPATH = os.pathsep.join(sys.path)  # this process's, before a test changes it (pydantic, kprof_mcp)
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"

TRY = r"""
import json, os, sys
out = {}
for rel in sys.argv[2:]:
    try:
        fd = os.open(rel, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o755)
        os.write(fd, b"\n# written by the job\n")
        os.close(fd)
        out[rel] = "written"
    except OSError as e:
        out[rel] = type(e).__name__
json.dump(out, open(sys.argv[1], "w"))
"""


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for d in (f".venv/{SITE}", ".venv/bin", "kprof_mcp", "src", "tests", "tools"):
        (ws / d).mkdir(parents=True)
    (ws / "kprof_mcp" / "lifeline.py").write_text("# kprof's source\n")
    (ws / "tests" / "data.txt").write_text("the workspace's own\n")
    (ws / "old.pth").write_text("\n")
    (ws / "notes.txt").write_text("\n")
    return ws


def _run(tmp_path: Path, ws: Path, targets: list[str]) -> dict:
    policy = sandbox.command_policy(ws, ws, ws / "out" / "event" / "command" / "r1", tmp_path / "tmp")
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    result = tmp_path / "tmp" / "r.json"
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    cp = subprocess.run(
        sandbox.wrap(pf, [sys.executable, "-c", TRY, str(result), *targets]),
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cp.returncode == 0, cp.stderr
    return json.loads(result.read_text())


@pytest.fixture
def server_inside(tmp_path, monkeypatch):
    """The server's venv, source, PYTHONPATH and PATH inside the workspace (README's quick start from the
    checkout, a project's own venv, PYTHONPATH=src, the venv activated), and the workspace on its sys.path."""
    ws = _workspace(tmp_path)
    monkeypatch.setattr(sys, "prefix", str(ws / ".venv"))
    monkeypatch.setattr(sys, "exec_prefix", str(ws / ".venv"))
    monkeypatch.setattr(sys, "path", [str(ws), str(ws / ".venv" / SITE), *sys.path])
    monkeypatch.setenv("PYTHONPATH", f"{ws / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("PATH", f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(ws / "tools"))
    monkeypatch.setattr(selfpaths, "__file__", str(ws / "kprof_mcp" / "sandbox" / "selfpaths.py"))
    return ws


def test_the_servers_own_paths_in_the_workspace_are_protected_and_the_root_sealed(server_inside):
    ws = server_inside
    protected, sealed = selfpaths.protected_paths(ws, ws / "out")
    for rel in (".venv", f".venv/{SITE}", ".venv/bin", "src", "tools", "kprof_mcp"):
        assert ws / rel in protected, rel
    assert sealed == [ws] or set(sealed) == {ws}  # sys.path names the workspace itself
    grants = selfpaths.writable_under(ws, protected, sealed)
    assert (
        str(ws / "tests") in grants and str(ws / "notes.txt") in grants
    )  # the workspace stays the command's
    assert str(ws) not in grants and str(ws / "old.pth") not in grants
    assert not [g for g in grants if g.startswith(str(ws / ".venv")) or g.startswith(str(ws / "src"))]


@pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
def test_a_confined_command_cannot_write_what_the_server_runs(tmp_path, server_inside):
    ws = server_inside
    got = _run(
        tmp_path,
        ws,
        [
            f".venv/{SITE}/zz.pth",  # P10-1: a .pth every Python of the venv runs at start-up
            "kprof_mcp/lifeline.py",  # P10-1: kprof's own source
            "src/sitecustomize.py",  # P10-1b: on the server's PYTHONPATH
            ".venv/bin/nvidia-smi",  # P10-1c: first on the server's PATH, run by its preflight
            "tools/libcuda.so.1",  # on LD_LIBRARY_PATH
            "sitecustomize.py",  # the sealed root (on sys.path): nothing new
            "old.pth",  # nor its start-up files
            "tests/data.txt",  # the workspace's own: still writable
            "notes.txt",
        ],
    )
    blocked = {k for k, v in got.items() if v != "written"}
    assert blocked == {
        f".venv/{SITE}/zz.pth",
        "kprof_mcp/lifeline.py",
        "src/sitecustomize.py",
        ".venv/bin/nvidia-smi",
        "tools/libcuda.so.1",
        "sitecustomize.py",
        "old.pth",
    }, got
    assert (ws / "kprof_mcp" / "lifeline.py").read_text() == "# kprof's source\n"
    assert not (ws / ".venv" / "bin" / "nvidia-smi").exists()


def test_no_write_grant_where_the_working_directory_lies_in_a_protected_path(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    assert selfpaths.writable_under(ws / "src" / "pkg", [ws / "src"]) == []
    assert selfpaths.writable_under(ws / "src", [ws / "src"]) == []
