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


# 2. --json on every command, --timeout-s on every command that runs something


def _doc(cp):
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)  # the whole of stdout is one document


def test_every_command_prints_one_json_document(workspace):
    listed = _doc(_kprof(workspace, "list", "--json"))
    assert any(k["name"] == "vector_add" for k in listed["kernels"]) and "event" in listed["modes"]
    prof = _doc(
        _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "2048", "--json", "--quiet")
    )
    assert prof["summary"]["kernel"] == "vector_add" and prof["summary"]["stages"]
    assert prof["summary"]["profile_dir"] == prof["profile_dir"] and os.path.isdir(prof["profile_dir"])
    assert _doc(_kprof(workspace, "read-params", prof["profile_dir"], "--json"))["kernel"] == "vector_add"
    assert "device" in str(_doc(_kprof(workspace, "device", "--json"))).lower()
    assert "bottleneck" in _doc(_kprof(workspace, "classify", "--dram", "91", "--json"))
    log = _doc(_kprof(workspace, "devlog", "vector_add", prof["profile_dir"], "--insight", "x", "--json"))
    assert os.path.isfile(log["path"]) and "x" in log["entry"]
    init = _doc(_kprof(workspace, "init", "my_k", "--json"))
    assert os.path.isfile(init["test"]) and init["kernel"] == "my_k"
    cmp_ = _doc(
        _kprof(
            workspace, "compare", "vector_add", "v0", "v1", "--n", "2048", "--budget-ms", "100",
            "--rounds", "3", "--json", "--timeout-s", "300",
        )
    )  # fmt: skip
    assert cmp_["summary"]["kernel"] == "vector_add" and os.path.isdir(cmp_["compare_dir"])
    sw = _doc(
        _kprof(
            workspace, "sweep", "vector_add", "--over", "n", "--values", "1024", "2048",
            "--versions", "v1", "--budget-ms", "50", "--json", "--timeout-s", "300",
        )
    )  # fmt: skip
    assert sw["summary"]["param"] == "n" and os.path.isdir(sw["sweep_dir"])
    bad = _kprof(workspace, "profile", "nope", "--json")
    assert bad.returncode == 2 and "error" in json.loads(bad.stdout)


def test_timeout_s_is_an_option_of_every_command_that_runs_something(workspace):
    for cmd in ("profile", "compare", "sweep", "run", "noise"):
        cp = _kprof(workspace, cmd, "--help")
        assert "--timeout-s" in cp.stdout, cmd
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--timeout-s", "0.01", "--quiet")
    assert cp.returncode == 2 and "timeout" in cp.stderr, cp.stderr


# 3. One name works everywhere


def test_a_package_is_found_by_its_name_and_its_file_name_without_kernels_dir(workspace):
    from conftest import FIXTURES

    pkg = workspace / "kernels" / "liger_pkg.py"
    pkg.parent.mkdir()
    pkg.write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text().replace('name="scale"', 'name="liger_rmsnorm"')
    )
    cp = _kprof(workspace, "list")  # the workspace's kernels/ is found without --kernels-dir
    assert cp.returncode == 0, cp.stderr
    assert "liger_rmsnorm (or liger_pkg): " in cp.stdout
    for name in ("liger_rmsnorm", "liger_pkg"):
        cp = _kprof(workspace, "profile", name, "--mode", "event", "--n", "256", "--quiet")
        assert cp.returncode == 0, cp.stderr
        assert "## Profile: liger_rmsnorm" in cp.stdout
    cp = _kprof(workspace, "profile", "nope", "--quiet")
    assert cp.returncode == 2 and "'liger_rmsnorm'" in cp.stderr and "'liger_pkg'" in cp.stderr


def test_a_kernel_made_by_init_is_listed_and_profiled_by_name(workspace):
    assert _kprof(workspace, "init", "my_kernel").returncode == 0
    listed = json.loads(_kprof(workspace, "list", "--json").stdout)
    assert "my_kernel" in [k["name"] for k in listed["kernels"]]
    cp = _kprof(workspace, "profile", "my_kernel", "--mode", "event", "--quiet")
    assert cp.returncode == 0, cp.stderr


# 4. Failures carry their evidence


