"""The README's, the skill's and docs/'s shell examples are tests.

Every command line in a ```bash / ```sh / ```shell / ```console block of README.md,
skills/*/SKILL.md and docs/*.md (``\\`` continuations joined, a ``$ `` prompt dropped) is one example. Each is
either run here, verbatim, with ``bash -c`` in a fresh temporary workspace (the test's own
virtual environment linked in as ``.venv``), or accounted for:

* the README's two set-up commands are run by ``.ci/run`` (verbatim, checked here and in
  tests/unit/test_cli.py); running them inside pytest would recurse;
* a comment line right above the command says why it is not run here:
  ``# needs an NVIDIA GPU ...`` (or Nsight) or ``# not run: <reason>`` (placeholder paths,
  an interactive UI). That set is kept small: see ``MAX_NOT_RUN``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The README, the skill and every page of docs/ (the mode detail, the tools and the rest moved there).
SOURCES = [
    ROOT / "README.md",
    *sorted((ROOT / "skills").glob("*/SKILL.md")),
    *sorted((ROOT / "docs").glob("*.md")),
]
FENCE = re.compile(r"^```(bash|sh|shell|console)[ \t]*\n(.*?)^```", re.M | re.S)
GPU_MARKER = re.compile(r"^#\s*needs an NVIDIA GPU\b", re.I)
NOT_RUN_MARKER = re.compile(r"^#\s*not run:\s*(\S.*)$", re.I)
MAX_NOT_RUN = 3  # examples that cannot run as written: keep them few
CALL_TIMEOUT_S = 300  # the first npx call may download the Inspector
# npm's words for "the registry cannot be reached"
NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network request"
)


@dataclass(frozen=True)
class Example:
    source: str  # e.g. README.md:145
    command: str
    marker: str | None  # the comment above it, when it says why it is not run

    def __str__(self) -> str:
        return f"{self.source}: {self.command}"


def _examples() -> list[Example]:
    out: list[Example] = []
    for path in SOURCES:
        text = path.read_text()
        for m in FENCE.finditer(text):
            first_line = text.count("\n", 0, m.start(2)) + 1
            marker: str | None = None
            pending: list[str] = []
            start = 0
            for i, raw in enumerate(m.group(2).splitlines()):
                line = raw.strip()
                if m.group(1) == "console":
                    if not line.startswith("$ ") and not pending:
                        continue  # output shown in the block, not a command
                    line = line.removeprefix("$ ")
                if not pending:
                    if not line:
                        continue
                    if line.startswith("#"):
                        marker = line
                        continue
                    start = i
                if line.endswith("\\"):
                    pending.append(line[:-1].strip())
                    continue
                command = " ".join([*pending, line])
                pending = []
                name = f"{path.relative_to(ROOT)}:{first_line + start}"
                out.append(Example(name, command, marker))
                marker = None
    return out


EXAMPLES = _examples()
CI_LINES = {ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()}


def _run_by_ci(e: Example) -> bool:
    return e.command.startswith("bash scripts/setup.sh && ") and e.command in CI_LINES


def _why_not_run(e: Example) -> str | None:
    if _run_by_ci(e):
        return "run by .ci/run"
    if e.marker and (GPU_MARKER.match(e.marker) or NOT_RUN_MARKER.match(e.marker)):
        return e.marker.lstrip("# ")
    return None


RUNNABLE = [e for e in EXAMPLES if _why_not_run(e) is None]


def test_examples_are_found():
    assert len(EXAMPLES) >= 5, [str(e) for e in EXAMPLES]
    assert sum(_run_by_ci(e) for e in EXAMPLES) == 2, "the README's two set-up commands"
    assert RUNNABLE, "no README example runs here"


def test_every_example_not_run_here_says_why():
    """An example is run here, run by .ci/run, or marked right above it with the reason."""
    for e in EXAMPLES:
        if e.marker is not None:
            assert GPU_MARKER.match(e.marker) or NOT_RUN_MARKER.match(e.marker), (
                f"{e}: comment {e.marker!r} is neither '# needs an NVIDIA GPU' nor '# not run: <reason>'"
            )
    not_run = [e for e in EXAMPLES if e.marker and NOT_RUN_MARKER.match(e.marker)]
    assert len(not_run) <= MAX_NOT_RUN, f"too many examples that cannot run as written: {not_run}"
    for e in EXAMPLES:
        if "/path/to/" in e.command or re.search(r"<[a-z_ ]+>", e.command):
            assert _why_not_run(e), f"{e}: a placeholder, but not marked '# not run: placeholder paths'"


def test_the_inspector_example_is_pinned_to_the_tested_release():
    tested = re.search(
        r'^INSPECTOR_VERSION = "(.+?)"', (ROOT / "tests/e2e/test_inspector_cli.py").read_text(), re.M
    )
    assert tested, "tests/e2e/test_inspector_cli.py no longer pins INSPECTOR_VERSION"
    npx = [e for e in EXAMPLES if e.command.startswith("npx ")]
    assert npx, "the README shows no Inspector example"
    for e in npx:
        assert e.command.startswith(f"npx -y @modelcontextprotocol/inspector@{tested.group(1)} "), (
            f"{e}: pin the Inspector to the tested release and pass -y (npx cannot ask on CI)"
        )


def _check_output(e: Example, proc: subprocess.CompletedProcess, workspace: Path) -> None:
    if "--tool-name profile_kernel" in e.command:
        result = json.loads(proc.stdout)
        assert not result.get("isError"), proc.stdout[-2000:]
        data = result["structuredContent"]
        assert data["status"] == "done", data
        assert result["content"][0]["text"].startswith("## Profile:"), result["content"][0]["text"][:500]
        profile_dir = Path(data["profile_dir"])
        assert profile_dir.resolve().is_relative_to(workspace.resolve()), profile_dir
        assert (profile_dir / "result.json").is_file()
    else:
        assert proc.stdout.strip(), f"{e}: printed nothing\nstderr:\n{proc.stderr[-2000:]}"


def _bash(example: Example, workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The example's command, verbatim, through bash in ``workspace``; a time-out fails the test."""
    try:
        return subprocess.run(
            ["bash", "-c", example.command],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{example}: timed out after {CALL_TIMEOUT_S}s\nstdout:\n{exc.stdout}\nstderr:\n{exc.stderr}"
        )


