"""The static instruction mix in a profile: a Triton kernel compiled for sm_90 on this CPU machine
(Triton's own ptxas), its cubin listed by Triton's cuobjdump, the mix stored in the stage's
resources beside ``compiled/<stage>/kernel.sass``, and report.md's table of it."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from kprof_mcp.models import Resources
from kprof_mcp.render.report import sass_mix_lines
from kprof_mcp.tools.sass import cuobjdump

COMPILE = """
import sys
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from kprof_mcp.capture.artifacts import write_compiled


@triton.jit
def dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    tl.atomic_add(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y))


src = triton.compiler.ASTSource(
    fn=dot, signature={"a": "*fp16", "b": "*fp16", "c": "*fp32"}, constexprs={"BM": 64, "BN": 64, "BK": 32}
)
ret = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
print(write_compiled(ret, __import__("pathlib").Path(sys.argv[1])).model_dump_json())
"""


@pytest.mark.skipif(cuobjdump() is None, reason="no cuobjdump (Triton's nvidia backend ships one)")
def test_a_compiled_kernel_gets_its_sass_listing_and_static_mix(tmp_path):
    # Compiled in a process of its own: this one runs Triton's interpreter (conftest).
    d = tmp_path / "compiled" / "dot"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    script = tmp_path / "compile_dot.py"  # Triton reads a kernel's source from its file
    script.write_text(COMPILE)
    cp = subprocess.run(
        [sys.executable, str(script), str(d)], capture_output=True, text=True, env=env, timeout=300
    )
    assert cp.returncode == 0, cp.stderr[-3000:]
    res = Resources.model_validate_json(cp.stdout.strip().splitlines()[-1])
    assert (
        (d / "kernel.cubin").is_file()
        and "HGMMA" in (d / "kernel.sass").read_text()
        or "HMMA" in (d / "kernel.sass").read_text()
    )
    mix = res.sass_mix
    assert mix["tensor_core"] >= 1 and mix["global_load"] >= 2 and mix["atomic"] >= 1, mix
    assert Resources.model_validate_json((d / "resources.json").read_text()).sass_mix == mix
    # ...and the TTIR's operations by source line (parsers/ttir): the fp16 dot and the atomic
    ops = {(o["kind"], o["detail"], o["line"]) for o in res.ir_ops}
    assert ops == {("dot", "f16", "compile_dot.py:14"), ("atomic", "fadd", "compile_dot.py:14")}, ops


def test_report_shows_the_mix_labelled_as_static(tmp_path):
    from conftest import h100_result

    r = h100_result("matmul", "v1").model_copy(deep=True)
    assert sass_mix_lines(r) == []  # recorded before the mix existed: nothing shown, nothing invented
    s = r.stages[0]
    s.resources = s.resources.model_copy(
        update={"sass_mix": {"tensor_core": 4, "global_load": 64, "atomic": 64}}
    )
    lines = sass_mix_lines(r)
    assert "static instruction mix (SASS listing, not executed counts)" in lines[1]
    assert "| Stage | tensor_core | global_load | atomic | total |" in lines
    assert f"| {s.name} | 4 | 64 | 64 | 132 |" in lines


def test_the_listing_of_an_unchanged_cubin_is_made_once_per_process(tmp_path, monkeypatch):
    """A warm worker re-profiling an unchanged kernel lists the same cubin again: the listing is kept by
    the cubin's digest (issue 40), and a changed cubin is listed anew."""
    from kprof_mcp.tools import sass

    calls = tmp_path / "calls"
    tool = tmp_path / "cuobjdump"
    tool.write_text(f'#!/bin/sh\necho x >> {calls}\necho "SASS of"; cat "$2"\n')
    tool.chmod(0o755)
    monkeypatch.setattr(sass, "cuobjdump", lambda: tool)
    monkeypatch.setattr(sass, "_LISTINGS", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cubin = tmp_path / "kernel.cubin"
    cubin.write_bytes(b"one")
    assert sass.sass_listing(cubin) == "SASS of\none" and sass.sass_listing(cubin) == "SASS of\none"
    assert calls.read_text().count("x") == 1
    cubin.write_bytes(b"two")  # an edit: another binary
    assert sass.sass_listing(cubin) == "SASS of\ntwo" and calls.read_text().count("x") == 2
    # another process (a confined warm worker runs one job: issue 38): the listing from the disk cache
    monkeypatch.setattr(sass, "_LISTINGS", {})
    assert sass.sass_listing(cubin) == "SASS of\ntwo" and calls.read_text().count("x") == 2
    assert len(list((tmp_path / "cache" / "kprof-mcp" / "sass").glob("*.sass"))) == 2
