"""Agent lifecycle hooks: one short stdlib-only script per event, run as a subprocess.

Written against Claude Code's events; ``--platform gemini|codex|cursor|windsurf|opencode`` on
the command line makes a script read and answer that platform's shape instead (``adapters/``).

Modules:
- ``_runtime``            the shared runtime: the normalised input, raw-socket HTTP,
                          deliver-or-spool, one-line stdout; states the fail-open contract
- ``adapters``            one module per platform: its stdin to the normalised input, its stdout
- ``session_start``       SessionStart: print the memory as additionalContext, from the service
                          (and drain the spool) or, with the service cold, read-only from the
                          store (spawning the service detached, under a lock, never waiting)
- ``user_prompt_submit``  UserPromptSubmit: post the (privacy-stripped) prompt to sessions/init
- ``post_tool_use``       PostToolUse: post one tool call (redacted) to sessions/observations
- ``stop``                Stop: read the last assistant message from the transcript's tail and
                          post it to sessions/summarize (not for subagents or re-entrant stops)
- ``session_end``         SessionEnd: post the end reason to sessions/end
- ``context_file``        for agents with no context injection (Cursor): write the memory
                          SessionStart would inject into the project file the agent reads

Kept empty on purpose: every import here would be paid on every tool call.
"""
