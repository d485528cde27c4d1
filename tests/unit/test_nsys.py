"""Nsight Systems: the SQLite export of a real H100 recording (tests/fixtures/h100_nsys/README.md)
read into the one trace model and analysed unchanged, and finding/checking/running nsys with
fake programs (no GPU, no Nsight Systems here)."""

import re
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import unpacked

from kprof_mcp.analysis import timeline as T
from kprof_mcp.parsers import kineto
from kprof_mcp.parsers import nsys as P
from kprof_mcp.tools import nsys as N

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "h100_nsys"
DB = unpacked(FIX / "probe.sqlite")  # kept as probe.sqlite.xz (README.md)
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
ITERS = 5


@pytest.fixture(scope="module")
def trace():
    return P.load_sqlite(DB)


def _ranged(tr):
    """The kernels launched inside a kprof_iter range (the 5 measured iterations)."""
    iters = tr.ranges[tr.ranges["name"] == "kprof_iter"]
    launches = tr.api[tr.api["name"].isin(T.LAUNCH_APIS)]
    inside = launches[
        [any(s <= t <= e for s, e in zip(iters["start"], iters["end"])) for t in launches["start"]]
    ]
    return tr.kernels[tr.kernels["correlation"].isin(inside["correlation"])]


def _sql(query, *args):
    con = sqlite3.connect(DB.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


# ----------------------------------------------------------------------------- the H100 recording


def test_reads_the_recording_into_the_kineto_model(trace):
    tr = trace
    assert isinstance(tr, kineto.Trace)
    assert tr.num_sms == 132 and tr.device_name == "NVIDIA H100 80GB HBM3"
    # Same columns as kineto.load_trace; times float ns, kernels sorted by start.
    assert list(tr.kernels.columns) == P.KERNEL_COLUMNS and list(tr.memops.columns) == P.MEMOP_COLS
    assert list(tr.api.columns) == P.API_COLS and list(tr.ranges.columns) == P.RANGE_COLS
    assert list(tr.cpu_ops.columns) == P.CPU_OP_COLS and tr.cpu_ops.empty
    for df in (tr.kernels, tr.api, tr.ranges, tr.memops):
        assert all(str(df[c].dtype) == "float64" for c in ("start", "dur", "end"))
        assert (df["end"] - df["start"] == df["dur"]).all() and (df["dur"] > 0).all()
    assert tr.kernels["start"].is_monotonic_increasing

    k = tr.kernels
    assert len(k) == 20  # 4 randn + 3 warm-up (gemm, add) + 5 ranged (gemm, add)
    assert (k["name"] == GEMM).sum() == 8 and (k["name"] == "add").sum() == 8
    assert k["name"].str.contains("distribution_elementwise_grid_stride_kernel").sum() == 4
    assert k["blocks_per_sm"].isna().all() and k["occupancy_est_pct"].isna().all()
    gemm = k[k["name"] == GEMM].iloc[0]
    assert (gemm.grid_blocks, gemm.block_threads, gemm.regs, gemm.smem) == (132, 384, 168, 213188)
    add = k[k["name"] == "add"].iloc[0]
    assert (add.grid_blocks, add.block_threads, add.regs, add.smem) == (16384, 128, 26, 0)
    assert 170_000 < k[k["name"] == GEMM]["dur"].median() < 180_000  # ~176 µs for 137 GFLOP of bf16

    ranged = _ranged(tr)
    assert len(ranged) == 2 * ITERS and ranged["stream"].nunique() == 2
    by_name = ranged.groupby("name")["stream"].unique()
    assert len(by_name[GEMM]) == 1 and len(by_name["add"]) == 1 and by_name[GEMM][0] != by_name["add"][0]
    assert set(k.loc[~k.index.isin(ranged.index), "stream"]) == {7}  # randn and warm-up: the default stream
    # The add: ~63 µs alone (warm-up), 69-97 µs in the ranged iterations where it shares the GPU
    # with the gemm on the other stream.
    warm_add = k[(k["name"] == "add") & ~k.index.isin(ranged.index)]["dur"]
    assert len(warm_add) == 3 and warm_add.between(62_000, 65_000).all()
    ranged_add = ranged[ranged["name"] == "add"]["dur"]
    assert ranged_add.between(68_000, 98_000).all() and ranged_add.median() > warm_add.max()


def test_api_names_lose_the_nsys_version_suffix(trace):
    names = set(trace.api["name"])
    assert len(trace.api) == 1183
    assert {"cudaLaunchKernel", "cuLaunchKernelEx", "cudaMemsetAsync", "cudaMalloc"} <= names
    assert not [n for n in names if re.search(r"_v\d+$", n)]
    # In the file they carry it: cudaLaunchKernel_v7000 (the randn kernels), while the driver
    # API's cuLaunchKernelEx (Triton's and cuBLAS's launches) has none.
    raw = dict(
        _sql(
            "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
            "ON s.id = r.nameId GROUP BY s.value"
        )
    )
    assert (
        raw["cudaLaunchKernel_v7000"] == 4 and raw["cuLaunchKernelEx"] == 16 and "cudaLaunchKernel" not in raw
    )
    launches = trace.api[trace.api["name"].isin(T.LAUNCH_APIS)]
    assert len(launches) == 20 and set(launches["correlation"]) == set(trace.kernels["correlation"])
    assert (
        P.api_name("cudaLaunchKernel_v7000") == "cudaLaunchKernel"
        and P.api_name("cuLaunchKernelEx") == "cuLaunchKernelEx"
        and P.api_name(None) == ""
    )


def test_nvtx_ranges_and_memory_operations(trace):
    r = trace.ranges
    assert len(r) == 15 and r["name"].value_counts().to_dict() == {
        "kprof_iter": 5,
        "kprof_gemm": 5,
        "kprof_add": 5,
    }
    # The text column is NULL in this export: the names come from StringIds through textId.
    assert _sql("SELECT count(*), count(text), count(textId) FROM NVTX_EVENTS WHERE eventType = 59") == [
        (15, 0, 15)
    ]
    assert r["tid"].nunique() == 1 and set(r["tid"]) <= set(trace.api["tid"])
    for it in r[r["name"] == "kprof_iter"].itertuples():  # each stage range lies inside its iteration range
        inner = r[(r["start"] >= it.start) & (r["end"] <= it.end) & (r["name"] != "kprof_iter")]
        assert sorted(inner["name"]) == ["kprof_add", "kprof_gemm"]
    m = trace.memops
    assert len(m) == 8 and set(m["kind"]) == {"memset"} and set(m["name"]) == {"Memset (Device)"}
    assert set(m["bytes"]) == {4} and set(m["stream"]) == {7, 13}


def test_timeline_analysis_runs_unchanged_on_the_nsys_trace(trace):
    tr = kineto.Trace(**{f: getattr(trace, f) for f in trace.__dataclass_fields__})
    # analyze() counts iterations by ranges named ITER_RANGE ("kprof_iteration"); probe.py named
    # its iteration range "kprof_iter", so it is renamed here (the stage ranges already match).
    tr.ranges = tr.ranges.assign(name=tr.ranges["name"].replace({"kprof_iter": T.ITER_RANGE}))
    tl = T.analyze(tr, ["gemm", "add"], 132)
    assert tl.iterations == ITERS and not tl.notes
    stages = {s["stage"]: s for s in tl.stages}
    assert all(
        s["kernels_per_iteration"] == 1 and len(s["gpu_time_ns_samples"]) == ITERS for s in stages.values()
    )
    assert 170_000 < stages["gemm"]["gpu_time_ns_median"] < 180_000
    assert 90_000 < stages["add"]["gpu_time_ns_median"] < 98_000
    k = tr.kernels  # annotated by analyze
    assert (
        set(k.loc[k["name"] == GEMM, "stage"].dropna()) == {"gemm"} and k["stage"].notna().sum() == 2 * ITERS
    )
    assert set(k.loc[k["name"] == "add", "stage"].dropna()) == {"add"}
    assert stages["gemm"]["streams"] == ["13"] and stages["add"]["streams"] == ["17"]
    # Stream table of the whole trace: the default stream (warm-up, no overlap) and the two
    # ranged streams, which overlap each other.
    streams = {s["stream"]: s for s in tl.streams}
    assert set(streams) == {"7", "13", "17"} and streams["7"]["overlap_pct"] == 0.0
    assert streams["13"]["overlap_ns"] == streams["17"]["overlap_ns"] > 0
    assert tl.memop_summary[0]["name"] == "Memset (Device)" and tl.memop_summary[0]["instances"] == 8
    assert tl.launch_order[0]["kernel"] == GEMM and tl.launch_order[0]["api"] == "cuLaunchKernelEx"
    assert {w["kernel"]: w["full_waves"] for w in tl.waves}[GEMM] == 1  # a persistent kernel: 132 blocks

    # The measured iterations alone: exactly the two streams of probe.py.
    ranged = _ranged(trace)
    only = kineto.Trace(
        kernels=ranged.reset_index(drop=True),
        memops=trace.memops.iloc[0:0],
        api=tr.api,
        ranges=tr.ranges,
        cpu_ops=tr.cpu_ops,
        num_sms=132,
        device_name=tr.device_name,
    )
    tl2 = T.analyze(only, ["gemm", "add"], 132)
    assert len(tl2.streams) == 2 and all(s["overlap_pct"] > 0 for s in tl2.streams)
    assert len(tl2.iteration_span_ns) == ITERS


def test_add_kernel_total_matches_the_file():
    tr = P.load_sqlite(DB)
    ((total, n),) = _sql(
        "SELECT sum(k.\"end\" - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'add'"
    )
    assert n == 8 and total == 644392  # the recorded figure
    assert tr.kernels.loc[tr.kernels["name"] == "add", "dur"].sum() == total


# ----------------------------------------------------------------------------- other exports


def _db(path: Path, statements: list[str]) -> Path:
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return path


def test_missing_tables_give_empty_frames_with_the_columns(tmp_path):
    # NVTX only (no CUDA at all), an old export with no textId column, and a mark.
    db = _db(
        tmp_path / "nvtx_only.sqlite",
        [
            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER)",
            "INSERT INTO NVTX_EVENTS VALUES (100, 300, 59, 'kprof_a', 7), (150, NULL, 34, 'mark', 7), "
            "(400, 500, 60, 'kprof_b', 8), (600, NULL, 59, 'unclosed', 7)",
        ],
    )
    tr = P.load_sqlite(db)
    assert tr.kernels.empty and list(tr.kernels.columns) == P.KERNEL_COLUMNS
    assert tr.api.empty and tr.memops.empty and list(tr.memops.columns) == P.MEMOP_COLS
    assert tr.ranges[["name", "start", "dur", "tid"]].values.tolist() == [
        ["kprof_a", 100.0, 200.0, 7],
        ["kprof_b", 400.0, 100.0, 8],
    ]
    assert tr.num_sms is None and tr.device_name is None
    tl = T.analyze(tr, ["a"])
    assert tl.notes and tl.notes[0].startswith("no GPU kernel")


