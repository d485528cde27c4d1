"""Issue 38's fresh probe (F1): kprof's own processes — the sandbox's supervisor, the children and warm
workers, the lifeline's helper — start in the server's working directory, a workspace: with ``python -m``
(or ``-c``) that directory came first on ``sys.path``, so a workspace's ``glob.py`` or ``subprocess.py``
shadowed the standard library in them, before any confinement. They start with nothing of the working
directory on ``sys.path`` now; a user's ``python script.py`` still finds its own directory first."""

import subprocess
import sys

from kprof_mcp import sandbox
from kprof_mcp.protocol import child_command, python_argv


def _plant(tmp_path, name="glob"):
    marker = tmp_path / f"{name}.RAN"
    (tmp_path / f"{name}.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    return marker


def test_the_supervisor_does_not_import_a_workspace_module_shadowing_the_standard_library(tmp_path):
    markers = [_plant(tmp_path, n) for n in ("glob", "secrets", "ctypes", "subprocess")]
    cp = subprocess.run(
        sandbox.wrap(None, ["/bin/true"]), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert cp.returncode == 0, cp.stderr
    assert not any(m.exists() for m in markers)
    # the same interpreter without the safe path runs the planted module: the test can fail
    subprocess.run([sys.executable, "-c", "import glob"], cwd=tmp_path, timeout=60)
    assert markers[0].exists()


def test_children_and_helper_code_start_without_the_working_directory_on_sys_path(tmp_path):
    marker = _plant(tmp_path, "json")
    argv = [*python_argv(code="import json, sys; print(repr(sys.path[0]))")]
    cp = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and not marker.exists(), cp.stderr
    assert str(tmp_path) not in cp.stdout and "''" not in cp.stdout
    assert child_command("x")[:3] == python_argv(module="kprof_mcp.child")[:3]


def test_a_users_script_still_finds_its_own_directory_first(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    (tmp_path / "main.py").write_text("import helper\nprint(helper.VALUE)\n")
    # what the supervisor runs for a command: a plain interpreter on the user's script (no -P inherited)
    cp = subprocess.run(
        sandbox.wrap(None, [sys.executable, "main.py"]),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cp.returncode == 0 and cp.stdout.strip() == "42", cp.stderr
