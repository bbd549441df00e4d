"""One search contract: the filter and paging fields, one spelling each, for every edge.

``SearchQuery`` is what ``GET /api/search`` takes (as a query-parameter model, so
``/openapi.json`` documents each field once), what ``workbench search`` offers as options
(``--field-name`` for each field) and what the MCP ``search`` tool's schema is built from.
``CorpusFilter`` (``workbench.knowledge.corpus_filter``) is built on the same base, so a
corpus is selected with the same names and the same rules.

The fields with an old spelling still accepted for one release (each produces a
deprecation notice; both spellings at once with different values are refused, naming both):

- ``types``: ``obs_type``, ``obsType`` (CLI ``--obs-type``)
- ``kinds``: ``type`` (CLI ``--type``)
- ``since``: ``dateStart``, ``date_start``
- ``until``: ``dateEnd``, ``date_end``
- ``platform_source``: ``platformSource`` (CLI ``--platform``)
- ``order_by``: ``orderBy``

Every rule is checked here, so a bad value is an ``InvalidInput`` (HTTP 400) whose message
names the field and gives an example, or a pydantic error (HTTP 422) for a wrong type or
bound; ``parse`` turns the latter into an ``InvalidInput`` too, for callers outside HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from workbench.errors import InvalidInput
from workbench.models import OBSERVATION_TYPES
from workbench.platform_filter import check_platform
from workbench.recall.filters import (
    SearchFilters,
    coerce_list,
    filter_list,
    observation_types,
    parse_time,
)

ObservationType = Literal[OBSERVATION_TYPES]  # type: ignore[valid-type]
MAX_QUERY_CHARS = 2_000
MAX_PROJECT_CHARS = 200
MAX_LIMIT = 100
MAX_OFFSET = 10_000  # the engine's bound (recall.search.MAX_OFFSET)

# old spelling -> the field it means. One table for HTTP, the CLI, MCP and stored corpora.
LEGACY_NAMES: dict[str, str] = {
    "obs_type": "types",
    "obsType": "types",
    "type": "kinds",
    "dateStart": "since",
    "date_start": "since",
    "dateEnd": "until",
    "date_end": "until",
    "platformSource": "platform_source",
    "orderBy": "order_by",
}
REMOVAL = "it goes away in the next release"
_LIST_FIELDS = {"types", "kinds", "concepts", "files", "projects"}


class SpellingConflict(InvalidInput):
    """An old and a new spelling of one field sent together with different values."""

    status_code = 422
    code = "CONFLICTING_PARAMETERS"


def deprecation_notice(old: str, new: str) -> str:
    """The one sentence every edge shows for an old spelling."""
    return f"{old} is deprecated, use {new} ({REMOVAL})"


def _same(field: str, a: Any, b: Any) -> bool:
    if field in _LIST_FIELDS:
        return {v.lower() for v in coerce_list(a, field)} == {
            v.lower() for v in coerce_list(b, field)
        }
    return str(a).strip() == str(b).strip()


def _blank(field: str, value: Any) -> bool:
    """No value at all: None, blank text, or a list of nothing but blanks."""
    if value is None:
        return True
    if field in _LIST_FIELDS and isinstance(value, list | tuple | str):
        try:
            return not coerce_list(value, field)
        except InvalidInput:
            return False  # not blank: the field's own validation will name what is wrong
    return isinstance(value, str) and not value.strip()


# Value checks (value, the spelling it was sent under) that run before two spellings are
# compared, so the error names the bad value as it was sent.
_CHECK_FIRST: dict[str, tuple[Callable[[Any, str], Any], ...]] = {
    "platform_source": (check_platform,)
}


def _shown(value: Any) -> Any:
    """A list as the csv a query string would carry; anything else as is."""
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else value


def rename_legacy(data: dict[str, Any], fields: set[str]) -> tuple[dict[str, Any], list[str]]:
    """``data`` with every old spelling (of a field in ``fields``) under its new name.

    Returns the renamed data and the old names met, in the order sent. Two spellings of one
    field with different values raise ``SpellingConflict`` naming both; equal ones are fine.
    """
    out, met, _ = rename_legacy_traced(data, fields)
    return out, met


def rename_legacy_traced(
    data: dict[str, Any], fields: set[str]
) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """``rename_legacy`` plus, for each field it returns, the spelling its value came under
    (so an error about the value can name what the client sent)."""
    out = dict(data)
    met: list[str] = []
    sent_as = {name: name for name in out}  # field -> the spelling its value came under
    for old, new in LEGACY_NAMES.items():
        if old not in out or new not in fields:
            continue
        value = out.pop(old)
        met.append(old)
        if _blank(new, value):
            continue  # a blank spelling says nothing: it never drops or contradicts the other
        if _blank(new, out.get(new)):
            out.pop(new, None)
        # A bad value is refused as itself (e.g. UNKNOWN_PLATFORM), not as a disagreement.
        for check in _CHECK_FIRST.get(new, ()):
            check(value, old)
            if new in out:
                check(out[new], sent_as[new])
        if new in out and not _same(new, out[new], value):
            other = sent_as[new]
            raise SpellingConflict(
                f"{old}={_shown(value)!r} and {other}={_shown(out[new])!r} disagree; both "
                f"spell {new} ({', '.join(n for n in (old, other) if n != new)} the old way): "
                f"send only {new}",
                fields=[old, other],
            )
        out[new] = value
        sent_as[new] = old
    return out, met, {name: sent_as[name] for name in out}


class RecallFilter(BaseModel):
    """The fields a search and a corpus share: what to select (not how to page or rank)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    example: ClassVar[str] = "project=api&types=bugfix"
    # True where unknown keys were always ignored (a query string: HTTP keeps doing so).
    ignore_unknown: ClassVar[bool] = False

    query: Annotated[
        str | None,
        Field(
            description="Words or a question; omit to list by filters only.",
            max_length=MAX_QUERY_CHARS,
        ),
    ] = None
    project: Annotated[
        str | None,
        Field(
            description="Only this project (a git root's folder name).",
            max_length=MAX_PROJECT_CHARS,
        ),
    ] = None
    types: Annotated[
        list[ObservationType],
        Field(description="Only observations of these types (csv or repeated)."),
    ] = []
    concepts: Annotated[
        list[str], Field(description="Only observations tagged with any of these concepts.")
    ] = []
    files: Annotated[
        list[str],
        Field(description="Only records that read or modified these path prefixes."),
    ] = []
    since: Annotated[
        str | None,
        Field(description="From this ISO date or time, inclusive (e.g. 2026-12-01)."),
    ] = None
    until: Annotated[
        str | None,
        Field(description="Up to this ISO date (the whole day) or time, inclusive."),
    ] = None
    platform_source: Annotated[
        str | None,
        Field(description="Only sessions of this agent platform (claude-code, gemini-cli…)."),
    ] = None
    team: Annotated[
        bool,
        Field(
            description="Also read the team lake (colleagues' published memories); needs "
            "`workbench team init`."
        ),
    ] = False

    _renamed: tuple[str, ...] = PrivateAttr(default=())
    # The engine's filter value, built once when this model is validated (``filters``).
    _filters: SearchFilters | None = PrivateAttr(default=None)

    # -- old spellings ----------------------------------------------------------------------
    @model_validator(mode="wrap")
    @classmethod
    def _legacy(cls, data: Any, handler: Any) -> Any:
        # Trigger: a mapping that uses an old spelling (obs_type, dateStart…) or an unknown key.
        # Why: old clients keep working for one release, and say so; a typo is not ignored.
        # Outcome: the model holds only new names; ``renamed`` lists the old ones met.
        met: list[str] = []
        if isinstance(data, dict):
            data, met = rename_legacy(data, set(cls.model_fields))
            unknown = [k for k in data if k not in cls.model_fields]
            if unknown and cls.ignore_unknown:
                data = {k: v for k, v in data.items() if k in cls.model_fields}
            elif unknown:
                raise InvalidInput(
                    f"unknown parameter {', '.join(repr(k) for k in unknown)}; the parameters "
                    f"are {', '.join(cls.model_fields)} (e.g. {cls.example})"
                )
        try:
            model = handler(data)
            model._filters = model._build_filters()  # dates parse, since is not after until
        except InvalidInput as exc:
            raise _in_sent_names(exc, met) from None
        if met:
            model._renamed = tuple(met)
        return model

    @property
    def renamed(self) -> tuple[str, ...]:
        """The old spellings this value was built from (empty for a current client)."""
        return self._renamed

    def deprecations(self) -> list[str]:
        """One notice per old spelling used, e.g. "obs_type is deprecated, use types (…)"."""
        return [deprecation_notice(old, LEGACY_NAMES[old]) for old in self.renamed]

    # -- validation -------------------------------------------------------------------------
    @field_validator("query", "project", mode="before")
    @classmethod
    def _text(cls, value: Any, info: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise InvalidInput(
                f'{info.field_name} must be text, got {value!r}; e.g. {info.field_name}="…"'
            )
        return value.strip() or None

    @field_validator("types", mode="before")
    @classmethod
    def _types(cls, value: Any) -> list[str]:
        return list(dict.fromkeys(observation_types(value, "types", "bugfix,feature")))

    @field_validator("concepts", "files", mode="before")
    @classmethod
    def _lists(cls, value: Any, info: Any) -> list[str]:
        return filter_list(value, info.field_name)

    @field_validator("since", "until", mode="before")
    @classmethod
    def _date(cls, value: Any, info: Any) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # epoch ms, as a stored corpus may hold it
        if parse_time(value, info.field_name) is None:
            return None
        return str(value).strip()

    @field_validator("platform_source", mode="before")
    @classmethod
    def _platform(cls, value: Any) -> str | None:
        return check_platform(value, "platform_source")

    @field_validator("team", mode="before")
    @classmethod
    def _team(cls, value: Any) -> Any:
        return False if value is None else value

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Self:
        """Validate ``data`` (a CLI's, an MCP call's or a stored mapping), raising only
        ``InvalidInput``: pydantic's own complaints become one readable sentence."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            raise InvalidInput(f"invalid {cls.__name__} ({problems}); e.g. {cls.example}") from None

    # -- meaning ----------------------------------------------------------------------------
    def filters(self) -> SearchFilters:
        """The engine's ``SearchFilters`` (the SQL every ranker honours) for these fields: the
        one value built when this request was validated, handed on as it is."""
        if self._filters is None:  # a model built without validation (model_construct)
            self._filters = self._build_filters()
        return self._filters

    def _build_filters(self) -> SearchFilters:
        """The filter value of these fields. Every field was checked by this model's own
        validators, which call the functions ``SearchFilters``'s call (``filter_list``,
        ``observation_types``, ``check_platform``), so it is built without checking again;
        only the dates are parsed here (this model keeps them as sent) and ordered."""
        start = parse_time(self.since, "since")
        end = parse_time(self.until, "until", end_of_day=True)
        if start is not None and end is not None and start > end:
            raise InvalidInput(
                "since is after until; give the earlier date first, e.g. "
                "since=2026-11-01&until=2026-11-30"
            )
        return SearchFilters.model_construct(
            project=self.project,
            projects=list(getattr(self, "projects", [])),
            obs_types=self.types,
            concepts=self.concepts,
            files=self.files,
            date_start=start,
            date_end=end,
            platform_source=self.platform_source,
        )

    def wire(self) -> dict[str, Any]:
        """The fields that differ from their defaults, lists as csv: query-string ready."""
        out: dict[str, Any] = {}
        for name, value in self.model_dump(exclude_defaults=True).items():
            out[name] = ",".join(value) if isinstance(value, list) else value
        return out


def _in_sent_names(exc: InvalidInput, met: list[str]) -> InvalidInput:
    """``exc`` with each new field name put back as the old spelling the client sent, so
    ``dateStart=soon`` is answered about ``dateStart``, not about a ``since`` it never sent."""
    message = exc.message
    for old in met:
        message = re.sub(rf"\b{LEGACY_NAMES[old]}\b", old, message)
    if message == exc.message:
        return exc
    renamed = type(exc)(message, **exc.details)
    return renamed


class SearchQuery(RecallFilter):
    """A search: ``RecallFilter`` plus several projects, the kinds of record, ranking, paging."""

    example: ClassVar[str] = "query=refund&types=bugfix&since=2026-12-01"

    projects: Annotated[
        list[str], Field(description="Any of these projects (csv or repeated).")
    ] = []
    kinds: Annotated[
        list[str],
        Field(description="observations | sessions | prompts (csv or repeated); all if omitted."),
    ] = []
    mode: Annotated[
        Literal["hybrid", "fts", "vector"],
        Field(description="Ranker: hybrid (default), full text only (fts) or semantic only."),
    ] = "hybrid"
    order_by: Annotated[
        Literal["relevance", "date_desc", "date_asc"],
        Field(description="relevance (default), date_desc (newest first) or date_asc."),
    ] = "relevance"
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits per kind and page.")] = 20
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="Hits to skip (paging).")] = 0

    @field_validator("projects", mode="before")
    @classmethod
    def _projects(cls, value: Any) -> list[str]:
        return coerce_list(value, "projects")

    @field_validator("kinds", mode="before")
    @classmethod
    def _kinds(cls, value: Any) -> list[str]:
        from workbench.recall.search import parse_types

        items = coerce_list(value, "kinds")
        try:
            return list(parse_types(items)) if items else []
        except InvalidInput as exc:  # the engine's message says type=; this field is kinds
            message = re.sub(r"^type ", "kinds ", exc.message).replace("type=", "kinds=")
            raise InvalidInput(message) from None

    @field_validator("mode", "order_by", mode="before")
    @classmethod
    def _choice(cls, value: Any, info: Any) -> Any:
        allowed = {"mode": ("hybrid", "fts", "vector"), "order_by": _ORDERS}[info.field_name]
        if value is None:
            return allowed[0]
        if not isinstance(value, str):
            return value  # pydantic names the type
        text = value.strip() if info.field_name == "order_by" else value.strip().lower()
        text = text or allowed[0]
        if text not in allowed:
            example = "mode=fts" if info.field_name == "mode" else "order_by=date_desc"
            raise InvalidInput(
                f"{info.field_name}={text!r} is not allowed; use {' | '.join(allowed)} ({example})"
            )
        return text


_ORDERS = ("relevance", "date_desc", "date_asc")
