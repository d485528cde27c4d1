"""Issue 38 items 2 and 3: the server's profile_command runs pytest by allow-list, ``python -m X``
as exactly the workspace file that was checked, and never collects or runs code through a link
leading out of the workspace. Each reproduction of the adversarial probe (issue 38) is here: the
argument forms are refused when the request comes (and again right before it runs); the run-time
ones (a parent pytest.ini/conftest.py, a stdlib module's name, a script swapped for a link after
the last check, links inside a collected tree) are run on the CPU and must leave no trace outside.
"""

import os
from pathlib import Path

import pytest

from kprof_mcp.capture import command_target, pytest_stages
from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.protocol import ExpectedError

RANGE = "import kprof\nwith kprof.range('x'):\n    pass\n"
MARK = "import kprof, pathlib\nwith kprof.range('x'):\n    pathlib.Path({path!r}).write_text('ran')\n"


@pytest.fixture
def ws(tmp_path):
    """A workspace inside a parent that holds a hostile pytest.ini and conftest.py, and an
    outside directory with code and a secret."""
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    out = tmp_path / "outside"
    (out / "tests").mkdir(parents=True)
    (out / "secret.txt").write_text("do not touch\n")
    (out / "victim.txt").write_text("keep me\n")
    (out / "evil.py").write_text(f"open({str(out / 'evil.ran')!r}, 'w').write('ran')\n")
    (out / "tests" / "test_out.py").write_text(
        f"def test_out():\n    open({str(out / 'test_out.ran')!r}, 'w').write('ran')\n"
    )
    (out / "tests" / "conftest.py").write_text(f"open({str(out / 'conftest.ran')!r}, 'w').write('ran')\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p evil_parent_plugin\n")
    (tmp_path / "conftest.py").write_text(f"open({str(out / 'parent_conftest.ran')!r}, 'w').write('ran')\n")
    return root, out


@pytest.fixture
def engine(ws):
    e = Engine(Config(workspace=ws[0], timeout_s=120, force_cpu=True, warm=False))
    yield e
    e.close()


def _untouched(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == ["evil.py", "secret.txt", "tests", "victim.txt"]
    assert sorted(p.name for p in (out / "tests").iterdir()) == ["conftest.py", "test_out.py"]
    assert (out / "victim.txt").read_text() == "keep me\n"


# ----------------------------------------------------------------------------- the allow-list


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "log_file=OUT/victim.txt", "tests/test_a.py"],
        ["-o", "cache_dir=OUT/cache"],
        ["--rootdir=HOME"],
        ["--rootdir", "HOME"],
        ["-o", "pythonpath=OUT", "-W", "ignore::evil.X"],
        ["-Wignore::evil.X"],
        ["-cOUT/x.ini"],
        ["-c", "OUT/x.ini"],
        ["-o", "testpaths=OUT/tests"],
        ["-o=addopts=-pevil"],
        ["-qoaddopts=-pevil"],
        ["-xo", "addopts=-pevil"],
        ["@OUT/secret.txt"],
        ["-k", "@OUT/secret.txt"],
        ["--doctest-glob=*.md", "docs/kernels/x.md"],
        ["--doctest-modules"],
        ["--override-ini=addopts=-pevil"],
        ["--basetemp=OUT"],
        ["--confcutdir=OUT"],
        ["-p", "evil"],
        ["-pevil"],
        ["-p", "no:kprof.pytest_plugin", "-p", "evil"],
        ["--pyargs", "json"],
        ["--import-mode=importlib"],
        ["--", "-oaddopts=-pevil"],
        ["--maxfail=x"],
        ["--tb=evil"],
        ["-rZ"],
        ["--durations-min=1"],
        ["-k"],
        ["-k", "-pevil"],
        ["tests/test_a.py::x\n>>> import os"],
    ],
)
def test_pytest_options_outside_the_allow_list_are_refused(engine, ws, args):
    root, out = ws
    args = [a.replace("OUT", str(out)).replace("HOME", str(Path.home())) for a in args]
    with pytest.raises(KprofError, match="is refused.*: profile_command runs pytest with these only"):
        engine.check_command(["python", "-m", "pytest", *args], mode="event")
    _untouched(out)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["tests/test_a.py"],
        ["tests/test_a.py::test_a", "tests"],
        ["-q", "-v", "-qq", "-vv", "-x", "-s", "-xvs", "--quiet", "--verbose", "--exitfirst"],
        ["-k", "a and not b", "-kfoo", "-m", "slow", "-mfast or gpu"],
        ["--maxfail=2", "--maxfail", "3", "--tb=short", "--tb", "no", "-rA", "-r", "fE"],
        ["--durations=5", "--durations", "0"],
        ["-p", "kprof.pytest_plugin", "-pno:kprof.pytest_plugin", "-p", "no:cacheprovider"],
        [str(Path("tests").absolute())],  # made absolute under the workspace below
    ],
)
def test_the_allowed_pytest_options_pass(engine, ws, args):
    root, _ = ws
    args = [str(root / "tests") if os.path.isabs(a) else a for a in args]
    assert engine.check_command(["python", "-m", "pytest", *args], mode="event").req.command_root == str(root)


