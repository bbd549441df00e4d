"""A real local HTTP server speaking the Gemini API (``generativelanguage``), for the real CLI.

Why a server: STYLE 18, and the real ``gemini`` program (tests/test_real_gemini.py) is pointed
at it with ``GOOGLE_GEMINI_BASE_URL``; only the model API is outside our stack, so only it is
faked.

Routes (any ``/v1beta`` or ``/v1`` prefix): ``models/<model>:streamGenerateContent?alt=sse``
(server-sent events, one ``GenerateContentResponse`` per event), ``models/<model>:generateContent``
(one JSON response) and ``models/<model>:countTokens``. Anything else is a 404 in Google's
error envelope, and recorded like everything else in ``.requests``.

Answers follow RULES read from the request, never a fixed queue, because the CLI makes side
requests whose number and order are its own business (next-speaker checks, model routing,
loop detection, titles):
1. the request asks for JSON (``generationConfig.responseMimeType`` is ``application/json`` or
   it carries a response schema): an object built from that schema (``schema_answer``), with
   ``next_speaker`` always ``"user"`` so the turn ends;
2. the last user turn is a ``functionResponse``: a text reply, ``reply_after_tool``;
3. what the user typed (``user_prompt``: the last text, without ``<hook_context>``) contains
   a scripted trigger (``on_prompt``) and that tool is declared: a ``functionCall`` of that
   tool with the scripted arguments;
4. anything else: the text ``DEFAULT_REPLY``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_http import FakeHTTPServer, QuietHandler, Scripted

DEFAULT_REPLY = "OK"
MODEL_ROUTE = re.compile(r"^/(?:v1beta|v1|v1alpha)/models/([^/:?]+):(\w+)")


@dataclass
class RecordedRequest:
    """One request as the server received it: ``method`` (the Gemini one, e.g.
    ``streamGenerateContent``) and ``model`` are parsed from the path."""

    http_method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    model: str = ""
    method: str = ""

    @property
    def contents(self) -> list[dict[str, Any]]:
        contents = self.body.get("contents") if isinstance(self.body, dict) else None
        return [c for c in contents or [] if isinstance(c, dict)]

    @property
    def text(self) -> str:
        """Every text the request carries (system instruction and all turns), joined."""
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else ""

    @property
    def tool_names(self) -> list[str]:
        """The function declarations offered to the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names: list[str] = []
        for tool in tools or []:
            for decl in (tool or {}).get("functionDeclarations") or []:
                if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                    names.append(decl["name"])
        return names

    @property
    def wants_json(self) -> bool:
        config = self.body.get("generationConfig") if isinstance(self.body, dict) else None
        if not isinstance(config, dict):
            return False
        return config.get("responseMimeType") == "application/json" or bool(
            config.get("responseJsonSchema") or config.get("responseSchema")
        )

    @property
    def is_turn(self) -> bool:
        """A main-loop request (it offers tools and asks for no JSON)."""
        return self.method in {"streamGenerateContent", "generateContent"} and (
            bool(self.tool_names) and not self.wants_json
        )


def parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.DOTALL)


def user_prompt(content: dict[str, Any]) -> str:
    """What the user typed: the turn's last text part without the hooks' context (which
    holds earlier prompts: a trigger found there would fire in every later session)."""
    texts = [p["text"] for p in parts(content) if isinstance(p.get("text"), str)]
    return HOOK_CONTEXT.sub("", texts[-1]).strip() if texts else ""


def schema_answer(schema: Any) -> Any:
    """A value that fits the JSON ``schema`` (enough of it for the CLI's side requests)."""
    if not isinstance(schema, dict):
        return {}
    kind = str(schema.get("type", "object")).lower()
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        options = schema["enum"]
        return "user" if "user" in options else options[0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {
            name: ("user" if name == "next_speaker" else schema_answer(sub))
            for name, sub in props.items()
        }
    if kind == "array":
        return []
    if kind in {"integer", "number"}:
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "fake"


@dataclass
class ToolRule:
    trigger: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


class FakeGemini(FakeHTTPServer[RecordedRequest, ToolRule]):
    """The server, its rules and its recordings."""

    name = "fake Gemini"

    def __init__(self) -> None:
        super().__init__()
        self.rules: list[ToolRule] = []
        self.reply_after_tool = "Done: I looked."

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def _client_class(self) -> Any:
        raise NotImplementedError("the real gemini CLI is this server's client")

    # ----- scripting ---------------------------------------------------------------------------
    def on_prompt(self, trigger: str, tool: str, args: dict[str, Any] | None = None) -> None:
        """When the user's prompt contains ``trigger``, call ``tool`` (once per prompt)."""
        self.rules.append(ToolRule(trigger, tool, dict(args or {})))

    def turns(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_turn]

    # ----- answering ---------------------------------------------------------------------------
    def answer(self, request: RecordedRequest) -> dict[str, Any]:
        """The ``GenerateContentResponse`` for ``request``, by the rules in the docstring."""
        with self._lock:
            self.requests.append(request)
        body = request.body if isinstance(request.body, dict) else {}
        if request.wants_json:
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            return response([{"text": json.dumps(schema_answer(schema))}])
        contents = request.contents
        last = contents[-1] if contents else {}
        if any("functionResponse" in p for p in parts(last)):
            return response([{"text": self.reply_after_tool}])
        typed = user_prompt(last) if last.get("role", "user") == "user" else ""
        for rule in self.rules:
            if rule.trigger in typed and rule.tool in request.tool_names:
                call = {"name": rule.tool, "args": rule.args}
                return response([{"functionCall": call}])
        return response([{"text": DEFAULT_REPLY}])


def response(reply_parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A complete ``GenerateContentResponse`` with one candidate."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": reply_parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "totalTokenCount": 15,
        },
        "modelVersion": "gemini-fake",
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": "NOT_FOUND"}}


def _make_handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class _Handler(QuietHandler):
        def do_GET(self) -> None:
            self._record_only()

        def do_POST(self) -> None:
            _, body = self.read_body()
            route = MODEL_ROUTE.match(self.path)
            request = RecordedRequest(
                http_method="POST",
                path=self.path,
                headers=self.lower_headers(),
                body=body,
                model=route[1] if route else "",
                method=route[2] if route else "",
            )
            if request.method == "countTokens":
                with fake._lock:
                    fake.requests.append(request)
                self.send_answer(Scripted(200, {"totalTokens": 10}))
            elif request.method == "generateContent":
                self.send_answer(Scripted(200, fake.answer(request)))
            elif request.method == "streamGenerateContent":
                self._send_stream(fake.answer(request))
            else:
                with fake._lock:
                    fake.requests.append(request)
                self.send_answer(Scripted(404, error_body(404, f"no route {self.path}")))

        def _record_only(self) -> None:
            request = RecordedRequest("GET", self.path, self.lower_headers())
            with fake._lock:
                fake.requests.append(request)
            self.send_answer(Scripted(404, error_body(404, f"no route {self.path}")))

        def _send_stream(self, answer: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(f"data: {json.dumps(answer)}\r\n\r\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return _Handler