def test_failed_skipped_and_unmatched_commands_say_what_happened(workspace):
    (workspace / "fails.py").write_text(
        "import sys\nprint('loading the model')\nprint('bad flag', file=sys.stderr)\nsys.exit(2)\n"
    )
    cp = _kprof(workspace, "run", "--", "python", "fails.py")
    assert cp.returncode == 2 and "exited with status 2" in cp.stderr
    assert "loading the model" in cp.stderr and "bad flag" in cp.stderr, cp.stderr
    kept = list((workspace / "out").rglob("command_output.txt"))
    assert kept and "bad flag" in kept[0].read_text()

    (workspace / "test_skips.py").write_text(
        "import pytest\n\n@pytest.mark.skip(reason='no GPU')\ndef test_a():\n    pass\n\n"
        "@pytest.mark.skip(reason='no GPU')\ndef test_b():\n    pass\n"
    )
    cp = _kprof(
        workspace, "run", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_skips.py"
    )
    assert cp.returncode == 2 and "2 skipped" in cp.stderr, cp.stderr

    (workspace / "ranges.py").write_text(
        "import torch, kprof\nx = torch.ones(64)\nfor _ in range(3):\n"
        "    with kprof.range('forward'):\n        y = x * 2\n"
    )
    for mode in ("event", "nsys"):
        cp = _kprof(workspace, "run", "--mode", mode, "--include", "softmax*", "--", "python", "ranges.py")
        assert cp.returncode == 2, cp.stderr
        assert "no range matched include=['softmax*']" in cp.stderr and "'forward'" in cp.stderr
        assert "GPU kernels:" in cp.stderr


# 5. The CLI's errors speak of the CLI


def test_cli_errors_speak_of_cli_options(workspace, tmp_path):
    from kprof_mcp.cli import cli_words

    assert "pass --kernels-dir" in cli_words("copy it, or start the server with --kernels-dir pointing at it")
    assert "server" not in cli_words("the kernel process died with SIGSEGV (the server is unaffected)")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("print(1)\n")
    cp = _kprof(workspace, "run", "--", "python", str(outside))
    assert cp.returncode == 2 and "must lie under the workspace" in cp.stderr and "--workspace" in cp.stderr
    (workspace / "raises.py").write_text("raise RuntimeError('this one.')\n")
    cp = _kprof(workspace, "run", "--", "python", "raises.py")
    assert cp.returncode == 2 and "this one. Its traceback" in cp.stderr and ".. " not in cp.stderr


def test_pytest_summary_is_read_with_and_without_q():
    from kprof_mcp.capture.recording import pytest_summary

    assert (
        pytest_summary("F\nFAILED t.py::test_bad - assert 1 == 2\n1 failed in 0.96s") == "1 failed in 0.96s"
    )
    assert pytest_summary("==== 2 passed, 1 failed, 3 warnings in 1.20s ====") == (
        "2 passed, 1 failed, 3 warnings in 1.20s"
    )
    assert pytest_summary("=== no tests ran in 0.01s ===") == "no tests ran in 0.01s"
    assert pytest_summary("collected 3 items\nFAILED t.py::x - assert 1 == 2") is None


def test_a_package_written_against_the_old_kernel_api_still_loads_with_a_warning(tmp_path):
    """Issue 41: packages written against kprof_mcp.kernel_api / kernel_runtime (the modules earlier
    versions documented) load again; importing them warns, and the names are kprof_mcp.kernel's own."""
    import shutil
    import warnings

    from kprof_mcp import kernel
    from kprof_mcp.packages import load

    builtin = ROOT / "kernels" / "vector_add"
    pkg = tmp_path / "old_style_add"
    shutil.copytree(builtin, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for f, old, new in (
        ("__init__.py", "from kprof_mcp.kernel import", "from kprof_mcp.kernel_api import"),
        ("impl.py", "from kprof_mcp.kernel import Plan", "from kprof_mcp.kernel_api import Plan"),
        (
            "impl.py",
            "from kprof_mcp.kernel import autotune_bench",
            "from kprof_mcp.kernel_runtime import autotune_bench",
        ),
    ):
        text = (pkg / f).read_text()
        assert old in text
        (pkg / f).write_text(text.replace(old, new))
    for m in ("kprof_mcp.kernel_api", "kprof_mcp.kernel_runtime"):
        sys.modules.pop(m, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = load(pkg)  # its impl.py (kernel_runtime) is imported when it runs
        import kprof_mcp.kernel_runtime  # noqa: F401
    assert [v.name for v in p.versions] == ["v0", "v1"]
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any("kprof_mcp.kernel_api is deprecated" in s for s in said), said
    assert any("kprof_mcp.kernel_runtime is deprecated" in s for s in said), said
    from kprof_mcp import kernel_api, kernel_runtime

    assert kernel_api.Param is kernel.Param and kernel_runtime.autotune_bench is kernel.autotune_bench