def test_test_paths_are_py_files_or_directories_under_the_workspace(engine, ws):
    root, out = ws
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text(">>> 1\n")
    (root / "notes.txt").write_text(">>> 1\n")
    for path, needle in [
        ("docs/notes.md", "give a test file"),
        ("notes.txt", "give a test file"),  # pytest runs a .txt or .rst it is given as a doctest
        (str(out / "tests"), "outside the workspace"),
        ("../outside/tests", "outside the workspace"),
        ("~/tests", "'~' paths"),
    ]:
        with pytest.raises(KprofError, match=needle):
            engine.check_command(["python", "-m", "pytest", path], mode="event")


def test_the_cli_keeps_any_pytest_option(ws):
    """`kprof run` is the user's own command: its pytest options are its own (not confined)."""
    e = Engine(Config(workspace=ws[0], timeout_s=60, force_cpu=True, warm=False, confine_modules=False))
    spec = e.check_command(["python", "-m", "pytest", "-o", "addopts=", "-W", "error", "tests"], mode="event")
    assert spec.req.command_root is None
    assert "command_root" not in spec.req.model_dump()  # a kernel's and `kprof run`'s request keep their keys


def test_the_devlog_doctest_chain_is_closed(engine, ws):
    """update_devlog writes what the caller gives (``>>> ...`` lines); pytest could then run them
    as a doctest of the devlog: no option or test path that does that is accepted."""
    root, out = ws
    (root / "step.py").write_text(RANGE)
    done = engine.profile_command(["python", "step.py"], mode="event")
    evil = f">>> open({str(out / 'doctest.ran')!r}, 'w').write('ran')"
    path, _ = engine.update_devlog("step", str(done.result.profile_dir), [], ["note\n" + evil])
    assert any(ln.strip().startswith(">>> open(") for ln in path.read_text().splitlines())
    rel = str(path.relative_to(root))
    for args in (["--doctest-glob=*.md", rel], ["--doctest-glob", "*.md", rel], [rel]):
        with pytest.raises(KprofError, match="refused|give a test file"):
            engine.check_command(["python", "-m", "pytest", *args], mode="event")
    with pytest.raises(KprofError, match="status 5"):  # its directory: no test in it, no doctest run
        engine.profile_command(["python", "-m", "pytest", "-q", "docs"], mode="event")
    assert not (out / "doctest.ran").exists()
    _untouched(out)


# ----------------------------------------------------------------------------- what kprof adds


def test_kprof_adds_the_workspace_as_rootdir_confcutdir_and_its_own_ini(ws, tmp_path):
    root, _ = ws
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    args = pytest_stages.confined(["-q", "tests/test_a.py"], root, root, run_dir)
    assert args[:6] == [
        "-p",
        "no:cacheprovider",
        f"--rootdir={root}",
        f"--confcutdir={root}",
        "-c",
        str(run_dir / "pytest.ini"),
    ]
    assert (run_dir / "pytest.ini").read_text() == "[pytest]\n"  # never the parent's pytest.ini
    assert args[6:] == ["-q", "tests/test_a.py"]
    (root / "tox.ini").write_text("[tox]\n")  # no [pytest] section: not pytest's
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-q'\n")
    assert pytest_stages.confined([], root, root / "tests", run_dir)[5] == str(root / "pyproject.toml")
    (root / "pytest.ini").symlink_to(tmp_path / "pytest.ini")
    with pytest.raises(Exception, match="symbolic link"):
        pytest_stages.confined([], root, root, run_dir)


