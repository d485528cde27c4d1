"""A profiled test suite has one stage per test: ``python -m pytest ...`` (or ``pytest ...``) runs
with ``-p kprof.pytest_plugin``, which wraps each test's call phase in ``kprof.range(<test name>)``
(:mod:`kprof.pytest_plugin`; fixtures' set-up and tear-down are outside it).

A test runs once, so its range has one occurrence: the warm-up rule (``warmup_occurrences``: leave
out a range's first occurrences) is not applied to the tests' ranges, which the plugin lists
(:data:`kprof.pytest_plugin.TESTS`); their time includes first-call set-up and a note says so.
"""

from __future__ import annotations

import sys

PLUGIN = "kprof.pytest_plugin"


def is_pytest(kind: str, target: str) -> bool:
    return kind == "module" and target == "pytest"


def disabled(args: list[str]) -> bool:
    """Whether the arguments turn the plugin off (``-p no:kprof.pytest_plugin``, ``-pno:kprof...``)."""
    for i, a in enumerate(args):
        name = args[i + 1] if a == "-p" and i + 1 < len(args) else a[2:] if a.startswith("-p") else ""
        if name.startswith("no:kprof"):
            return True
    return False


def with_plugin(args: list[str]) -> tuple[list[str], bool]:
    """pytest's arguments with the plugin loaded first, and whether it is on. A second ``-p`` of the
    same plugin (the user's own) is harmless: pytest loads a plugin once."""
    if disabled(args):
        return list(args), False
    return ["-p", PLUGIN, *args], True


def entered_tests() -> list[str]:
    """The tests' range names the plugin entered in this process (empty when it did not run)."""
    plugin = sys.modules.get(PLUGIN)
    return list(getattr(plugin, "TESTS", []) or [])
