"""Temporary device bench for calibration pairs C (removed after use)."""
import importlib, inspect, os, subprocess, sys, time, csv, io, json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
KD = ROOT / "tests" / "calibration" / "kernels"
sys.path.insert(0, str(KD)); sys.path.insert(0, str(ROOT))
import torch, triton, triton.language as tl
from triton.testing import do_bench

OUT = Path(os.environ.get("OUT", "/tmp"))
MODE = sys.argv[1]


def pkg(name):
    return importlib.import_module(name).KERNEL


def run_version(name, params, version, check=True, launches=1):
    k = pkg(name)
    p = k.validate_params(params)
    inp = k.make_inputs(p, "cuda")
    plan = k.version(version).build(inp, p)
    (st,) = plan.stages
    ck = None
    for _ in range(launches):
        ck = st.fn()
    torch.cuda.synchronize()
    rel = None
    if check:
        o, r = plan.output().double(), k.reference(inp, p).double()
        rel = float((o - r).norm() / r.norm())
    return k, p, inp, plan, st, ck, rel


def ptx_counts(ck):
    ptx = ck.asm.get("ptx", "")
    keys = ["wgmma.mma_async", "mma.sync", "fma.rn.f32", "red.", "atom.", "ld.shared", "st.shared", "shfl", "bar.sync", "vote"]
    return {k: ptx.count(k) for k in keys}


def info(ck):
    md = ck.metadata
    return dict(regs=ck.n_regs, spills=ck.n_spills, smem=getattr(md, "shared", None))


def t(fn):
    return do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3  # us


if MODE == "time":
    print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())
    print("histogram sig", inspect.signature(tl.histogram))
    rows = []
    cases = [
        ("calib_fma_gemm", {}), ("calib_small_tiles", {}), ("calib_small_tiles", {"M": 8192, "N": 8192, "K": 8192}),
        ("calib_histogram", {}), ("calib_histogram", {"n": 1 << 25}), ("calib_bank_conflicts", {}),
    ]
    for name, params in cases:
        for v in ("v0", "v1"):
            try:
                k, p, inp, plan, st, ck, rel = run_version(name, params, v, launches=3 if "hist" in name else 1)
                us = t(st.fn)
                extra = ""
                if "hist" in name:
                    extra = f" bins_after={int(inp['bins'].abs().sum())} count={int(inp['count'])}"
                    o, r = plan.output().double(), k.reference(inp, p).double()
                    extra += f" rel_after_bench={float((o - r).norm() / r.norm()):.3g}"
                fl, by = st_model = k.version(v).stages[0].flops(p), k.version(v).stages[0].bytes(p)
                line = (f"{name} {params} {v}: {us:9.1f} us rel={rel:.3g} {info(ck)} "
                        f"TFLOP/s={fl / us / 1e6:.1f} GB/s(model)={by / us / 1e3:.0f}{extra} ptx={ptx_counts(ck)}")
            except Exception as e:  # noqa
                import traceback; traceback.print_exc()
                line = f"{name} {params} {v}: FAILED {type(e).__name__}: {e}"
            print(line, flush=True)
            rows.append(line)
            torch.cuda.empty_cache()
    # references
    a = torch.randn(4096, 4096, device="cuda"); b = torch.randn(4096, 4096, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    print("cublas fp32 ieee 4096:", t(lambda: a @ b), "us")
    torch.backends.cuda.matmul.allow_tf32 = True
    print("cublas tf32 4096:", t(lambda: a @ b), "us")
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=torch.float16); b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        print(f"cublas fp16 {n}:", t(lambda: a @ b), "us")
    x = torch.empty(1 << 26, device="cuda", dtype=torch.float32); y = torch.empty_like(x)
    print("copy 2^26 fp32 (537 MB moved):", t(lambda: y.copy_(x)), "us")
    xi = torch.randint(0, 256, (1 << 26,), device="cuda", dtype=torch.int32)
    print("torch.bincount 2^26:", t(lambda: torch.bincount(xi, minlength=256)), "us")
    print("torch.histc-like sum 2^26 int32 read:", t(lambda: xi.sum()), "us")

    # variants
    import calib_histogram.impl as H
    k = pkg("calib_histogram"); p = k.validate_params({}); inp = k.make_inputs(p, "cuda")
    for chunks in (1, 4, 16):
        for private in (False, True):
            for warps in (4, 8):
                programs = triton.cdiv(p["n"], H.BLOCK * chunks)
                fn = lambda: H.histogram_kernel[(programs,)](inp["x"], inp["bins"], inp["count"], inp["out"], p["n"],
                                                             NUM_BINS=256, BLOCK=H.BLOCK, CHUNKS=chunks, PRIVATE=private,
                                                             num_warps=warps, num_stages=1)
                fn(); torch.cuda.synchronize()
                ok = torch.equal(inp["out"], k.reference(inp, p))
                print(f"hist variant chunks={chunks} private={private} warps={warps}: {t(fn):.1f} us ok={ok}")
    import calib_fma_gemm.impl as F
    k = pkg("calib_fma_gemm"); p = k.validate_params({}); inp = k.make_inputs(p, "cuda")
    a, b, c = inp["a"], inp["b"], inp["c"]
    for (bm, bn, bk, w, s) in [(128, 128, 32, 8, 3), (128, 128, 16, 8, 3), (128, 64, 32, 4, 3), (64, 64, 32, 4, 3), (128, 128, 32, 4, 3), (128, 256, 32, 8, 3)]:
        for prec in ("ieee", "tf32"):
            g = triton.cdiv(4096, bm) * triton.cdiv(4096, bn)
            fn = lambda: F.fp32_gemm_kernel[(g,)](a, b, c, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1, BLOCK_M=bm,
                                                  BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, PRECISION=prec, num_warps=w, num_stages=s)
            try:
                ck = fn(); torch.cuda.synchronize()
                us = t(fn)
                print(f"fma variant {bm}x{bn}x{bk} w{w} s{s} {prec}: {us:.1f} us {2 * 4096 ** 3 / us / 1e6:.1f} TFLOP/s {info(ck)}")
            except Exception as e:
                print(f"fma variant {bm}x{bn}x{bk} w{w} s{s} {prec}: FAILED {e}")

