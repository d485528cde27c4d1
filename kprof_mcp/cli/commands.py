"""One function per `kprof` subcommand, and the table `main` dispatches through."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..engine import Engine, KprofError, PackageError
from ..engine.config import in_range
from .cpu_sized import announce, announce_cases, cpu_sized
from .heartbeat import Heartbeat
from .helpers import _params_with, _print_json, _profile, _profile_document, _stage_models


def cmd_list(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof list`."""
    if a.json:
        from ..face.tools_info import kernel_list

        _print_json(kernel_list(engine).model_dump(mode="json"))
        return 0
    for k in engine.packages():
        if isinstance(k, PackageError):
            print(f"{k.name}: {k.error}")
            print("  params: ")
            continue
        params = ", ".join(f"{p.name}={p.default}" for p in k.params)
        stem = Path(k.source).stem  # `kprof profile` takes either
        print(f"{k.name}{f' (or {stem})' if stem != k.name else ''}: {k.description}")
        print(f"  params: {params}")
        cpu = [p for p in k.params if p.cpu_default is not None and p.cpu_default != p.default]
        if cpu:  # what `kprof profile` uses where there is no GPU
            print(f"  without a GPU: {', '.join(f'{p.name}={p.cpu_default}' for p in cpu)}")
        for v in k.versions:
            print(f"  {v.name} ({v.plan_kind}: {', '.join(s.name for s in v.stages)}): {v.doc}")
    return 0