@pytest.mark.parametrize(
    "example",
    [pytest.param(e, marks=[pytest.mark.inspector] if "inspector" in e.command else []) for e in RUNNABLE],
    ids=[e.source for e in RUNNABLE],
)
def test_example_runs_verbatim(example: Example, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".venv").symlink_to(Path(sys.prefix))  # the README's .venv: this test's own
    if example.command.startswith("npx "):
        if shutil.which("npx") is None:
            reason = f"npx is not on PATH (Node.js/npm not installed): cannot run {example}"
            if os.environ.get("CI", "").strip().lower() == "true":
                pytest.fail(f"CI=true and {reason}", pytrace=False)
            pytest.skip(reason)
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("npm_config_yes", None)  # the example itself must not need it
    proc = _bash(example, workspace, env)
    if proc.returncode != 0 and example.command.startswith("npx ") and NETWORK_ERRORS.search(proc.stderr):
        pytest.skip(
            f"the npm registry cannot be reached, so npx cannot fetch the Inspector: {proc.stderr[-500:]}"
        )
    assert proc.returncode == 0, (
        f"{example}: exit {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )
    _check_output(example, proc, workspace)


# ----------------------------------------------------------------------------- inline commands
# `kprof ...` in running text. A span is a complete command, run here verbatim (the venv's bin on
# PATH, the repository's examples/ copied into the workspace), unless it is a template (an
# upper-case placeholder such as KERNEL, DIR or NAME, `[...]`, `<...>` or `...`) or names a
# subcommand in prose (`kprof run`, `kprof init`, a bare option), or needs a GPU (`kprof device --calibrate`).
INLINE = re.compile(r"`(kprof(?: [^`\n]*)?)`")
TEMPLATE = re.compile(r"\b[A-Z]{3,}\b|\[|<|\.\.\.|…")


def _inline() -> list[Example]:
    out = []
    for path in SOURCES:
        text = path.read_text()
        for m in INLINE.finditer(text):
            out.append(Example(f"{path.name}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1), None))
    return out


NEEDS_GPU_INLINE = re.compile(r"^kprof device --calibrate\b")  # measures the GPU: an error without one


def _is_reference(cmd: str) -> bool:
    if NEEDS_GPU_INLINE.match(cmd):
        return True  # needs an NVIDIA GPU, like a fenced example marked so
    words = cmd.split()
    return len(words) <= 2 and (
        len(words) == 1 or words[1].startswith("-") or words[1] in ("run", "init", "worker", "noise")
    )


INLINE_RUN = sorted(
    {
        e.command: e for e in _inline() if not TEMPLATE.search(e.command) and not _is_reference(e.command)
    }.values(),
    key=lambda e: e.command,
)


def test_inline_commands_are_found_and_each_is_run_or_a_template():
    spans = _inline()
    assert len(spans) >= 10
    for e in spans:
        assert (
            e.command in {r.command for r in INLINE_RUN}
            or TEMPLATE.search(e.command)
            or _is_reference(e.command)
        ), e
    assert {"kprof list", "kprof device", "kprof classify --tc 5 --dram 85"} <= {
        e.command for e in INLINE_RUN
    }


@pytest.mark.parametrize("example", INLINE_RUN, ids=[e.command for e in INLINE_RUN])
def test_inline_command_runs_verbatim(example: Example, tmp_path: Path):
    workspace = tmp_path / "ws"
    shutil.copytree(ROOT / "examples", workspace / "examples")
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "KPROF_FORCE_CPU": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = _bash(example, workspace, env)
    assert proc.returncode == 0, (
        f"{example}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    )
    assert (proc.stdout + proc.stderr).strip(), f"{example}: printed nothing"
