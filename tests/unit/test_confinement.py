"""Nothing is read, written, loaded or run outside the workspace: every case an adversarial
probe of the server found, re-run against the engine (the same checks serve the MCP tools and the
CLI; tests/e2e/test_security.py drives them through the real client).

A workspace is often a cloned repository, so its content is untrusted: links planted anywhere in
it (a directory on the way, the file itself, a temporary name) must be refused, never followed,
and the messages must not say where a link points.
"""

import os
from pathlib import Path

import pytest
from conftest import FIXTURES

from kprof_mcp import safefs
from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.server import TokenError, read_token


@pytest.fixture
def outside(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("do not touch\n")
    (d / "evil.py").write_text("open(__file__ + '.ran', 'w').write('ran')\n")
    return d


@pytest.fixture
def cpu_engine(workspace):
    e = Engine(Config(workspace=workspace, timeout_s=120, force_cpu=True))
    yield e
    e.close()


def _untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["evil.py", "secret.txt"], list(outside.iterdir())
    assert (outside / "secret.txt").read_text() == "do not touch\n"


# ----------------------------------------------------------------------------- safefs itself


def test_safefs_refuses_links_on_every_component(tmp_path, outside):
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    os.symlink(outside, root / "dirlink")
    os.symlink(outside / "secret.txt", root / "real" / "filelink")
    for path in ("dirlink/secret.txt", "real/filelink"):
        with pytest.raises(safefs.UnsafePath, match="symbolic link") as e:
            safefs.read_text(root, path)
        assert str(outside) not in str(e.value)
    with pytest.raises(safefs.UnsafePath, match="symbolic link"):
        safefs.write_atomic(root, "dirlink/new.txt", "x")
    with pytest.raises(safefs.UnsafePath, match="symbolic link"):
        safefs.make_dirs(root, "dirlink/a/b")
    with pytest.raises(safefs.UnsafePath, match="outside"):
        safefs.read_text(root, "../outside/secret.txt")
    # an atomic write over a link replaces the link; the file it pointed to is untouched
    safefs.write_atomic(root, "real/filelink", "mine")
    assert (
        not (root / "real" / "filelink").is_symlink() and (root / "real" / "filelink").read_text() == "mine"
    )
    _untouched(outside)
    assert safefs.kind(root, "real/missing/deeper") == "missing"
    with pytest.raises(safefs.UnsafePath, match="longer than the file system allows"):
        safefs.read_text(root, "real/" + "x" * 300)


def test_clip_quotes_at_most_200_characters():
    assert len(safefs.clip("x" * 100_000)) <= 200
    assert safefs.clip("short") == "'short'"


# ----------------------------------------------------------------------------- reads and writes


def test_read_params_through_a_linked_file_is_refused(cpu_engine, workspace, outside):
    o = cpu_engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    (outside / "params.json").write_text('{"stolen": true}')
    (o.profile_dir / "params.json").unlink()
    os.symlink(outside / "params.json", o.profile_dir / "params.json")
    with pytest.raises(KprofError, match="params.json' is a symbolic link") as e:
        cpu_engine.read_params(str(o.profile_dir))
    assert str(outside) not in str(e.value)
    # the same profile as a baseline: result.json read through a linked directory is refused too
    os.symlink(o.profile_dir, workspace / "alias")
    with pytest.raises(KprofError, match="'alias' is a symbolic link"):
        cpu_engine.check_profile("vector_add", "v1", {"n": 256}, mode="event", baseline="alias")


def test_update_devlog_never_writes_through_links(cpu_engine, workspace, outside):
    o = cpu_engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    # a `docs` link: refused, nothing written outside
    os.symlink(outside, workspace / "docs")
    with pytest.raises(KprofError, match="'docs' is a symbolic link"):
        cpu_engine.update_devlog("vector_add", str(o.profile_dir))
    _untouched(outside)
    os.unlink(workspace / "docs")
    # the devlog itself a link to an outside file: refused, the file untouched
    (workspace / "docs" / "kernels").mkdir(parents=True)
    log = workspace / "docs" / "kernels" / "vector_add.md"
    os.symlink(outside / "secret.txt", log)
    with pytest.raises(KprofError, match="vector_add.md' is a symbolic link"):
        cpu_engine.update_devlog("vector_add", str(o.profile_dir))
    _untouched(outside)
    os.unlink(log)
    # links planted at the temporary names the old code used (and any other name beside the log)
    for name in (f"vector_add.md.tmp{os.getpid()}", "vector_add.md.lock", ".vector_add.md.tmp"):
        os.symlink(outside / "secret.txt", log.with_name(name))
    path, entry = cpu_engine.update_devlog("vector_add", str(o.profile_dir), insights=["first"])
    assert path == log and log.is_file() and not log.is_symlink() and "first" in log.read_text()
    _untouched(outside)


def test_an_out_link_never_receives_profiles(cpu_engine, workspace, outside):
    os.symlink(outside, workspace / "out")
    with pytest.raises(KprofError, match="'out' is a symbolic link"):
        cpu_engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    _untouched(outside)
    os.unlink(workspace / "out")
    (workspace / "out" / "profiles").mkdir(parents=True)
    os.symlink(outside, workspace / "out" / "profiles" / "event")  # deeper, created by the child
    with pytest.raises(KprofError, match="'event' is a symbolic link"):
        cpu_engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    _untouched(outside)


# ----------------------------------------------------------------------------- packages


def test_packages_with_links_are_not_loaded(cpu_engine, workspace, outside):
    (outside / "__init__.py").write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text() + "\nopen(__file__ + '.ran', 'w').write('ran')\n"
    )
    pkg = workspace / "linked_init"
    pkg.mkdir()
    os.symlink(outside / "__init__.py", pkg / "__init__.py")
    os.symlink(outside, workspace / "linked_pkg")
    (workspace / "helper_link").mkdir()
    (workspace / "helper_link" / "__init__.py").write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text()
    )
    os.symlink(outside / "evil.py", workspace / "helper_link" / "helper.py")
    for kernel, needle in [
        ("./linked_init", "__init__.py' is a symbolic link"),
        ("./linked_pkg", "is a symbolic link"),
        ("./helper_link", "helper.py' is a symbolic link inside the package"),
    ]:
        with pytest.raises(KprofError, match=needle):
            cpu_engine.check_profile(kernel, None, {}, mode="event")
    assert not (outside / "__init__.py.ran").exists() and not (outside / "evil.py.ran").exists()


