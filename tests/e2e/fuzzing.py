"""What the fuzz tests share (test_fuzz.py over stdio, test_fuzz_http.py over streamable HTTP):
argument strategies for every tool, the workspace they run against, and the tally that judges
each answer.

Every answer must be a result, or an error that says what was wrong: no bare "Error executing
tool <name>" (an unexpected exception), no text over 2,000 characters whatever the input (10,000
-entry lists, 5,000-digit numbers, 300-byte path components), and no absolute path outside the
workspace that the input did not contain itself (a resolved link target, the server's own files).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

MAX_ERROR_CHARS = 2000

# ------------------------------------------------------------------ hostile values
# Built once: drawn with sampled_from, so hypothesis neither generates nor shrinks 10,000 items.
_HUGE_LISTS = (
    list(range(10_000)),
    [f"v{i}" for i in range(10_000)],
    ["v0"] * 10_000,
    [{"n": i} for i in range(10_000)],
    [None] * 10_000,
    ["a" * 12] * 10_000,
)
_HUGE_DICTS = (
    {f"k{i}": i for i in range(10_000)},
    {str(i): {"flops": "x"} for i in range(10_000)},
    {"n": list(range(10_000))},
)
huge_lists = st.sampled_from(range(len(_HUGE_LISTS))).map(lambda i: _HUGE_LISTS[i])
huge_dicts = st.sampled_from(range(len(_HUGE_DICTS))).map(lambda i: _HUGE_DICTS[i])
# Integer strings past Python's int max-str-digits limit (4,300): int() raises ValueError on them.
huge_digits = st.builds(
    lambda n, sign: sign + "9" * n, st.integers(5000, 6000), st.sampled_from(["", "-", "+", " "])
)
# A path component over the file system's 255 bytes: ENAMETOOLONG on any lookup.
long_paths = st.builds(
    lambda n, c, where: where.format(c * n),
    st.integers(256, 400),
    st.sampled_from(["a", "é", "x.", "_"]),
    st.sampled_from(
        [
            "{}",
            "x/{}",
            "{}/y",
            "../{}",
            "/tmp/{}",
            "{}.py",
            "out/profiles/{}",
            "kernels/{}",
            "./{}/__init__.py",
        ]
    ),
)
hostile = st.one_of(huge_lists, huge_dicts, huge_digits, long_paths)

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    huge_digits,
    st.sampled_from([10**4200, -(10**4200)]),  # a JSON number just under what the SDK's parser takes
    st.sampled_from(
        [
            "../../etc/passwd",
            "/etc",
            "--set full",
            "-o /tmp/x",
            "; rm -rf /",
            "$(id)",
            "\x00",
            "~",
            "vector_add",
            "matmul",
            "v0",
            "v1",
            "event",
            "annotation",
            "ncu",
            "nsys",
            "base",
            "none",
            "float32",
            "bfloat16",
            "out/profiles",
            "docs/kernels/x.md",
            "é" * 300,
            "1" * 4300,
        ]
    ),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
names = st.sampled_from(
    [
        "vector_add",
        "matmul",
        "softmax",
        "mla_decode",
        "tiny_chain",
        "two_streams",
        "nope",
        "../kernels/matmul",
        "/etc",
        "kernels/vector_add",
        "",
        "ok.py",
        "okmod",
        "lnk",
        "lnk.py",
        "lnkpkg",
    ]
)
# Paths in the workspace prepare_workspace makes, links to outside it among them.
ws_paths = st.sampled_from(
    [
        "prof",
        "prof/params.json",
        "prof/result.json",
        "lnk",
        "lnk/secret.py",
        "lnk.py",
        "sub",
        "sub/..",
        ".",
        "out/profiles",
        "ok.py",
        "lnkpkg",
        "lnkpkg/__init__.py",
    ]
)


def maybe(strategy):
    """The field's plausible values, any JSON, or a hostile one."""
    return st.one_of(strategy, json_value, hostile)


