"""``kprof``: the same capabilities as the MCP tools, for people.

    kprof list
    kprof profile vector_add --mode event --n 16777216 [--version v1] [--baseline DIR]
    kprof device
    kprof read-params DIR
    kprof classify --tc 5 --dram 85 --l2-hit 60
    kprof devlog vector_add DIR --issue "..." --insight "..."
    kprof run --mode nsys --include forward --include backward -- python train.py --steps 5
    kprof --cluster tcp://127.0.0.1:8786 profile matmul --mode ncu     # on a Dask GPU worker
    kprof init my_kernel

Kernel parameters are given as ``--<name> <value>`` (or ``--<name>=<value>``, or
``--param name=value``). Options are never abbreviated, so ``--n`` is the kernel's ``n`` and
not a prefix of ``--ncu-launches``; a parameter whose name is also an option of ``kprof
profile`` (say ``version``) must be passed as ``--param version=...``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .engine import Config, Engine, KprofError


def _parse_kernel_params(extra: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or len(tok) < 3:
            raise KprofError(f"unexpected argument {tok!r}: kernel parameters are given as --name value")
        if "=" in tok:
            name, value = tok[2:].split("=", 1)
            i += 1
        else:
            if i + 1 >= len(extra):
                raise KprofError(f"parameter {tok} needs a value")
            name, value = tok[2:], extra[i + 1]
            i += 2
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    return params


def _clashes(engine: Engine, kernel: str, profile_parser: argparse.ArgumentParser) -> dict[str, str]:
    """Kernel parameters whose ``--name`` is also an option of ``kprof profile``."""
    options = {o for a in profile_parser._actions for o in a.option_strings}
    try:
        names = [p["name"] for p in engine.describe_kernel(kernel)["params"]]
    except KprofError:
        return {}  # the profile call itself reports the unknown kernel
    return {n: f"--{n}" for n in names if f"--{n}" in options or f"--{n.replace('_', '-')}" in options}


def _params_with(extra: list[str], pairs: list[str]) -> dict[str, Any]:
    """Kernel parameters from ``--name value`` extras and ``--param NAME=VALUE`` options."""
    params = _parse_kernel_params(extra)
    for item in pairs:
        if "=" not in item:
            raise KprofError(f"--param {item!r}: give name=value")
        name, value = item.split("=", 1)
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    return params


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def _profile(engine: Engine, a: argparse.Namespace, extra: list[str], parser: argparse.ArgumentParser) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    params = _parse_kernel_params(extra)
    for item in a.param:
        if "=" not in item:
            raise KprofError(f"--param {item!r}: give name=value")
        name, value = item.split("=", 1)
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    clashes = _clashes(engine, a.kernel, parser)
    passed_as_option = {n for n in clashes if n not in params}
    if passed_as_option:
        # e.g. a kernel parameter "version": `--version 2` would set kprof's own --version.
        names = sorted(passed_as_option)
        raise KprofError(
            f"kernel {a.kernel!r} has parameter(s) {names} whose --name is also an option of "
            f"`kprof profile` ({', '.join(clashes[n] for n in names)}); pass them as "
            + " ".join(f"--param {n}=VALUE" for n in names)
            + " (the option keeps its own meaning)"
        )
    err = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=a.quiet,
    ) as prog:
        task = prog.add_task(f"profiling {a.kernel}", total=1.0)

        def on_progress(fraction: float, message: str) -> None:
            prog.update(task, completed=fraction, description=f"{a.kernel}: {message}")

        outcome = engine.profile(
            a.kernel,
            a.version,
            params,
            a.mode,
            a.baseline,
            on_progress,
            ncu_launches=a.ncu_launches,
            clock_control=a.clock_control,
            timeline_iters=a.timeline_iters,
            timeline_engine=a.timeline_engine,
        )
    if outcome.result.device.kind != "cuda":
        err.print(
            "[bold yellow]No GPU: this ran on the CPU (Triton interpreter). The times are CPU times and "
            "say nothing about GPU performance.[/]"
        )
    print(outcome.contract)
    err.print(f"profile_dir: {outcome.profile_dir}")
    if a.json:
        _print_json(
            {"profile_dir": str(outcome.profile_dir), "result": outcome.result.model_dump(mode="json")}
        )
    return 0


def _stage_models(specs: list[str]) -> dict[str, dict[str, Any]]:
    """``STAGE:flops=N,bytes=N,dtype=D,tc=1`` options → profile_command's stage_models."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, sep, rest = spec.partition(":")
        if not sep or not name:
            raise KprofError(f"--model {spec!r}: STAGE:flops=N,bytes=N[,dtype=D][,tc=1]")
        m: dict[str, Any] = {}
        for kv in filter(None, rest.split(",")):
            k, eq, v = kv.partition("=")
            if not eq:
                raise KprofError(f"--model {spec!r}: {kv!r} is not key=value")
            if k in ("flops", "bytes"):
                try:
                    m[k] = float(v)
                except ValueError:
                    raise KprofError(f"--model {spec!r}: {k}={v!r} is not a number") from None
            elif k == "dtype":
                m[k] = v
            elif k in ("tc", "tensor_cores"):
                m["tensor_cores"] = v.lower() in ("1", "true", "yes")
            else:
                raise KprofError(f"--model {spec!r}: unknown key {k!r} (flops, bytes, dtype, tc)")
        out[name] = m
    return out


