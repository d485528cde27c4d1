"""Calibration pair (eleventh held-back set) — a hash table probed at a 97 % load factor: an open-addressing
(linear probing) table sized to the key count plus 3 % to save memory, so a lookup walks a long run of
occupied slots before it finds its key (Knuth, TAOCP vol. 3, 6.4: a successful search in linear probing takes
(1 + 1/(1 - a))/2 probes on average, 17 at a = 0.97 against 1.5 at a = 0.5, and the runs' lengths have a long
tail; GPU hash tables (Alcantara et al., "Real-time parallel hashing on the GPU"; WarpCore) keep the load
at 0.5-0.8 for this reason).

The work: look up Q = N = 2^23 int32 keys (every key of the table once, in a random order) and return each
key's fp32 value: a feature-id → slot map (a recommender's id remapping, a vocabulary map). Both tables hold
the same N keys in 8-byte slots (the key and its value side by side): home slot h(k) = (fmix32(k) · C) >> 32
(MurmurHash3's finaliser, then the multiply-shift range reduction), keys placed by linear probing (a key at
its home slot or after it, every slot between occupied; the table ends with an overflow tail, so probes never
wrap). One program of 4 warps per 128 queries; each lane walks slots h, h + 1, ... until its key,
the program loops while any lane searches (a lane's probe i + 1 issued after probe i's key compared).

Planted problem (v0): the table with C = N / 0.97 slots: ~17 probes a lookup on average, the program's
slowest of 128 lanes in the hundreds: each probe a dependent load (L1/L2 latency a step), the program's
warps idle for the longest run.
Fix (v1): the table with C = 2N slots (load 0.5): ~1.5 probes a lookup; the same kernel, the same keys.

Model: the queries read and the values written once, one 8-byte slot read a query (bytes 4·Q + 4·Q + 8·Q =
134 MB at the defaults); FLOPs 0.

Expected on an H100 SXM (per design): v1 ~1-2 random sectors a query ≈ 0.2-0.4 ms; v0 ~10x the probe steps,
each a dependent load, ≈ 1-4 ms: ~3-10x. v0's limiter: the latency of the dependent probe loads, long runs
of them, with little else in flight (cause "latency"; no pipe or memory level is busy: resource None).
Tolerance: a lookup: exact (0).

Revised after the GPU quick check (H100, 2026-11-27 03:00 UTC; the first design recorded nothing): the first
design's home slot ((k · 0x85EBCA6B) mod 2^31) mod C was a bijection of the keys' generator at the fix's C =
2^24 (no collisions at all: 1.00 probes, not the 1.5 of load 0.5: the fix was a perfect hash, 2.05x), and
keys and values were in two arrays (two random sectors a lookup). Now a mixing hash (fmix32, multiply-shift)
and 8-byte slots; the mechanism, the load factors and the cause unchanged.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version

EMPTY = -1
M32 = 0xFFFFFFFF


def home(keys, cap):
    """Home slots of int64 ``keys`` (non-negative, < 2^31) in a table of ``cap`` slots: MurmurHash3's fmix32,
    then (h · cap) >> 32 (the kernel computes the same in int64)."""
    h = keys
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & M32
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & M32
    h = h ^ (h >> 16)
    return (h * cap) >> 32


def build_table(keys, vals, cap):
    """Linear probing, keys placed in the order of their home slots (the same runs as inserting them one by
    one): position i of the sorted keys goes to max(home_i, position_{i-1} + 1); the table is extended past
    ``cap`` by the last run's overflow."""
    import torch

    h = home(keys, cap)
    order = torch.argsort(h, stable=True)
    hs = h[order]
    idx = torch.arange(len(keys), dtype=torch.int64)
    pos = idx + torch.cummax(hs - idx, dim=0).values
    length = max(cap, int(pos[-1]) + 1) if len(keys) else cap
    table = torch.zeros(length, 2, dtype=torch.int32)  # slot: [key, value's bits]
    table[:, 0] = EMPTY
    table[pos, 0] = keys[order].to(torch.int32)
    table[pos, 1] = vals[order].view(torch.int32)
    return table


def capacities(p):
    n = p["N"]
    return -(-n * 100 // 97), 2 * n


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    n = p["N"]
    # N distinct positive keys (an odd multiplier is a bijection mod 2^31), values random.
    ids = torch.randperm(1 << 24 if n <= 1 << 24 else n, generator=g)[:n].to(torch.int64)
    keys = (ids * 0x9E3779B1 + 12345) % (1 << 31)
    vals = torch.randn(n, generator=g)
    c0, c1 = capacities(p)
    perm = torch.randperm(n, generator=g)
    return {
        "queries": keys[perm].to(torch.int32).to(device),
        "want": vals[perm].to(device),
        "table0": build_table(keys, vals, c0).to(device),
        "table1": build_table(keys, vals, c1).to(device),
        # Poisoned output: NaN wherever a version fails to write shows up in the check.
        "out": torch.full((n,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    return inputs["want"].clone()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(16 * p["N"])


_STAGE = StageModel("lookup", flops=lambda p: 0.0, bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_hash_probe",
    description="Calibration (held back, set 11; planted: a hash table probed at a 97 % load factor): 2^23 "
    "int32 keys looked up by linear probing; v0 the table at load 0.97, v1 the same keys at load 0.5",
    params=(
        Param("N", 1 << 23, min=1, max=1 << 26, doc="keys in the table, each looked up once"),
        Param("dtype", "float32", choices=("float32",), doc="values' dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: the table at load factor 0.97", (_STAGE,), _build("v0")),
        Version("v1", "fix: the table at load factor 0.5", (_STAGE,), _build("v1")),
    ),
    memory_bytes=lambda p: float(16 * p["N"] + 8 * (capacities(p)[0] + capacities(p)[1] + 4096)),
    tolerance=lambda dtype: 0.0,
)