def cmd_profile(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof profile`."""
    return _profile(engine, a, extra, profile_parser)


def cmd_run(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof run`."""
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        raise KprofError("no command: kprof run [options] -- python script.py ARGS")
    with Heartbeat(f"starting {' '.join(cmd)}", Heartbeat.wanted()) as beat:
        out = engine.profile_command(
            cmd,
            cwd=a.cwd,
            mode=a.mode,
            include=a.include,
            stage_models=_stage_models(a.model),
            timeout_s=a.timeout_s,
            max_kernels=a.max_kernels,
            clock_control=a.clock_control,
            timeline_engine=a.timeline_engine,
            warmup_occurrences=a.warmup,
            python_backtrace=a.python_backtrace,
            on_progress=beat.update,
        )
    if a.json:
        _print_json(_profile_document(out))
    else:
        print(out.contract)
    print(f"profile_dir: {out.profile_dir}", file=sys.stderr)
    return 0


def cmd_worker(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof worker`."""
    from ..cluster import ClusterError, check_address, security_from, worker_main
    from ..jobs import detect_slots

    try:
        check_address(a.scheduler, security_from(a.tls_ca, a.tls_cert, a.tls_key))
    except ClusterError as e:
        raise KprofError(str(e)) from None
    gpus = (
        [g.strip() for g in a.gpus.split(",") if g.strip()]
        if a.gpus
        else [g if g is not None else "cpu" for g in detect_slots()]
    )
    tls = (a.tls_ca, a.tls_cert, a.tls_key) if a.tls_ca else None

    def started(workers: list[dict]) -> None:
        if a.json:  # one document, once the workers are started; the command then runs until stopped
            print(json.dumps({"scheduler": a.scheduler, "workers": workers}), flush=True)
        else:
            for w in workers:
                print(
                    f"started Dask worker {w['name']} (GPU {w['gpu']}, pid {w['pid']}) for {a.scheduler}",
                    flush=True,
                )

    return worker_main(a.scheduler, gpus, tls=tls, on_started=started)


def cmd_init(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof init`."""
    from ..scaffold import scaffold

    path = scaffold(engine.config.workspace, a.name, a.dir)
    if a.json:
        test = path / f"test_{a.name}.py"
        _print_json({"kernel": a.name, "path": str(path), "test": str(test)})
        return 0
    # the workspace's kernels/ is searched by name; a package elsewhere is given by its path
    typed = (
        a.name
        if path.parent == engine.config.workspace / "kernels"
        else path.relative_to(engine.config.workspace)
    )
    print(
        f"created {path}: edit it, then `kprof profile {typed} --mode "
        "event` (its correctness test: python -m pytest "
        f"{path / 'test_'}{a.name}.py)"
    )
    return 0


def cmd_sweep(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof sweep`."""
    params = _params_with(extra, a.param)
    values = [int(v) if v.lstrip("+-").isdigit() else v for v in a.values]
    fills = cpu_sized(engine, a.kernel, {*params, a.over})
    spec = engine.check_sweep(
        a.kernel, a.over, values, a.versions, {**fills, **params}, a.budget_ms, a.timeout_s, a.clock_control
    )
    announce(fills)
    with Heartbeat(f"sweep of {a.kernel}: starting", Heartbeat.wanted()) as beat:
        sout = engine.execute(spec, beat.update)
    if a.json:
        from ..render.sweep import sweep_summary

        summary = sweep_summary(sout.result, sout.rows).model_dump(mode="json")
        _print_json({"sweep_dir": str(sout.sweep_dir), "summary": summary})
    else:
        print(sout.markdown)
    print(f"sweep_dir: {sout.sweep_dir}", file=sys.stderr)
    return 0


def cmd_compare(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof compare`."""
    params = _params_with(extra, a.param)
    sets = [_params_with([], [kv for kv in spec.split(",") if kv]) for spec in a.param_sets] or None
    fills = cpu_sized(engine, a.kernel, {*params, *(k for s in sets or [] for k in s)})
    spec = engine.check_compare(
        a.kernel,
        a.versions,
        {**fills, **params},
        a.budget_ms,
        a.rounds,
        a.timeout_s,
        sets,
        a.mode,
        a.clock_control,
    )
    announce(fills)
    with Heartbeat(f"compare of {a.kernel}: starting", Heartbeat.wanted()) as beat:
        out = engine.execute(spec, beat.update)
    if a.json:
        from ..render.compare import compare_summary

        _print_json(
            {
                "compare_dir": str(out.compare_dir),
                "summary": compare_summary(out.result).model_dump(mode="json"),
                "result": out.result.model_dump(mode="json"),
            }
        )
    else:
        print(out.markdown)
    print(f"compare_dir: {out.compare_dir}", file=sys.stderr)
    return 0


def cmd_noise(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof noise`."""
    cases = []
    for c in a.case:
        parts = c.split(":")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise KprofError(f"--case {c!r}: KERNEL:VERSION[:NAME=VALUE,...], e.g. matmul:v3:M=2048")
        cases.append((parts[0], parts[1], _params_with([], parts[2].split(",") if len(parts) > 2 else [])))
    from ..noise import DEFAULT_CASES

    asked = cases or DEFAULT_CASES
    fills = [(k, cpu_sized(engine, k, set(p))) for k, _, p in asked]  # without a GPU
    cases = [(k, v, {**f, **p}) for (k, v, p), (_, f) in zip(asked, fills)]
    if a.timeout_s is not None:  # each profile's limit (the noise spec takes the engine's)
        in_range("timeout_s", a.timeout_s, 1, 86400, "seconds")
        engine.config.timeout_s = a.timeout_s
    spec = engine.check_noise(cases, a.rounds, a.clock_control)
    announce_cases(fills)
    out = engine.execute(spec, lambda f, m: print(f"  {100 * f:3.0f}% {m}", file=sys.stderr))
    from ..render.noise import noise_markdown, noise_summary

    if a.json:
        _print_json(noise_summary(out).model_dump(mode="json"))
    else:
        print(noise_markdown(out))
    return 0


def cmd_device(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof device` (JSON with or without --json); `--calibrate`: measured peaks beside the table."""
    if not a.calibrate:
        _print_json(engine.device_info())
        return 0
    from ..engine.calibrate import rows_for
    from ..render.calibration import calibration_markdown

    in_range("timeout_s", a.timeout_s, 1, 86400, "seconds")
    timeout = a.timeout_s if a.timeout_s is not None else 600.0
    doc, path = engine.calibrate(
        a.clock_control, timeout, lambda f, m: print(f"  {100 * f:3.0f}% {m}", file=sys.stderr)
    )
    if a.json:
        _print_json(doc)
    else:
        rows, note = rows_for(doc)
        print(calibration_markdown(doc, rows, note))
    print(f"calibration: {path}", file=sys.stderr)
    return 0


def cmd_read_params(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof read-params` (JSON with or without --json)."""
    _print_json(engine.read_params(a.profile_dir))
    return 0


def cmd_classify(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof classify` (JSON with or without --json)."""
    d = engine.classify(
        a.tc,
        a.dram,
        a.occupancy,
        a.l2_hit,
        a.spill_bytes,
        a.waves,
        a.compute,
        a.dram_over_model,
        a.duration_us,
        a.sol_us,
        a.grid_blocks,
        a.sms,
        a.local_share_pct,
    )
    _print_json(d.model_dump())
    return 0


def _checkout() -> Path | None:
    """kprof-mcp's own source tree when kprof runs from one: the directory holding kprof_mcp/ and the
    built-in kernels/ beside a .git (an installed kprof-mcp has none)."""
    from ..packages import KernelNotFound, builtin_kernels_dir

    try:
        root = builtin_kernels_dir().parent
    except KernelNotFound:
        return None
    return root if (root / ".git").exists() and (root / "kprof_mcp").is_dir() else None


def cmd_devlog(
    engine: Engine, a: argparse.Namespace, extra: list[str], profile_parser: argparse.ArgumentParser
) -> int:
    """`kprof devlog`."""
    checkout = _checkout()
    if a.workspace is None and checkout is not None and engine.config.workspace == checkout:
        raise KprofError(
            f"the workspace is kprof-mcp's own checkout ({checkout}), whose docs/kernels/ logs are tracked "
            "files: keep your log in a workspace of your own, e.g. `kprof --workspace ~/kprof-work devlog "
            f"{a.kernel} PROFILE_DIR` (to add to the checkout's own logs, name it: --workspace {checkout}); "
            "nothing was written"
        )
    path, entry = engine.update_devlog(a.kernel, a.profile_dir, a.issue, a.insight, a.allow_mismatch)
    if a.json:
        _print_json({"path": str(path), "entry": entry})
        return 0
    print(entry)
    print(f"appended to {path}", file=sys.stderr)
    return 0


COMMANDS = {
    "list": cmd_list,
    "profile": cmd_profile,
    "run": cmd_run,
    "worker": cmd_worker,
    "init": cmd_init,
    "sweep": cmd_sweep,
    "compare": cmd_compare,
    "noise": cmd_noise,
    "device": cmd_device,
    "read-params": cmd_read_params,
    "classify": cmd_classify,
    "devlog": cmd_devlog,
}
