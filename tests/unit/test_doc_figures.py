"""Issue 41: the figures quoted in README.md, skills/*/SKILL.md, docs/*.md and benchmarks/README.md agree
with each other and with the records they come from.

Each :class:`Figure` reads its record — a benchmark's JSON or log under ``docs/evidence/``, the tables of
docs/diagnosis-calibration.md that tests/calibration/table.py computes from the recordings (and
tests/calibration/test_calibration.py checks are current), the kernel packages themselves (``kprof list``) —
and names every place it is quoted: a file and a pattern whose one group is the figure (a space in a
pattern matches any run of white space, line breaks included). The test fails when a quote differs from its
record, when a declared quote is no longer found (reworded: update its pattern here), and when a sentence
the records contradict comes back (:data:`CONTRADICTED`). A decimal quote agrees when it is the record
rounded to the quote's own decimals; anything else must be equal as text.

    python tests/unit/test_doc_figures.py            # every quote and whether it is current
    python tests/unit/test_doc_figures.py --write    # rewrite each stale quote with its record's figure
"""

from __future__ import annotations

import functools
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EV = ROOT / "docs" / "evidence"
CALIBRATION_DOC = ROOT / "docs" / "diagnosis-calibration.md"

README, SKILL, BENCH = "README.md", "skills/profile-kernel/SKILL.md", "benchmarks/README.md"
MODES, MEASURED, CLUSTER, TOOLS = "docs/modes.md", "docs/measured.md", "docs/cluster.md", "docs/tools.md"
PARSER, TOOL = "kprof_mcp/cli/parser.py", "kprof_mcp/face/tools_profile.py"  # help texts quote figures too
TOOL_BATCH = "kprof_mcp/face/tools_batch.py"


@dataclass(frozen=True)
class Figure:
    name: str
    record: Callable[[], str | float]  # the figure as its record gives it (a float: rounded per quote)
    quotes: tuple[tuple[str, str], ...]  # (file relative to the root, pattern with one group)


# ----------------------------------------------------------------------------- records
def _json(rel: str):
    return json.loads((EV / rel).read_text())


def _ratio(rel: str, num: str, den: str, phases: bool = True) -> float:
    d = _json(rel)
    p = d["phases"] if phases else d
    return p[num]["jobs_per_min"] / p[den]["jobs_per_min"]


@functools.cache
def _agent_loop() -> dict[str, tuple[str, str]]:
    """bench_agent_loop.py's table (the newest run): step -> (median seconds, ÷ fresh script)."""
    text = (EV / "h100-agent-loop" / "loop_vector_add_v0_run2.log").read_text()
    rows = re.findall(r"^\| (\w[\w ]*?) \| ([\d.]+) \| [^|]* \| ([\d.]+) \|", text, re.M)
    return {step: (s, x) for step, s, x in rows}


@functools.cache
def _agent_loop_now() -> dict[str, float]:
    """bench_agent_loop.py's newest run (docs/evidence/agent-loop, its logs' loop_before.json): each step's
    median wall seconds as the client waited."""
    import tarfile

    with tarfile.open(EV / "agent-loop" / "2026-11-26-h100-logs.tgz") as tgz:
        rows = json.load(tgz.extractfile("l/loop_before.json"))["rows"]
    return {step: statistics.median(xs) for step, xs in rows.items()}


@functools.cache
def _agent_loop_fixed() -> dict[str, float]:
    """bench_agent_loop.py after the clock-state fix and the next cuts (docs/evidence/agent-loop, i40e logs)."""
    import tarfile

    with tarfile.open(EV / "agent-loop" / "2026-11-26-h100-i40e-logs.tgz") as tgz:
        rows = json.load(tgz.extractfile("i40e/loop.json"))["rows"]
    return {step: statistics.median(xs) for step, xs in rows.items()}


def _fixed(step: str, over_fresh: bool = False) -> Callable[[], float]:
    def get() -> float:
        d = _agent_loop_fixed()
        return d[step] / d["fresh"] if over_fresh else d[step]

    return get


def _now(step: str, over_fresh: bool = False) -> Callable[[], float]:
    def get() -> float:
        d = _agent_loop_now()
        return d[step] / d["fresh"] if over_fresh else d[step]

    return get


