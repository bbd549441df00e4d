"""Hypothesis strategies for the fuzz suite: hostile JSON, and requests derived from OpenAPI.

Why a JSON renderer of our own: the inputs that break services are exactly the ones
``json.dumps`` will not write, or writes in only one way. ``render`` writes lone surrogates as
``\\ud83d`` escapes (what ``JSON.stringify`` in Claude Code sends for a string cut mid-emoji),
non-finite floats as ``NaN``/``Infinity`` (which Python's ``json.loads`` accepts), and ``Raw``
number tokens such as ``1e400`` verbatim (it parses to ``inf``); deep nesting is built as text.

Why a schema walker of our own: ``hypothesis-jsonschema`` is not a dependency, and the subset
FastAPI emits (``$ref``, ``anyOf``, ``enum``, string/integer/number/array/object with bounds)
is small. Every schema-valid value is mixed with hostile ones at every level, so each field
also gets the wrong type, the wrong size and the hostile strings below.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

MARKER = "FUZZPRIVATEMARKER"


class Raw:
    """A JSON number token written verbatim (``1e400``): no Python value renders as it."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __repr__(self) -> str:
        return f"Raw({self.token!r})"


# Every way a stripped tag's ``<`` and ``>`` have come back, or could (issue 20, item 10):
# Gemini CLI's (only ``<``/``>`` as entities), an HTML encoder's (upper case, numeric, ``&amp;``
# escaped again), JSON-escaped text (once, twice, either case), and a mix.
TAG_ESCAPINGS: dict[str, tuple[str, str]] = {
    "gemini-html": ("&lt;", "&gt;"),
    "html-upper": ("&LT;", "&GT;"),
    "decimal": ("&#60;", "&#62;"),
    "decimal-padded": ("&#060;", "&#062;"),
    "hex": ("&#x3c;", "&#x3e;"),
    "hex-upper": ("&#X3C;", "&#X3E;"),
    "html-twice": ("&amp;lt;", "&amp;gt;"),
    "json": ("\\u003c", "\\u003e"),
    "json-upper": ("\\u003C", "\\u003E"),
    "json-twice": ("\\\\u003c", "\\\\u003e"),
    "mixed": ("&lt;", "\\u003e"),
}


def escaped_block(tag: str, escaping: str, inner: str = MARKER) -> str:
    """``<tag>inner</tag>`` with its angle brackets written the ``TAG_ESCAPINGS`` way."""
    lt, gt = TAG_ESCAPINGS[escaping]
    return f"{lt}{tag}{gt}{inner}{lt}/{tag}{gt}"


def nested_tags(depth: int, inner: str = MARKER) -> str:
    """Issue 19's adversarial nesting: removing each block re-forms the tag around it, so a
    redaction that repeats until nothing changes takes one pass per level (quadratic)."""
    block = f"<private>{inner}</private>"
    return "<priv" * depth + block + f"ate>{inner}</private>" * depth + " kept"


HOSTILE_STRINGS = [
    "",
    " ",
    "\ud83d",
    "x \ud83d",
    "\udfff\ud800",
    "\ud83d\ude00",  # a surrogate pair written as two escapes: valid JSON, one emoji
    f"<private>{MARKER}</private>",
    f"keep <private>{MARKER}</private> this",
    "<private>",
    "</private>",
    "<private>a<private>b</private>",
    "<workbench-context>echo</workbench-context>",
    f"<hook_context>&lt;workbench-context&gt;{MARKER}&lt;/workbench-context&gt;</hook_context>",
    f"&#60;private&#62;{MARKER}&#60;/private&#62;",
    f"\\u003cprivate\\u003e{MARKER}\\u003c/private\\u003e",
    "&lt;b&gt;&amp;&#60;&#x3c;\\u003c\\\\\\",
    "<task-notification><task-id>1</task-id></task-notification>",
    "\x00",
    "a\x00b",
    "\u2028\u2029",
    "\ufeff",
    "\U0001f4a5",
    "\u202etxt.exe",
    "../../../../etc/passwd",
    "/",
    ".",
    "%00%2F",
    "' OR 1=1 --",
    '"; DROP TABLE events; --',
    "NaN",
    "null",
    "-1",
    "99999999999999999999",
    "1e400",
    "\r\n\r\n",
    "*",
    "?[",
    "\\",
    "2026-13-45T99:99:99Z",
    "\u00b9",  # "¹": str.isdigit() says yes, int() says no
    "x" * 3000,
    nested_tags(1),
    nested_tags(3),
    nested_tags(400),  # 10 KB: ~400 passes of the old loop
]
HOSTILE_NUMBERS: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    5e-324,
    1.7976931348623157e308,
    0,
    -1,
    2**31,
    2**63 - 1,
    2**63,
    -(2**63) - 1,
    2**64,
    2**70,
    -(2**70),
    10**30,
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1E+99999"),
    Raw("99999999999999999999"),
]
HOSTILE_KEYS = [
    "",
    " ",
    "\ud83d",
    f"<private>{MARKER}</private>",
    f"k<private>{MARKER}</private>",
    "\x00",
    "__proto__",
    "constructor",
    "$where",
    "a.b",
    "k" * 1000,
    "\U0001f511",
]

