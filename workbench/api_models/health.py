"""``GET /api/health`` and ``GET /api/readiness``.

Keys that appear only in one state (``reason`` when something is wrong, a compressor's
``problem`` when it is not configured) are optional and left out when absent: the routes
serialise with ``response_model_exclude_unset``, so the wire is the same as before.
"""

from __future__ import annotations

from typing import Any, Literal

from workbench.api_models.base import CamelModel


class StoreState(CamelModel):
    state: Literal["ok", "busy", "not storing", "unavailable"]
    reason: str | None = None


class CompressorError(CamelModel):
    """A provider's last failure: its kind, message and when (epoch seconds)."""

    kind: str
    message: str
    at: float


class CompressorLink(CamelModel):
    """One provider of the compressor fallback chain, in order."""

    name: str
    configured: bool
    problem: str | None = None
    last_error: CompressorError | None = None
    last_ok_at: float | None = None


class Health(CamelModel):
    service: Literal["workbench"]
    status: Literal["ok", "error"]
    reason: str | None = None
    store: StoreState
    version: str
    schema_version: int | None
    queue: dict[str, int]
    queue_depth: int
    compressor: str
    # Why: "offline: no compressor configured (…)", "claude: settings compressor=claude, key
    # from ANTHROPIC_API_KEY"; status and doctor print it rather than recomputing.
    compressor_reason: str
    compressors: list[CompressorLink]
    uptime_seconds: float
    pid: int
    data_dir: str
    instance_id: str  # the data dir's id (workbench/instance.py), also X-Workbench-Instance
    spool: dict[str, int]
    warnings: list[str]
    capture: dict[str, str]
    embeddings: dict[str, Any]
    vectors: dict[str, Any]


class Readiness(CamelModel):
    ready: bool
    worker: Literal["running", "stopped"]
    reason: str | None = None
