"""The ``kprof`` CLI as a user types it: kernel parameters are never swallowed by option
prefixes, and a parameter named like an option gets a clear error and a way to pass it."""

import subprocess
import sys

from conftest import FIXTURES, ROOT


def _kprof(workspace, *args):
    return subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def test_readme_first_command_shape_runs(workspace):
    # `--n` once parsed as an abbreviation of --ncu-launches ("ncu_launches=1048576: give an integer from 1 to 20").
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "4096", "--quiet")
    assert cp.returncode == 0, cp.stderr
    assert "## Profile: vector_add v1" in cp.stdout and "| 4096 | float32 |" in cp.stdout
    assert (workspace / "out/profiles/event/vector_add/n=4096_dtype=float32").is_dir()


def test_no_option_is_abbreviated(workspace):
    cp = _kprof(workspace, "profile", "vector_add", "--mod", "event", "--quiet")
    assert cp.returncode == 2 and "unknown parameter(s) ['mod']" in cp.stderr


def test_a_parameter_named_like_an_option_needs_param(workspace):
    pkg = workspace / "k" / "clash.py"
    pkg.parent.mkdir()
    pkg.write_text(
        (FIXTURES / "user_kernels" / "scale.py")
        .read_text()
        .replace('Param("n"', 'Param("version", 3, min=1, max=8), Param("n"')
    )
    cp = _kprof(workspace, "profile", "k/clash.py", "--mode", "event", "--quiet")
    assert cp.returncode == 2
    assert "parameter(s) ['version'] whose --name is also an option" in cp.stderr
    assert "--param version=VALUE" in cp.stderr
    cp = _kprof(
        workspace,
        "profile",
        "k/clash.py",
        "--mode",
        "event",
        "--param",
        "version=2",
        "--param",
        "n=256",
        "--quiet",
    )
    assert cp.returncode == 0, cp.stderr
    assert "| version | n | dtype |" in cp.stdout and "| 2 | 256 | float32 |" in cp.stdout


def test_compare_one_version_at_two_parameter_sets(workspace):
    cp = _kprof(
        workspace,
        "--cpu",
        "compare",
        "vector_add",
        "v1",
        "--set",
        "n=4096",
        "--set",
        "n=8192,dtype=float32",
        "--budget-ms",
        "200",
        "--rounds",
        "3",
    )
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("## Compare: vector_add v1 [n=4096] vs v1 [n=8192]")
    assert "| v1 [n=8192] | 8192 | float32 |" in cp.stdout and "compare_dir:" in cp.stderr
    cp = _kprof(workspace, "--cpu", "compare", "vector_add", "v0", "v1", "--mode", "nsys")
    assert cp.returncode == 2 and "compare_versions runs in ['annotation', 'event', 'ncu']" in cp.stderr


def test_ci_runs_the_readme_commands_verbatim():
    import re

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up and run")[1].split("\n## ")[0]
    commands = re.findall(r"```bash\n(.+?)\n```", section, re.S)
    assert len(commands) == 2 and "kprof profile" in commands[0] and "pytest" in commands[1]
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    for c in commands:
        assert c.strip() in ci, f"README command not run by .ci/run: {c}"