# Any code point, surrogates included (``st.characters()`` leaves category Cs out by default).
_chars = st.one_of(
    st.characters(),
    st.characters(categories=["Cs"]),
    st.sampled_from("<>/\\\"'\x00\n\t%&=?#"),
)
texts = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(_chars, max_size=40))
keys = st.one_of(st.sampled_from(HOSTILE_KEYS), st.text(_chars, max_size=20))
numbers = st.one_of(
    st.sampled_from(HOSTILE_NUMBERS),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
)
atoms = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    atoms,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
json_objects = st.dictionaries(keys, json_values, max_size=6)


# Text for a word-piece tokenizer: any characters, the blanks and controls it cleans, accents
# (composed and not), other scripts, its special tokens written out, identifiers and long words
# (tests/test_fuzz_rerank_chunks.py, tests/test_fuzz_embed_cut.py).
TOKENIZER_BLANKS = [
    " ",
    "\t",
    "\n",
    "\r",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x0b",
    "\x85",
    "\x00",
    "\ufffd",
]
_tokenizer_piece = st.one_of(
    st.text(max_size=12),
    st.sampled_from(TOKENIZER_BLANKS),
    st.sampled_from(["[MASK]", "[CLS]", "[SEP]", "[UNK]", "é", "e\u0301", "ΟΔΟΣ", "中文"]),
    st.sampled_from(
        ["refund", "charged", "twice", "snake_case", "a.b/c.py", "RefundWorker", "x" * 120]
    ),
)


def tokenizer_texts(pieces: int) -> st.SearchStrategy[str]:
    """Texts of up to ``pieces`` pieces for a word-piece tokenizer (see above)."""
    return st.lists(_tokenizer_piece, max_size=pieces).map("".join)


