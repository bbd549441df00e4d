"""MCP tool signatures built from the search contract's models, so the schemas cannot drift.

``search`` takes the ``SearchQuery`` fields and ``build_corpus`` the ``CorpusFilter`` fields,
each with the model's type, bounds and description (``workbench.recall.search_query``). The
old argument names a tool took before (``obs_type``, ``dateStart``…) stay in the schema for
one release, described as deprecated; ``model_arguments`` maps them and returns the notices
the tool adds to its answer (``note:`` lines after ``search``'s text, a ``deprecations`` list
in ``build_corpus``'s JSON).
"""

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from workbench.errors import WorkbenchError
from workbench.recall.search_query import LEGACY_NAMES, REMOVAL, RecallFilter


def _parameter(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def model_parameters(model: type[BaseModel], old_names: list[str]) -> list[inspect.Parameter]:
    """One keyword parameter per field of ``model``, then each old name (deprecated)."""
    params = [
        _parameter(
            name,
            Annotated[(info.annotation, *info.metadata, Field(description=info.description))],
            info.get_default(call_default_factory=True),
        )
        for name, info in model.model_fields.items()
    ]
    for old in old_names:
        new = LEGACY_NAMES[old]
        params.append(
            _parameter(
                old,
                Annotated[
                    str | list[str] | None,
                    Field(description=f"Deprecated, use {new} ({REMOVAL})."),
                ],
                None,
            )
        )
    return params


def with_signature(fn: Callable[..., str], params: list[inspect.Parameter]) -> Callable[..., str]:
    """``fn`` (which takes ``**kwargs``) presenting ``params`` to the SDK's schema builder."""
    fn.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return fn


def model_arguments(
    model: type[RecallFilter], arguments: dict[str, Any], extra: tuple[str, ...] = ()
) -> tuple[Any, dict[str, Any], list[str]]:
    """The validated model, the ``extra`` arguments (not model fields) and the notices.

    Arguments left at their default are dropped first, so an old name (``orderBy``) never
    conflicts with the new one's default; a bad value becomes a ``ToolError`` carrying the
    same message HTTP gives.
    """
    fields = model.model_fields
    given = {
        k: v
        for k, v in arguments.items()
        if k not in extra
        and v is not None
        and not (k in fields and v == fields[k].get_default(call_default_factory=True))
    }
    try:
        parsed = model.parse(given)
    except WorkbenchError as exc:
        raise ToolError(exc.message) from None
    return parsed, {k: arguments.get(k) for k in extra}, parsed.deprecations()


def with_notices(text: str, notices: list[str]) -> str:
    """``text`` followed by one ``note:`` line per deprecation notice."""
    if not notices:
        return text
    return text.rstrip("\n") + "\n" + "".join(f"note: {n}\n" for n in notices)
