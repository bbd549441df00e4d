// workbench for OpenCode: a plugin that hands OpenCode's events to workbench's hook scripts.
//
// OpenCode extends through JS/TS plugins, not command hooks, so this file is the whole
// integration: on each event it runs the matching script of workbench's `hooks/` folder as a
// subprocess (`python -S hooks/<script>.py --platform opencode`), writing one JSON object on
// its stdin. Spooling when the service is down, redaction of <private> text and idempotency
// keys all stay in those Python scripts, in one place; this file only forwards.
//
// Contract with OpenCode (anomalyco/opencode, formerly sst/opencode):
// - the plugin function and its hooks: packages/plugin/src/index.ts at commit
//   0d4d22f4e6820edba5167d0240df87b4e8fdcab4 (`PluginInput` {client, project, directory,
//   worktree, serverUrl, $}; `Hooks`: `event`, `chat.message`, `tool.execute.before`,
//   `tool.execute.after`, `experimental.chat.system.transform`);
// - the bus events: packages/sdk/js/src/gen/types.gen.ts (`session.created` and
//   `session.deleted` carry `properties.info: Session`; `session.idle` carries
//   `properties.sessionID`; `message.updated` carries `properties.info: Message`;
//   `message.part.updated` carries `properties.part: Part`);
// - loading: every `*.ts`/`*.js` file in `~/.config/opencode/plugins/` (or a project's
//   `.opencode/plugins/`) is imported (opencode.ai/docs/plugins, "From local files"; the glob
//   `{plugin,plugins}/*.{ts,js}` in packages/opencode/src/config/plugin.ts). A default export
//   that is an object is read as `{id, server}` (packages/opencode/src/plugin/shared.ts,
//   `readV1Plugin`, at e29cac4be917487bd16603067bed324cd1c607fa); otherwise every export is
//   called as a plugin function, as older versions do for all of them
//   (packages/opencode/src/plugin/index.ts at 2eaad5cf5d85ae120c64819be5a0ca7846cdf2af). So
//   this file has exactly one export, a function, which both paths call.
//
// What it sends (OpenCode's own field names; hooks/adapters/opencode.py maps them):
//   session.created     -> session_start.py       {info}
//   chat.message        -> user_prompt_submit.py  {sessionID, messageID, agent, message, parts}
//   tool.execute.after  -> post_tool_use.py       {tool, sessionID, callID, args, title, output, metadata}
//                                                 (an MCP tool's: {…, content, isError}, no output)
//   session.idle        -> stop.py                {sessionID, message, parts}  (the last answer)
//   session.deleted     -> session_end.py         {info}
// each with `hook_event_name`, `directory` and `worktree`. A subagent runs in a child session
// (`info.parentID`): its tool calls are sent with `parentID` and count for the parent session;
// its start, prompt and idle are not the user's and are not sent.
//
// Context: session_start.py (and user_prompt_submit.py when prompt injection is on) print
// `{"hookSpecificOutput": {"additionalContext": ...}}`; that text is added to the system
// prompt through `experimental.chat.system.transform`. OpenCode versions without that hook
// capture everything but get no injected context.
//
// Never in OpenCode's way: every handler catches everything; handlers return at once (the
// scripts run in the background, one session's in the order OpenCode fired them, each killed
// after its timeout); the only wait is in the system-prompt hook, for a session's context, at
// most CONTEXT_WAIT_MS.

import { spawn } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"

// Written by `workbench install --agent opencode`: the interpreter, the hooks folder and the
// data dir. Unset (a checkout), the plugin finds the hooks next to itself and runs python3.
const CONFIG = /* workbench:config */ {}

const HERE = path.dirname(fileURLToPath(import.meta.url))
const PYTHON = CONFIG.python || process.env.WORKBENCH_PYTHON || "python3"
const HOOKS_DIR = CONFIG.hooksDir || path.dirname(HERE)
const HOOK_TIMEOUT_MS = { session_start: 15000 }
const DEFAULT_TIMEOUT_MS = 10000
const CONTEXT_WAIT_MS = 5000
const METADATA_TEXT_LIMIT = 500
const MAX_SESSIONS = 500

