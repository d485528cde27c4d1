"""The catalogue and information tools: ``list_kernels``, ``read_params``, ``classify_bottleneck``,
``update_devlog`` and ``device_info``."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..engine import Engine, KprofError, PackageError
from ..models import Diagnosis
from .errors import _ann
from .io import DeviceInfo, DevlogResult, KernelInfo, KernelList, ParamInfo, ParamsFile, VersionInfo
from .toolctx import ToolContext


def kernel_list(engine: Engine) -> KernelList:
    """Every kernel package as list_kernels answers it (the CLI's `kprof list --json` too)."""
    kernels = engine.packages()
    out = []
    for k in kernels:
        if isinstance(k, PackageError):
            out.append(KernelInfo(name=k.name, source=k.source, params=[], versions=[], error=k.error))
            continue
        out.append(
            KernelInfo(
                name=k.name,
                description=k.description,
                source=k.source,
                params=[ParamInfo(**p.model_dump()) for p in k.params],
                versions=[
                    VersionInfo(
                        name=v.name, doc=v.doc, plan_kind=v.plan_kind, stages=[s.name for s in v.stages]
                    )
                    for v in k.versions
                ],
            )
        )
    from ..modes import MODES

    return KernelList(kernels=out, modes={name: True for name in MODES})


def register_catalogue(mcp: MCPServer, tc: ToolContext) -> None:
    """list_kernels."""
    engine = tc.engine

    @mcp.tool(annotations=_ann(True, False, True, False, "List kernel packages"))
    def list_kernels() -> KernelList:
        """List the kernel packages that can be profiled: each one's versions (v0, v1, ...),
        parameters with defaults and bounds (always including dtype), and the named stages
        each version's plan runs. Call this first to learn valid `kernel`, `version` and
        `params` for profile_kernel."""
        try:
            return kernel_list(engine)
        except KprofError as e:
            raise ToolError(str(e)) from None


def register_info(mcp: MCPServer, tc: ToolContext) -> None:
    """read_params, classify_bottleneck, update_devlog and device_info."""
    engine = tc.engine

    @mcp.tool(annotations=_ann(True, False, True, False, "Read a profile's params.json"))
    def read_params(
        profile_dir: Annotated[
            str, Field(description="a profile_dir returned by profile_kernel (inside the workspace)")
        ],
    ) -> ParamsFile:
        """Return the run's params.json: every kernel parameter with dtype, the device (name,
        SMs, L2, table entry), clock state before/after, cache control and the torch / triton /
        CUDA / driver versions. It is the source of truth for the contract's Configuration."""
        try:
            return ParamsFile(profile_dir=profile_dir, params=engine.read_params(profile_dir))
        except KprofError as e:
            raise ToolError(str(e)) from None

    @mcp.tool(annotations=_ann(True, False, True, False, "Classify a bottleneck from metrics"))
    def classify_bottleneck(
        tc_pct: Annotated[
            float | None,
            Field(
                description="tensor-pipe utilisation, % of peak (ncu "
                "sm__pipe_tensor_cycles_active); null if not measured"
            ),
        ],
        dram_pct: Annotated[
            float | None, Field(description="DRAM throughput, % of peak; null if not measured")
        ],
        occupancy_pct: Annotated[float | None, Field(description="achieved occupancy, %")] = None,
        l2_hit_pct: Annotated[float | None, Field(description="L2 hit rate, %")] = None,
        local_spill_bytes: Annotated[
            float | None, Field(description="local-memory spill bytes (0 is healthy)")
        ] = None,
        waves_per_sm: Annotated[
            float | None, Field(description="waves per SM (blocks / (SMs x blocks per SM))")
        ] = None,
        compute_pct: Annotated[
            float | None,
            Field(
                description="SM throughput %, used as compute utilisation unless the tensor pipe is at least as busy "
                "(TC% = 0 by construction for elementwise/reduction/FP32 kernels, a few % where one issues an odd MMA)"
            ),
        ] = None,
        dram_bytes_over_model: Annotated[
            float | None,
            Field(
                description="measured DRAM bytes / the kernel's minimum (model) bytes; > 1.25 is over-fetch, "
                "<= 1.25 means streaming (no L2-locality advice)"
            ),
        ] = None,
        duration_us: Annotated[
            float | None,
            Field(
                description="measured kernel time, µs (with sol_us: bounds every "
                "estimate by duration/sol − 1)"
            ),
        ] = None,
        sol_us: Annotated[
            float | None,
            Field(
                description="speed-of-light time, µs: max(FLOPs / peak FLOP/s, minimum "
                "bytes / peak bytes/s) at the clocks it ran"
            ),
        ] = None,
        grid_blocks: Annotated[
            int | None, Field(description="blocks launched (fewer than SMs: idle SMs)")
        ] = None,
        sm_count: Annotated[int | None, Field(description="SMs of the GPU (132 on an H100 SXM)")] = None,
        local_bytes_share_pct: Annotated[
            float | None,
            Field(
                description="local-memory (spill) bytes as % of all L1 traffic bytes (ncu l1tex__t_bytes.sum)"
            ),
        ] = None,
        accounting: Annotated[
            dict[str, float] | None,
            Field(
                description="where the time went, as a profile's result.json stage 'accounting' holds it (Nsight "
                "Compute: stall_<reason> cycles per issued instruction, pipe_<x>_pct, ffma_thread_inst, "
                "hmma_inst, l2_atom_sectors, global_ld_sectors, shared_bank_conflicts, shared_wavefronts, "
                "...): the catalogue's causes (atomics, small_tiles, bank_conflicts) and the machine model's moves (move_work, with arch) are ranked "
                "from it"
            ),
        ] = None,
        tensor_work: Annotated[bool, Field(description="the work suits tensor cores (a matmul/dot)")] = False,
        flops: Annotated[float | None, Field(description="the stage's FLOPs (its model)")] = None,
        dtype: Annotated[
            str | None, Field(description="element type of the operands, e.g. 'float16'")
        ] = None,
        arch: Annotated[
            str | None,
            Field(
                description="the GPU architecture the metrics were measured on (sm_80, sm_86, sm_89, sm_90, "
                "sm_100, sm_120): its machine model (pipes' rates, which pipe can take another's work) "
                "weighs moving the limiter's work"
            ),
        ] = None,
    ) -> Diagnosis:
        """Classify a kernel from its metrics with SPEC.md's thresholds: Memory-bound (DRAM > 70%,
        compute low), Compute-bound (TC/SM > 60%, DRAM low), Latency-bound (both low); flags a
        locality issue when L2 hit < 80% and the DRAM traffic exceeds the model (not compulsory
        misses); lists unhealthy metrics and the opportunities the given metrics support, largest
        first. Each estimate is the share of the time one change would remove (gain = 1/(1 −
        share) − 1), from the same model profile_kernel uses: specific causes (too few blocks,
        spills, over-fetch, tail) first, generic advice credited only with what they leave. Give
        duration_us and sol_us to bound every estimate by the speed of light; without them a
        cause is credited at most 95 % of the time. waves_per_sm=0 is a value (no SM busy), not
        'missing' (use null)."""
        try:
            return Engine.classify(
                tc_pct,
                dram_pct,
                occupancy_pct,
                l2_hit_pct,
                local_spill_bytes,
                waves_per_sm,
                compute_pct,
                dram_bytes_over_model,
                duration_us,
                sol_us,
                grid_blocks,
                sm_count,
                local_bytes_share_pct,
                accounting,
                tensor_work,
                flops,
                dtype,
                arch,
            )
        except KprofError as e:
            raise ToolError(str(e)) from None

    @mcp.tool(annotations=_ann(False, False, False, False, "Append to a kernel's development log"))
    def update_devlog(
        kernel: Annotated[
            str, Field(description="kernel name (plain name): the log is docs/kernels/<kernel>.md")
        ],
        profile_dir: Annotated[str, Field(description="the profile_dir whose numbers the entry records")],
        issues: Annotated[list[str] | None, Field(description="remaining problems, one per item")] = None,
        insights: Annotated[
            list[str] | None, Field(description="why the change worked or not; guidance for the next step")
        ] = None,
        allow_mismatch: Annotated[
            bool,
            Field(
                description="fill 'vs Previous' from the log's last entry even where it measured other "
                "parameters, another device or another mode; what differs then heads it"
            ),
        ] = False,
    ) -> DevlogResult:
        """Append a performance entry (SPEC.md's devlog template: duration, TFLOP/s, GB/s,
        occupancy, TC util, bottleneck, issues, insights) to docs/kernels/<kernel>.md in the
        workspace. 'vs Previous' is filled from the log's last entry measured the same way (parameters,
        device, mode); where none was, the entry says why it compares with none. Appends only; safe
        under concurrent calls (file lock, atomic replace)."""
        try:
            path, entry = engine.update_devlog(kernel, profile_dir, issues, insights, allow_mismatch)
        except KprofError as e:
            raise ToolError(str(e)) from None
        return DevlogResult(path=str(path), entry=entry)

    @mcp.tool(annotations=_ann(True, False, True, False, "Active device, peaks and profilers"))
    def device_info() -> DeviceInfo:
        """The active device (name, memory, clocks, driver), its devices.json peaks (TFLOP/s per
        dtype, GB/s) and ridge points in FLOP/byte, the clock-control policy, which profilers
        are present and which modes are built. With no GPU it says timing runs on the CPU."""
        return DeviceInfo(info=engine.device_info())
