"""The tools' input and output models: those defined here and, re-exported, the summaries
:mod:`kprof_mcp.render` builds (profile, compare, sweep, noise). One place to read every tool's I/O."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ParamInfo(BaseModel):
    name: str
    default: int | str
    min: int | None = None
    max: int | None = None
    choices: list[str] | None = None
    doc: str = ""


class VersionInfo(BaseModel):
    name: str
    doc: str
    plan_kind: str
    stages: list[str]


class KernelInfo(BaseModel):
    name: str
    description: str = ""
    source: str
    params: list[ParamInfo]
    versions: list[VersionInfo]
    error: str | None = Field(default=None, description="set when the package failed to load")


class KernelList(BaseModel):
    kernels: list[KernelInfo]
    modes: dict[str, bool] = Field(description="mode name -> built in this version")


class JobInfo(BaseModel):
    job_id: str
    status: str = Field(description="queued | running | done | failed | cancelled")
    label: str
    queue_position: int | None = None
    gpu: str | None = None
    progress: float = 0.0
    message: str = ""
    error: str | None = None


class ParamsFile(BaseModel):
    profile_dir: str
    params: dict[str, Any] = Field(
        description="the run's params.json: parameters, dtype, device, clocks, versions"
    )


class DevlogResult(BaseModel):
    path: str
    entry: str


class DeviceInfo(BaseModel):
    info: dict[str, Any]