def test_a_parent_pytest_ini_and_conftest_are_not_picked_up(engine, ws):
    root, out = ws
    done = engine.profile_command(["python", "-m", "pytest", "-q", "tests/test_a.py"], mode="event")
    assert "1 passed" in done.result.command["output_tail"]
    assert not (out / "parent_conftest.ran").exists()
    _untouched(out)


# ----------------------------------------------------------------------------- python -m X


def test_python_m_runs_the_workspace_file_not_a_stdlib_module_of_that_name(engine, ws):
    """runpy.run_module('timeit') runs the standard library's timeit, already imported in the
    child; the checked file is the workspace's timeit.py, and that is what runs."""
    root, out = ws
    (root / "marks").mkdir()  # the cwd's root takes no new file (issue 38: out/ is not the command's)
    (root / "timeit.py").write_text(MARK.format(path=str(root / "marks" / "timeit.ran")))
    (root / "json").mkdir()
    (root / "json" / "tool.py").write_text(MARK.format(path=str(root / "marks" / "tool.ran")))
    engine.profile_command(["python", "-m", "timeit"], mode="event")
    assert (root / "marks" / "timeit.ran").read_text() == "ran"
    engine.profile_command(["python", "-m", "json.tool"], mode="event")
    assert (root / "marks" / "tool.ran").read_text() == "ran"
    with pytest.raises(KprofError, match="runs only a module under the working directory"):
        engine.check_command(["python", "-m", "profile"], mode="event")
    _untouched(out)


@pytest.mark.parametrize("argv", [["python", "step.py"], ["python", "-m", "step"]])
def test_a_script_swapped_for_a_link_after_the_last_check_is_not_run(engine, ws, monkeypatch, argv):
    """The swap lands after the engine's re-check right before the run (the probe's race): the
    child reads the file once, without following a link, and refuses."""
    from kprof_mcp.engine import run as engine_run

    root, out = ws
    script = root / "step.py"
    script.write_text(RANGE)
    spec = engine.check_command(argv, mode="event")
    checked = engine_run.guard

    def guard_then_swap(e, s):
        checked(e, s)
        script.unlink()
        os.symlink(out / "evil.py", script)

    monkeypatch.setattr(engine_run, "guard", guard_then_swap)
    with pytest.raises(KprofError, match="symbolic link"):
        engine.execute(spec)
    assert not (out / "evil.ran").exists()


def test_the_child_refuses_what_is_not_a_workspace_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    os.symlink(tmp_path / "elsewhere.py", tmp_path / "pkg" / "linked.py")
    with pytest.raises(ExpectedError, match="symbolic link"):
        command_target.prepare("module", "pkg.linked", [], tmp_path, tmp_path, tmp_path)
    with pytest.raises(ExpectedError, match="not a file under the working directory"):
        command_target.prepare("module", "timeit", [], tmp_path, tmp_path, tmp_path)
    with pytest.raises(ExpectedError, match="is refused"):  # the allow-list, again in the child
        command_target.prepare("module", "pytest", ["-o", "addopts=-px"], tmp_path, tmp_path, tmp_path)
    argv, first, _ = command_target.prepare("module", "timeit", [], tmp_path, None, tmp_path)
    assert argv == ["timeit"] and first == str(tmp_path)  # `kprof run`: by name


# ----------------------------------------------------------------------------- links in a collected tree


def test_collection_does_not_follow_links_out_of_the_workspace(engine, ws):
    root, out = ws
    os.symlink(out / "tests", root / "tests" / "linked")
    (root / "sub").mkdir()
    os.symlink(out / "tests" / "conftest.py", root / "sub" / "conftest.py")
    for args, needle in [
        (["tests"], "'tests/linked' is a link leading out"),
        (["tests/linked/test_out.py"], "symbolic link"),
        (["sub"], "'sub/conftest.py' is a link leading out"),
    ]:
        with pytest.raises(KprofError, match=needle):
            engine.check_command(["python", "-m", "pytest", *args], mode="event")
    # Collecting the working directory (no test path): the links are left out by the guard.
    done = engine.profile_command(["python", "-m", "pytest", "-q"], mode="event")
    assert "1 passed" in done.result.command["output_tail"]
    assert not (out / "test_out.ran").exists() and not (out / "conftest.ran").exists()
    _untouched(out)