def render(value: Any) -> str:
    """JSON text for ``value``: ASCII-escaped, with ``NaN``/``Infinity`` and ``Raw`` tokens."""
    if isinstance(value, Raw):
        return value.token
    if value is None or isinstance(value, bool | int):
        return json.dumps(value)
    if isinstance(value, float):
        return json.dumps(value, allow_nan=True)  # NaN, Infinity, -Infinity
    if isinstance(value, str):
        return json.dumps(value)  # ensure_ascii: a lone surrogate becomes "\ud83d"
    if isinstance(value, list | tuple):
        return "[" + ",".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{render(str(k))}:{render(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__}")


def deep(depth: int, kind: str) -> bytes:
    """Nesting ``depth`` levels deep, as text (a Python value that deep cannot be rendered)."""
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


RAW_BODIES = [
    b"",
    b" ",
    b"{",
    b"{not json",
    b"[1, 2]",
    b'"text"',
    b"null",
    b"NaN",
    b"1e400",
    b"\xff\xfe{}",
    b'{"a": "\xed\xa0\xbd"}',  # a surrogate encoded as UTF-8 bytes: invalid UTF-8
    b'{"a": 1, "a": 2}',
    b'{"a": NaN, "b": -Infinity}',
    b'\xef\xbb\xbf{"a": 1}',
    *(  # issue 19, item 6: not UTF-8 (the boundary's byte scans would miss the tag)
        f'{{"a": "<private>{MARKER}</private>", "b": "caf\u00e9"}}'.encode(codec)
        for codec in ("utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32-be", "utf-32")
    ),
    b"\xfe\xff" + '{"a": 1}'.encode("utf-16-be"),
    b"\x00\x00\xfe\xff" + '{"a": 1}'.encode("utf-32-be"),
    f'{{"a": "<private>{MARKER}</private>", "b": "caf\u00e9"}}'.encode("latin-1"),
]
# Issue 19, item 6: the wide encodings Starlette's ``json.loads`` reads and the boundary's
# UTF-8 byte scans would miss, each with and without its byte order mark. Tests add their own
# Latin-1 case (its non-ASCII byte must land in their body).
WIDE_ENCODINGS: dict[str, Callable[[str], bytes]] = {
    "utf-16-le": lambda text: text.encode("utf-16-le"),
    "utf-16-be": lambda text: text.encode("utf-16-be"),
    "utf-16 with BOM": lambda text: text.encode("utf-16"),
    "utf-16-be with BOM": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
    "utf-32-le": lambda text: text.encode("utf-32-le"),
    "utf-32-be": lambda text: text.encode("utf-32-be"),
    "utf-32 with BOM": lambda text: text.encode("utf-32"),
    "utf-32-be with BOM": lambda text: b"\x00\x00\xfe\xff" + text.encode("utf-32-be"),
}

raw_bodies = st.one_of(
    st.sampled_from(RAW_BODIES),
    st.binary(max_size=64),
    st.builds(deep, st.sampled_from([100, 900, 990, 5000]), st.sampled_from(["list", "object"])),
)


# ----- OpenAPI → requests ---------------------------------------------------------------------


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not ref:
        return schema
    node: Any = spec
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return dict(node)


def _text_for(low: int, high: int) -> st.SearchStrategy[str]:
    """Right type, hostile content: plain words, hostile strings, or any code points."""
    hostile = [t for t in HOSTILE_STRINGS if low <= len(t) <= high]
    plain = st.text(
        st.characters(codec="ascii", categories=["L", "N"]), min_size=low, max_size=high
    )
    options = [plain, st.text(_chars, min_size=low, max_size=high)]
    if hostile:
        options.append(st.sampled_from(hostile))
    return st.one_of(options)


def clean_for(schema: dict[str, Any] | None, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the schema's type and bounds, with hostile *content* (surrogates, tags…)."""
    schema = _resolve(schema or {}, spec)
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return st.one_of([clean_for(s, spec) for s in schema[combinator]])
    kind = schema.get("type")
    if kind == "string":
        low = schema.get("minLength", 0)
        return _text_for(low, min(schema.get("maxLength", 60), low + 60))
    if kind == "integer":
        return st.integers(schema.get("minimum", -5), schema.get("maximum", 50))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(clean_for(schema.get("items"), spec), max_size=4)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: clean_for(v, spec) for k, v in props.items() if k in required},
            optional={k: clean_for(v, spec) for k, v in props.items() if k not in required},
        )
    return json_values  # {} means "any JSON"


