"""Running the user's own Python command (``profile_command``) inside a mode's recording: what a
mode's ``capture_command`` receives (:class:`CommandCapture`) and the helpers the modes share.
The child's entry point is :mod:`kprof_mcp.child.command`.

The command is an argument vector: ``python script.py ARGS`` or ``python -m module ARGS``
(``python -m pytest tests/test_x.py::test_y`` included). It runs through :mod:`runpy` as
``__main__``, so what it does is exactly what ``python ...`` would do, with the mode's recorder
around it: torch.profiler for ``event`` (and ``nsys`` without Nsight Systems), or nothing extra
when Nsight Systems / Nsight Compute wrap this process. The mode then finds the stages
(:mod:`kprof_mcp.analysis.command`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..models import DeviceState, ProfileRequest, ProfileResult, StageResult, Timing
from ..protocol import ExpectedError
from ..safefs import clip
from .context import Steps

PYTHONS = ("python", "python3")


def parse_argv(argv: list[str]) -> tuple[str, str, list[str]]:
    """``["python", "script.py", ...]`` → ("path", "script.py", rest); ``["python", "-m", "mod",
    ...]`` → ("module", "mod", rest). Anything else raises ``ValueError`` saying what is accepted."""
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError(
            "command must be a non-empty list of strings, e.g. [\"python\", \"train.py\", \"--steps\", \"5\"]"
        )
    head = os.path.basename(argv[0])
    if head == "pytest":  # the pytest script is python -m pytest
        return "module", "pytest", argv[1:]
    if head not in PYTHONS and not head.startswith("python3."):
        raise ValueError(
            f"command must start with python (got {clip(argv[0])}): kprof runs Python commands, e.g. "
            "[\"python\", \"train.py\"] or [\"python\", \"-m\", \"pytest\", \"tests/test_x.py::test_y\"]"
        )
    rest = argv[1:]
    if not rest:
        raise ValueError(
            "command names no script or module: [\"python\", \"script.py\", ...] or "
            "[\"python\", \"-m\", \"module\", ...]"
        )
    if rest[0] == "-m":
        if len(rest) < 2 or not rest[1] or rest[1].startswith("-"):
            raise ValueError("python -m needs a module name")
        return "module", rest[1], rest[2:]
    if rest[0].startswith("-"):
        raise ValueError(f"python option {clip(rest[0])} is not supported: give a script path or -m module")
    return "path", rest[0], rest[1:]


def label_of(argv: list[str]) -> str:
    kind, target, _ = parse_argv(argv)
    name = Path(target).stem if kind == "path" else target.split(".")[-1]
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "command"


TAIL_LINES = 20


class _Tee:
    """``sys.stdout``/``sys.stderr`` while the command runs: everything written goes through, and
    the last characters of both are kept (one buffer, in the order written) for the errors."""

    def __init__(self, stream: Any, kept: list[str]):
        self._stream, self._kept = stream, kept

    def write(self, text: str) -> int:
        self._kept.append(text)
        if len(self._kept) > 4000:  # the buffer holds the tail only
            del self._kept[:2000]
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def tail_of(text: str, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` non-empty lines of ``text`` (each clipped), or ''."""
    kept = [ln[:300] for ln in text.splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)


def pytest_summary(tail: str) -> str | None:
    """pytest's last summary line in an output tail (``3 skipped in 0.01s``), or None."""
    import re

    for line in reversed(tail.splitlines()):
        text = line.strip().strip("=").strip()  # "=== 3 failed in 0.1s ===", or bare under -q
        if re.fullmatch(
            r"(?:\d+ (?:passed|failed|skipped|errors?|deselected|xfailed|xpassed|warnings?)(?:, )?)+ in [\d.]+s.*"
            r"|no tests ran in [\d.]+s.*",
            text,
        ):
            return text
    return None


def output_evidence(work_dir: Path | None, tail: str) -> str:
    """`` Its output ends:`` and the tail, for an error; the tail also kept in the (partial)
    profile directory as command_output.txt."""
    if not tail:
        return " It printed nothing."
    where = ""
    if work_dir is not None:
        try:
            (work_dir / "command_output.txt").write_text(tail + "\n")
            where = f" (kept in {work_dir / 'command_output.txt'})"
        except OSError:
            pass
    return f" Its output ends{where}:\n{tail}"


