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

import json
import sys

from ..engine import Config, Engine, KprofError
from .commands import COMMANDS
from .parser import build_parser

# The engine's messages are worded for the MCP server, which most callers are; the CLI's own words.
_CLI_WORDS = (
    ("(the server is unaffected)", "(kprof itself is unaffected)"),
    ("the server is unaffected", "kprof itself is unaffected"),
    ("The server is unaffected", "kprof itself is unaffected"),
    ("start the server with --kernels-dir", "pass --kernels-dir"),
)


def cli_words(message: str) -> str:
    """An engine error as the CLI says it."""
    for server, cli in _CLI_WORDS:
        message = message.replace(server, cli)
    return message


def main(argv: list[str] | None = None) -> int:
    ap, p = build_parser()
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
            from ..cluster import ClusterError, connect, security_from

            try:
                connect(
                    engine, a.cluster, security_from(a.cluster_tls_ca, a.cluster_tls_cert, a.cluster_tls_key)
                )
            except ClusterError as e:
                raise KprofError(str(e)) from None
        return COMMANDS[a.cmd](engine, a, extra, p)
    except KprofError as e:
        message = cli_words(str(e))
        print(f"kprof: error: {message}", file=sys.stderr)
        if getattr(a, "json", False):  # a script reading stdout gets its one document too
            print(json.dumps({"error": message}))
        return 2
    finally:
        engine.close()