def test_a_package_swapped_for_a_link_while_queued_is_not_run(cpu_engine, workspace, outside):
    pkg = workspace / "mine.py"
    pkg.write_text((FIXTURES / "user_kernels" / "scale.py").read_text())
    spec = cpu_engine.check_profile("mine.py", None, {"n": 1024}, mode="event")
    pkg.unlink()
    (outside / "mine.py").write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text() + "\nopen(__file__ + '.ran', 'w').write('ran')\n"
    )
    os.symlink(outside / "mine.py", pkg)
    with pytest.raises(KprofError, match="symbolic link"):
        cpu_engine.execute(spec)
    assert not (outside / "mine.py.ran").exists()


# ----------------------------------------------------------------------------- commands


@pytest.mark.parametrize(
    "argv, needle",
    [
        (
            ["python", "-m", "timeit", "-n", "1", "-s", "import os; os.system('id > x.txt')", "pass"],
            "runs only a module under the working directory",
        ),
        (["python", "-m", "cProfile", "OUTSIDE/evil.py"], "runs only a module under the working directory"),
        (
            ["python", "-m", "trace", "--count", "OUTSIDE/evil.py"],
            "runs only a module under the working directory",
        ),
        (["python", "-m", "runpy", "x"], "runs only a module under the working directory"),
        (["python", "-m", "pytest", "OUTSIDE/evil.py"], "outside the workspace"),
        (["python", "-m", "pytest", "--basetemp=OUTSIDE"], "is refused: profile_command runs pytest with"),
        (["python", "-m", "pytest", "--rootdir", "/"], "is refused: profile_command runs pytest with"),
        (["python", "-m", "pytest", "../outside"], "outside the workspace"),
        (["python", "-m", "pytest", "~/x"], "'~' paths"),
        (["python", "-m", "pytest", "-p", "timeit"], "'-p timeit' is refused"),
        (["python", "-m", "pytest", "-ptimeit"], "'-ptimeit' is refused"),
        (["python", "-m", "pytest", "--pyargs", "json"], "'--pyargs' is refused"),
        (["python", "-m", "pytest", "-o", "addopts=-p timeit"], "'-o' is refused"),
        (["python", "OUTSIDE/evil.py"], "outside the workspace"),
        (["python", "-m", "os.path"], "runs only a module"),
        (["python", "-m", "a-b"], "not a dotted module name"),
    ],
)
def test_commands_run_only_workspace_code(cpu_engine, workspace, outside, argv, needle):
    argv = [a.replace("OUTSIDE", str(outside)) for a in argv]
    with pytest.raises(KprofError, match=needle):
        cpu_engine.check_command(argv, mode="event")
    _untouched(outside)