def test_memcpy_names_follow_kineto(tmp_path):
    db = _db(
        tmp_path / "copies.sqlite",
        [
            "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, streamId INTEGER, correlationId INTEGER,"
            " bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER)",
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 20, 7, 1, 1024, 8, 2, 2), (30, 50, 7, 2, 64, 1, 0, 2), "
            "(60, 70, 7, 3, 8, 99, NULL, NULL)",
        ],
    )
    tr = P.load_sqlite(db)  # no ENUM_* tables in this file: CUPTI's values are built in
    assert tr.memops["name"].tolist() == [
        "Memcpy DtoD (Device -> Device)",
        "Memcpy HtoD (Pageable -> Device)",
        "Memcpy",
    ]
    assert set(tr.memops["kind"]) == {"memcpy"} and tr.memops["bytes"].tolist() == [1024, 64, 8]
    assert P.memcpy_name("CUDA_MEMCPY_KIND_UVM_DTOH") == "Memcpy DtoH"


def test_bad_input_raises_a_clear_error(tmp_path):
    text = tmp_path / "notes.sqlite"
    text.write_text("this is not a database, just text long enough to have a header" * 10)
    with pytest.raises(ValueError, match=re.escape(str(text))) as e:
        P.load_sqlite(text)
    assert "not an Nsight Systems SQLite export" in str(e.value)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()  # a valid SQLite file with no table
    no_table = r".*no table CUPTI_ACTIVITY_KIND_KERNEL or NVTX_EVENTS"
    with pytest.raises(ValueError, match=re.escape(str(empty)) + no_table):
        P.load_sqlite(empty)
    other = _db(tmp_path / "other.sqlite", ["CREATE TABLE t (x INTEGER)"])
    with pytest.raises(ValueError, match="not an Nsight Systems SQLite export"):
        P.load_sqlite(other)
    with pytest.raises(FileNotFoundError, match="nothing.sqlite"):
        P.load_sqlite(tmp_path / "nothing.sqlite")


