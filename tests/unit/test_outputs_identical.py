"""What users and agents read is byte-identical to what it was before the structure changed:
300 outputs (contracts, report.md, structured summaries and every file a mode writes when it
reads a recording back, for each recorded H100 fixture; the MCP tools' schemas and CPU-only tool
answers; the CLI's help and CPU-only commands), produced by tests/outputs_snapshot.py and
compared with tests/fixtures/golden/outputs.json.gz, recorded at b4dd435 (before issue 28's
refactor) by the same file.

A change meant to alter an output records the golden file again (``python
tests/outputs_snapshot.py --golden``) in the same commit, and says so."""

import difflib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import outputs_snapshot  # noqa: E402


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    return outputs_snapshot.collect(tmp_path_factory.mktemp("snap").resolve())


def test_the_same_outputs_exist(snapshot):
    golden = outputs_snapshot.read_golden()
    assert sorted(snapshot) == sorted(golden)
    assert len(golden) >= 300


def test_every_output_is_byte_identical(snapshot):
    golden = outputs_snapshot.read_golden()
    changed = [k for k in sorted(golden) if snapshot.get(k) != golden[k]]
    if changed:
        k = changed[0]
        diff = "".join(
            difflib.unified_diff(
                golden[k].splitlines(True), (snapshot.get(k) or "").splitlines(True), "golden", "now", n=2
            )
        )
        pytest.fail(f"{len(changed)} outputs changed: {changed[:20]}\nfirst, {k}:\n{diff[:6000]}")