# ------------------------------------------------------------------ profile_command's argument vectors
_PYTHONS = st.sampled_from(
    ["python", "python3", "/usr/bin/python3", "python3.11", "bash", "sh", "", "python -m"]
)
_SCRIPTS = st.sampled_from(
    [
        "ok.py",
        "./ok.py",
        "sub/../ok.py",
        "missing.py",
        "../outside.py",
        "/etc/passwd",
        "/tmp",
        "sub",
        "ok.py\x00",
        "~/x.py",
        "/proc/self/environ",
        "/usr/lib/python3/dist-packages",
        "lnk.py",
        "lnk/secret.py",
    ]
)
_MODULES = st.sampled_from(
    [
        "okmod",
        "pytest",
        "os",
        "json.tool",
        "timeit",
        "http.server",
        "cProfile",
        "..x",
        "a.b.c",
        "okmod.sub",
        "runpy",
        "sub",
        "-c",
        "lnkmod",
        "lnk.secret",
        "lnkpkg",
    ]
)
_ARGS = st.one_of(
    st.sampled_from(
        [
            "--steps",
            "5",
            "-k",
            "x",
            "ok.py",
            "/etc/passwd",
            "--rootdir=/",
            "-p",
            "no:cacheprovider",
            "--basetemp=/tmp/x",
            "-o",
            "../x",
            "~/x",
            "-c",
            "--",
            "ok.py::test_x",
            "--confcutdir=..",
            "-x",
        ]
    ),
    st.text(max_size=20),
    long_paths,
)
argv = st.one_of(
    st.tuples(_PYTHONS, _SCRIPTS, st.lists(_ARGS, max_size=3)).map(lambda t: [t[0], t[1], *t[2]]),
    st.tuples(_PYTHONS, _MODULES, st.lists(_ARGS, max_size=3)).map(lambda t: [t[0], "-m", t[1], *t[2]]),
    st.tuples(_PYTHONS, st.sampled_from(["import os; os.system('id')", "print(1)", ""])).map(
        lambda t: [t[0], "-c", t[1]]
    ),
    st.tuples(_PYTHONS, st.sampled_from(["-u", "-X", "-I", "-O", "--", "-W", "-"]), _SCRIPTS).map(list),
    long_paths.map(lambda p: ["python", p]),
    long_paths.map(lambda p: ["python", "-m", p.replace("/", ".")]),
    st.lists(_ARGS, max_size=4),
    huge_lists,
    json_value,
)