def field_values(schema: dict[str, Any] | None, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly the right type (hostile content), sometimes the wrong type or size."""
    clean = clean_for(schema, spec)
    return st.one_of(clean, clean, clean, atoms, json_values)


@st.composite
def body_for(draw: st.DrawFn, schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    """A body for a JSON request schema. Half are schema-valid with hostile *content* (where
    the surrogate and NaN bugs live: a 422 for a wrong type teaches little); a third have one
    or two fields or keys swapped for hostile values; the rest are any JSON at all."""
    choice = draw(st.integers(0, 11))
    if choice < 2:
        return draw(json_values)
    value = draw(clean_for(schema, spec))
    if choice >= 6 or not isinstance(value, dict):
        return value
    names = sorted(_resolve(schema, spec).get("properties", {}))
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.one_of(st.sampled_from(names), keys)) if names else draw(keys)
        value[name] = draw(st.one_of(atoms, json_values))
    return value


@dataclass(frozen=True)
class Operation:
    """One route and method from the OpenAPI document."""

    method: str
    path: str
    params: tuple[dict[str, Any], ...]
    body: dict[str, Any] | None

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"


def operations(spec: dict[str, Any]) -> list[Operation]:
    """Every (method, path) the service documents, in document order."""
    found = []
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            content = op.get("requestBody", {}).get("content", {})
            body = content.get("application/json", {}).get("schema")
            found.append(Operation(method.upper(), path, tuple(op.get("parameters", [])), body))
    return found


def encode(text: str) -> str:
    """Percent-encode any text, lone surrogates included (as their invalid UTF-8 bytes)."""
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


def scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Raw):
        return value.token
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float | int):
        return str(value)
    return render(value)


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    body: bytes | None
    note: str = ""  # what a sweep step changed, e.g. "body.prompt = '\\ud83d'"

    def __repr__(self) -> str:
        shown = self.body if self.body is None or len(self.body) < 400 else self.body[:400]
        what = f"[{self.note}] " if self.note else ""
        return f"Request({what}{self.method} {self.target[:300]} body={shown!r})"


@st.composite
def requests_for(draw: st.DrawFn, op: Operation, spec: dict[str, Any]) -> Request:
    """One request for ``op``: path and query parameters from their schemas (or hostile),
    maybe an unknown parameter, and a body from the body schema, arbitrary JSON or raw bytes."""
    path = op.path
    query: list[tuple[str, str]] = []
    for param in op.params:
        hostile = draw(st.integers(0, 9)) == 0  # one parameter in ten gets the wrong type
        schema = param.get("schema")
        value = draw(field_values(schema, spec) if hostile else clean_for(schema, spec))
        if param["in"] == "path":
            text = scalar(value)
            path = path.replace("{" + param["name"] + "}", encode(text) if text else "%20")
            continue
        if param["in"] != "query" or (not param.get("required") and draw(st.booleans())):
            continue  # leave it out now and then
        values = value if isinstance(value, list) else [value]
        query += [(param["name"], scalar(v)) for v in values[:4]]
    if draw(st.integers(0, 5)) == 0:
        query.append((draw(keys), scalar(draw(atoms))))
    target = path + ("?" + "&".join(f"{encode(k)}={encode(v)}" for k, v in query) if query else "")
    body: bytes | None = None
    if op.method in {"POST", "PUT", "PATCH", "DELETE"}:
        if op.body is not None:
            if draw(st.integers(0, 9)):
                body = render(draw(body_for(op.body, spec))).encode("ascii")
            else:
                body = draw(raw_bodies)
        elif draw(st.booleans()):
            body = render(draw(json_values)).encode("ascii")
    return Request(op.method, target, body)


# ----- a deterministic sweep: every field × every hostile value, once ---------------------------

SWEEP_VALUES: list[Any] = [
    "\ud83d",
    "x \ud83d",
    math.nan,
    math.inf,
    -math.inf,
    Raw("1e400"),
    2**63,
    -(2**63) - 1,
    2**70,
    "",
    "\x00",
    "\u00b9",
    f"<private>{MARKER}</private>",
    nested_tags(400),
    "x" * 3000,
    None,
    True,
    [],
    {},
    {"\ud83d": 1},
    {"k": math.nan},
    ["\ud83d"],
]


def plain_for(schema: dict[str, Any] | None, spec: dict[str, Any]) -> Any:
    """One ordinary valid value for ``schema`` (the baseline each sweep step changes)."""
    schema = _resolve(schema or {}, spec)
    if "enum" in schema:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return plain_for(schema[combinator][0], spec)
    kind = schema.get("type")
    if kind == "string":
        return "fuzz" + "z" * max(0, schema.get("minLength", 0) - 4)
    if kind in {"integer", "number"}:
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return [plain_for(schema.get("items"), spec)]
    if kind == "object" or "properties" in schema:
        return {
            k: plain_for(v, spec)
            for k, v in schema.get("properties", {}).items()
            if k in schema.get("required", [])
        }
    return {"k": "v"}


def _target(op: Operation, values: dict[str, Any]) -> str:
    path = op.path
    query = []
    for param in op.params:
        if param["name"] not in values:
            continue
        value = values[param["name"]]
        if param["in"] == "path":
            text = scalar(value)
            path = path.replace("{" + param["name"] + "}", encode(text) if text else "%20")
        elif param["in"] == "query":
            query.append((param["name"], scalar(value)))
    return path + ("?" + "&".join(f"{encode(k)}={encode(v)}" for k, v in query) if query else "")


# For leaves deep inside a realistic document (an export to import, the settings to PUT).
LEAF_VALUES: list[Any] = [
    "\ud83d",
    math.nan,
    Raw("1e400"),
    2**70,
    -(2**70),
    None,
    f"<private>{MARKER}</private>",
    {"\ud83d": "v"},
    [],
]


def leaf_paths(doc: Any, limit: int = 60) -> list[tuple[Any, ...]]:
    """Paths to the leaves of ``doc`` (only the first item of each list), at most ``limit``."""
    found: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if len(found) >= limit:
            return
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list) and node:
            walk(node[0], (*path, 0))
        else:
            found.append(path)

    walk(doc, ())
    return found


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``doc`` with the leaf at ``path`` set to ``value``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, list):
        return [replaced(v, rest, value) if i == head else v for i, v in enumerate(doc)]
    return {k: replaced(v, rest, value) if k == head else v for k, v in doc.items()}


def brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} chars)"


def sweep(
    op: Operation,
    spec: dict[str, Any],
    base_body: Any = None,
    base_params: dict[str, Any] | None = None,
) -> list[Request]:
    """The baseline request, then one request per (field, hostile value): each path and query
    parameter, each body property (and an unknown one, and nested under an ``Any`` field),
    each leaf of a realistic ``base_body``, then the raw bodies. Deterministic, so the known
    hostile inputs are tried on every run."""
    base = {
        p["name"]: (base_params or {}).get(p["name"], plain_for(p.get("schema"), spec))
        for p in op.params
        if p["in"] == "path" or p.get("required")
    }
    body = base_body if base_body is not None else None
    if body is None and op.body is not None:
        body = plain_for(op.body, spec)
    sends_body = op.method in {"POST", "PUT", "PATCH"}
    if sends_body and body is None:
        body = {}

    def make(params: dict[str, Any], payload: Any, note: str) -> Request:
        raw = None if not sends_body else render(payload).encode("ascii")
        return Request(op.method, _target(op, params), raw, note[:120])

    out = [make(base, body, "baseline")]
    for param in op.params:
        if param["in"] not in {"path", "query"}:
            continue
        name = param["name"]
        out += [make({**base, name: v}, body, f"{name} = {brief(v)}") for v in SWEEP_VALUES]
    if sends_body and isinstance(body, dict):
        schema = _resolve(op.body or {}, spec)
        props = schema.get("properties", {})
        for name in [*props, "unknownField"]:
            out += [
                make(base, {**body, name: v}, f"body.{name} = {brief(v)}") for v in SWEEP_VALUES
            ]
            if name in props and not _resolve(props[name], spec).get("type"):
                out += [
                    make(base, {**body, name: {"k": v}}, f"body.{name}.k = {brief(v)}")
                    for v in SWEEP_VALUES
                ]
        if not props:  # a free-form object body: hostile keys and values at the top
            out += [make(base, {**body, "k": v}, f"body.k = {brief(v)}") for v in SWEEP_VALUES]
            out += [make(base, {**body, k: "v"}, f"body key {brief(k)}") for k in HOSTILE_KEYS]
        if base_body is not None:
            for path in leaf_paths(base_body):
                where = "body." + ".".join(str(p) for p in path)
                out += [
                    make(base, replaced(base_body, path, v), f"{where} = {brief(v)}")
                    for v in LEAF_VALUES
                ]
    if sends_body:
        target = _target(op, base)
        out += [Request(op.method, target, raw, f"raw body {raw[:20]!r}") for raw in RAW_BODIES]
        out += [Request(op.method, target, deep(990, "list"), "990 nested lists")]
    return out