@dataclass(kw_only=True)
class CommandCapture(Steps):
    """What a mode's ``capture_command`` receives."""

    torch: Any
    req: ProfileRequest
    use_cuda: bool
    device: DeviceState
    work_dir: Path
    final_dir: Path
    created_at: str
    peaks: dict[str, Any]
    ran: dict[str, Any] = field(default_factory=dict)
    output_tail: str = ""  # the last lines the command printed (stdout and stderr)
    classify: Any = None  # exception -> (kind, message) for CUDA/OOM failures, re-raised as they are
    tests: list[str] | None = None  # pytest with kprof.pytest_plugin: the tests' range names, in run order

    def run(self) -> None:
        """Run the user's command once, as ``python ...`` would, in its working directory."""
        from .command_target import prepare, refused, user_traceback
        from .pytest_stages import entered_tests, is_pytest, with_plugin

        kind, target, rest = parse_argv(self.req.command or [])
        plugin = False
        if is_pytest(kind, target):  # one stage per test (kprof.pytest_plugin)
            rest, plugin = with_plugin(rest)
        cwd = self.req.command_cwd or os.getcwd()
        os.chdir(cwd)
        root = Path(self.req.command_root) if self.req.command_root else None
        if root is not None and os.getcwd() != os.path.normpath(cwd):  # checked: no link on its way
            raise refused(f"the working directory {clip(cwd)} is not the one checked (a link now?)")
        argv, first, go = prepare(kind, target, rest, Path(cwd), root, self.work_dir)  # the file, read
        self.progress(0.2, f"running {' '.join(self.req.command or [])}")
        t0 = time.perf_counter()
        saved_argv, saved_path = list(sys.argv), list(sys.path)
        saved_out, saved_err, kept = sys.stdout, sys.stderr, []
        sys.stdout, sys.stderr = _Tee(saved_out, kept), _Tee(saved_err, kept)
        code: Any = 0
        try:
            sys.argv = argv
            sys.path.insert(0, first)
            code = go()
        except SystemExit as e:
            code = e.code
        except BaseException as e:  # noqa: BLE001 — the command's own failure, reported with its traceback
            known = self.classify(e) if self.classify else None
            if known is not None:
                raise
            tb = user_traceback(e)  # from the user's first frame: kprof's and runpy's trimmed
            raise ExpectedError(
                "command_failed",
                f"the command raised {type(e).__name__}: {str(e).rstrip('.')}. Its traceback ends:\n{tb[-1500:]}",
            ) from None
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
            sys.stdout, sys.stderr = saved_out, saved_err
            self.output_tail = tail_of("".join(kept))
            if plugin:
                self.tests = entered_tests()
            if self.use_cuda:
                self.torch.cuda.synchronize()
        self.ran = {
            "exit_code": 0 if code in (0, None) else code,
            "wall_s": round(time.perf_counter() - t0, 3),
        }
        if code not in (0, None):
            hint = (
                " (pytest: 5 means no test was collected — check the test id)"
                if target == "pytest" and code == 5
                else ""
            )
            summary = pytest_summary(self.output_tail) if target == "pytest" else None
            raise ExpectedError(
                "command_failed",
                f"the command exited with status {code}{hint}"
                + (f" (pytest: {summary})" if summary else "")
                + "; nothing was profiled."
                + output_evidence(self.work_dir, self.output_tail),
            )
        self.phase("command")

    # ------------------------------------------------------------------ results
    def static(self, name: str) -> dict[str, Any]:
        from ..analysis.command import stage_static

        return stage_static(name, self.req.stage_models.get(name), self.device.model_dump(), self.peaks)

    def result(self, stages: list[StageResult], **extra: Any) -> ProfileResult:
        argv = self.req.command or []
        shown = " ".join(argv[1:])
        return ProfileResult(
            kernel=label_of(argv),
            version="command",
            mode=self.req.mode,
            plan_kind="command",
            params={"command": shown},
            param_order=["command"],
            device=self.device,
            stages=stages,
            warnings=list(self.warnings),
            correctness={"ok": True, "checked": False, "message": "a command has no reference: not checked"},
            created_at=self.created_at,
            profile_dir=str(self.final_dir),
            request=self.req.model_dump(),
            phases_s=dict(self.phases_s),
            command=self.command_facts(),
            **extra,
        )

    def command_facts(self) -> dict[str, Any]:
        return {
            "argv": self.req.command,
            "cwd": self.req.command_cwd,
            "include": self.req.include,
            **self.ran,
            **({"stages_are_tests": True, "tests": len(self.tests)} if self.tests is not None else {}),
        }

    def capture_json(self) -> None:
        """Everything but the stages, for a reading step in another process (Nsight modes)."""
        import kprof

        fields = json.loads(self.result([]).model_dump_json(exclude={"stages"}))
        (self.work_dir / "capture.json").write_text(
            json.dumps(
                {
                    "result": fields,
                    "peaks": self.peaks,
                    "range_occurrences": dict(kprof.OCCURRENCES),
                    "tests": self.tests,
                },
                indent=2,
                default=str,
            )
        )