function hookEnv() {
  const env = { ...process.env }
  if (CONFIG.dataDir) env.WORKBENCH_DATA_DIR = CONFIG.dataDir
  return env
}

// Run one hook script with `payload` on stdin; resolve to its stdout (never reject).
function runHook(script, payload) {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(out)
    }
    let child
    try {
      child = spawn(PYTHON, ["-S", path.join(HOOKS_DIR, `${script}.py`), "--platform", "opencode"], {
        env: hookEnv(),
        stdio: ["pipe", "pipe", "ignore"],
      })
    } catch {
      resolve("")
      return
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL")
      } catch {}
      finish()
    }, HOOK_TIMEOUT_MS[script] || DEFAULT_TIMEOUT_MS)
    child.on("error", finish)
    child.on("close", finish)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => {
      out += chunk
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

// The additionalContext of a hook's one-line JSON answer ("" when none).
function contextOf(stdout) {
  try {
    const answer = JSON.parse(stdout)
    const text = answer && answer.hookSpecificOutput && answer.hookSpecificOutput.additionalContext
    return typeof text === "string" ? text : ""
  } catch {
    return ""
  }
}

// The text parts of a message, in OpenCode's Part shape (files, tools and the rest left out).
function textParts(parts) {
  if (!Array.isArray(parts)) return []
  return parts
    .filter((p) => p && p.type === "text" && typeof p.text === "string")
    .map((p) => ({ id: p.id, type: "text", text: p.text, synthetic: p.synthetic }))
}

// The text blocks of an MCP tool's result. OpenCode hands `tool.execute.after` an MCP call's
// CallToolResult as it came ({content, structuredContent?, isError}, no `output`: seen with
// OpenCode 1.18.33); images' base64 data and embedded resources are no memory, and
// structuredContent repeats the text. Undefined (not sent) when the result has no content list.
function mcpContent(content) {
  if (!Array.isArray(content)) return undefined
  return content
    .filter((c) => c && c.type === "text" && typeof c.text === "string")
    .map((c) => ({ type: "text", text: c.text }))
}

// Scalars of a tool's metadata (bash's `exit`, `truncated`…); diffs and file copies left out.
function smallMetadata(metadata) {
  const out = {}
  if (!metadata || typeof metadata !== "object") return out
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value === "number" || typeof value === "boolean") out[key] = value
    else if (typeof value === "string" && value.length <= METADATA_TEXT_LIMIT) out[key] = value
  }
  return out
}

// A Map that forgets its oldest entries past MAX_SESSIONS (OpenCode may run for days).
function remember(map, key, value) {
  map.delete(key)
  map.set(key, value)
  while (map.size > MAX_SESSIONS) map.delete(map.keys().next().value)
}

