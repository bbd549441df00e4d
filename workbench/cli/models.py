"""``workbench models build``: make the install artifacts recall runs on, offline.

Today one artifact: the int8 ONNX copy of the shipped MiniLM weights
(workbench/recall/onnx_export.py), which lets the service embed without torch. ``make
install`` runs this; running it again keeps a complete artifact from the same weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli.output import JsonOption, handle_errors, key_values, print_json

models_app = typer.Typer(
    name="models",
    help=(
        "Embedding model artifacts built locally from the shipped MiniLM weights (no hub).\n\n"
        "  workbench models build"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")


@models_app.command("build")
@handle_errors
def build(
    into: Annotated[
        Path | None,
        typer.Option(
            "--into",
            help="Directory to build into (default: this venv's share/workbench, or "
            "$WORKBENCH_ONNX_MODEL_DIR).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when a complete one exists.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Export + int8-quantise MiniLM to ONNX (idempotent; ~15 s; needs torch and onnx)."""
    from workbench.errors import WorkbenchError
    from workbench.recall import onnx_export

    try:
        result = onnx_export.build(into, force=force)
    except ImportError as exc:
        raise WorkbenchError(
            f"cannot build the ONNX model: {exc}; install the build tools with "
            "`pip install onnx onnxruntime torch transformers` (see constraints.txt)"
        ) from None
    except (FileNotFoundError, PermissionError) as exc:
        raise WorkbenchError(
            f"cannot build the ONNX model: {exc}; pass --into DIR to build somewhere writable"
        ) from None
    body = {
        "path": str(result.path),
        "built": result.built,
        "sha256": result.sha256,
        "sizeBytes": result.size_bytes,
        "seconds": round(result.seconds, 2),
        "source": str(result.source),
    }
    if as_json:
        print_json(body)
        return
    did = "built" if result.built else "already built from the same weights; kept"
    key_values(
        f"MiniLM int8 (ONNX): {did}",
        [
            ("path", body["path"]),
            ("sha256", result.sha256[:16] + "…"),
            ("size", f"{result.size_bytes / 1e6:.1f} MB"),
            ("seconds", body["seconds"]),
            ("from", body["source"]),
        ],
    )
