"""A pytest plugin: each test's call phase runs inside ``kprof.range(<test name>)``, so a profiled
test suite has one stage per test, with no change to the tests.

    python -m pytest -p kprof.pytest_plugin tests/

kprof-mcp adds ``-p kprof.pytest_plugin`` by itself when the profiled command is
``python -m pytest ...`` or ``pytest ...`` (not when ``-p no:kprof.pytest_plugin`` is given).

* **What a stage covers**: the test function's call (``pytest_runtest_call``). Fixtures' set-up and
  tear-down are outside it, so a model built or data loaded by a fixture is not part of the test's
  time; work done in the test body is.
* **Names**: the test's node id without its directories, ``test_mm.py::test_small`` or
  ``test_mm.py::TestMM::test_large[float16]`` (each parametrization is its own test, so its own
  stage); where two tests would get the same name (``a/test_x.py`` and ``b/test_x.py``), both keep
  their full node ids.
* **Run once**: a test runs once, so its range has one occurrence; kprof-mcp does not leave it out as
  warm-up (it would leave nothing) and says that its time includes first-call set-up (Triton JIT,
  cuBLAS handles). :data:`TESTS` lists the names this plugin entered, in run order: kprof-mcp reads it
  to tell the tests' ranges from the tests' own ``kprof.range`` ranges.

A test that opens ranges of its own (``kprof.range("forward")``) contains them: kprof-mcp then keeps
the inner ranges as its stages (the innermost selected ranges win) unless ``include`` names the tests.

Imports nothing but ``kprof`` (light) and pytest, which is already running.
"""

from __future__ import annotations

from typing import Any

import pytest

import kprof

# The range names this plugin entered in this process, in the order the tests ran.
TESTS: list[str] = []
_NAMES: dict[str, str] = {}  # node id -> range name, fixed once the session's tests are collected


def range_names(nodeids: list[str]) -> dict[str, str]:
    """Each node id → its range name: without the test file's directories, unless two node ids
    would then share a name (both keep their full ids)."""
    short = {n: _short(n) for n in nodeids}
    count: dict[str, int] = {}
    for s in short.values():
        count[s] = count.get(s, 0) + 1
    return {n: (s if count[s] == 1 else n) for n, s in short.items()}


def _short(nodeid: str) -> str:
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def pytest_collection_finish(session: Any) -> None:
    _NAMES.update(range_names([item.nodeid for item in session.items]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any):
    name = _NAMES.get(item.nodeid) or _short(item.nodeid)
    TESTS.append(name)
    with kprof.range(name):
        yield