# ----------------------------------------------------------------------------- program output

LDD_TEXT = """\tlinux-vdso.so.1 (0x00007ffd2a5f7000)
\tlibpfm.so.4 => not found
\tlibQt6Core.so.6 => /opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/libQt6Core.so.6 (0x00007f5e2c400000)
\tlibdw.so.1 => not found
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f5e2c000000)
\tlibelf.so.1 => not found
\tlibpfm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f5e2bc00000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f5e2d000000)
"""


def test_parse_ldd_missing():
    assert P.parse_ldd_missing(LDD_TEXT) == ["libpfm.so.4", "libdw.so.1", "libelf.so.1"]
    assert P.parse_ldd_missing("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n") == []
    assert P.parse_ldd_missing("\tnot a dynamic executable\n") == [] and P.parse_ldd_missing("") == []


def test_parse_version():
    assert P.parse_version("NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0\n") == "2025.3.1.90"
    assert P.parse_version("NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0") == "2024.5.1.113"
    assert P.parse_version("command not found") is None


# ----------------------------------------------------------------------------- finding and checking nsys


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


VERSION = 'echo "NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0"'


@pytest.fixture
def bare(tmp_path, monkeypatch):
    """No nsys anywhere: empty PATH (but a bin folder for fake tools), no KPROF_NSYS, install
    folders looked for under tmp_path, no cached check."""
    root = tmp_path / "root"
    (tmp_path / "bin").mkdir()
    monkeypatch.setattr(N, "_ROOT", root)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv(N.NSYS_ENV, raising=False)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    N.clear_cache()
    yield root
    N.clear_cache()


