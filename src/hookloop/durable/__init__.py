"""Durable runs: a run that survives a crash, pauses for days without holding a process, and continues on any
machine attached to the same store. The Worker reaches its effects through :mod:`hookloop.effects`; a backend
makes each one a durable step.

The records and the store interface the CLI (``hookloop runs``) and the web inbox use are here; backends are
optional extras.
"""

from __future__ import annotations

from hookloop.durable._dirstore import CheckpointDirStore, ResumeSettings
from hookloop.durable._store import (
    PauseConsumed,
    RunDetail,
    RunNotFound,
    RunRecord,
    RunStatus,
    RunStore,
    StaleDecision,
)

__all__ = [
    "CheckpointDirStore",
    "PauseConsumed",
    "ResumeSettings",
    "RunDetail",
    "RunNotFound",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "StaleDecision",
]
