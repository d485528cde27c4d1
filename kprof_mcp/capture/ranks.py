"""Every rank of a profiled command recorded (issue 39), the main child's side: kprof's environment
reaches every Python process the command starts, and their records come back.

:func:`follow` wraps the command's run: it writes a ``sitecustomize.py`` into a directory of its own
(in the child's temporary directory: private to a confined command, readable by its processes), puts
that directory first on ``PYTHONPATH`` and names ``<run>/ranks`` in
:data:`~kprof_mcp.capture.rank_recorder.ENV_DIR`; every Python process the command starts
(``torch.multiprocessing.spawn``'s ranks, torchrun's workers, a launcher's children) then runs
:mod:`~kprof_mcp.capture.rank_recorder` at start-up, which records the process with torch.profiler
once it imports torch and writes ``<run>/ranks/<pid>.json`` (and its trace) at exit. The generated
``sitecustomize`` then runs the one it shadows (a distribution's or a virtual environment's), so the
process starts as it would have. The environment is restored and the directory removed when the
command ends; the main process is recorded as before (:func:`~kprof_mcp.capture.recording.record_kineto`).

:func:`collect` reads what the processes left (:class:`~kprof_mcp.analysis.ranks.RankProcess`, each
rank's trace parsed); :mod:`kprof_mcp.analysis.ranks` makes the per-rank stages and table.

Only event mode follows the ranks this way: under Nsight Systems the profiler itself follows the
process tree (its injection travels in the environment), and the per-process split of its report is
a later step of issue 39.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..analysis.rank_idle import rank_idle
from ..analysis.ranks import RankProcess, rank_communication, rank_stages
from ..protocol import ExpectedError
from ..removal import remove_tree
from .rank_recorder import ENV_CUDA, ENV_DIR

ENV_HOOK = "KPROF_RANKS_HOOK"  # the hook directory, which the generated sitecustomize leaves out of its chain

# The generated hook: start kprof's recorder (kprof_mcp found on the path, or at the root the child
# imported it from), then the sitecustomize this one shadows. It never raises into the process.
SITECUSTOMIZE = '''\
"""Written by kprof (kprof_mcp.capture.ranks) for one profiled command, removed when it ends."""
import os as _os
import sys as _sys


def _kprof_ranks():
    try:
        try:
            from kprof_mcp.capture import rank_recorder
        except ImportError:
            _sys.path.append({root!r})
            try:
                from kprof_mcp.capture import rank_recorder
            finally:
                _sys.path.remove({root!r})
        rank_recorder.install()
    except Exception as e:  # noqa: BLE001
        _sys.stderr.write("kprof: this process (pid %d) is not recorded: %s\\n" % (_os.getpid(), e))
    here = _os.path.dirname(_os.path.abspath(__file__))
    saved = list(_sys.path)
    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    me = _sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401 — the one this file shadows, when there is one
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise
    finally:
        _sys.path[:] = saved
        _sys.modules.setdefault("sitecustomize", me)  # the import system looks this module up again


_kprof_ranks()
del _kprof_ranks
'''


@contextmanager
def follow(work_dir: Path, use_cuda: bool) -> Iterator[Path]:
    """While the command runs, every Python process it starts records itself into
    ``<work_dir>/ranks`` (yielded); the environment is restored afterwards."""
    ranks_dir = work_dir / "ranks"
    ranks_dir.mkdir(exist_ok=True)
    hook = Path(tempfile.mkdtemp(prefix="kprof-ranks-"))
    root = str(Path(__file__).resolve().parents[2])
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(root=root))
    keys = (ENV_DIR, ENV_CUDA, ENV_HOOK, "PYTHONPATH")
    saved = {k: os.environ.get(k) for k in keys}
    path = os.environ.get("PYTHONPATH")
    os.environ.update(
        {
            ENV_DIR: str(ranks_dir),
            ENV_CUDA: "1" if use_cuda else "0",
            ENV_HOOK: str(hook),
            "PYTHONPATH": str(hook) + (os.pathsep + path if path else ""),
        }
    )
    try:
        yield ranks_dir
    except ExpectedError as e:
        hint = network_hint(str(e))
        if not hint:
            raise
        raise ExpectedError(e.kind, f"{hint}\n{e}", e.detail) from None
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        remove_tree(hook)


_DISTRIBUTED = ("init_process_group", "TCPStore", "rendezvous", "ProcessGroupGloo", "ProcessGroupNCCL")
_NO_NETWORK = (
    "Cannot resolve 127.0.0.1",
    "Network is unreachable",
    "Connection refused",
    "Permission denied",
    "Cannot assign requested address",
)
NETWORK_HINT = (
    "The ranks could not reach each other: torch.distributed talks over TCP on loopback (gloo, NCCL's "
    "bootstrap, torchrun's rendezvous store). A command the server confines may use TCP only when the "
    "server runs with --commands-network; `kprof run` does not confine."
)


def network_hint(message: str) -> str:
    """What to do when a command's ranks failed to connect (a confined command without TCP), or ''."""
    if any(w in message for w in _DISTRIBUTED) and any(w in message for w in _NO_NETWORK):
        return NETWORK_HINT
    return ""