elif MODE == "ncu":
    # each default version once (compile + launch); ncu filters by kernel name
    for name in ("calib_fma_gemm", "calib_small_tiles", "calib_histogram", "calib_bank_conflicts"):
        for v in ("v0", "v1"):
            run_version(name, {}, v, check=False)
            torch.cuda.empty_cache()

elif MODE == "metrics":
    from kprof_mcp.parsers.ncu import METRICS
    cat = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True).stdout
    known = {r[0].strip() for r in csv.reader(io.StringIO(cat)) if r}
    names = []
    for cands in METRICS.values():
        for c in cands:
            if c.split(".", 1)[0] in known or c.startswith(("launch__", "sm__maximum_warps_per_active_cycle")):
                names.append(c); break
    extra = ["smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
             "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active",
             "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
             "lts__t_bytes.sum", "l1tex__m_xbar2l1tex_read_bytes.sum", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"]
    names += [e for e in extra if e.split(".", 1)[0] in known]
    print(",".join(names))

elif MODE == "summarize":
    text = Path(sys.argv[2]).read_text()
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    by = {}
    for r in rows:
        key = (r["ID"], r["Kernel Name"][:40])
        by.setdefault(key, {})[r["Metric Name"]] = r["Metric Value"]
    allm = sorted({m for d in by.values() for m in d})
    res = {f"{k[0]}:{k[1]}": d for k, d in by.items()}
    (OUT / "ncu_summary.json").write_text(json.dumps(res, indent=1))
    short = lambda m: m.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "").replace(".avg.pct_of_peak_sustained_active", "%a").replace(".avg.pct_of_peak_sustained_elapsed", "%e")
    for k, d in by.items():
        print("==", k)
        items = []
        for m in allm:
            v = d.get(m)
            if v in (None, "", "0", "0.00", "n/a"):
                continue
            if "stall" in m:
                try:
                    if float(v.replace(",", "")) < 0.3: continue
                except ValueError: pass
            items.append(f"{short(m)}={v}")
        print("  " + " ".join(items))