def stage_results(
    static: Callable[[str], dict[str, Any]], found: list[Any], engine: str
) -> list[StageResult]:
    """:class:`~kprof_mcp.analysis.command.CommandStage` rows → stage results (``static``: a stage
    name → its static fields)."""
    out = []
    for st in found:
        fields = dict(static(st.name))
        if st.grid_blocks:
            fields["grid_blocks"] = st.grid_blocks
        timing = Timing(
            samples_ns=[float(x) for x in st.samples_ns] or [0.0],
            method=f"{st.method} ({engine})",
            l2_flushed=False,
            stop_reason=f"{st.occurrences} occurrence(s) in the command's run",
        )
        out.append(StageResult(timing=timing, ncu_kernels=list(st.kernels), **fields))
    return out


def record_kineto(cc: CommandCapture, op_floor: bool = False, with_stack: bool = False):
    """Run the command under torch.profiler (CPU, and CUDA on a GPU); return the parsed trace. ``op_floor``: then,
    under the same profiler, a lean eager op's floor (:mod:`.op_floor`), for a reader that cuts it off before
    finding stages (the timeline's: :func:`kprof_mcp.analysis.replay.floors.before_floor`). ``with_stack``: the
    Python calls too, so each CUDA call names its user function (:mod:`kprof_mcp.parsers.kineto_stacks`)."""
    from torch.profiler import ProfilerActivity, profile

    from ..parsers import kineto

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cc.use_cuda else [])
    with profile(activities=activities, with_stack=with_stack) as prof:
        cc.run()
        if op_floor and cc.use_cuda:  # a lean eager op's host cost under the same profiler (replay.floors)
            from .op_floor import record_op_floor

            record_op_floor(cc.torch)
    path = cc.work_dir / "trace.json"
    prof.export_chrome_trace(str(path))
    cc.phase("trace_export")
    return kineto.load_trace(path)


def find_stages(
    req: ProfileRequest,
    tr,
    use_gpu: bool,
    output_tail: str = "",
    work_dir: Path | None = None,
    tests: list[str] | None = None,
) -> tuple[list[Any], str, list[str]]:
    """The command's stages in a trace: selected ranges, else kernels by name. Raises an
    actionable error when there is neither, with what the command had (its ranges and kernels)
    and the end of its output (``output_tail``, also written into ``work_dir``). ``tests``: the
    ranges kprof.pytest_plugin entered (each test once, never left out as warm-up)."""
    from ..analysis.command import kernel_stages, range_stages

    found, notes = range_stages(tr, list(req.include), use_gpu, req.warmup_occurrences, tests)
    if found:
        return found, "range", notes
    names = sorted(set(tr.ranges["name"])) if not tr.ranges.empty else []
    kernels = sorted({str(k) for k in tr.kernels["name"]}) if not tr.kernels.empty else []
    if req.include:
        raise ExpectedError(
            "nothing_profiled",
            f"no range matched include={list(req.include)}; the command's ranges: {names[:30] or 'none'}; "
            f"its GPU kernels: {[k[:80] for k in kernels[:30]] or 'none'}",
        )
    found = kernel_stages(tr) if use_gpu else []
    if not found:
        summary = pytest_summary(output_tail)
        why = (
            f"the command ran (exit 0; pytest: {summary})"
            if summary and "skipped" in summary and "passed" not in summary
            else "the command ran (exit 0)"
        )
        raise ExpectedError(
            "nothing_profiled",
            f"{why} but entered no range and launched no GPU "
            "kernel that could be recorded: mark regions with kprof.range(\"name\") "
            "(or torch.cuda.nvtx / torch.profiler.record_function), or check that "
            "it uses the GPU." + output_evidence(work_dir, output_tail),
        )
    notes.append(
        "no range in the command: its kernels are the stages, grouped by name (the top 8 by GPU time)"
    )
    return found, "kernel", notes
