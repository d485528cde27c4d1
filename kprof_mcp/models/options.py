"""Each mode's options: one frozen model per mode, telling its fields apart by ``mode`` (the
discriminator of :data:`ModeOptionsUnion`, ``ProfileRequest.options``). A model declares and
checks its own fields; the messages name the field, the value and what is valid.

============================  ==============  ==============================================
model                         modes           fields
============================  ==============  ==============================================
:class:`EventOptions`         event           none of its own
:class:`NsightOptions`        annotation, ncu ``ncu_path``, ``ncu_launches``, ``max_kernels``
:class:`NsysOptions`          nsys            ``timeline_iters``, ``timeline_engine``,
                                              ``nsys_path``, ``timeline_fallback``,
                                              ``python_backtrace``
============================  ==============  ==============================================

A mode's class (``kprof_mcp.modes``) names its model (``Mode.options_model``); this module names
the modes in each model's ``mode`` literal, and the registry checks that the two agree.

Validation context ``{"command": True}`` (a ``profile_command`` request) gives the shorter
messages that command's checks have always given.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo

TIMELINE_ENGINES = ("auto", "nsys", "kineto")  # nsys mode's recorders (NsysOptions.timeline_engine)


def clip(value: object, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters: error messages quote input, never all of it
    (``kprof_mcp.safefs.clip`` is this one)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 — a value whose repr fails is still named
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 20] + f"…' ({len(text)} chars)"


def int_in(name: str, lo: int, hi: int, what: str = "give an integer") -> BeforeValidator:
    """A field that takes an int (never a bool or a float) from ``lo`` to ``hi``."""

    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name}={clip(value)}: {what} from {lo} to {hi}")
        return value

    return BeforeValidator(check)


def _bool(name: str):
    """A field that takes True or False only (no 0/1, no strings)."""

    def check(value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError(f"{name}={clip(value)}: true or false")
        return value

    return check


def _for_command(info: ValidationInfo) -> bool:
    return bool((info.context or {}).get("command"))


def _timeline_engine(value: Any, info: ValidationInfo) -> Any:
    if value in TIMELINE_ENGINES:
        return value
    if _for_command(info):
        raise ValueError(f"timeline_engine={clip(value)}: 'auto', 'nsys' or 'kineto'")
    raise ValueError(
        f"timeline_engine={clip(value)}: 'auto' (Nsight Systems when a working "
        "one is found, else CUPTI via torch.profiler; default), 'nsys' (Nsight Systems or an "
        "error) or 'kineto' (torch.profiler)"
    )


class ModeOptions(BaseModel):
    """What every mode's options have: the mode they belong to."""

    model_config = ConfigDict(frozen=True)

    mode: str

    @classmethod
    def modes(cls) -> tuple[str, ...]:
        """The modes this model serves (its ``mode`` literal)."""
        return get_args(cls.model_fields["mode"].annotation)


class EventOptions(ModeOptions):
    """event: CUPTI kernel time with CUDA events beside it; nothing of its own to set."""

    mode: Literal["event"] = "event"


class NsightOptions(ModeOptions):
    """annotation and ncu: Nsight Compute."""

    mode: Literal["annotation", "ncu"]
    # Filled by the engine after its preflight: the ncu to run.
    ncu_path: str | None = None
    # profiled launches per stage; >1 gives a spread of ncu durations
    ncu_launches: Annotated[int, int_in("ncu_launches", 1, 20)] = 1
    max_kernels: Annotated[int, int_in("max_kernels", 1, 5000)] = (
        200  # on a command: at most this many profiled
    )


class NsysOptions(ModeOptions):
    """nsys: a timeline of several back-to-back iterations of the plan."""

    mode: Literal["nsys"] = "nsys"
    timeline_iters: Annotated[int, int_in("timeline_iters", 1, 50)] = (
        5  # plan iterations recorded back to back
    )
    # "auto" (Nsight Systems when a working one is found, else CUPTI via torch.profiler), "nsys"
    # (Nsight Systems or an error) or "kineto" (torch.profiler). The engine fills the rest after its
    # preflight: the Nsight Systems to run, or why none could be used.
    timeline_engine: Annotated[str, BeforeValidator(_timeline_engine)] = "auto"
    nsys_path: str | None = None
    timeline_fallback: str | None = None
    # Nsight Systems only: record the Python stack of every CUDA call (--python-backtrace=cuda with
    # CUDA backtraces and CPU sampling), so each idle cause names the line that made its calls. Off
    # by default: on an H100 it cost ~8 us per CUDA call (a 32-launch step 878 -> 1353 us), time the
    # timeline then shows as launch overhead (tests/fixtures/nsys-backtrace/README.md).
    python_backtrace: Annotated[bool, BeforeValidator(_bool("python_backtrace"))] = False


OPTIONS: tuple[type[ModeOptions], ...] = (EventOptions, NsightOptions, NsysOptions)
ModeOptionsUnion = Annotated[Union[EventOptions, NsightOptions, NsysOptions], Field(discriminator="mode")]
OPTIONS_BY_MODE: dict[str, type[ModeOptions]] = {m: cls for cls in OPTIONS for m in cls.modes()}
# Every option of every mode, with its default: a request's flat form names them all.
OPTION_DEFAULTS: dict[str, Any] = {
    name: f.default for cls in OPTIONS for name, f in cls.model_fields.items() if name != "mode"
}


def validation_message(e: ValidationError) -> str:
    """The first error of ``e`` as the caller reads it: a check's own message, else where and what."""
    err = e.errors(include_url=False)[0]
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, ValidationError):
        return validation_message(inner)
    if isinstance(inner, Exception):
        return str(inner)
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}={clip(err.get('input'))}: {err['msg']}" if where else str(err["msg"])


def build_options(mode: Any, values: dict[str, Any], command: bool = False) -> ModeOptions:
    """``mode``'s options from ``values``, which may name any mode's options (a request's flat
    form names them all): an option of another mode is checked by the model that owns it, then
    left out. Raises ``ValueError`` with the first problem's message."""
    cls = OPTIONS_BY_MODE.get(mode) if isinstance(mode, str) else None
    if cls is None:
        raise ValueError(f"unknown mode {clip(mode)}; modes: {sorted(OPTIONS_BY_MODE)}")
    context = {"command": command}
    own = {}
    try:
        for name, value in values.items():
            if name in cls.model_fields:
                own[name] = value
                continue
            owner = next(c for c in OPTIONS if name in c.model_fields)
            owner.model_validate({"mode": owner.modes()[0], name: value}, context=context)
        return cls.model_validate({**own, "mode": mode}, context=context)
    except ValidationError as e:
        raise ValueError(validation_message(e)) from None
