"""Platform adapters: each agent's hook stdin mapped to one normalised input, and back.

The hook scripts (``hooks/*.py``) are written once, against ``_runtime.HookInput``; an adapter
is the only place that knows a platform's field names and its stdout shape. The platform is
chosen by the hook command's ``--platform NAME`` argument (``workbench install`` writes it);
without one, the script speaks Claude Code, as it always has.

Modules (each stdlib-only, each with ``PLATFORM_SOURCE``, ``normalise`` and ``event_name``;
optionally ``output(kind, result)`` when the platform's stdout is not Claude Code's, and
``CONTEXT_FILE`` + ``context_document(text)`` when it reads context from a project file):
- ``claude``  Claude Code: its payload already is the normalised shape
- ``gemini``  Gemini CLI: BeforeAgent / AfterTool / AfterAgent, the answer in the payload
- ``codex``   Codex CLI: Claude-shaped events, the answer in ``last_assistant_message``
- ``cursor``  Cursor: beforeSubmitPrompt / after* / stop; its own stdout (``output``) and a
              rules file for context (``CONTEXT_FILE``, written by ``hooks/context_file.py``)
- ``windsurf`` Windsurf: Cascade hooks (``agent_action_name``, ``tool_info``); no context on
  stdout, so its optional ``write_context`` keeps the memory in a workspace rule file
- ``opencode`` OpenCode: what its workbench plugin (``hooks/opencode/workbench.js``) sends

Kept empty on purpose: the runtime imports only the one adapter a hook runs with.
"""

# The names ``--platform`` accepts; anything else falls back to ``claude`` (fail-open).
PLATFORMS = ("claude", "gemini", "codex", "cursor", "windsurf", "opencode")