def _compare(rel: str) -> re.Match:
    text = (EV / "h100-compare" / rel).read_text()
    m = re.search(r"\*\*v\d is ([\d.]+)× faster than v\d \(95 % CI ([\d.]+–[\d.]+)\)\*\*", text)
    assert m, f"no verdict in docs/evidence/h100-compare/{rel}"
    return m


def _noise_floor(kernel: str) -> float:
    """bench_noise_verdict.py's floor: (max − min) ÷ median of 8 locked A/A profiles, %."""
    series = _json("h100-thermal/noise_window.json")["floor"]["series"]
    return next(s["range_pct"] for s in series if f"{s['kernel']} {s['version']}" == kernel)


def _locked_spread(kernel: str) -> float:
    """bench_clock_protocol.py: the same spread of event-mode profiles at the locked clock, %."""
    xs = [
        p["duration_us"] for p in _json("h100-thermal/clock_protocol_window.json")["profiles"][kernel]["base"]
    ]
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs)


def _timing_truth() -> str:
    text = (EV / "h100-timing-truth" / "README.md").read_text()
    m = re.search(r"ours ÷ nsys within ±1 % \| \*\*(\d+ of \d+)\*\*", text)
    assert m, "docs/evidence/h100-timing-truth/README.md: no 'within ±1 %' row"
    return m.group(1)


def _event_timer() -> str:
    """The method event mode's recorded times name (kernel durations summed from CUPTI)."""
    d = _json("h100-timing-truth/timing_truth_vector_add_matmul_softmax.json")
    methods = {v["method"] for v in d["ours"].values()}
    assert methods == {"cupti_kernel_sum"}, methods
    return "CUPTI"


CALIBRATION_SECTIONS = {  # the generated sections of docs/diagnosis-calibration.md (tests/calibration/table.py)
    "calibration": "calibration-table",
    "holdout": "calibration-holdout",
    "fit": "accounting-fit",
    "acc_holdout": "accounting-holdout",
}


def _calibration(section: str, target: str) -> str:
    """'7 of 7': the pairs meeting ``target`` ('first' or 'within') in one generated table."""
    marker = CALIBRATION_SECTIONS[section]
    text = CALIBRATION_DOC.read_text().split(f"<!-- {marker}:begin -->")[1].split(f"<!-- {marker}:end -->")[0]
    line = {
        "first": r"Planted problem ranked first: (\d+ of \d+) pairs",
        "within": r"Top estimate within 2× of the measured gain: (\d+ of \d+) pairs",
    }[target]
    m = re.search(line, text)
    assert m, f"docs/diagnosis-calibration.md's {marker} section has no {target!r} line"
    return m.group(1)


def _library(bench: str, *path: str) -> Callable[[], float]:
    """A figure of the kernel library's benchmarks (docs/evidence/h100-library/bench_*.json)."""

    def get() -> float:
        d = _json(f"h100-library/{bench}.json")
        for key in path:
            d = (
                next(r for r in d if key in (r.get("name"), r.get("candidate")))
                if isinstance(d, list)
                else d[key]
            )
        return float(d)

    return get


def _held_back_sets() -> str:
    """How many held-back sets docs/diagnosis-calibration.md judges (one section each), as a word."""
    n = len(re.findall(r"^### .*[Hh]eld-back set \(", CALIBRATION_DOC.read_text(), re.M))
    words = "None One Two Three Four Five Six Seven Eight Nine Ten Eleven Twelve Thirteen Fourteen Fifteen Sixteen Seventeen Eighteen Nineteen Twenty Twenty-one Twenty-two Twenty-three Twenty-four Twenty-five Twenty-six Twenty-seven Twenty-eight Twenty-nine Thirty Thirty-one Thirty-two Thirty-three Thirty-four Thirty-five Thirty-six Thirty-seven Thirty-eight Thirty-nine Forty Forty-one Forty-two"  # noqa: E501
    return words.split()[n]


