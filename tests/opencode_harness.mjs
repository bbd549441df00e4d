// Stands in for OpenCode when tests load the real workbench plugin with real node.
//
//   node tests/opencode_harness.mjs <plugin file> <directory>  < steps.json
//
// Only OpenCode itself is faked: the `PluginInput` it passes to a plugin (packages/plugin/src/
// index.ts: client, project, directory, worktree, serverUrl, $) and the way it loads and calls
// one (packages/opencode/src/plugin/index.ts, `applyPlugin`: a default export `{id, server}`,
// else every export is a plugin function). `steps` is a JSON list of `{hook, input, output}`,
// one call OpenCode makes into the plugin's hooks, in order; for each, one JSON line is
// printed: `{hook, output}` (what the hook left in `output`) or `{hook, error}` when a hook
// threw into OpenCode. The process ends when the plugin's background work has.

import { pathToFileURL } from "node:url"

const [pluginFile, directory] = process.argv.slice(2)

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return JSON.parse(Buffer.concat(chunks).toString("utf8"))
}

async function load(file, input) {
  const mod = await import(pathToFileURL(file).href)
  const value = mod.default
  if (value && typeof value === "object" && "server" in value) return [await value.server(input)]
  const hooks = []
  for (const fn of new Set(Object.values(mod))) {
    if (typeof fn !== "function") throw new TypeError("Plugin export is not a function")
    hooks.push(await fn(input))
  }
  return hooks
}

const input = {
  client: {},
  project: { id: "7c1f0e9a2b4d6e8f0a1b3c5d7e9f1a2b3c4d5e6f", worktree: directory, vcs: "git" },
  directory,
  worktree: directory,
  serverUrl: new URL("http://localhost:4096"),
  $: undefined,
}
const steps = await readStdin()
const hooks = await load(pluginFile, input)
for (const step of steps) {
  const output = step.output ?? {}
  try {
    for (const hook of hooks) {
      const fn = hook[step.hook]
      if (!fn) continue
      if (step.hook === "event") await fn(step.input)
      else await fn(step.input, output)
    }
    process.stdout.write(JSON.stringify({ hook: step.hook, output }) + "\n")
  } catch (error) {
    process.stdout.write(JSON.stringify({ hook: step.hook, error: String(error) }) + "\n")
  }
}
