"""What every tool group needs from the server's wiring: the engine, the job manager, the shared
job helpers, and whether commands may run."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine import Engine
from ..jobs import JobManager
from .waiting import Answers


@dataclass(frozen=True)
class ToolContext:
    engine: Engine
    jobs: JobManager
    answers: Answers
    allow_commands: bool