def _ncu_bundle(root: Path, ver: str = "2025.3.1") -> tuple[Path, Path]:
    host = root / "opt/nvidia/nsight-compute" / ver / "host"
    nsys = _script(host / "target-linux-x64/nsys", VERSION)
    imp = _script(host / "linux-desktop-glibc_2_11_3-x64/QdstrmImporter", "exit 0")
    return nsys, imp


def test_not_found(bare, monkeypatch):
    assert N.candidates() == []
    c = N.check_nsys()
    assert not c.usable and c.path is None and "not found" in c.problem and "KPROF_NSYS" in c.problem
    monkeypatch.setenv(N.NSYS_ENV, str(bare / "no" / "nsys"))
    c = N.check_nsys()
    assert not c.usable and c.problem.startswith(
        f"KPROF_NSYS={bare / 'no' / 'nsys'} is not an executable file"
    )
    assert (
        N.candidates() == []
    )  # a KPROF_NSYS that is not executable is never offered (was find_nsys() is None)


def test_candidates_in_order_without_duplicates(bare, tmp_path, monkeypatch):
    standalone = _script(bare / "opt/nvidia/nsight-systems/2025.1.1/bin/nsys", VERSION)
    older = _script(bare / "opt/nvidia/nsight-systems/2024.5.1/bin/nsys", VERSION)
    bundled, _ = _ncu_bundle(bare)
    toolkit = _script(bare / "usr/local/cuda-13.0/bin/nsys", VERSION)
    (tmp_path / "bin" / "nsys").symlink_to(standalone)  # on PATH: the same install, listed once
    mine = _script(tmp_path / "mine" / "nsys", VERSION)
    monkeypatch.setenv(N.NSYS_ENV, str(mine))
    assert N.candidates()[0] == mine  # KPROF_NSYS comes first (was find_nsys() == mine)
    assert N.candidates() == [mine, tmp_path / "bin" / "nsys", older, bundled, toolkit]
    monkeypatch.delenv(N.NSYS_ENV)
    (tmp_path / "bin" / "nsys").unlink()
    assert N.candidates() == [standalone, older, bundled, toolkit]  # newest standalone first


