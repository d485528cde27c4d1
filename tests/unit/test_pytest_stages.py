"""A profiled test suite has one stage per test (issue 29): kprof.pytest_plugin alone, and
``python -m pytest`` / ``pytest`` commands through the real pipeline on the CPU (Kineto)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof.pytest_plugin import range_names
from kprof_mcp.capture.pytest_stages import with_plugin
from kprof_mcp.engine import Config, Engine, KprofError

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import pytest
import torch


@pytest.fixture
def big():
    return torch.randn(512, 512)  # set-up: not part of the test's stage


def test_small():
    torch.randn(32, 32) @ torch.randn(32, 32)


def test_large(big):
    for _ in range(20):
        big @ big


@pytest.mark.parametrize("n", [16, 64])
def test_param(n):
    torch.randn(n, n) @ torch.randn(n, n)
'''

NAMES = [
    "test_suite.py::test_small",
    "test_suite.py::test_large",
    "test_suite.py::test_param[16]",
    "test_suite.py::test_param[64]",
]

# ----------------------------------------------------------------------------- the plugin alone

RECORDER = '''
import os

import kprof
import pytest


class Recorder:  # stands in for kprof.range: writes what it is told
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        _log("enter " + self.name)

    def __exit__(self, *exc):
        _log("exit " + self.name)


def _log(line):
    with open(os.environ["KPROF_TEST_LOG"], "a") as f:
        f.write(line + "\\n")


kprof.range = Recorder


@pytest.fixture
def fx():
    _log("setup")
    yield
    _log("teardown")
'''


def test_the_plugin_wraps_each_tests_call_in_a_range_named_after_it(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    (tmp_path / "conftest.py").write_text(RECORDER)
    (tmp_path / "a" / "test_x.py").write_text(
        "import pytest\n\ndef test_one(fx):\n    pass\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_two(n):\n    assert n < 2\n\n"
        "class TestC:\n    def test_m(self):\n        pass\n"
    )
    (tmp_path / "b" / "test_x.py").write_text("def test_one():\n    pass\n")
    log = tmp_path / "log.txt"
    env = {**os.environ, "KPROF_TEST_LOG": str(log), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "kprof.pytest_plugin", "-p", "no:cacheprovider"]
        + ["--import-mode=importlib"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "1 failed, 4 passed" in out.stdout, out.stdout[-2000:]
    assert log.read_text().splitlines() == [
        "setup",  # a fixture's set-up and tear-down are outside the test's range
        "enter a/test_x.py::test_one",  # test_x.py::test_one is b's too: both keep their node ids
        "exit a/test_x.py::test_one",
        "teardown",
        "enter test_x.py::test_two[1]",  # each parametrization its own range
        "exit test_x.py::test_two[1]",
        "enter test_x.py::test_two[2]",  # a failing test's range is closed too
        "exit test_x.py::test_two[2]",
        "enter test_x.py::TestC::test_m",
        "exit test_x.py::TestC::test_m",
        "enter b/test_x.py::test_one",
        "exit b/test_x.py::test_one",
    ]


def test_range_names_drop_directories_unless_two_tests_would_share_one():
    assert range_names(["t/u/test_a.py::test_x[1]", "t/test_b.py::C::test_y", "test_c.py::test_z"]) == {
        "t/u/test_a.py::test_x[1]": "test_a.py::test_x[1]",
        "t/test_b.py::C::test_y": "test_b.py::C::test_y",
        "test_c.py::test_z": "test_c.py::test_z",
    }
    assert set(range_names(["a/test_x.py::t", "b/test_x.py::t"]).values()) == {
        "a/test_x.py::t",
        "b/test_x.py::t",
    }


def test_the_plugin_is_added_unless_the_command_turns_it_off():
    assert with_plugin(["-q", "tests"]) == (["-p", "kprof.pytest_plugin", "-q", "tests"], True)
    for off in (["-p", "no:kprof.pytest_plugin"], ["-pno:kprof.pytest_plugin"]):
        assert with_plugin(["-q", *off]) == (["-q", *off], False)


# ----------------------------------------------------------------------------- through the engine


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    cfg = Config.from_options(str(tmp_path), force_cpu=True)
    cfg.warm = False
    return tmp_path, Engine(cfg)


@pytest.mark.parametrize("mode", ["event", "nsys"])
def test_a_test_suite_is_profiled_one_stage_per_test(suite, mode):
    root, engine = suite
    out = engine.profile_command(
        ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_suite.py"], mode=mode
    )
    r = out.result
    assert [s.name for s in r.stages] == NAMES
    # Each test ran once and that occurrence is its sample: none is left out as warm-up.
    assert all(s.timing.runs == 1 and s.timing.median_ns > 0 for s in r.stages)
    by = {s.name: s.timing.median_ns for s in r.stages}
    assert by["test_suite.py::test_large"] > by["test_suite.py::test_small"]  # each its own time
    assert r.command["stages_are_tests"] is True and r.command["tests"] == 4
    assert r.command["argv"][:3] == ["python", "-m", "pytest"] and "kprof" not in " ".join(r.command["argv"])
    msgs = " ".join(w.message for w in r.warnings)
    assert "4 stage(s) are tests" in msgs and "left out as warm-up (JIT" not in msgs
    assert "include warm-up" not in msgs
    assert "4 passed" in r.command["output_tail"]


def test_include_patterns_pick_tests_by_name(suite):
    root, engine = suite
    argv = ["pytest", "-q", "-p", "no:cacheprovider", "test_suite.py"]  # the pytest script, too
    out = engine.profile_command(argv, mode="event", include=["*test_param*"])
    assert [s.name for s in out.result.stages] == NAMES[2:]
    # A whole name matches as it is, though fnmatch would read [16] as a set of characters.
    out = engine.profile_command(argv, mode="event", include=["test_suite.py::test_param[16]"])
    assert [s.name for s in out.result.stages] == ["test_suite.py::test_param[16]"]


def test_without_the_plugin_a_suite_has_no_test_stages(suite):
    root, engine = suite
    with pytest.raises(KprofError, match="entered no range"):
        engine.profile_command(
            ["python", "-m", "pytest", "-q", "-p", "no:kprof.pytest_plugin", "test_suite.py"], mode="event"
        )


def test_confinement_accepts_kprofs_own_plugin_and_the_pytest_script(suite, tmp_path_factory):
    root, engine = suite
    assert engine.check_command(["python", "-m", "pytest", "-p", "kprof.pytest_plugin"], mode="event")
    assert engine.check_command(["pytest", "-pkprof.pytest_plugin", "test_suite.py"], mode="event")
    outside = tmp_path_factory.mktemp("outside")
    for argv, needle in [
        (["pytest", "-p", "timeit"], "'-p timeit' is refused"),
        (["pytest", str(outside / "evil.py")], "outside the workspace"),
    ]:
        with pytest.raises(KprofError, match=needle):
            engine.check_command(argv, mode="event")
