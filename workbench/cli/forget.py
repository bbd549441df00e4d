"""``workbench forget <id>…``: delete observations for good and say what was scrubbed.

Through the running service (the store's one writer), ``POST /api/observations/forget``: each
observation's row, FTS entry, source event payload (replaced by its hash, recorded in the
log) and spool copies go, then the database file is purged (FTS merged, VACUUM, WAL
truncated); vectors go on the indexer's next pass. The observation's own words (those no
other observation of the project uses) are also taken out of its session's summaries, of
corpora and of knowledge-agent conversations; a second table lists every such place, cleaned
or not, and for each one it could not clean (the team lake's older snapshots, your prompts,
exports and backups) how to remove what is left. It never starts a service: forgetting is
deliberate, and a service started only for it would stay behind.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    key_values,
    load_settings,
    print_json,
    table,
)


def register(app: typer.Typer) -> None:
    app.command("forget")(forget)


@handle_errors
def forget(
    observation_ids: Annotated[
        list[int], typer.Argument(help="Observation ids to forget (see workbench search).")
    ],
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Forget observations: delete them, scrub their source events, summaries, corpora and
    conversations of their words, purge the file; say what could not be cleaned.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist (it is never created here).
    """
    from workbench.client import writer

    settings = load_settings(data_dir)
    client, _ = writer(settings, say=lambda message: typer.echo(message, err=True))
    with client:
        report = client.post("/api/observations/forget", {"ids": observation_ids})
    if as_json:
        print_json(report)
    else:
        scrubbed = report["scrubbed"]
        purge = report["purge"]
        key_values(
            "forgotten",
            [
                ("observations", _ids(report["forgotten"])),
                ("already deleted", _ids(report["alreadyDeleted"])),
                ("not found", _ids(report["notFound"])),
                ("events scrubbed", _ids(scrubbed["eventIds"])),
                ("FTS rows removed", scrubbed["ftsRows"]),
                ("spool files removed", len(scrubbed["spoolFiles"])),
                ("vectors", report["vectors"]),
                ("file purged", "yes" if purge["vacuumed"] and purge["walTruncated"] else "no"),
                ("corpora to rebuild", ", ".join(report["corpora"]) or "none"),
            ],
        )
        copies = report["copies"]
        table(
            f"copies of its words ({copies['words']} words only it used)",
            ["place", "state", "which / how to remove"],
            [
                *((c["place"], "cleaned", ", ".join(c["items"])) for c in copies["cleaned"]),
                *(
                    (c["place"], "NOT cleaned", "; ".join([*c["items"], c["howToRemove"]]))
                    for c in copies["notCleaned"]
                ),
            ],
        )
    if report["notFound"]:
        raise typer.Exit(1)


def _ids(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids) or "none"