def test_importer_layouts(tmp_path):
    nsys, imp = _ncu_bundle(tmp_path)
    assert N.importer_for(nsys) == imp
    sa = tmp_path / "nsight-systems/2025.1.1"
    sa_imp = _script(sa / "host-linux-x64/QdstrmImporter", "exit 0")
    assert N.importer_for(_script(sa / "bin/nsys", VERSION)) == sa_imp
    assert N.importer_for(_script(sa / "target-linux-x64/nsys", VERSION)) == sa_imp
    tk = tmp_path / "cuda-13.0"
    tk_imp = _script(tk / "nsight-systems-2025.1.1/host-linux-x64/QdstrmImporter", "exit 0")
    assert N.importer_for(_script(tk / "bin/nsys", VERSION)) == tk_imp
    assert N.importer_for(_script(tmp_path / "lonely/sub/bin/nsys", VERSION)) is None


def test_bundled_nsys_whose_importer_lacks_libraries(bare, tmp_path, monkeypatch):
    nsys, imp = _ncu_bundle(bare)
    # A fake ldd on PATH that reports the three libraries missing unless LD_LIBRARY_PATH holds them.
    _script(
        tmp_path / "bin" / "ldd",
        'for l in libpfm.so.4 libdw.so.1 libelf.so.1; do\n'
        '  if [ -n "$LD_LIBRARY_PATH" ] && [ -e "$LD_LIBRARY_PATH/$l" ];'
        ' then echo "\t$l => $LD_LIBRARY_PATH/$l (0x1)"; else echo "\t$l => not found"; fi\ndone\necho "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x2)"',
    )
    assert N.missing_libraries(imp) == ["libpfm.so.4", "libdw.so.1", "libelf.so.1"]
    c = N.check_nsys()
    assert not c.usable and c.path == nsys and c.version == "2025.3.1.90"
    assert c.missing == ["libpfm.so.4", "libdw.so.1", "libelf.so.1"]
    assert c.problem == (
        f"Nsight Systems 2025.3.1.90 at {nsys} cannot import its recording: its importer {imp} "
        "cannot load libpfm.so.4, libdw.so.1, libelf.so.1 (packages libpfm4 libdw1 libelf1: "
        "`apt-get install libpfm4 libdw1 libelf1`, or put the libraries on LD_LIBRARY_PATH)"
    )
    # The libraries put on LD_LIBRARY_PATH: a new answer (the cache is per LD_LIBRARY_PATH).
    libs = tmp_path / "nsyslibs"
    libs.mkdir()
    for lib in N.LIB_PACKAGES:
        (libs / lib).write_text("")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(libs))
    ok = N.check_nsys()
    assert ok.usable and ok.problem is None and ok.missing == [] and ok.path == nsys
    monkeypatch.delenv("LD_LIBRARY_PATH")
    assert N.check_nsys() == c


