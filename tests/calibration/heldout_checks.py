"""The CPU checks every held-back set's kernels and command scripts get (test_calibration_kernels_heldout*.py):
a kernel version against its package's reference in the Triton interpreter, run twice (the same result again:
an atomic version must reset its output), every output written (NaN- or -1-poisoned before), outputs that are
±inf in the reference the same in the version; a command script's two variants run on the CPU and agree."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from kprof_mcp.packages import available, load

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
COMMANDS_DIR = HERE / "commands"


def version_matches_reference(name: str, params: dict, version: str) -> None:
    pkg = load(available([KERNELS_DIR])[name])
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    ref = pkg.reference(inputs, p)
    poison = -1 if p["dtype"] == "int32" else float("nan")
    if "out" in inputs:
        inputs["out"].fill_(poison)  # a version must write every output
    plan = pkg.version(version).build(inputs, p)
    if "out" not in inputs and isinstance(first := plan.output(), torch.Tensor):
        first.fill_(poison if first.is_floating_point() else -1)  # the buffer the plan's output is read from
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for _ in range(2):  # twice: the same result when run again (an atomic version must reset its output)
        for stage in plan.stages:
            stage.fn()
    out = plan.output()
    assert out.shape == ref.shape and out.dtype == ref.dtype
    fin = torch.isfinite(ref)
    assert bool((out[~fin] == ref[~fin]).all()), "outputs ±inf in the reference differ"
    assert torch.isfinite(out[fin].double()).all(), "unwritten (NaN-poisoned) outputs remain"
    o, r = out[fin].double(), ref[fin].double()
    err = float((o - r).norm() / max(float(r.norm()), 1e-30))
    assert err <= pkg.tolerance(p["dtype"]), err


def _script(name: str):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(name, COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def command_variants_agree(name: str) -> None:
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, False)
        loop(3)
        outs.append(output())
    for o in outs:
        assert torch.isfinite(o).all() and o.abs().max() > 0
    diff = float((outs[0] - outs[1]).abs().max())
    assert diff <= 1e-4 * max(float(outs[1].abs().max()), 1.0), diff


def cpu_check(small: dict, commands: list[str]) -> int:
    """A set's CPU check as a script (recorded-heldoutN/cpu_check.py): every case of ``small`` (package →
    parameter sets) for v0 and v1, and each of ``commands``' two variants, reported ok or FAIL; 1 on a failure."""
    checks = [
        (f"{n} {v} {p}", version_matches_reference, (n, p, v))
        for n in small
        for p in small[n]
        for v in ("v0", "v1")
    ]
    checks += [(n, command_variants_agree, (n,)) for n in commands]
    bad = 0
    for what, check, args in checks:
        try:
            check(*args)
            print(f"{what}: ok", flush=True)
        except AssertionError as e:
            bad += 1
            print(f"{what}: FAIL {e}", flush=True)
    print("FAILED" if bad else "all versions match their references")
    return 1 if bad else 0
