"""What Triton emits for its math functions (no GPU needed): compiles small elementwise Triton
kernels for sm_90 with Triton's own ptxas and disassembles them with Triton's cuobjdump, then
counts the instructions of each kernel by Nsight Compute pipe (``fastpath_mix.pipe``), minus the
copy kernel's. Shows which Triton call is the precise libdevice routine and which the MUFU one.

Usage: python triton_math_mix.py [sm]    Writes the table (JSON) to stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.language.extra.cuda import libdevice

sys.path.insert(0, str(Path(__file__).parent))
from fastpath_mix import counts, fast_path, kernels  # noqa: E402


def _kernel(f):
    @triton.jit
    def k(a, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, f(tl.load(a + i, mask=m)), mask=m)

    return k


@triton.jit
def _copy(x):
    return x


@triton.jit
def _sin(x):
    return tl.sin(x)


@triton.jit
def _fast_sinf(x):
    return libdevice.fast_sinf(x)


@triton.jit
def _exp(x):
    return tl.exp(x)


@triton.jit
def _libdevice_exp(x):
    return libdevice.exp(x)


@triton.jit
def _sigmoid(x):
    return tl.sigmoid(x)


@triton.jit
def _div(x):
    return 1.0 / (x + 1.0)


@triton.jit
def _div_rn(x):
    return tl.div_rn(1.0, x + 1.0)


FUNCS = {
    "copy": _copy,
    "tl.sin": _sin,
    "libdevice.fast_sinf": _fast_sinf,
    "tl.exp": _exp,
    "libdevice.exp": _libdevice_exp,
    "tl.sigmoid": _sigmoid,
    "1/(x+1)": _div,
    "tl.div_rn(1, x+1)": _div_rn,
}


def main(sm: int) -> None:
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    mixes = {}
    for name, f in FUNCS.items():
        src = ASTSource(
            fn=_kernel(f),
            signature={"a": "*fp32", "o": "*fp32", "n": "i32", "BLOCK": "constexpr"},
            constexprs={"BLOCK": 128},
        )
        cubin = triton.compile(src, target=GPUTarget("cuda", sm, 32)).asm["cubin"]
        with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
            fh.write(cubin)
            fh.flush()
            sass = subprocess.run(
                [str(tool), "-sass", fh.name], check=True, capture_output=True, text=True
            ).stdout
        (code,) = kernels(sass).values()
        mixes[name] = counts(fast_path(code))
    base = mixes.pop("copy")
    table = {
        name: {
            p: c.get(p, 0) - base.get(p, 0)
            for p in sorted(set(c) | set(base))
            if c.get(p, 0) != base.get(p, 0)
        }
        for name, c in mixes.items()
    }
    json.dump({f"sm_{sm}": table, "triton": triton.__version__}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 90)