def test_check_skips_an_unusable_nsys_for_a_usable_one(bare, monkeypatch):
    broken = _script(bare / "opt/nvidia/nsight-systems/2025.1.1/bin/nsys", "echo 'segfault' >&2; exit 139")
    _script(bare / "opt/nvidia/nsight-systems/2025.1.1/host-linux-x64/QdstrmImporter", "exit 0")
    bundled, imp = _ncu_bundle(bare)
    monkeypatch.setattr(N, "missing_libraries", lambda binary: [])
    c = N.check_nsys()
    assert c.usable and c.path == bundled
    assert N._check_one(str(broken), None).problem.startswith(f"{broken} does not run as Nsight Systems")
    # Only the broken one: its problem is reported, and check_nsys still does not raise.
    shutil.rmtree(bare / "opt/nvidia/nsight-compute")
    N.clear_cache()
    c = N.check_nsys()
    assert not c.usable and "does not run as Nsight Systems" in c.problem and "exit 139" in c.problem
    # An importer missing altogether, and a library with no known package.
    nsys = _script(bare / "opt/nvidia/nsight-systems/2025.1.1/bin/nsys", VERSION)
    (bare / "opt/nvidia/nsight-systems/2025.1.1/host-linux-x64/QdstrmImporter").unlink()
    N.clear_cache()
    assert "no QdstrmImporter found beside it" in N.check_nsys().problem
    _script(bare / "opt/nvidia/nsight-systems/2025.1.1/host-linux-x64/QdstrmImporter", "exit 0")
    monkeypatch.setattr(N, "missing_libraries", lambda binary: ["libfoo.so.3"])
    N.clear_cache()
    c = N.check_nsys()
    assert c.path == nsys and c.problem.endswith(
        "cannot load libfoo.so.3 (put the libraries on LD_LIBRARY_PATH)"
    )
    monkeypatch.setattr(N, "candidates", lambda: 1 / 0)
    assert "could not be checked" in N.check_nsys().problem


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("ldd")), reason="needs gcc and ldd")
def test_missing_libraries_with_the_real_ldd(tmp_path, monkeypatch):
    """A real executable needing a library that is not on the loader's path, then is."""
    src = tmp_path / "dep.c"
    src.write_text("int kprof_dep(void) { return 1; }\n")
    libdir = tmp_path / "libs"
    libdir.mkdir()
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libkprofdep.so.1",
            "-o",
            str(libdir / "libkprofdep.so.1"),
            str(src),
        ],
        check=True,
    )
    main = tmp_path / "main.c"
    main.write_text("int kprof_dep(void);\nint main(void) { return kprof_dep(); }\n")
    exe = tmp_path / "QdstrmImporter"
    subprocess.run(["gcc", "-o", str(exe), str(main), str(libdir / "libkprofdep.so.1")], check=True)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    assert N.missing_libraries(exe) == ["libkprofdep.so.1"]
    monkeypatch.setenv("LD_LIBRARY_PATH", str(libdir))
    assert N.missing_libraries(exe) == []
    assert N.missing_libraries(Path("/bin/sh")) == [] and N.missing_libraries(tmp_path / "absent") == []


# ``nsys profile --help`` of 2025.3 (its sampler's lines) and of an older nsys (2023.x: the singular flag).
HELP_NEW = "--gpu-metrics-devices=\n   Collect GPU Metrics from specified devices."
HELP_OLD = "--gpu-metrics-device=\n   Collect GPU Metrics from specified devices."


def _nsys(path: Path, help_text: str) -> Path:
    """A fake nsys: ``profile --help`` prints ``help_text``, anything else the version."""
    return _script(path, f'if [ "$1" = profile ]; then printf "%s\\n" "{help_text}"; else {VERSION}; fi')