# ------------------------------------------------------------------ every tool
TOOLS = {
    "list_kernels": st.fixed_dictionaries({}),
    "device_info": st.fixed_dictionaries({}),
    "classify_bottleneck": st.fixed_dictionaries(
        {"tc_pct": maybe(st.floats(-10, 110)), "dram_pct": maybe(st.floats(-10, 110))},
        optional={
            "occupancy_pct": maybe(st.floats(0, 100)),
            "l2_hit_pct": json_value,
            "local_spill_bytes": json_value,
            "waves_per_sm": json_value,
            "compute_pct": json_value,
            "dram_bytes_over_model": json_value,
            "grid_blocks": maybe(st.integers(0, 1000)),
            "sm_count": json_value,
        },
    ),
    "read_params": st.fixed_dictionaries({"profile_dir": maybe(st.one_of(ws_paths, st.text(max_size=60)))}),
    "update_devlog": st.fixed_dictionaries(
        {"kernel": maybe(names), "profile_dir": maybe(st.one_of(ws_paths, st.text(max_size=40)))},
        optional={"issues": maybe(st.lists(st.text(max_size=20), max_size=3)), "insights": json_value},
    ),
    # rounds always out of range: a valid measurement would run and store a floor in the user's cache
    "measure_noise": st.fixed_dictionaries(
        {
            "rounds": st.one_of(st.integers(-5, 1), st.integers(51, 10**6), st.text(max_size=5), st.none()),
            "wait_s": st.just(0),
        },
        optional={
            "cases": st.one_of(
                json_value,
                huge_lists,
                st.lists(
                    st.fixed_dictionaries(
                        {"kernel": maybe(names), "version": maybe(st.sampled_from(["v0", "v1", "v9", ""]))},
                        optional={"params": st.one_of(json_value, huge_dicts)},
                    ),
                    max_size=9,
                ),
            ),
            "clock_control": json_value,
        },
    ),
    "profile_kernel": st.fixed_dictionaries(
        {"kernel": maybe(names)},
        optional={
            "version": maybe(st.sampled_from(["v0", "v1", "v9", ""])),
            "params": st.one_of(
                st.dictionaries(
                    st.sampled_from(["n", "M", "N", "K", "dtype", "b", "t", "x"]),
                    st.one_of(json_scalar, hostile),
                    max_size=4,
                ),
                json_value,
                huge_dicts,
            ),
            "mode": maybe(st.sampled_from(["event", "annotation", "ncu", "nsys", "EVENT"])),
            "baseline": maybe(st.one_of(ws_paths, st.text(max_size=40))),
            "ncu_launches": json_value,
            "clock_control": json_value,
            "timeline_iters": json_value,
            "timeout_s": json_value,
            "wait_s": st.one_of(st.just(0), json_value),
        },
    ),
    "get_profile": st.fixed_dictionaries(
        {"job_id": maybe(st.text(max_size=20))}, optional={"wait_s": st.one_of(st.floats(0, 0.5), json_value)}
    ),
    "cancel_profile": st.fixed_dictionaries({"job_id": maybe(st.text(max_size=20))}),
    "compare_versions": st.fixed_dictionaries(
        {
            "kernel": maybe(names),
            "versions": maybe(st.lists(st.sampled_from(["v0", "v1", "v9", ""]), max_size=4)),
            "wait_s": st.just(0),
        },  # valid comparisons run on as jobs; the call must answer at once
        optional={
            "params": st.one_of(
                st.dictionaries(st.sampled_from(["n", "dtype", "x"]), json_scalar, max_size=2),
                json_value,
                huge_dicts,
            ),
            "budget_ms": json_value,
            "rounds": maybe(st.integers(0, 300)),
            "timeout_s": json_value,
            "param_sets": st.one_of(
                json_value,
                huge_lists,
                st.lists(
                    st.dictionaries(st.sampled_from(["n", "dtype"]), json_scalar, max_size=2), max_size=3
                ),
            ),
            "mode": maybe(st.sampled_from(["event", "annotation", "nsys", "warp"])),
        },
    ),
    "sweep": st.fixed_dictionaries(
        {
            "kernel": maybe(names),
            "param": maybe(st.sampled_from(["n", "t", "x", ""])),
            "values": maybe(st.lists(json_scalar, max_size=3)),
            "wait_s": st.just(0),
        },
        optional={
            "versions": maybe(st.lists(st.sampled_from(["v0", "v1", "v9"]), max_size=3)),
            "params": st.one_of(json_value, huge_dicts),
            "budget_ms": json_value,
            "timeout_s": json_value,
        },
    ),
    "profile_command": st.fixed_dictionaries(
        {"command": argv, "wait_s": st.just(0)},
        optional={
            "mode": maybe(st.sampled_from(["event", "nsys", "annotation", "ncu"])),
            "include": maybe(st.lists(st.sampled_from(["forward", "layer*", "", "[", "*"]), max_size=3)),
            "stage_models": st.one_of(
                json_value,
                huge_dicts,
                st.dictionaries(
                    st.sampled_from(["forward", "x"]),
                    st.dictionaries(st.sampled_from(["flops", "bytes", "dtype"]), json_scalar, max_size=3),
                    max_size=2,
                ),
            ),
            "cwd": maybe(st.one_of(ws_paths, st.sampled_from(["..", "/", "/tmp", ""]))),
            "max_kernels": json_value,
            "clock_control": json_value,
            "timeline_engine": json_value,
            "warmup_occurrences": json_value,
            "timeout_s": json_value,
        },
    ),
}
# Valid requests, mixed in so that some calls pass validation and queue a job (cancelled at once).
_VALID = {
    "profile_kernel": st.fixed_dictionaries(
        {
            "kernel": st.sampled_from(["vector_add", "kernels/vector_add"]),
            "mode": st.sampled_from(["event", "nsys"]),
            "params": st.fixed_dictionaries({"n": st.integers(1, 4096)}),
            "wait_s": st.just(0),
        }
    ),
    "compare_versions": st.fixed_dictionaries(
        {
            "kernel": st.just("vector_add"),
            "versions": st.just(["v0", "v1"]),
            "params": st.just({"n": 1024}),
            "wait_s": st.just(0),
        }
    ),
    "sweep": st.fixed_dictionaries(
        {
            "kernel": st.just("vector_add"),
            "param": st.just("n"),
            "values": st.lists(st.integers(1, 4096), min_size=1, max_size=3),
            "wait_s": st.just(0),
        }
    ),
    "profile_command": st.fixed_dictionaries(
        {
            "command": st.sampled_from(
                [
                    ["python", "ok.py"],
                    ["python", "-m", "okmod"],
                    ["python3", "sub/../ok.py", "-x"],
                    ["python", "-m", "pytest", "ok.py", "-q"],
                ]
            ),
            "wait_s": st.just(0),
        },
        optional={
            "mode": st.sampled_from(["event", "nsys"]),
            "include": st.just(["forward"]),
            "cwd": st.just("."),
        },
    ),
}
_VALID["classify_bottleneck"] = st.fixed_dictionaries({"tc_pct": st.just(70), "dram_pct": st.just(10)})
# The fields a mutant of each valid request may get wrong ("params.<name>": one parameter).
_FIELDS = {
    "profile_kernel": [
        "kernel",
        "version",
        "mode",
        "params",
        "params.n",
        "params.dtype",
        "params.x",
        "baseline",
        "ncu_launches",
        "clock_control",
        "timeline_iters",
        "timeline_engine",
        "timeout_s",
    ],
    "compare_versions": [
        "kernel",
        "versions",
        "params",
        "params.n",
        "param_sets",
        "mode",
        "budget_ms",
        "rounds",
        "timeout_s",
    ],
    "sweep": ["kernel", "param", "values", "versions", "params", "params.dtype", "budget_ms", "timeout_s"],
    "profile_command": [
        "command",
        "cwd",
        "include",
        "stage_models",
        "mode",
        "max_kernels",
        "clock_control",
        "timeline_engine",
        "warmup_occurrences",
        "timeout_s",
    ],
    "classify_bottleneck": [
        "tc_pct",
        "dram_pct",
        "occupancy_pct",
        "grid_blocks",
        "sm_count",
        "duration_us",
        "local_bytes_share_pct",
    ],
}