@functools.cache
def _versions() -> dict[str, list[str]]:
    """Each built-in kernel's versions, as `kprof list` gives them."""
    cp = subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "--workspace", str(ROOT), "list", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "KPROF_FORCE_CPU": "1"},
        timeout=300,
    )
    assert cp.returncode == 0, cp.stderr
    kernels = json.loads(cp.stdout)["kernels"]
    return {
        k["name"]: [v["name"] for v in k["versions"]]
        for k in kernels
        if k["source"].startswith(str(ROOT / "kernels"))
    }


def _version_range(kernel: str) -> str:
    names = _versions()[kernel]
    return f"{names[0]}–{names[-1]}"


def _loop(step: str, which: int) -> Callable[[], float]:
    return lambda: float(_agent_loop()[step][which])


def _cal(section: str, target: str) -> Callable[[], str]:
    return lambda: _calibration(section, target)


# ----------------------------------------------------------------------------- figures and quotes
FIGURES: list[Figure] = [
    Figure(
        "2 GPUs ÷ 1 GPU, cluster throughput (2 × H200)",
        lambda: _ratio("h200-cluster/cluster.json", "all GPUs", "one GPU"),
        (
            (CLUSTER, r"\*\*2 GPUs ÷ 1 GPU: ([\d.]+)\*\*"),
            (CLUSTER, r"uniform batch above: ([\d.]+)×"),
            (MEASURED, r"2 GPUs ran ([\d.]+)× the jobs per minute of one"),
            (BENCH, r"2 × H200: 2 GPUs ÷ 1 GPU ([\d.]+) \(2026-11-24, \[h200-cluster\]\([^)]*\)\); 1 H100: "),
        ),
    ),
    Figure(
        "cluster, 2 GPUs: jobs per minute",
        lambda: _json("h200-cluster/cluster.json")["phases"]["all GPUs"]["jobs_per_min"],
        ((CLUSTER, r"\| cluster, 2 GPUs \| [\d.]+ s \| ([\d.]+) \|"),),
    ),
    Figure(
        "cluster, 1 GPU: jobs per minute",
        lambda: _json("h200-cluster/cluster.json")["phases"]["one GPU"]["jobs_per_min"],
        ((CLUSTER, r"\| cluster, 1 GPU \| [\d.]+ s \| ([\d.]+) \|"),),
    ),
    Figure(
        "cluster ÷ local server on one GPU (H100)",
        lambda: _ratio("h100-cluster/bench-1gpu.json", "all GPUs", "local server"),
        (
            (CLUSTER, r"A cluster runs ([\d.]+)× the jobs per minute of a local server"),
            (MEASURED, r"at ([\d.]+)× a local server's jobs per minute on one GPU"),
            (BENCH, r"1 H100: ([\d.]+)× a local server's jobs/min"),
        ),
    ),
    Figure(
        "mixed batch, 2 GPUs ÷ 1 GPU (2 × H200)",
        lambda: _ratio("h200-cluster/mixed.json", "all GPUs", "one GPU", phases=False),
        (
            (CLUSTER, r"jobs/min, \*\*([\d.]+)×\*\*"),
            (MEASURED, r"a sweep and a command: ([\d.]+)×"),
            (BENCH, r"11 of 11 done, 2 GPUs ÷ 1 GPU ([\d.]+) "),
        ),
    ),
    Figure(
        "re-profile of an unchanged kernel, seconds (H100, warm worker)",
        _loop("same", 0),
        (
            (MODES, r"a re-profile of vector_add took ([\d.]+) s"),
            (SKILL, r"event-mode re-profile of vector_add took ([\d.]+) s on 2026-11-23"),
        ),
    ),
    Figure(
        "re-profile after an edit, seconds",
        _loop("edited", 0),
        (
            (MODES, r"one after an edit ([\d.]+) s, against"),
            (SKILL, r"one after you edit the kernel's source ([\d.]+) s then"),
        ),
    ),
    Figure(
        "the fresh hand-written script, seconds",
        _loop("fresh script", 0),
        ((MODES, r"against ([\d.]+) s for a fresh script"),),
    ),
    Figure(
        "re-profile ÷ fresh script",
        _loop("same", 1),
        (
            (MODES, r"with `do_bench` \(([\d.]+)× and [\d.]+×;"),
            (MEASURED, r"\(re-profile ([\d.]+)×, after an edit"),
            (BENCH, r"earlier: re-profile ([\d.]+)× \(2026-11-23"),
        ),
    ),
    Figure(
        "re-profile after an edit ÷ fresh script",
        _loop("edited", 1),
        (
            (MODES, r"with `do_bench` \([\d.]+× and ([\d.]+)×;"),
            (MEASURED, r"re-profile [\d.]+×, after an edit ([\d.]+)×;"),
        ),
    ),
    Figure(
        "first profile ÷ fresh script, from the handshake",
        _loop("first_from_handshake", 1),
        ((MEASURED, r"first profile ([\d.]+)× from the end of the MCP handshake"),),
    ),
    Figure(
        "first profile ÷ fresh script, from spawning the server",
        _loop("first_from_spawn", 1),
        ((MEASURED, r"([\d.]+)× from spawning the server"),),
    ),
    Figure(
        "re-profile with the build of 2026-11-26, seconds",
        _now("same"),
        (
            (SKILL, r"and ([\d.]+) s with the build of 2026-11-26"),
            (MODES, r"with the build of 2026-11-26 ([\d.]+) s and"),
        ),
    ),
    Figure(
        "re-profile after an edit with the build of 2026-11-26, seconds",
        _now("edited"),
        (
            (SKILL, r"source [\d.]+ s then, ([\d.]+) s now"),
            (MODES, r"2026-11-26 [\d.]+ s and ([\d.]+) s against"),
        ),
    ),
    Figure(
        "a re-profile after the clock-state fix, seconds",
        _fixed("same"),
        (
            (MODES, r"shorter CUDA-event window\) ([\d.]+) s"),
            (MEASURED, r"after the next cuts ([\d.]+) s"),
        ),
    ),
    Figure(
        "after an edit, after the clock-state fix, seconds",
        _fixed("edited"),
        ((MODES, r"CUDA-event window\) [\d.]+ s\s+and ([\d.]+) s,"),),
    ),
    Figure(
        "the fresh script after the clock-state fix, seconds",
        _fixed("fresh"),
        (
            (MODES, r"CUDA-event window\) [\d.]+ s\s+and [\d.]+ s, ([\d.]+) s for the script"),
            (MEASURED, r"cuts [\d.]+ s,\s+[\d.]+× a ([\d.]+) s script"),
        ),
    ),
    Figure(
        "re-profile ÷ fresh script after the clock-state fix",
        _fixed("same", over_fresh=True),
        (
            (MODES, r"for the script \(([\d.]+)× and"),
            (MEASURED, r"cuts [\d.]+ s,\s+([\d.]+)× a [\d.]+ s script"),
        ),
    ),
    Figure(
        "the fresh script on 2026-11-26, seconds",
        _now("fresh"),
        (
            (MODES, r"s and [\d.]+ s against ([\d.]+) s \("),
            (BENCH, r"the fresh script \(([\d.]+) s\)"),
        ),
    ),
    Figure(
        "re-profile ÷ fresh script, 2026-11-26",
        _now("same", over_fresh=True),
        (
            (SKILL, r"\(([\d.]+)× a fresh do_bench script"),
            (MODES, r"\(([\d.]+)× and [\d.]+×: 5 s"),
            (MEASURED, r"a re-profile took ([\d.]+)× the script"),
            (BENCH, r"re-profile [\d.]+ s = ([\d.]+)×, first"),
        ),
    ),
    Figure(
        "re-profile after an edit ÷ fresh script, 2026-11-26",
        _now("edited", over_fresh=True),
        (
            (MODES, r"\([\d.]+× and ([\d.]+)×: 5 s"),
            (BENCH, r"after an edit ([\d.]+)× the fresh script"),
        ),
    ),
    Figure(
        "first profile from spawn ÷ fresh script, 2026-11-26",
        _now("first_from_spawn", over_fresh=True),
        ((BENCH, r"= [\d.]+×, first ([\d.]+)×, after an edit"),),
    ),
    Figure(
        "compare_versions: matmul v1 → v3",
        lambda: _compare("cmp_matmul_v1_v3.md").group(1),
        (
            (SKILL, r'says "v3 is ([\d.]+)× faster than v1'),
            (TOOLS, r'\("v3 is ([\d.]+)× faster than v1'),
            (TOOL_BATCH, r'interval: "v3 is ([\d.]+)× faster than v1'),
            (MEASURED, r"matmul v1 → v3 \(([\d.]+)× faster"),
        ),
    ),
    Figure(
        "compare_versions: matmul v1 → v3, its 95 % CI",
        lambda: _compare("cmp_matmul_v1_v3.md").group(2),
        (
            (SKILL, r"faster than v1 \(95 % CI ([\d.]+–[\d.]+)\)\""),
            (TOOLS, r"faster than v1 \(95 % CI ([\d.]+–[\d.]+)\)\""),
            (TOOL_BATCH, r"faster than v1 \(95 % CI ([\d.]+–[\d.]+)\)\""),
            (MEASURED, r"matmul v1 → v3 \([\d.]+× faster, 95 % CI ([\d.]+–[\d.]+)\)"),
        ),
    ),
    Figure(
        "compare_versions: softmax v1 → v2",
        lambda: _compare("cmp_softmax_v1_v2.md").group(1),
        ((MEASURED, r"softmax v1 → v2 \(([\d.]+)×\)"),),
    ),
    Figure(
        "noise floor, matmul v3 (locked, %)",
        lambda: _noise_floor("matmul v3"),
        (
            (MODES, r"matmul v3's profiles spread ([\d.]+) % at a locked clock"),
            (SKILL, r"with the clock locked matmul v3's profiles spread ([\d.]+) %"),
            (BENCH, r"floor matmul v3 ([\d.]+) %"),
        ),
    ),
    Figure(
        "noise floor, softmax v2 (locked, %)",
        lambda: _noise_floor("softmax v2"),
        (
            (MODES, r"at a locked clock \(softmax v2 ([\d.]+) %"),
            (SKILL, r"profiles spread [\d.]+ %, softmax v2 ([\d.]+) %"),
        ),
    ),
    Figure(
        "noise floor, vector_add v1 (locked, %)",
        lambda: _noise_floor("vector_add v1"),
        (
            (MODES, r"at a locked clock \(softmax v2 [\d.]+ %, vector_add v1 ([\d.]+) %"),
            (SKILL, r"softmax v2 [\d.]+ %, vector_add v1 ([\d.]+) %;"),
        ),
    ),
    Figure(
        "locked spread with the timing window, matmul v3 (%)",
        lambda: _locked_spread("matmul v3"),
        (
            (MODES, r"locked profiles went from [\d.]+ % to ([\d.]+) %"),
            (BENCH, r"earlier ([\d.]+) %, [\d.]+ %, [\d.]+ % \(2026-11-24"),
        ),
    ),
    Figure(
        "locked spread with the timing window, softmax v2 (%)",
        lambda: _locked_spread("softmax v2"),
        (
            (MODES, r"\(max − min ÷ median over 8\), softmax v2 ([\d.]+) %"),
            (BENCH, r"earlier [\d.]+ %, ([\d.]+) %, [\d.]+ % \(2026-11-24"),
        ),
    ),
    Figure(
        "locked spread with the timing window, vector_add v1 (%)",
        lambda: _locked_spread("vector_add v1"),
        (
            (MODES, r"over 8\), softmax v2 [\d.]+ %, vector_add v1 ([\d.]+) %"),
            (BENCH, r"earlier [\d.]+ %, [\d.]+ %, ([\d.]+) % \(2026-11-24"),
        ),
    ),
    Figure(
        "event mode's kernel time within ±1 % of Nsight Systems (stages)",
        _timing_truth,
        (
            (MODES, r"within ±1 % of it for (\d+ of \d+) stages on an H100"),
            (SKILL, r"within ±1 % of it for (\d+ of \d+) stages on an H100"),
            (MEASURED, r"\((\d+ of \d+) stages within ±1 % of Nsight Systems"),
            (BENCH, r"every shipped version: (\d+ of \d+) stages within ±1 %"),
        ),
    ),
    Figure(
        "what event mode times a kernel with",
        _event_timer,
        (
            (README, r"each stage's kernel time from (\w+) with L2 flushed"),
            (MODES, r"then each stage's \*\*kernel time from (\w+)\*\*"),
            (PARSER, r'event \(kernel time "\s+"from (\w+);'),
            (TOOL, r"event — each stage's kernel time from (\w+) \(what Nsight"),
        ),
    ),
    Figure(
        "calibration set: planted cause first",
        _cal("calibration", "first"),
        (
            (MODES, r"the first calibration set has the planted cause first in (\d+ of \d+) pairs"),
            (SKILL, r"the planted problem ranked first in (\d+ of \d+) calibration pairs"),
        ),
    ),
    Figure(
        "calibration set: top estimate within 2×",
        _cal("calibration", "within"),
        (
            (MODES, r"and the top estimate within 2× in (\d+ of \d+), its hold-out set"),
            (SKILL, r"measured gain of the fix in (\d+ of \d+) calibration pairs"),
        ),
    ),
    Figure(
        "calibration hold-out set: planted cause first",
        _cal("holdout", "first"),
        (
            (MODES, r"its hold-out set (\d+ of \d+) and \d+ of \d+;"),
            (SKILL, r"calibration pairs and (\d+ of \d+) hold-out pairs; the top estimate"),
        ),
    ),
    Figure(
        "calibration hold-out set: top estimate within 2×",
        _cal("holdout", "within"),
        (
            (MODES, r"its hold-out set \d+ of \d+ and (\d+ of \d+);"),
            (SKILL, r"calibration pairs and (\d+ of \d+) hold-out pairs\."),
        ),
    ),
    Figure(
        "accounting set, fit half: cause first",
        _cal("fit", "first"),
        (
            (MODES, r"fit half (\d+ of \d+) and \d+ of \d+, hold-out half"),
            (SKILL, r"was opportunity 1 in (\d+ of \d+) \(fit half\)"),
        ),
    ),
    Figure(
        "accounting set, fit half: top estimate within 2×",
        _cal("fit", "within"),
        (
            (MODES, r"fit half \d+ of \d+ and (\d+ of \d+), hold-out half"),
            (SKILL, r"within 2× of the measured gain in (\d+ of \d+) and \d+ of \d+\. Held-back"),
        ),
    ),
    Figure(
        "accounting set, hold-out half: cause first",
        _cal("acc_holdout", "first"),
        (
            (MODES, r"hold-out half (\d+ of \d+) and \d+ of \d+\. [A-Z][a-z-]+ held-back"),
            (SKILL, r"\(fit half\) and (\d+ of \d+) \(hold-out half\)"),
        ),
    ),
    Figure(
        "accounting set, hold-out half: top estimate within 2×",
        _cal("acc_holdout", "within"),
        (
            (MODES, r"hold-out half \d+ of \d+ and (\d+ of \d+)\. [A-Z][a-z-]+ held-back"),
            (SKILL, r"within 2× of the measured gain in \d+ of \d+ and (\d+ of \d+)\. Held-back"),
        ),
    ),
    Figure(
        "matmul v3 ÷ torch.matmul, TFLOP/s (%)",
        _library("bench_matmul", "rows", "v3", "pct_of_torch"),
        (
            (MEASURED, r"v3 at ([\d.]+) % of torch.matmul's TFLOP/s"),
            (BENCH, r"v3 at ([\d.]+) % of torch.matmul's TFLOP/s"),
        ),
    ),
    Figure(
        "softmax v2, % of copy bandwidth",
        _library("bench_softmax", "candidates", "v2", "pct_of_copy"),
        (
            (MEASURED, r"v2 at ([\d.]+) % of copy bandwidth"),
            (BENCH, r"v2 at ([\d.]+) % of copy bandwidth"),
        ),
    ),
    Figure(
        "softmax v2 ÷ torch.softmax",
        _library("bench_softmax", "candidates", "v2", "speedup_vs_torch"),
        (
            (MEASURED, r"copy bandwidth, ([\d.]+)× torch.softmax"),
            (BENCH, r"copy bandwidth, ([\d.]+)× torch.softmax"),
        ),
    ),
    Figure(
        "mla_decode v3 ÷ the fp32 reference at the defaults",
        _library("bench_mla_final", "shapes", "defaults", "rows", "v3", "x_ref_fp32"),
        (
            (MEASURED, r"\(([\d.]+)× the PyTorch reference at the defaults"),
            (BENCH, r"v3 ([\d.]+)× the fp32 reference at the defaults"),
        ),
    ),
    Figure(
        "mla_decode v2, % of copy bandwidth at s=1, h=16",
        _library("bench_mla_final", "shapes", "memory-bound s=1 h=16", "rows", "v2", "pct_copy_bw"),
        (
            (MEASURED, r"([\d.]+) % of copy bandwidth at `s=1, h=16`"),
            (BENCH, r"v2 ([\d.]+) % of copy bandwidth at `s=1, h=16`"),
        ),
    ),
    Figure(
        "held-back calibration sets",
        _held_back_sets,
        ((MODES, r"([\w-]+) held-back sets in new classes, built by someone else"),),
    ),
    *(
        Figure(
            f"{kernel}'s versions",
            functools.partial(_version_range, kernel),
            ((README, rf"`{kernel}` \(([a-z0-9]+–[a-z0-9]+)[:)]"),),
        )
        for kernel in ("vector_add", "matmul", "softmax", "mla_decode", "two_streams", "tiny_chain")
    ),
]

