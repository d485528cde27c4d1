"""`kprof`'s argument parser: the global options and one subparser per subcommand."""

from __future__ import annotations

import argparse

JSON_HELP = "print one JSON document on stdout (the structured summary the MCP tool returns) and nothing else"
TIMEOUT_HELP = "time limit of each child process, seconds (default: KPROF_TIMEOUT_S or 900)"


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def _timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout-s", type=float, default=None, metavar="SECONDS", help=TIMEOUT_HELP)


def build_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The parser, and the `profile` subparser (kernel parameters are checked against its options)."""
    from ..modes import DEFAULT_MODE, MODES

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
    _json(sub.add_parser("list", help="kernel packages, versions, parameters", allow_abbrev=False))
    p = sub.add_parser(
        "profile", help="profile a kernel; extra --name value pairs are kernel parameters", allow_abbrev=False
    )
    p.add_argument("kernel")
    p.add_argument("--version", default=None)
    p.add_argument(
        "--mode",
        default=DEFAULT_MODE,
        choices=list(MODES),
        metavar="MODE",  # the modes are listed once: in the help, and in the error for a bad one
        help="annotation (default; Nsight Compute), ncu (full), nsys (timeline), event (kernel time "
        "from CUPTI; CPU wall time without a GPU)",
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
    p.add_argument(
        "--baseline",
        default=None,
        help="an earlier profile_dir to compare with (refused if of other parameters, device or mode)",
    )
    p.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare with a baseline of other parameters, device or mode anyway; what differs heads the verdict",
    )
    _json(p)
    _timeout(p)
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
    _json(cmp_)
    _timeout(cmp_)
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
    _json(sw)
    _timeout(sw)
    run = sub.add_parser(
        "run",
        help="profile your own Python command: kprof run [options] -- python train.py ...; "
        "stages are its ranges (kprof.range / NVTX / record_function)",
        allow_abbrev=False,
    )
    run.add_argument(
        "--mode",
        default="event",
        choices=list(MODES),
        metavar="MODE",
        help="event (default), nsys, annotation, ncu",
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
        metavar="STAGE:flops=N,bytes=N[,dtype=D][,tc=1][,int_ops=N]",
        help="FLOPs/bytes of one occurrence of a stage (roofline and speed of light for it)",
    )
    run.add_argument(
        "--cwd", default=None, help="working directory inside the workspace (default: the workspace)"
    )
    run.add_argument(
        "--max-kernels", type=int, default=200, help="annotation/ncu: profile at most this many launches"
    )
    run.add_argument("--timeline-engine", default="auto", choices=["auto", "nsys", "kineto"])
    run.add_argument(
        "--python-backtrace",
        action="store_true",
        help="nsys with Nsight Systems: each idle cause names the Python line of its CUDA calls "
        "(~8 us more per CUDA call)",
    )
    run.add_argument("--clock-control", default="base", choices=["base", "none"])
    _timeout(run)
    run.add_argument(
        "--warmup", type=int, default=1, help="event/nsys: first occurrences of each range left out"
    )
    _json(run)
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
    _json(ini)
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
    wk.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document on stdout once the workers are started (scheduler; each worker's "
        "name, GPU and pid) and nothing else; the command then runs until stopped",
    )
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
    _json(nz)
    _timeout(nz)
    dv = sub.add_parser(
        "device", help="active device, peaks, ridge points, profilers (JSON)", allow_abbrev=False
    )
    dv.add_argument(
        "--calibrate",
        action="store_true",
        help="measure each pipe's and memory level's peak with microbenchmarks on the GPU (about a minute), "
        "write out/device/calibration-<device>.json and show it beside the machine table",
    )
    dv.add_argument(
        "--clock-control",
        default="base",
        choices=["base", "none"],
        help="--calibrate: base (default) locks the SM clock at the device's sustained clock; none: free",
    )
    _json(dv)
    _timeout(dv)
    r = sub.add_parser("read-params", help="print a profile's params.json", allow_abbrev=False)
    r.add_argument("profile_dir")
    _json(r)
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
    _json(c)
    d = sub.add_parser("devlog", help="append a profile to docs/kernels/<kernel>.md", allow_abbrev=False)
    d.add_argument("kernel")
    d.add_argument("profile_dir")
    d.add_argument("--issue", action="append", default=[])
    d.add_argument("--insight", action="append", default=[])
    d.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare with the log's last entry even if it measured other parameters, device or mode",
    )
    _json(d)
    return ap, p
