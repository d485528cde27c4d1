"""The kernel package contract.

A kernel package is a Python module (a directory with ``__init__.py`` or a single ``.py``
file) that defines ``KERNEL = KernelPackage(...)``. The module must be importable without
torch or triton: put GPU code in functions or a sibling module imported inside
``make_inputs`` / ``reference`` / each version's ``build`` — the server lists and validates
packages in a light child process, and only the profiling worker imports torch.

Example (see ``kernels/vector_add``)::

    KERNEL = KernelPackage(
        name="vector_add",
        description="z = x + y",
        params=(Param("n", 1 << 24, min=1, max=1 << 31), DTYPE_PARAM("float32")),
        make_inputs=_make_inputs,          # (params, device) -> dict of tensors
        reference=_reference,              # (inputs, params) -> tensor (or tuple)
        versions=(
            Version("v0", "one element per thread, BLOCK=1024",
                    stages=(StageModel("add", flops=lambda p: p["n"], bytes=lambda p: 3 * p["n"] * p.itemsize),),
                    build=_build_v0),      # (inputs, params) -> Plan
        ),
        memory_bytes=lambda p: 3 * p["n"] * p.itemsize,
    )

A parameter's ``cpu_default`` (optional) is its default where there is no GPU: ``kprof`` uses it for a
parameter the user did not give when jobs time on the CPU (the Triton interpreter, torch on the CPU), and
says so in one line; give sizes that profile in seconds there, and ``float32`` where the GPU default is
a type the CPU does not run (``DTYPE_PARAM("bfloat16", cpu_default="float32")``).

Inputs are made once and the plan is built on them. After timing, the profiler checks the plan
once more on fresh values (issue 37: a version that caches its output fails): it calls
``make_inputs(params, device, seed=N)`` where ``make_inputs`` takes a ``seed`` keyword, else
``make_inputs(params, device)`` with every seed it sets through torch shifted by N, and copies the
new values into the tensors the plan was built on. A generator whose values do not depend on a torch
seed gives the same inputs (the check then runs on those, and says so).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

DTYPE_SIZES = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int8": 1,
}
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


class ParamError(ValueError):
    """A parameter is unknown, of the wrong type or out of bounds (the message lists what is valid)."""


def _shown(value: Any, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters: a message quotes the caller's input, never all of
    it (a 10,000-entry list, a 5,000-digit number). The same rule as ``kprof_mcp.safefs.clip``,
    repeated here because the kernel contract imports nothing from kprof_mcp."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's int max-str-digits limit has no repr
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 20] + f"… ({len(text)} chars)"


@dataclass(frozen=True)
class Param:
    """One parameter: integer with bounds, or a string from ``choices``. ``cpu_default``: the default
    without a GPU (see the module doc); None: ``default`` there too."""

    name: str
    default: int | str
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] | None = None
    doc: str = ""
    cpu_default: int | str | None = None

    def __post_init__(self) -> None:
        if self.cpu_default is not None:
            try:
                self.validate(self.cpu_default)
            except ParamError as e:
                raise ValueError(f"parameter {self.name}: cpu_default: {e}") from None

    def validate(self, value: Any) -> int | str:
        """``value`` checked (an integral float or a string of digits counts as an integer), or a
        :class:`ParamError` saying what is valid, quoting at most 200 characters of the value."""
        if self.choices is not None:
            if not isinstance(value, str) or value not in self.choices:
                raise ParamError(f"{self.name}={_shown(value)} is not one of {list(self.choices)}")
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
                try:
                    value = int(value)
                except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits())
                    digits = len(value.strip().lstrip("+-"))
                    raise ParamError(
                        f"{self.name}={_shown(value)}: an integer of {digits} digits is too long "
                        f"(valid: {self.range_text()})"
                    ) from None
            else:
                raise ParamError(
                    f"{self.name}={_shown(value)} must be an integer (valid: {self.range_text()})"
                )
        if self.min is not None and value < self.min:
            raise ParamError(
                f"{self.name}={_shown(value)} is below its minimum {self.min} (valid: {self.range_text()})"
            )
        if self.max is not None and value > self.max:
            raise ParamError(
                f"{self.name}={_shown(value)} is above its maximum {self.max} (valid: {self.range_text()})"
            )
        return value

    def range_text(self) -> str:
        if self.choices is not None:
            return " | ".join(self.choices)
        lo = "-inf" if self.min is None else str(self.min)
        hi = "inf" if self.max is None else str(self.max)
        return f"[{lo}, {hi}]"

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices) if self.choices else None,
            "doc": self.doc,
            **({"cpu_default": self.cpu_default} if self.cpu_default is not None else {}),
        }


def DTYPE_PARAM(
    default: str,
    choices: tuple[str, ...] = ("float32", "float16", "bfloat16"),
    cpu_default: str | None = None,
) -> Param:
    """The ``dtype`` parameter every package declares (``cpu_default``: its type without a GPU)."""
    return Param(
        "dtype", default, choices=choices, doc="element type of inputs and outputs", cpu_default=cpu_default
    )


class Params(Mapping[str, Any]):
    """Validated parameters (read-only mapping) with ``itemsize`` of the dtype."""

    def __init__(self, values: dict[str, Any]):
        self._values = dict(values)

    def __getitem__(self, k: str) -> Any:
        return self._values[k]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def itemsize(self) -> int:
        return DTYPE_SIZES[self._values["dtype"]]

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


@dataclass(frozen=True)
class StageModel:
    """Static description of a stage: name plus its FLOP and byte models.

    ``bytes`` is the fewest bytes the stage must move through device memory (each input
    read once, each output written once); measured traffic above it is over-fetch.
    ``tensor_cores`` selects the tensor-core peak of the dtype instead of SIMT FP32.
    ``int_ops`` (optional) is the integer and logic operations the work needs (thread operations: compares,
    selects, shifts, integer adds and multiplies of the algorithm itself, not address arithmetic): an integer
    kernel's FLOPs are none, and without it its ALU work has no model to be beyond.
    """

    name: str
    flops: Callable[[Params], float]
    bytes: Callable[[Params], float]
    tensor_cores: bool = False
    int_ops: Callable[[Params], float] | None = None


@dataclass
class Stage:
    """A runnable stage of a plan, built by a version's ``build``.

    ``fn`` launches the stage's kernel(s) on the current stream without synchronising and
    returns what the launch returned (a Triton ``CompiledKernel`` lets the profiler dump
    the compiled IR and register/shared-memory/spill figures). ``kernel`` is the Triton
    ``JITFunction`` or ``Autotuner`` (for the autotuned config and its history);
    ``tiling`` is the static launch configuration when not autotuned. ``grid_blocks``
    (number of programs launched) gives waves per SM. ``persistent``: the grid is sized to the
    GPU and each program loops over its share of the work, so fewer blocks than slots
    (waves < 1) is by design and is not reported as idle SMs.
    """

    name: str
    fn: Callable[[], Any]
    kernel: Any = None
    tiling: dict[str, Any] | None = None
    grid_blocks: Callable[[], int] | int | None = None
    stream: int = 0
    persistent: bool = False


@dataclass
class Plan:
    """Stages of one version: ``pipeline`` (one after another on one stream) or
    ``concurrent`` (each stage on its own stream). ``output`` returns the value that is
    compared with the package's reference."""

    stages: list[Stage]
    output: Callable[[], Any]
    kind: str = "pipeline"

    def __post_init__(self) -> None:
        if self.kind not in ("pipeline", "concurrent"):
            raise ValueError(f"plan kind {self.kind!r} must be 'pipeline' or 'concurrent'")
        if not self.stages:
            raise ValueError("a plan needs at least one stage")


