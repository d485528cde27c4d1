"""Issue 39 item 4: every rank's trace carries its rank where HTA looks for it (``distributedInfo.rank``,
found by HTA's ``create_rank_to_trace_dict`` as the first ``"rank": N`` in the file).

torch.profiler writes ``distributedInfo`` in the NCCL ranks' traces (tests/fixtures/gpu_ranks_nccl) but
not in the gloo ranks' CPU traces (tests/fixtures/cpu_ranks_gloo): the rank recorder adds it at export
(capture.rank_recorder.add_rank_info), leaving the rest of the trace as it was."""

import json
import re
import shutil
from pathlib import Path

from kprof_mcp.capture import rank_recorder
from kprof_mcp.capture.ranks import _origin_ns
from kprof_mcp.parsers import kineto

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HTA_RANK = re.compile(r'"rank":\s+(\d+)')  # hta/common/trace_file.py, create_rank_to_trace_dict (0.5.0)


def test_a_gloo_rank_trace_gets_its_rank_and_reads_the_same(tmp_path):
    src = FIX / "cpu_ranks_gloo" / "ranks" / "16583.trace.json"
    assert "distributedInfo" not in json.loads(src.read_text())  # as torch.profiler wrote it
    trace = tmp_path / "16583.trace.json"
    shutil.copy(src, trace)
    assert rank_recorder.add_rank_info(str(trace), 1, 2)
    data = json.loads(trace.read_text())
    assert data["distributedInfo"] == {"rank": 1, "world_size": 2}
    assert HTA_RANK.search(trace.read_text()).group(1) == "1"  # the first match: HTA's rank
    assert _origin_ns(trace) == _origin_ns(src)
    before, after = kineto.load_trace(src), kineto.load_trace(trace)
    assert before.cpu_ops.equals(after.cpu_ops) and before.ranges.equals(after.ranges)
    assert data["traceEvents"] == json.loads(src.read_text())["traceEvents"]


def test_a_trace_with_distributed_info_is_left_alone(tmp_path):
    src = FIX / "gpu_ranks_nccl" / "ranks" / "809.trace.json"
    trace = tmp_path / "809.trace.json"
    shutil.copy(src, trace)
    assert not rank_recorder.add_rank_info(str(trace), 1, 2)
    assert trace.read_bytes() == src.read_bytes()
    assert json.loads(trace.read_text())["distributedInfo"]["rank"] == 1
    assert HTA_RANK.search(trace.read_text()).group(1) == "1"


def test_an_empty_trace_object_stays_json(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text("{}")
    assert rank_recorder.add_rank_info(str(trace), 3, None)
    assert json.loads(trace.read_text()) == {"distributedInfo": {"rank": 3, "world_size": None}}