def test_version_and_profile_prefix(tmp_path, monkeypatch):
    monkeypatch.delenv("KPROF_NSYS_GPU_METRICS", raising=False)
    nsys = _nsys(tmp_path / "nsys", HELP_NEW)
    assert N.version(nsys) == "2025.3.1.90"
    assert N.version(tmp_path / "absent") is None
    assert N.version(_script(tmp_path / "bad", "exit 3")) is None
    cmd = N.profile_prefix(nsys, tmp_path / "out" / "profile")
    assert cmd == [
        str(nsys),
        "profile",
        "-t",
        "cuda,nvtx",
        "--cuda-graph-trace=node",
        "--gpu-metrics-devices=cuda-visible",  # the GPU metrics sampler, on by default
        "--sample=none",
        "--cpuctxsw=none",
        "--force-overwrite",
        "true",
        "-o",
        str(tmp_path / "out" / "profile"),
    ]
    assert all(isinstance(a, str) for a in cmd)


@pytest.mark.parametrize(
    "help_text, visible, flag",
    [
        (HELP_NEW, "1", "--gpu-metrics-devices=cuda-visible"),
        (HELP_OLD, "", "--gpu-metrics-device=all"),
        (HELP_OLD, "1", None),  # the singular flag names machine indices, not the job's: not guessed
        ("no such option here", "", None),
    ],
    ids=["plural", "singular", "singular-narrowed", "none"],
)
def test_the_sampler_flag_is_the_one_this_nsys_knows_or_none(tmp_path, monkeypatch, help_text, visible, flag):
    monkeypatch.delenv("KPROF_NSYS_GPU_METRICS", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    nsys = _nsys(tmp_path / "nsys", help_text)
    assert N.gpu_metrics_flag(nsys) == flag
    cmd = N.profile_prefix(nsys, tmp_path / "o")
    assert [a for a in cmd if a.startswith("--gpu-metrics")] == ([flag] if flag else [])
    assert "-o" in cmd and "--sample=none" in cmd  # the rest of the profile as before
    assert N.gpu_metrics_flag(tmp_path / "absent") is None


# ----------------------------------------------------------------------------- export


def test_export_sqlite(tmp_path):
    rep = tmp_path / "profile.nsys-rep"
    rep.write_bytes(b"rep")
    # argv: export --type sqlite --force-overwrite true -o OUT REP
    ok = _script(
        tmp_path / "ok" / "nsys",
        f'[ "$1 $2 $3 $4 $5 $6" = "export --type sqlite --force-overwrite true -o" ]'
        f' || exit 9\ncp "{DB}" "$7"',
    )
    out = N.export_sqlite(ok, rep, tmp_path / "profile.sqlite")
    assert out == tmp_path / "profile.sqlite" and len(P.load_sqlite(out).kernels) == 20
    failing = _script(
        tmp_path / "fail" / "nsys",
        'echo "working..."; echo "ERROR: unable to open profile.nsys-rep: wrong format" >&2; exit 1',
    )
    with pytest.raises(N.NsysError, match="exit 1.*unable to open profile.nsys-rep: wrong format"):
        N.export_sqlite(failing, rep, tmp_path / "profile.sqlite")
    assert not (tmp_path / "profile.sqlite").exists()  # the old export is not passed off as a new one
    silent = _script(tmp_path / "silent" / "nsys", 'echo "nothing to export" >&2')
    with pytest.raises(N.NsysError, match="wrote no .*nothing to export"):
        N.export_sqlite(silent, rep, tmp_path / "x.sqlite")
    slow = _script(tmp_path / "slow" / "nsys", "exec sleep 5")
    with pytest.raises(N.NsysError, match="ran past 0.5 s"):
        N.export_sqlite(slow, rep, tmp_path / "y.sqlite", timeout_s=0.5)
    with pytest.raises(N.NsysError, match="could not start"):
        N.export_sqlite(tmp_path / "absent", rep, tmp_path / "z.sqlite")
