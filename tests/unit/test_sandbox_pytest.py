"""Issue 38, the re-run probe's gap 1 (docs/evidence/sandbox/probe-2026-11-26-after.md, row 7): a
profiled pytest autoloaded a plugin that a ``*.dist-info/entry_points.txt`` in the workspace named
(a ``pytest11`` entry point: the working directory is on ``sys.path``), on ``tests/test_t.py::test_a``
and on ``::../../../victim`` ids alike; ``PYTEST_PLUGINS``/``PYTEST_ADDOPTS`` in the server's
environment reached the command's pytest too. Real commands through the real pipeline on the CPU."""

import pytest

from kprof_mcp.capture import pytest_stages
from kprof_mcp.engine import Config, Engine, KprofError

# A module of the workspace that records, when imported, that it was loaded as a plugin.
PLUGIN = "import pathlib\npathlib.Path(__file__).with_name('marks').joinpath({name!r}).write_text('ran')\n"


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "marks").mkdir()
    (root / "tests" / "test_t.py").write_text("def test_a():\n    assert True\n")
    for name in ("entrypoint_plug", "env_plug", "addopts_plug"):
        (root / f"{name}.py").write_text(PLUGIN.format(name=name))
    di = root / "evilep-1.0.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: evilep\nVersion: 1.0\n")
    (di / "entry_points.txt").write_text("[pytest11]\nevilep = entrypoint_plug\n")
    e = Engine(Config(workspace=root, timeout_s=120, force_cpu=True, warm=False))
    yield root, e
    e.close()


@pytest.mark.parametrize("test_id", ["tests/test_t.py::test_a", "tests/test_t.py::test_a::../../../victim"])
def test_no_plugin_is_loaded_by_an_entry_point_or_pytests_variables(ws, monkeypatch, test_id):
    root, engine = ws
    monkeypatch.setenv("PYTEST_PLUGINS", "env_plug")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p addopts_plug")
    if "victim" in test_id:  # pytest finds no such test: status 4, after loading its plugins
        with pytest.raises(KprofError, match="status 4"):
            engine.profile_command(["python", "-m", "pytest", "-q", test_id], mode="event")
    else:
        done = engine.profile_command(["python", "-m", "pytest", "-q", test_id], mode="event")
        assert "1 passed" in done.result.command["output_tail"]
        # kprof's own plugin, loaded by -p, still makes one stage per test
        assert [s.name for s in done.result.stages] == ["test_t.py::test_a"]
    assert sorted(p.name for p in (root / "marks").iterdir()) == []


def test_a_suite_names_an_installed_plugin_in_its_own_conftest(ws):
    """Without autoload, a suite that needs an installed plugin (anyio's) names it in the workspace's
    root conftest.py, which pytest reads (workspace code, confined like the rest)."""
    root, engine = ws
    (root / "conftest.py").write_text('pytest_plugins = ["anyio"]\n')
    (root / "tests" / "test_t.py").write_text(
        "import pytest\n\n@pytest.mark.anyio\nasync def test_a():\n    assert True\n"
    )
    done = engine.profile_command(["python", "-m", "pytest", "-q", "tests/test_t.py"], mode="event")
    assert "1 passed" in done.result.command["output_tail"], done.result.command["output_tail"]


def test_the_confined_environ_drops_pytests_variables():
    env = {"PYTEST_ADDOPTS": "-p x", "PYTEST_PLUGINS": "x", "PYTEST_DEBUG_TEMPROOT": "/", "PATH": "/bin"}
    pytest_stages.confined_environ(env)
    assert env == {"PATH": "/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
