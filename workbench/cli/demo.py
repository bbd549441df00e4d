"""``workbench demo``: the quickstart's main job, on a separate demo data dir.

Starts a service on ``./.demo/data`` (never the user's store), imports the bundled six-week
history (``data/demo/memory.json``) through ``POST /api/import``, replays the bundled live
sessions through the real hook scripts, waits for the worker to compress everything with the
offline compressor, and prints what the memory now holds. The notebooks
(``workbench notebook``) then have something to show.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.cli.output import console, handle_errors, table

MARKER = ".workbench-demo"


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prepare(folder: Path, fresh: bool) -> None:
    """Create (or reset) the demo dir; refuse to wipe a folder that is not a demo dir."""
    from workbench.errors import InvalidInput

    if folder.exists() and fresh and any(folder.iterdir()):
        if not (folder / MARKER).exists():
            raise InvalidInput(
                f"{folder} is not empty and is not a workbench demo dir (no {MARKER} file); "
                "refusing to reset it. Pick another --data-dir."
            )
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("created by `workbench demo`; safe to delete\n", encoding="utf-8")


def _wait_idle(client: Any, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    health: dict[str, Any] = {}
    while time.monotonic() < deadline:
        health = client.get("/api/health")
        if health["queueDepth"] == 0:
            return health
        time.sleep(0.1)
    return health


@contextmanager
def _env(**values: str) -> Iterator[None]:
    """Set environment variables for the block (the service spawned in it inherits them)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _filter(corpus: dict[str, Any]) -> str:
    flt = corpus.get("filter") or {}
    return "; ".join(
        f"{k}={','.join(v) if isinstance(v, list) else v}"
        for k, v in flt.items()
        if v not in (None, [], "") and k != "limit"
    )


@handle_errors
def demo(
    data_dir: Annotated[
        Path, typer.Option("--data-dir", "-d", help="Demo data dir (not your real memory).")
    ] = Path(".demo") / "data",
    fresh: Annotated[bool, typer.Option(help="Start from an empty demo dir.")] = True,
    keep_running: Annotated[bool, typer.Option(help="Leave the demo service running.")] = False,
) -> None:
    """Seed a separate demo memory: import six weeks of history, replay live sessions."""
    from rich.progress import Progress

    from workbench import demo as demo_lib
    from workbench import launch
    from workbench.client import ServiceClient
    from workbench.pidfile import terminate
    from workbench.settings import load_settings, write_settings_file

    folder = data_dir.expanduser().resolve()
    _prepare(folder, fresh)
    settings = load_settings(folder)
    if not settings.settings_path.exists():
        write_settings_file(settings, {"port": _free_port(), "compressor": "offline"})
        settings = load_settings(folder)
    out = console()
    out.print(f"demo data dir: {folder} (port {settings.port}, offline compressor)")
    # Trigger: the demo's own service. Why: loading the embedding model takes ~5 s of CPU
    # (far more on a busy machine) and competes with the hooks being replayed; the demo needs
    # none of it. Outcome: full text during the demo; the next `workbench serve` (or a
    # notebook starting the service) embeds the whole memory in the background.
    with _env(WORKBENCH_EMBEDDER="none"):
        running = launch.ensure_running(folder, settings.port, wait_s=30.0)
    if running is None:
        typer.secho(
            f"the demo service did not start; see {settings.logs_dir}/service.log",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(WORKBENCH_DATA_DIR=str(folder), WORKBENCH_PORT=str(settings.port))
    # The transcripts stand in for Claude Code's own files (which hold raw prompts): they
    # live in a temporary folder, never in the memory's data dir.
    transcripts = tempfile.TemporaryDirectory(prefix="workbench-demo-transcripts-")
    calls = demo_lib.all_calls(demo_lib.load_sessions(), Path(transcripts.name))
    memory = demo_lib.load_memory()
    try:
        with ServiceClient(settings, timeout=120.0) as client:
            imported = client.post("/api/import", memory)["imported"]
        with Progress(console=out, transient=True) as progress:
            task = progress.add_task("replaying hook events", total=len(calls))
            seconds = demo_lib.replay_sessions(
                calls, env, lambda done, _: progress.update(task, completed=done)
            )
        with ServiceClient(settings) as client:
            health = _wait_idle(client)
            stats = client.get("/api/stats")
            corpora = [client.post("/api/corpus", dict(spec)) for spec in demo_lib.DEMO_CORPORA]
            recent = client.get("/api/observations", limit=10)["items"]
            summaries = client.get("/api/summaries", limit=5)["items"]
    finally:
        transcripts.cleanup()
        if not keep_running:
            terminate(settings.pid_path)
    counts = ", ".join(f"{v['imported']} {k}" for k, v in imported.items())
    out.print(f"imported the demo history ({demo_lib.describe_memory(memory)}): {counts}")
    out.print(
        f"replayed {len(calls)} hook events through the real hooks in {seconds:.1f} s "
        f"({1000 * seconds / max(len(calls), 1):.0f} ms per hook, incl. interpreter start)"
    )
    table("memory", ["kind", "rows"], list(stats["totals"].items()))
    table("observations by type", ["type", "count"], list(stats["types"].items()))
    table(
        "newest observations",
        ["id", "project", "type", "title"],
        [(o["id"], o["project"], o["type"], o["title"]) for o in recent],
    )
    table(
        "newest summaries",
        ["project", "request", "completed"],
        [(s["project"], s["request"][:60], s["completed"][:60]) for s in summaries],
    )
    table(
        "corpora for the knowledge agent",
        ["name", "observations", "~tokens", "filter"],
        [
            (c["name"], c["stats"]["observation_count"], c["stats"]["token_estimate"], _filter(c))
            for c in corpora
        ],
    )
    queue = health.get("queue", {})
    out.print(f"queue: {queue.get('done', 0)} done, {queue.get('failed', 0)} failed")
    out.print(f"explore it: workbench notebook analytics --data-dir {folder}")
    if keep_running:
        out.print(
            f"demo service left running at {settings.base_url}, full text only; stop it with "
            f"`workbench stop -d {folder}` (the next start embeds the memory for semantic search)"
        )
    else:
        out.print(
            "semantic search was off during the demo; the next service start embeds the memory "
            "in the background"
        )
    if queue.get("failed"):
        raise typer.Exit(1)