def test_commands_through_links_are_refused_and_workspace_modules_accepted(cpu_engine, workspace, outside):
    os.symlink(outside / "evil.py", workspace / "evil.py")
    os.symlink(outside, workspace / "lib")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    (workspace / "pkg" / "train.py").write_text("print('ok')\n")
    os.symlink(outside / "evil.py", workspace / "pkg" / "linked.py")
    for argv, needle in [
        (["python", "evil.py"], "'evil.py' is a symbolic link"),
        (["python", "lib/evil.py"], "'lib' is a symbolic link"),
        (["python", "-m", "pkg.linked"], "linked.py is a symbolic link"),
        (["python", "-m", "lib.evil"], "'lib' is a symbolic link"),
        (["python", "-m", "pkg.missing"], "is in the working directory but"),
    ]:
        with pytest.raises(KprofError, match=needle):
            cpu_engine.check_command(argv, mode="event")
    assert (
        cpu_engine.check_command(["python", "-m", "pkg.train"], mode="event").req.command[-1] == "pkg.train"
    )
    assert cpu_engine.check_command(
        ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "pkg/train.py"], mode="event"
    )
    with pytest.raises(KprofError, match="'pkg/linked.py' is a link leading out of the workspace"):
        cpu_engine.check_command(["python", "-m", "pytest", "-q", "pkg"], mode="event")  # issue 38
    with pytest.raises(KprofError, match="'lib' is a symbolic link"):
        cpu_engine.check_command(["python", "-m", "pkg.train"], cwd="lib", mode="event")
    _untouched(outside)


def test_a_script_swapped_for_a_link_while_queued_is_not_run(cpu_engine, workspace, outside):
    script = workspace / "step.py"
    script.write_text("import kprof\nwith kprof.range('x'):\n    pass\n")
    spec = cpu_engine.check_command(["python", "step.py"], mode="event")
    script.unlink()
    os.symlink(outside / "evil.py", script)
    with pytest.raises(KprofError, match="'step.py' is a symbolic link"):
        cpu_engine.execute(spec)
    assert not (outside / "evil.py.ran").exists()


# ----------------------------------------------------------------------------- tokens


def test_tokens_empty_blank_short_or_missing_are_clear_errors(tmp_path):
    assert read_token(None, {}) is None
    good = "t" * 32
    (tmp_path / "tok").write_text(good + "\n")
    assert read_token(str(tmp_path / "tok"), {}) == good
    assert read_token(None, {"KPROF_MCP_TOKEN": f"  {good} "}) == good
    (tmp_path / "empty").write_text("\n")
    for args, needle in [
        ((str(tmp_path / "empty"), {}), "is empty"),
        ((None, {"KPROF_MCP_TOKEN": "   "}), "KPROF_MCP_TOKEN is empty"),
        ((None, {"KPROF_MCP_TOKEN": ""}), "KPROF_MCP_TOKEN is empty"),
        ((str(tmp_path / "nope"), {}), "no such file"),
        ((None, {"KPROF_MCP_TOKEN": "short"}), "at least 16 characters"),
    ]:
        with pytest.raises(TokenError, match=needle):
            read_token(*args)


def test_the_cli_runs_any_installed_module_but_still_refuses_links(workspace, outside):
    """`kprof run` is the user running their own command: any python -m, links still refused."""
    e = Engine(Config(workspace=workspace, timeout_s=60, force_cpu=True, warm=False, confine_modules=False))
    assert e.check_command(["python", "-m", "timeit", "pass"], mode="event").req.command[2] == "timeit"
    with pytest.raises(KprofError, match="not found"):
        e.check_command(["python", "-m", "no_such_module_xyz"], mode="event")
    os.symlink(outside / "evil.py", workspace / "evil.py")
    with pytest.raises(KprofError, match="symbolic link"):
        e.check_command(["python", "evil.py"], mode="event")
