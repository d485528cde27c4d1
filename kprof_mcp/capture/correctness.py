"""The correctness gate: every profile first compares the kernel's output with the package's
reference; a wrong kernel is reported (where it differs), never profiled."""

from __future__ import annotations

from typing import Any


def check_correctness(torch, out, ref, tolerance: float) -> dict[str, Any]:
    """Relative L2 error ‖out − ref‖ / ‖ref‖ in float64, NaN/unwritten detection, worst element.

    All statistics of an output are reduced on the device and read back in one transfer: under
    Nsight Compute every extra kernel and synchronisation costs noticeably more.
    """
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    if len(outs) != len(refs):
        return {"ok": False, "message": f"kernel returned {len(outs)} outputs, reference {len(refs)}"}
    report: dict[str, Any] = {"ok": True, "tolerance_rel_l2": tolerance, "outputs": []}
    for i, (o, r) in enumerate(zip(outs, refs)):
        entry: dict[str, Any] = {"index": i, "shape": list(o.shape)}
        od_name, rd_name = (str(getattr(t, "dtype", "")).removeprefix("torch.") for t in (o, r))
        if od_name != rd_name:
            # Within tolerance, but narrower or wider than the reference: the stage's byte model counts
            # the reference's element size, so this version's traffic is not the model's (issue 37).
            entry.update(dtype=od_name, reference_dtype=rd_name)
        if tuple(o.shape) != tuple(r.shape):
            entry.update(
                ok=False, message=f"output {i} has shape {tuple(o.shape)}, reference {tuple(r.shape)}"
            )
        else:
            od, rd = o.detach().reshape(-1).double(), r.detach().reshape(-1).double()
            diff = od - rd
            finite = torch.isfinite(diff)
            bad = torch.isfinite(rd) & ~torch.isfinite(od)
            absdiff = torch.where(finite, diff.abs(), torch.full_like(diff, float("inf")))
            worst_t = (
                absdiff.argmax() if absdiff.numel() else torch.zeros((), dtype=torch.long, device=od.device)
            )
            n_bad, err_norm, ref_norm, max_abs, worst, wval, wref = torch.stack(
                [
                    bad.sum().double(),
                    torch.linalg.vector_norm(diff),
                    torch.linalg.vector_norm(rd),
                    absdiff.max()
                    if absdiff.numel()
                    else torch.zeros((), dtype=torch.double, device=od.device),
                    worst_t.double(),
                    od[worst_t] if od.numel() else worst_t.double() * 0,
                    rd[worst_t] if rd.numel() else worst_t.double() * 0,
                ]
            ).tolist()
            n_bad, worst = int(n_bad), int(worst)
            rel = err_norm / ref_norm if ref_norm > 0 else max_abs
            widx, rem = [], worst
            for dim in reversed(list(o.shape)):
                widx.append(rem % dim if dim else 0)
                rem = rem // dim if dim else 0
            entry.update(
                rel_l2_error=rel,
                max_abs_error=max_abs,
                non_finite_elements=n_bad,
                worst_index=list(reversed(widx)),
                worst_value=wval,
                worst_reference=wref,
            )
            entry["ok"] = n_bad == 0 and rel <= tolerance
            if not entry["ok"]:
                entry["message"] = (
                    f"output {i}: relative L2 error {rel:.3g} (tolerance {tolerance:g}), "
                    f"{n_bad} non-finite (unwritten/NaN) elements; worst at index {entry['worst_index']}: "
                    f"got {entry['worst_value']:.6g}, expected {entry['worst_reference']:.6g}"
                )
        report["outputs"].append(entry)
        report["ok"] = report["ok"] and entry["ok"]
    return report