def collect(ranks_dir: Path) -> list[RankProcess]:
    """The processes that recorded themselves, each rank's trace parsed (ordered by rank, then pid).
    A record that cannot be read is a process that left no usable record."""
    from ..parsers import kineto

    out: list[RankProcess] = []
    if not ranks_dir.is_dir():
        return out
    for path in sorted(ranks_dir.glob("*.json")):
        if path.name.endswith(".trace.json") or not path.stem.isdigit():
            continue
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            rec = {"pid": int(path.stem), "status": "unreadable"}
        proc = RankProcess.from_record(rec)
        if proc.role == "rank" and proc.status == "ok" and rec.get("trace"):
            trace = ranks_dir / Path(str(rec["trace"])).name
            try:
                proc.trace = kineto.load_trace(trace)
                proc.origin_ns = _origin_ns(trace)
            except (OSError, ValueError) as e:
                proc.status, proc.note = "unreadable", f"its trace could not be read ({e})"
        out.append(proc)
    return sorted(out, key=lambda p: (p.rank is None, p.rank if p.rank is not None else 0, p.pid))


def _origin_ns(trace: Path) -> int | None:
    """The trace's origin on the wall clock (``baseTimeNanoseconds``: its times are µs after it),
    which puts the ranks' traces on one clock."""
    import re

    with open(trace, "rb") as f:
        head = f.read(1 << 16).decode(errors="replace")  # Kineto writes it before the events
    m = re.search(r'"baseTimeNanoseconds":\s*(\d+)', head)
    return int(m.group(1)) if m else None


def stages_with_ranks(
    cc: Any, tr: Any, ranks_dir: Path
) -> tuple[list[Any], str, list[str], list[dict[str, Any]], dict[str, Any]]:
    """The main process's stages (:func:`~kprof_mcp.capture.recording.find_stages`, as before) and
    every rank's (``rank<r>/<stage>``), where they came from, the notes, the per-rank table (empty
    for a command that started no recorded process) with each rank's communication per step, and
    the job's communication summary (:func:`~kprof_mcp.analysis.ranks.rank_communication`; {} when
    the ranks ran no collective). A main process with no stage of its own (a launcher) is no error
    when a rank has stages; when nothing has any, the error says what the ranks had too."""
    from .recording import find_stages

    procs = collect(ranks_dir)
    if not procs:
        remove_tree(ranks_dir)  # a single-process command's directory as before
    req = cc.req
    ranked, table, rank_notes = rank_stages(procs, list(req.include), cc.use_cuda, req.warmup_occurrences)
    rank_idle(procs, ranked, table)  # each rank's GPU idle time by host state
    comm = rank_communication(procs, list(req.include), req.warmup_occurrences, table) if ranked else {}
    rank_notes += [f"communication: {n}" for n in comm.get("notes", [])]
    try:
        found, by, notes = find_stages(req, tr, cc.use_cuda, cc.output_tail, cc.work_dir, tests=cc.tests)
    except ExpectedError as e:
        if e.kind != "nothing_profiled" or not procs:
            raise
        if not ranked:
            raise ExpectedError(
                e.kind, f"{e} Its ranks: " + "; ".join(rank_notes or ["none recorded"])
            ) from None
        found, by, notes = [], "", []
    if ranked and not by:
        by = "kernel" if all(st.method == "GPU time per launch" for st in ranked) else "range"
    return found + ranked, by, notes + rank_notes, table, comm