# Sentences the records contradict (each was in the docs once): none may come back, in any quoting file.
CONTRADICTED = {
    r"2-GPU throughput is not yet measured": "docs/evidence/h200-cluster: 2 GPUs ÷ 1 GPU measured",
    r"`softmax` \(three-pass, online, single-pass\)": "softmax has four versions (`kprof list`)",
    r"event \(CUDA events;": "event mode's stage time is CUPTI's kernel time (CUDA events are the launch-inclusive row)",
    r"issue 26's 21 pairs": "docs/diagnosis-calibration.md's accounting tables",
    r"On 15 H100 pairs": "docs/diagnosis-calibration.md's accounting tables",
}


# ----------------------------------------------------------------------------- the check
def quoting_files() -> list[str]:
    files = {f for fig in FIGURES for f, _ in fig.quotes}
    files |= {README, BENCH, *(str(p.relative_to(ROOT)) for p in (ROOT / "skills").glob("*/SKILL.md"))}
    files |= {str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")}
    return sorted(files)


def read_texts() -> dict[str, str]:
    return {f: (ROOT / f).read_text() for f in quoting_files()}


def _pattern(p: str) -> re.Pattern:
    return re.compile(p.replace(" ", r"\s+"))


def _agrees(quoted: str, record: str | float) -> str | None:
    """None when the quote agrees with the record; else the record as the quote should read."""
    if isinstance(record, float):
        decimals = len(quoted.split(".")[1]) if "." in quoted else None
        want = f"{record:.{decimals if decimals else 2}f}"
        return None if decimals and quoted == want else want
    return None if quoted == record else record


def problems(texts: dict[str, str], figures: list[Figure] = FIGURES) -> list[str]:
    """Every disagreement, one line each (empty: every quote is its record's figure)."""
    out = []
    for fig in figures:
        record = fig.record()
        for f, pattern in fig.quotes:
            found = list(_pattern(pattern).finditer(texts[f]))
            if not found:
                out.append(f"{fig.name}: {f}: no quote matches {pattern!r} (reworded? update its pattern)")
            for m in found:
                want = _agrees(m.group(1), record)
                if want is not None:
                    line = texts[f].count("\n", 0, m.start(1)) + 1
                    out.append(f"{fig.name}: {f}:{line} says {m.group(1)}, its record {want}")
    for pattern, why in CONTRADICTED.items():
        for f, text in texts.items():
            if _pattern(pattern).search(text):
                out.append(f"{f}: {pattern!r} is back, but {why}")
    return out


def rewrite(texts: dict[str, str]) -> dict[str, str]:
    """The texts with every stale quote replaced by its record's figure."""
    texts = dict(texts)
    for fig in FIGURES:
        record = fig.record()
        for f, pattern in fig.quotes:
            for m in reversed(list(_pattern(pattern).finditer(texts[f]))):
                want = _agrees(m.group(1), record)
                if want is not None:
                    texts[f] = texts[f][: m.start(1)] + want + texts[f][m.end(1) :]
    return texts


# ----------------------------------------------------------------------------- tests
def test_every_quoted_figure_is_its_records():
    assert not problems(read_texts()), "\n".join(problems(read_texts()))


def test_a_drifted_figure_is_caught():
    """Mutations: a quote changed in one file, a record that moved, a quote reworded away, a sentence the
    records contradict put back — each is reported, naming the figure and the file."""
    texts = read_texts()
    assert not problems(texts)

    drifted = {
        **texts,
        CLUSTER: texts[CLUSTER].replace("**2 GPUs ÷ 1 GPU: 1.91**", "**2 GPUs ÷ 1 GPU: 1.97**"),
    }
    assert drifted[CLUSTER] != texts[CLUSTER]
    (p,) = problems(drifted)
    assert p.startswith("2 GPUs ÷ 1 GPU, cluster throughput (2 × H200): docs/cluster.md:") and p.endswith(
        "says 1.97, its record 1.91"
    ), p
    assert not problems(rewrite(drifted))  # --write puts the record's figure back

    skill = texts[SKILL].replace(
        "ranked first in 7 of 7 calibration pairs", "ranked first in 8 of 8 calibration pairs"
    )
    assert skill != texts[SKILL]
    assert any(
        "calibration set: planted cause first: skills/" in p for p in problems({**texts, SKILL: skill})
    )

    moved = [
        Figure(f.name, (lambda: 1.95) if f.name.startswith("2 GPUs ÷ 1 GPU") else f.record, f.quotes)
        for f in FIGURES
    ]
    assert len([p for p in problems(texts, moved) if "its record 1.95" in p]) == 4  # every quote of it

    reworded = {**texts, MEASURED: texts[MEASURED].replace("2 GPUs ran", "two GPUs ran")}
    assert any("no quote matches" in p for p in problems(reworded))

    back = {**texts, README: texts[README] + "\nthe 2-GPU throughput is not yet measured\n"}
    assert any("is back" in p for p in problems(back))


def test_skill_steps_are_numbered_once():
    """SKILL.md's loop: one numbered list, 1 to n, no number twice in the file."""
    for path in (ROOT / "skills").glob("*/SKILL.md"):
        numbers = [int(n) for n in re.findall(r"^(\d+)\. ", path.read_text(), re.M)]
        assert numbers == list(range(1, len(numbers) + 1)), (path, numbers)


def test_every_relative_link_of_the_docs_resolves():
    """README's map and the pages moved to docs/ link to each other and to the evidence: no dead link."""
    dead = []
    for f in (README, *(p for p in quoting_files() if p.endswith(".md") and p != BENCH)):
        for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", (ROOT / f).read_text()):
            if (
                not m.group(1).startswith(("http://", "https://"))
                and not ((ROOT / f).parent / m.group(1)).exists()
            ):
                dead.append(f"{f}: {m.group(1)}")
    assert not dead, dead


def test_the_readme_gets_a_newcomer_to_a_first_result_in_its_first_screen():
    """Issue 41: what it is, the two commands, an example for an agent and one for a person, then a map of
    docs/ naming every page there; the mode detail lives in docs/, not in the README."""
    lines = (ROOT / README).read_text().splitlines()
    at = {ln: i + 1 for i, ln in enumerate(lines) if ln.startswith("## ")}
    assert at["## Set up and run (two commands)"] <= 10, at
    assert (
        at["## Set up and run (two commands)"]
        < at["## For an agent"]
        < at["## For a person"]
        < at["## The docs"]
    )
    assert at["## The docs"] <= 65, f"the map of the docs starts at line {at['## The docs']}"
    docs_map = "\n".join(lines[at["## The docs"] :]).split("\n## ")[0]
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == set(re.findall(r"\(docs/([\w-]+\.md)\)", docs_map)), pages
    assert not {"## Event mode, precisely", "## Nsight Compute modes, precisely", "## Tools"} & set(at)
    assert len(lines) <= 150, len(lines)


if __name__ == "__main__":
    texts = read_texts()
    if "--write" in sys.argv[1:]:
        for f, text in rewrite(texts).items():
            if text != texts[f]:
                (ROOT / f).write_text(text)
                print(f"rewrote {f}")
    else:
        for fig in FIGURES:
            print(f"{fig.name}: {fig.record()}")
        print("\n".join(problems(texts)) or "every quote is current")
