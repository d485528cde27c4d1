"""Reading ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` output."""

from __future__ import annotations


def parse_query(text: str, fields: list[str]) -> list[dict[str, str]]:
    """One dict per GPU line, keyed by the queried field names; lines whose column count does
    not match (a truncated or garbled line) are left out rather than misaligned."""
    rows = []
    for line in (text or "").strip().splitlines():
        values = [v.strip() for v in line.split(",")]
        if len(values) == len(fields):
            rows.append(dict(zip(fields, values)))
    return rows