// `promise`'s value, or "" after `ms` (the timer cleared either way: it must not keep a
// process alive).
function withTimeout(promise, ms) {
  let timer
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(""), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

export default async function WorkbenchPlugin(input) {
  const directory = (input && input.directory) || process.cwd()
  const worktree = (input && input.worktree) || directory

  const queues = new Map() // sessionID -> the promise of its last hook run (runs in order)
  const parents = new Map() // child sessionID -> parentID (subagent sessions)
  const started = new Map() // sessionID -> promise of the session start's context
  const prompted = new Map() // sessionID -> promise of the current prompt's context
  const answers = new Map() // sessionID -> {message, parts: Map(partID -> part)}
  const argsByCall = new Map() // callID -> args seen in tool.execute.before

  // Queue one hook run behind the session's previous ones; the promise of its stdout.
  function send(sessionID, script, payload) {
    const body = { ...payload, directory, worktree }
    const previous = queues.get(sessionID) || Promise.resolve()
    const run = previous.then(() => runHook(script, body)).catch(() => "")
    remember(queues, sessionID, run)
    return run
  }

  function start(info, source) {
    if (!info || typeof info.id !== "string" || started.has(info.id)) return
    if (info.parentID) {
      remember(parents, info.id, info.parentID)
      return
    }
    const payload = { hook_event_name: "session.created", source, info }
    remember(started, info.id, send(info.id, "session_start", payload).then(contextOf))
  }

  function onEvent(event) {
    const props = (event && event.properties) || {}
    switch (event && event.type) {
      case "session.created":
        start(props.info, "startup")
        break
      case "message.updated": {
        const info = props.info
        if (info && info.role === "assistant" && typeof info.sessionID === "string") {
          const known = answers.get(info.sessionID)
          // Updated again (completed, tokens counted): the same message, keep its parts.
          const parts = known && known.message.id === info.id ? known.parts : new Map()
          remember(answers, info.sessionID, { message: info, parts })
        }
        break
      }
      case "message.part.updated": {
        const part = props.part
        const answer = part && answers.get(part.sessionID)
        if (answer && answer.message.id === part.messageID && part.type === "text") {
          answer.parts.set(part.id, part)
        }
        break
      }
      case "session.idle": {
        const sessionID = props.sessionID
        if (typeof sessionID !== "string" || parents.has(sessionID)) break
        const answer = answers.get(sessionID)
        answers.delete(sessionID)
        send(sessionID, "stop", {
          hook_event_name: "session.idle",
          sessionID,
          message: answer ? answer.message : null,
          parts: answer ? textParts([...answer.parts.values()]) : [],
        })
        break
      }
      case "session.deleted": {
        const info = props.info
        if (!info || typeof info.id !== "string" || parents.has(info.id)) break
        send(info.id, "session_end", { hook_event_name: "session.deleted", reason: "deleted", info })
        break
      }
    }
  }

  return {
    event: async ({ event } = {}) => {
      try {
        onEvent(event)
      } catch {}
    },

    "chat.message": async (hookInput, output) => {
      try {
        const sessionID = hookInput && hookInput.sessionID
        if (typeof sessionID !== "string" || parents.has(sessionID)) return
        // A session OpenCode resumed (no session.created in this process): start it now, as
        // a startup. OpenCode builds the system prompt afresh for every model request, so no
        // earlier block is in what it sends: the session needs the whole memory, not only what
        // is new since its last block (what "resume" asks the service for).
        start({ id: sessionID, directory }, "startup")
        const payload = {
          hook_event_name: "chat.message",
          sessionID,
          messageID: hookInput.messageID,
          agent: hookInput.agent,
          message: output && output.message,
          parts: textParts(output && output.parts),
        }
        remember(prompted, sessionID, send(sessionID, "user_prompt_submit", payload).then(contextOf))
      } catch {}
    },

    "tool.execute.before": async (hookInput, output) => {
      try {
        if (hookInput && hookInput.callID) remember(argsByCall, hookInput.callID, output && output.args)
      } catch {}
    },

    "tool.execute.after": async (hookInput, output) => {
      try {
        const sessionID = hookInput && hookInput.sessionID
        if (typeof sessionID !== "string") return
        const callID = hookInput.callID
        const args = hookInput.args !== undefined ? hookInput.args : argsByCall.get(callID)
        argsByCall.delete(callID)
        const parentID = parents.get(sessionID)
        send(parentID || sessionID, "post_tool_use", {
          hook_event_name: "tool.execute.after",
          tool: hookInput.tool,
          sessionID,
          parentID,
          callID,
          args,
          title: output && output.title,
          output: output && output.output,
          content: mcpContent(output && output.content),
          isError: output && typeof output.isError === "boolean" ? output.isError : undefined,
          metadata: smallMetadata(output && output.metadata),
        })
      } catch {}
    },

    "experimental.chat.system.transform": async (hookInput, output) => {
      try {
        const sessionID = hookInput && hookInput.sessionID
        if (typeof sessionID !== "string" || !output || !Array.isArray(output.system)) return
        // One deadline for both waits: each model call is held CONTEXT_WAIT_MS at most.
        const deadline = Date.now() + CONTEXT_WAIT_MS
        for (const pending of [started.get(sessionID), prompted.get(sessionID)]) {
          if (!pending) continue
          const text = await withTimeout(pending, Math.max(0, deadline - Date.now()))
          if (text) output.system.push(text)
        }
      } catch {}
    },
  }
}
