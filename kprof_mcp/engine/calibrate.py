"""``kprof device --calibrate``: run the microbenchmarks (:mod:`kprof_mcp.child.calibrate`) in a
child process on the GPU, with the SM clock locked as the timing modes lock it
(:mod:`kprof_mcp.clocks`), write the document to ``<workspace>/out/device/calibration-<key>.json``
and set it against the machine table (:mod:`kprof_mcp.analysis.calibration`).

The shipped measurements (``kprof_mcp/calibrated/<device key>.json``, one per device measured by
the project) let the model use measured peaks without a GPU: :func:`shipped`."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from .. import clocks, machines, runner, safefs
from ..analysis.calibration import CalibrationError, Row, compare, parse
from ..devices import load_devices, try_match_device
from ..tools import nvidia_smi
from .config import KprofError
from .state import EngineState


def device_key(name: str | None) -> str:
    """devices.json's key of the device called ``name``, else the name made safe for a file name."""
    spec, _ = try_match_device(name or "")
    if spec is not None:
        return spec.key
    return "".join(c if c.isalnum() else "_" for c in (name or "unknown")).strip("_")[:80] or "unknown"


def shipped(key: str) -> dict[str, Any] | None:
    """The calibration shipped for devices.json's ``key`` (``kprof_mcp/calibrated/KEY.json``), or None."""
    if not key.replace("_", "").isalnum():
        return None
    doc = machines.calibrated(key)
    return parse(copy.deepcopy(doc)) if doc else None  # the loader's copy is cached: never handed out


def arch_table(arch: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The machine table's entry for ``arch`` (``kprof_mcp/machines.json``) and, when there is
    none, why."""
    archs = machines.table().get("archs")
    if not archs:
        return None, "no machine table (kprof_mcp/machines.json) in this kprof: measured rates only"
    if arch not in archs:
        return None, f"the machine table has no {arch}: measured rates only"
    return archs[arch], None


def rows_for(doc: dict[str, Any]) -> tuple[list[Row], str | None]:
    """The calibration's rows beside the table of its architecture (DRAM against devices.json's peak)."""
    table, note = arch_table(doc.get("arch"))
    spec = next((d for d in load_devices() if d.key == doc.get("device_key")), None)
    if spec is None:
        spec, _ = try_match_device(doc.get("device") or "")
    return compare(doc, table, spec.peak_gbps if spec else None), note


def calibrate(
    engine: EngineState, clock_control: str = "base", timeout_s: float = 600.0, on_progress=None
) -> tuple[dict[str, Any], Path]:
    """Measure, write and return the calibration document and where it was written. Raises
    KprofError without a GPU (nothing written) or when the child fails."""
    gpus = nvidia_smi.gpus()
    if engine.config.force_cpu or not gpus:
        raise KprofError(
            "kprof device --calibrate needs an NVIDIA GPU: "
            + ("KPROF_FORCE_CPU=1" if engine.config.force_cpu else "nvidia-smi is absent or lists none")
            + "; nothing was measured or written"
        )
    gpu = nvidia_smi.smi_id(0)
    name = next((g.get("name") for g in gpus if gpu == g.get("index")), gpus[0].get("name"))
    with tempfile.TemporaryDirectory(prefix="kprof-calibrate-") as d:
        result = Path(d) / "calibration.json"
        with clocks.hold(gpu, name, clock_control != "none") as state:
            ended = runner.run_child(["calibrate", "--result", str(result)], timeout_s, on_progress)
        if ended.stopped:
            raise KprofError(f"the calibration child was stopped ({ended.stopped}) after {ended.wall:.0f} s")
        try:
            said = json.loads(result.read_text())
        except (OSError, ValueError):
            tail = "\n".join(ended.err.strip().splitlines()[-15:])
            raise KprofError(f"the calibration child wrote no result (exit {ended.rc}): {tail}") from None
    if said.get("status") != "ok":
        raise KprofError(f"calibration failed: {said.get('message')}")
    doc = said["calibration"]
    doc["clock_note"] = state.note
    doc["clock_locked_mhz"] = state.locked_mhz
    try:
        parse(doc)
    except CalibrationError as e:
        raise KprofError(f"the calibration child's document is malformed: {e}") from None
    key = doc.get("device_key") or device_key(doc.get("device"))
    path = safefs.write_atomic(
        engine.config.workspace,
        f"out/device/calibration-{key}.json",
        json.dumps(doc, indent=1) + "\n",
        make_parents=True,
    )
    return doc, path