def main(argv: list[str] | None = None) -> int:
    from .modes import DEFAULT_MODE, MODES

    ap = argparse.ArgumentParser(
        prog="kprof", description="Profile GPU kernels (the CLI face of kprof-mcp)", allow_abbrev=False
    )
    ap.add_argument("--workspace", default=None, help="root for out/profiles and docs/kernels (default: cwd)")
    ap.add_argument("--kernels-dir", action="append", default=[], help="extra directory of kernel packages")
    ap.add_argument("--cpu", action="store_true", help="force CPU timing even if a GPU is present")
    ap.add_argument(
        "--cluster",
        default=None,
        metavar="tcp://SCHEDULER:8786",
        help="run profile/compare/sweep on a Dask cluster's GPU workers (docs/cluster.md); off loopback "
        "it must be tls:// with --tls-ca/--tls-cert/--tls-key",
    )
    ap.add_argument("--tls-ca", dest="cluster_tls_ca", default=None, help="with --cluster tls://...: CA file")
    ap.add_argument("--tls-cert", dest="cluster_tls_cert", default=None, help="client certificate")
    ap.add_argument("--tls-key", dest="cluster_tls_key", default=None, help="client key")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="kernel packages, versions, parameters", allow_abbrev=False)
    p = sub.add_parser(
        "profile", help="profile a kernel; extra --name value pairs are kernel parameters", allow_abbrev=False
    )
    p.add_argument("kernel")
    p.add_argument("--version", default=None)
    p.add_argument(
        "--mode",
        default=DEFAULT_MODE,
        choices=list(MODES),
        help="annotation (default; Nsight Compute), ncu (full), nsys (timeline), event (CUDA events; "
        "CPU without a GPU)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a kernel parameter (needed when its name is also an option here, e.g. version)",
    )
    p.add_argument("--ncu-launches", type=int, default=1, help="annotation/ncu: profiled launches per stage")
    p.add_argument("--timeline-iters", type=int, default=5, help="nsys: recorded iterations of the plan")
    p.add_argument(
        "--timeline-engine",
        default="auto",
        choices=["auto", "nsys", "kineto"],
        help="nsys: Nsight Systems when a working one is found (auto), Nsight Systems or an error (nsys), "
        "or CUPTI via torch.profiler (kineto)",
    )
    p.add_argument(
        "--clock-control",
        default="base",
        choices=["base", "none"],
        help="base: SM clock locked for the run (ncu's base in annotation/ncu, the device's sustained "
        "clock in event/nsys), reset after; none: clocks free (under MIG)",
    )
    p.add_argument("--baseline", default=None, help="an earlier profile_dir to compare with")
    p.add_argument("--json", action="store_true", help="also print the full result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    cmp_ = sub.add_parser(
        "compare",
        help="time versions interleaved in one process; verdict with a 95%% CI; "
        "extra --name value pairs are kernel parameters",
        allow_abbrev=False,
    )
    cmp_.add_argument("kernel")
    cmp_.add_argument(
        "versions", nargs="+", help="two or more versions, the baseline first (or one, with --set)"
    )
    cmp_.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    cmp_.add_argument(
        "--set",
        action="append",
        default=[],
        dest="param_sets",
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="a parameter set (repeat: 2 to 8, the baseline's first); every version runs at each",
    )
    cmp_.add_argument(
        "--mode",
        default="event",
        help="event (timing alone; default), or annotation/ncu: the timing, "
        "then each version's counters side by side",
    )
    cmp_.add_argument(
        "--budget-ms", type=float, default=None, help="timed GPU time over all versions (default 4000)"
    )
    cmp_.add_argument("--rounds", type=int, default=20, help="rounds at most (each times every version once)")
    cmp_.add_argument("--json", action="store_true", help="also print the full result as JSON")
    cmp_.add_argument(
        "--clock-control",
        default="base",
        choices=["base", "none"],
        help="base: the timing's SM clock locked at the device's sustained clock; none: free",
    )
    sw = sub.add_parser(
        "sweep",
        help="versions across values of one parameter: table, sweep.csv, sweep.png; extra "
        "--name value pairs fix other kernel parameters",
        allow_abbrev=False,
    )
    sw.add_argument("kernel")
    sw.add_argument("--over", required=True, metavar="PARAM", help="the parameter to sweep")
    sw.add_argument("--values", required=True, nargs="+", help="its values")
    sw.add_argument("--versions", nargs="+", default=None, help="1 to 4 versions (default: the latest)")
    sw.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    sw.add_argument(
        "--budget-ms", type=float, default=None, help="timing budget per stage and point (default 300)"
    )
    sw.add_argument(
        "--clock-control",
        default="base",
        choices=["base", "none"],
        help="base: the timing's SM clock locked at the device's sustained clock; none: free",
    )
    run = sub.add_parser(
        "run",
        help="profile your own Python command: kprof run [options] -- python train.py ...; "
        "stages are its ranges (kprof.range / NVTX / record_function)",
        allow_abbrev=False,
    )
    run.add_argument(
        "--mode", default="event", choices=list(MODES), help="event (default), nsys, annotation, ncu"
    )
    run.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a range name (fnmatch) that is a stage; repeat; default every range",
    )
    run.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="STAGE:flops=N,bytes=N[,dtype=D][,tc=1]",
        help="FLOPs/bytes of one occurrence of a stage (roofline and speed of light for it)",
    )
    run.add_argument(
        "--cwd", default=None, help="working directory inside the workspace (default: the workspace)"
    )
    run.add_argument(
        "--max-kernels", type=int, default=200, help="annotation/ncu: profile at most this many launches"
    )
    run.add_argument("--timeline-engine", default="auto", choices=["auto", "nsys", "kineto"])
    run.add_argument("--clock-control", default="base", choices=["base", "none"])
    run.add_argument("--timeout-s", type=float, default=None)
    run.add_argument(
        "--warmup", type=int, default=1, help="event/nsys: first occurrences of each range left out"
    )
    run.add_argument("--json", action="store_true", help="also print the full result as JSON")
    run.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- python script.py ARGS, or -- python -m module ARGS"
    )
    ini = sub.add_parser(
        "init",
        help="scaffold a kernel package (params, inputs, reference, one version, FLOP/byte "
        "models) that passes its own correctness test",
        allow_abbrev=False,
    )
    ini.add_argument(
        "name", help="package name (a Python identifier), created as kernels/NAME in the workspace"
    )
    ini.add_argument("--dir", default="kernels", help="directory inside the workspace (default: kernels)")
    wk = sub.add_parser(
        "worker",
        help="start one Dask worker per GPU for kprof-mcp --cluster (resource GPU=1, "
        "CUDA_VISIBLE_DEVICES set)",
        allow_abbrev=False,
    )
    wk.add_argument("--scheduler", required=True, help="tcp://HOST:8786 (loopback) or tls://HOST:8786")
    wk.add_argument(
        "--gpus",
        default=None,
        help="comma-separated GPU indices (default: all visible; 'cpu' for a CPU-only worker)",
    )
    wk.add_argument("--tls-ca", default=None)
    wk.add_argument("--tls-cert", default=None)
    wk.add_argument("--tls-key", default=None)
    nz = sub.add_parser(
        "noise",
        help="measure this GPU's noise floor: A/A event profiles, alternating; stored "
        "per GPU model and used by every later profile's baseline verdict",
        allow_abbrev=False,
    )
    nz.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="KERNEL:VERSION[:NAME=VALUE,...]",
        help="a kernel to profile repeatedly (repeat; default: matmul:v3, softmax:v2, vector_add:v1)",
    )
    nz.add_argument("--rounds", type=int, default=8, help="profiles of each case (2 to 50; default 8)")
    nz.add_argument("--clock-control", default="base", choices=["base", "none"])
    nz.add_argument("--json", action="store_true", help="print the series as JSON")
    sub.add_parser("device", help="active device, peaks, ridge points, profilers", allow_abbrev=False)
    r = sub.add_parser("read-params", help="print a profile's params.json", allow_abbrev=False)
    r.add_argument("profile_dir")
    c = sub.add_parser("classify", help="classify a bottleneck from metrics", allow_abbrev=False)
    for flag in (
        "tc",
        "dram",
        "occupancy",
        "l2-hit",
        "spill-bytes",
        "waves",
        "compute",
        "dram-over-model",
        "duration-us",
        "sol-us",
        "local-share-pct",
    ):
        c.add_argument(f"--{flag}", type=float, default=None)
    for flag in ("grid-blocks", "sms"):
        c.add_argument(f"--{flag}", type=int, default=None)
    d = sub.add_parser("devlog", help="append a profile to docs/kernels/<kernel>.md", allow_abbrev=False)
    d.add_argument("kernel")
    d.add_argument("profile_dir")
    d.add_argument("--issue", action="append", default=[])
    d.add_argument("--insight", action="append", default=[])
    a, extra = ap.parse_known_args(argv)
    if extra and a.cmd not in ("profile", "compare", "sweep"):
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    config = Config.from_options(a.workspace, a.kernels_dir, force_cpu=a.cpu)
    config.confine_modules = False  # `kprof run`: the user runs their own command (any python -m)
    config.warm = False  # one command per process: a warm worker would only be a fresh child
    engine = Engine(config)
    try:
        if a.cluster:
            if a.cmd not in ("profile", "compare", "sweep"):
                raise KprofError(f"--cluster applies to profile, compare and sweep, not to `kprof {a.cmd}`")
            from .cluster import ClusterError, connect, security_from

            try:
                connect(
                    engine, a.cluster, security_from(a.cluster_tls_ca, a.cluster_tls_cert, a.cluster_tls_key)
                )
            except ClusterError as e:
                raise KprofError(str(e)) from None
        if a.cmd == "list":
            for k in engine.list_kernels():
                params = ", ".join(f"{p['name']}={p['default']}" for p in k.get("params", []))
                print(f"{k['name']}: {k.get('description', k.get('error', ''))}")
                print(f"  params: {params}")
                for v in k.get("versions", []):
                    print(
                        f"  {v['name']} ({v['plan_kind']}: {', '.join(s['name'] for s in v['stages'])}): {v['doc']}"
                    )
            return 0
        if a.cmd == "profile":
            return _profile(engine, a, extra, p)
        if a.cmd == "run":
            cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
            if not cmd:
                raise KprofError("no command: kprof run [options] -- python script.py ARGS")
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
            )
            print(out.contract)
            print(f"profile_dir: {out.profile_dir}", file=sys.stderr)
            if a.json:
                _print_json(out.result.model_dump(mode="json"))
            return 0
        if a.cmd == "worker":
            from .cluster import ClusterError, check_address, security_from, worker_main
            from .jobs import detect_slots

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
            return worker_main(a.scheduler, gpus, tls=tls)
        if a.cmd == "init":
            from .scaffold import scaffold

            path = scaffold(engine.config.workspace, a.name, a.dir)
            print(
                f"created {path}: edit it, then `kprof profile {path.relative_to(engine.config.workspace)} --mode "
                "event` (its correctness test: python -m pytest "
                f"{path / 'test_'}{a.name}.py)"
            )
            return 0
        if a.cmd == "sweep":
            params = _params_with(extra, a.param)
            values = [int(v) if v.lstrip("+-").isdigit() else v for v in a.values]
            sout = engine.sweep(
                a.kernel, a.over, values, a.versions, params, a.budget_ms, clock_control=a.clock_control
            )
            print(sout.markdown)
            print(f"sweep_dir: {sout.sweep_dir}", file=sys.stderr)
            return 0
        if a.cmd == "compare":
            params = _params_with(extra, a.param)
            sets = [_params_with([], [kv for kv in spec.split(",") if kv]) for spec in a.param_sets] or None
            out = engine.compare(
                a.kernel,
                a.versions,
                params,
                a.budget_ms,
                a.rounds,
                param_sets=sets,
                mode=a.mode,
                clock_control=a.clock_control,
            )
            print(out.markdown)
            print(f"compare_dir: {out.compare_dir}", file=sys.stderr)
            if a.json:
                _print_json(out.result.model_dump(mode="json"))
            return 0
        if a.cmd == "noise":
            cases = []
            for c in a.case:
                parts = c.split(":")
                if len(parts) < 2 or not parts[0] or not parts[1]:
                    raise KprofError(f"--case {c!r}: KERNEL:VERSION[:NAME=VALUE,...], e.g. matmul:v3:M=2048")
                cases.append(
                    (parts[0], parts[1], _params_with([], parts[2].split(",") if len(parts) > 2 else []))
                )
            spec = engine.check_noise(cases or None, a.rounds, a.clock_control)
            out = engine.execute(spec, lambda f, m: print(f"  {100 * f:3.0f}% {m}", file=sys.stderr))
            from .render.noise import noise_markdown, noise_summary

            if a.json:
                _print_json(noise_summary(out).model_dump(mode="json"))
            else:
                print(noise_markdown(out))
            return 0
        if a.cmd == "device":
            _print_json(engine.device_info())
            return 0
        if a.cmd == "read-params":
            _print_json(engine.read_params(a.profile_dir))
            return 0
        if a.cmd == "classify":
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
        if a.cmd == "devlog":
            path, entry = engine.update_devlog(a.kernel, a.profile_dir, a.issue, a.insight)
            print(entry)
            print(f"appended to {path}", file=sys.stderr)
            return 0
    except KprofError as e:
        print(f"kprof: error: {e}", file=sys.stderr)
        return 2
    finally:
        engine.close()
    return 1


if __name__ == "__main__":
    sys.exit(main())