def _one_field_wrong(valid, fields: list[str]):
    """A valid request with one field replaced by a hostile or arbitrary value: past the checks
    that come first, to the one that must refuse it (a 5,000-digit ``n`` reaches the parameter
    bounds only with a valid kernel, version and mode). ``wait_s`` stays 0."""

    def mutate(drawn):
        args, name, value = drawn
        args = dict(args)
        if name.startswith("params."):
            args["params"] = {
                **(args.get("params") if isinstance(args.get("params"), dict) else {}),
                name[7:]: value,
            }
        else:
            args[name] = value
        return args

    return st.tuples(valid, st.sampled_from(fields), st.one_of(hostile, json_value)).map(mutate)


TOOLS.update(
    {
        name: st.one_of(TOOLS[name], valid, _one_field_wrong(valid, _FIELDS[name]))
        for name, valid in _VALID.items()
    }
)
call = st.sampled_from(sorted(TOOLS)).flatmap(lambda name: st.tuples(st.just(name), TOOLS[name]))


def draw_calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` (tool, arguments) pairs, the same ones every run (derandomized hypothesis): for a test
    that makes its calls from many clients at once, outside hypothesis' one-example-at-a-time loop."""
    drawn: list[tuple[str, dict[str, Any]]] = []

    @settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
        phases=[Phase.generate],
    )
    @given(c=call)
    def collect(c):
        drawn.append(c)

    collect()
    return drawn


def prepare_workspace(ws: Path) -> Path:
    """What the fuzzed arguments name: a script and a module that run (so some commands are
    valid and become jobs), a sub-directory for ``cwd``, and links to a directory outside the
    workspace (a cloned repository can hold any): a directory, a script, a module, a package's
    ``__init__.py``, a profile's ``params.json`` and ``result.json``. The outside directory is
    returned: nothing may name it (the leak check) or run its code (:func:`untouched`)."""
    outside = ws.parent / f"{ws.name}-outside"
    outside.mkdir()
    (outside / "secret.py").write_text("open(__file__ + '.ran', 'w').write('ran')\n")
    (outside / "params.json").write_text('{"stolen": true}')
    (ws / "ok.py").write_text("x = sum(range(10))\n")
    (ws / "okmod.py").write_text("x = sum(range(10))\n")
    (ws / "sub").mkdir()
    (ws / "prof").mkdir()
    (ws / "lnkpkg").mkdir()
    for link, target in (
        ("lnk", outside),
        ("lnk.py", outside / "secret.py"),
        ("lnkmod.py", outside / "secret.py"),
        ("lnkpkg/__init__.py", outside / "secret.py"),
        ("prof/params.json", outside / "params.json"),
        ("prof/result.json", outside / "params.json"),
    ):
        (ws / link).symlink_to(target)
    return outside


def untouched(outside: Path) -> bool:
    """Nothing ran the outside directory's code, nor wrote there."""
    return sorted(p.name for p in outside.iterdir()) == ["params.json", "secret.py"]


# An absolute path in a message: '/' not preceded by a word character, '.', ':' or '/' (so neither
# "TFLOP/s", "1/(1 − share)" nor a URL's "//host").
_ABS_PATH = re.compile(r"(?<![\w.:/~\\-])/[^\s'\"`,;()\[\]{}<>|*]+")


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class Tally:
    """The figures of one fuzz run and the failures found, each answer judged by :meth:`answer`.

    A message may name a path under the workspace, a path the input gave (also resolved against
    the workspace: "../x" shown as /parent/of/workspace/x says nothing the workspace's own path,
    which messages name, does not), or a path the server publishes anyway (:meth:`publish`: the
    kernel packages' sources, from list_kernels). Any other absolute path is a leak: a link's
    target, the server's own files."""

    def __init__(self, workspace: Path):
        self.workspace = str(workspace)
        self.published: set[str] = set()
        self.stats = {
            "calls": 0,
            "ok": 0,
            "tool_error": 0,
            "protocol_error": 0,
            "unexpected": 0,
            "transport": 0,
        }
        self.failures: list[str] = []

    def publish(self, list_kernels_result: dict[str, Any]) -> None:
        """The kernel directories list_kernels names (each package's source and its parent)."""
        for k in list_kernels_result["kernels"]:
            self.published |= {k["source"], os.path.dirname(k["source"])}

    def _fail(self, name: str, args: Any, what: str) -> None:
        self.failures.append(f"{name}({repr(args)[:300]}): {what}")

    def _check_text(self, name: str, args: Any, text: str) -> None:
        if len(text) > MAX_ERROR_CHARS:
            self._fail(name, args, f"error text of {len(text)} characters: {text[:200]!r}")
        given = None  # what the input named, built only for a path no cheaper rule allows (issue 40:
        # joining every string of a 10,000-entry input took most of the fuzzers' own CPU time)
        for path in _ABS_PATH.findall(text):
            path = re.split(r"…|\.\.\.", path)[0].rstrip(
                "."
            )  # a quote cut short: its start is what was given
            if (
                path in ("", "/", self.workspace)
                or path.startswith(self.workspace + "/")
                or path in self.published
            ):
                continue
            if given is None:
                strings = [s for s in _strings(args) if len(s) < 5000]
                given = "\n".join(
                    [
                        repr(args),
                        *(
                            os.path.normpath(os.path.join(self.workspace, s))
                            for s in strings
                            if "\x00" not in s
                        ),
                    ]
                )
            if path in given:
                continue
            self._fail(
                name,
                args,
                f"message names {path!r}, outside the workspace and not in the input: {text[:300]!r}",
            )

    def answer(self, name: str, args: Any, r) -> None:
        """A CallToolResult: ok, or an error with a reason (bounded, revealing no outside path). The
        server's last-resort answer to an exception no check anticipated ("internal error in
        <tool>: ...") has a reason, but is a bug all the same."""
        self.stats["calls"] += 1
        if not r.is_error:
            self.stats["ok"] += 1
            return
        text = r.content[0].text if r.content else ""
        if text.strip() in (f"Error executing tool {name}", "") or text.rstrip().endswith(
            f"Error executing tool {name}"
        ):
            self.stats["unexpected"] += 1
            self._fail(name, args, "unexpected exception (no message)")
        elif f"internal error in {name}:" in text:
            self.stats["unexpected"] += 1
            self._fail(name, args, f"unexpected exception: {text[:300]!r}")
        else:
            self.stats["tool_error"] += 1
        self._check_text(name, args, text)

    def protocol_error(self, name: str, args: Any, e: Exception) -> None:
        """A JSON-RPC error answer (arguments the protocol layer rejects): the server lives."""
        self.stats["calls"] += 1
        self.stats["protocol_error"] += 1
        self._check_text(name, args, str(e))

    def transport_error(self, name: str, args: Any, e: BaseException) -> None:
        """No answer at all: the server died or the connection broke."""
        self.stats["calls"] += 1
        self.stats["transport"] += 1
        self._fail(name, args, f"transport {type(e).__name__}: {e}")


def job_to_cancel(r) -> str | None:
    """The job a valid call queued (it answered at once with wait_s 0), to be cancelled right away:
    the fuzz exercises queueing and cancelling without running dozens of profiles."""
    s = (r.structured_content or {}) if not r.is_error else {}
    return s.get("job_id") if s.get("status") in ("queued", "running") else None