@dataclass(frozen=True)
class Version:
    name: str
    doc: str
    stages: tuple[StageModel, ...]
    build: Callable[[dict[str, Any], Params], Plan]
    plan_kind: str = "pipeline"


@dataclass(frozen=True)
class KernelPackage:
    """Everything the profiler needs to know about a kernel (see module docstring)."""

    name: str
    description: str
    params: tuple[Param, ...]
    # (params, device) -> dict of tensors; may take a ``seed`` keyword, left at its default for the
    # first inputs (see the module doc)
    make_inputs: Callable[..., dict[str, Any]]
    reference: Callable[[dict[str, Any], Params], Any]
    versions: tuple[Version, ...]
    memory_bytes: Callable[[Params], float]
    tolerance: Callable[[str], float] = field(default=lambda dtype: default_tolerance(dtype))

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ValueError(f"kernel name {self.name!r} must match {NAME_RE.pattern}")
        names = [p.name for p in self.params]
        if "dtype" not in names:
            raise ValueError(f"kernel {self.name}: every package declares a 'dtype' parameter")
        if len(set(names)) != len(names):
            raise ValueError(f"kernel {self.name}: duplicate parameter names {names}")
        if not self.versions:
            raise ValueError(f"kernel {self.name}: no versions")

    def version(self, name: str | None) -> Version:
        if name is None:
            return self.versions[-1]
        for v in self.versions:
            if v.name == name:
                return v
        raise ParamError(
            f"kernel {self.name!r} has no version {_shown(name)}; valid: {[v.name for v in self.versions]}"
        )

    def validate_params(self, given: Mapping[str, Any] | None) -> Params:
        """Defaults filled in, types and bounds checked; unknown names refused."""
        given = dict(given or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            valid = ", ".join(f"{p.name} {p.range_text()} (default {p.default})" for p in self.params)
            raise ParamError(
                f"unknown parameter(s) {_shown(unknown)} for kernel {self.name!r}; valid: {valid}"
            )
        return Params({p.name: p.validate(given.get(p.name, p.default)) for p in self.params})

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "params": [p.describe() for p in self.params],
            "versions": [
                {
                    "name": v.name,
                    "doc": v.doc,
                    "plan_kind": v.plan_kind,
                    "stages": [{"name": s.name, "tensor_cores": s.tensor_cores} for s in v.stages],
                }
                for v in self.versions
            ],
        }


def default_tolerance(dtype: str) -> float:
    """Largest accepted relative error ‖out − ref‖₂ / ‖ref‖₂ for results in ``dtype``.

    float32 arithmetic lands far under 1e-4; fp16/bf16 outputs carry ~2^-11 / 2^-8 rounding.
    Packages whose float32 path uses tensor cores (TF32) override this.
    """
    return {"float64": 1e-10, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}.get(dtype, 1e-2)
