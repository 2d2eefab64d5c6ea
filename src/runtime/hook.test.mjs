// Tests for hook.mjs. stdin, stdout, stderr and the exit code are the
// contract, so every case runs a real child process: a tiny generated wrapper
// that imports runHook from hook.mjs, defines a handler and awaits
// runHook(SPEC, handler), exactly as an emitted hook does.
//
// Run: node --test src/runtime/

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { childEnv, failsWith, succeeds, writes, writesNothing } from "./child-outcome.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const HOOK_URL = pathToFileURL(join(HERE, "hook.mjs")).href;
const FIXTURES = join(HERE, "..", "..", "tests", "fixtures", "host-payloads");
const MiB = 1024 * 1024;
const PARALLEL = { concurrency: 8 };

const workDir = mkdtempSync(join(tmpdir(), "agent-bundle-hook-test-"));
after(() => rmSync(workDir, { recursive: true, force: true }));

let wrapperCount = 0;

// Printed by FALLBACK_PRELUDE when runHook starts reading the async stream.
const FALLBACK_MARKER = "<async stdin fallback>\n";
// Touching process.stdin makes fd 0 non-blocking, so readSync hits EAGAIN as
// soon as it has drained what was sent; the marker tells the test to send the rest.
const FALLBACK_PRELUDE = `const stdin = process.stdin, on = stdin.on;
stdin.on = function (name, ...rest) {
  if (name === "data") process.stderr.write(${JSON.stringify(FALLBACK_MARKER)});
  return on.call(this, name, ...rest);
};`;

/**
 * Runs one hook process. `handler` is JS source for the handler expression;
 * `input` is an object (sent as JSON), a string or a Buffer; with `holdBack`
 * (a byte count) only that many bytes are sent until the async fallback
 * marker appears; `prelude` is code placed before runHook; `load` is JS source
 * for runHook's loader; `end` ends the file (line 5, after runHook's on line 4).
 */
function run({ spec, handler = "() => undefined", load = "() => handler", input, holdBack, env = {}, args = [], prelude = "", end = "" }) {
  const file = join(workDir, `hook-${++wrapperCount}.mjs`);
  writeFileSync(
    file,
    `import { runHook } from ${JSON.stringify(HOOK_URL)};\n${prelude}\n` +
      `const SPEC = ${JSON.stringify(spec)};\nconst handler = ${handler};\nawait runHook(SPEC, ${load});\n${end}`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { env: { ...childEnv, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (data) => (stdout += data));
    let rest = null;
    child.stderr.setEncoding("utf8").on("data", (data) => {
      stderr += data;
      if (rest !== null && stderr.includes(FALLBACK_MARKER)) {
        child.stdin.end(rest);
        rest = null;
      }
    });
    child.stdin.on("error", () => {}); // EPIPE when the hook stops reading early
    child.on("error", reject);
    child.on("close", (code) => {
      const fallback = stderr.includes(FALLBACK_MARKER);
      resolve({ code, stdout, stderr: stderr.replace(FALLBACK_MARKER, ""), fallback });
    });
    if (holdBack !== undefined) {
      const bytes = Buffer.from(input);
      child.stdin.write(bytes.subarray(0, holdBack));
      rest = bytes.subarray(holdBack);
    } else if (input === undefined) {
      child.stdin.end();
    } else {
      child.stdin.end(typeof input === "string" || Buffer.isBuffer(input) ? input : JSON.stringify(input));
    }
  });
}

/** The comment that ends a bundle: a source map of `mappings` into src/hooks/x.ts. */
function sourceMap(mappings) {
  const map = { version: 3, sources: ["src/hooks/x.ts"], names: [], mappings };
  return `//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map)).toString("base64")}\n`;
}

function fixture(dir, name) {
  return JSON.parse(readFileSync(join(FIXTURES, dir, `${name}.json`), "utf8")).stdin;
}

// ---------------------------------------------------------------- specs

const field = (native, canonical, types, required = true, extra = {}) => ({
  native: Array.isArray(native) ? native : [native],
  canonical,
  types,
  required,
  ...extra,
});

const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"];

const RULES = {
  sessionStart: { deny: false, rewrite: false, context: true, violation: "sessionStart cannot deny or replace input" },
  beforeTool: { deny: true, rewrite: true, context: true, violation: "beforeTool cannot stop or replace input while denying" },
  afterTool: { deny: false, rewrite: false, context: true, violation: "afterTool cannot deny or replace input" },
  stop: { deny: true, rewrite: false, context: false, violation: "stop cannot replace input or add context" },
  agentStop: { deny: true, rewrite: false, context: true, violation: "agentStop cannot replace input" },
};

const CANONICAL = { SessionStart: "sessionStart", PreToolUse: "beforeTool", PostToolUse: "afterTool", Stop: "stop", SubagentStop: "agentStop" };

function hookSpecific(nativeEvent, body) {
  return { hookSpecificOutput: { hookEventName: nativeEvent, ...body } };
}

const claudeCommon = [
  field("session_id", "sessionId", ["string"]),
  field("transcript_path", "transcriptPath", ["string"]),
  field("cwd", "cwd", ["string"]),
  field("permission_mode", "permissionMode", ["string"], false, { enum: PERMISSION_MODES }),
  field("effort", "effort", ["object"], false),
  field("agent_id", "agentId", ["string"], false),
];
const codexCommon = [
  field("session_id", "sessionId", ["string"]),
  field("transcript_path", "transcriptPath", ["string", "null"]),
  field("cwd", "cwd", ["string"]),
  field("permission_mode", "permissionMode", ["string"], false, { enum: PERMISSION_MODES }),
  field("model", "model", ["string"], false),
  field("turn_id", "turnId", ["string"], false),
];
const toolFields = [
  field("tool_name", "toolName", ["string"]),
  field("tool_input", "toolInput", ["object"]),
  field("tool_use_id", "toolUseId", ["string"]),
];

const EVENT_FIELDS = {
  claude: {
    SessionStart: [field("source", "source", ["string"], true, { enum: ["startup", "resume", "clear", "compact"] })],
    PreToolUse: toolFields,
    PostToolUse: [...toolFields, field("tool_response", "toolResponse", []), field("duration_ms", "durationMs", ["number"], false)],
    Stop: [field("stop_hook_active", "stopHookActive", ["boolean"]), field("last_assistant_message", "lastAssistantMessage", ["string"], false)],
    SubagentStop: [field("stop_hook_active", "stopHookActive", ["boolean"])],
  },
  codex: {
    SessionStart: [field("source", "source", ["string"], true, { enum: ["startup", "resume", "clear"] })],
    PreToolUse: toolFields,
    PostToolUse: [...toolFields, field("tool_response", "toolResponse", [], true, { decode: "json" })],
    Stop: [field("stop_hook_active", "stopHookActive", ["boolean"]), field("last_assistant_message", "lastAssistantMessage", ["string", "null"], false)],
    SubagentStop: [field("stop_hook_active", "stopHookActive", ["boolean"])],
  },
};

function outputs(host, nativeEvent) {
  const none = { deny: null, context: null, rewrite: null };
  const context = hookSpecific(nativeEvent, { additionalContext: "$context" });
  const block = { decision: "block", reason: "$reason" };
  switch (nativeEvent) {
    case "SessionStart":
    case "PostToolUse":
      return { ...none, context };
    case "PreToolUse":
      return host === "claude"
        ? {
            deny: hookSpecific(nativeEvent, { permissionDecision: "deny", permissionDecisionReason: "$reason" }),
            context,
            rewrite: hookSpecific(nativeEvent, { updatedInput: "$updatedInput" }),
          }
        : {
            deny: hookSpecific(nativeEvent, { permissionDecision: "deny", permissionDecisionReason: "$reason" }),
            context: null,
            rewrite: hookSpecific(nativeEvent, { permissionDecision: "allow", updatedInput: "$updatedInput" }),
            requires: { rewrite: { stringInput: "command", tools: ["Bash", "apply_patch"] } },
          };
    case "Stop":
      return { ...none, deny: block };
    case "SubagentStop":
      return { ...none, deny: block, context: host === "claude" ? context : null };
  }
  throw new Error(nativeEvent);
}

function hostSpec(host, nativeEvent) {
  const event = CANONICAL[nativeEvent];
  return {
    hook: `${event}-test-${host}`,
    host,
    hostName: host === "claude" ? "Claude Code" : "Codex",
    event,
    nativeEvent,
    eventKey: "hook_event_name",
    fields: [...(host === "claude" ? claudeCommon : codexCommon), ...EVENT_FIELDS[host][nativeEvent]],
    rules: RULES[event],
    output: outputs(host, nativeEvent),
  };
}

const cursorSession = field(["session_id", "conversation_id"], "sessionId", ["string"]);
const cursorBase = (event, nativeEvent, fields, output) => ({
  hook: `${event}-test-cursor`,
  host: "cursor",
  hostName: "Cursor",
  event,
  nativeEvent,
  eventKey: "hook_event_name",
  fields: [cursorSession, ...fields],
  rules: RULES[event],
  output: { deny: null, context: null, rewrite: null, ...output },
});
const CURSOR = {
  preToolUse: cursorBase("beforeTool", "preToolUse", [field("tool_name", "toolName", ["string"]), field("tool_input", "toolInput", ["object"])], {
    deny: { permission: "deny", user_message: "$reason", agent_message: "$reason" },
    rewrite: { permission: "allow", updated_input: "$updatedInput" },
  }),
  postToolUse: cursorBase("afterTool", "postToolUse", [field("tool_name", "toolName", ["string"]), field("tool_output", "toolResponse", ["string"], true, { decode: "json" })], {
    context: { additional_context: "$context" },
  }),
  subagentStop: cursorBase("agentStop", "subagentStop", [field("subagent_type", "agentType", ["string"]), field("status", "status", ["string"], false)], {
    deny: { followup_message: "$reason" },
    requires: { deny: { field: "status", equals: "completed" } },
  }),
  stop: cursorBase("stop", "stop", [field("loop_count", "stopHookActive", ["number"], true, { decode: "positive-count" }), field("status", "status", ["string"], false, { enum: ["completed", "aborted", "error"] })], {
    deny: { followup_message: "$reason" },
  }),
};

const CLAUDE_PRE = hostSpec("claude", "PreToolUse");
const CLAUDE_POST = hostSpec("claude", "PostToolUse");
const CLAUDE_START = hostSpec("claude", "SessionStart");
const CLAUDE_STOP = hostSpec("claude", "Stop");
const CODEX_PRE = hostSpec("codex", "PreToolUse");
const CODEX_SUBAGENT_STOP = hostSpec("codex", "SubagentStop");
const claudePre = fixture("claude-code-2.1.332", "PreToolUse");
const codexPre = fixture("codex-0.171.0", "PreToolUse");

// Writes everything the handler saw to stderr, for the test to inspect.
const REPORTER = `(event, context) => {
  const frozen = [event, context, context.nativeInput, ...Object.values(event)]
    .every((v) => v === null || typeof v !== "object" || Object.isFrozen(v));
  process.stderr.write(JSON.stringify({ event, keys: Object.keys(event), frozen, host: context.host,
    nativeEvent: context.nativeEvent, nativeInput: context.nativeInput }));
}`;

async function observe(spec, input) {
  const r = await run({ spec, handler: REPORTER, input });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  const seen = JSON.parse(r.stderr);
  assert.equal(seen.frozen, true, "event, context and nativeInput are frozen");
  assert.equal(seen.host, spec.host);
  assert.equal(seen.nativeEvent, spec.nativeEvent);
  assert.deepEqual(seen.nativeInput, input);
  return seen;
}

// ---------------------------------------------------------------- tests

describe("real host payloads", PARALLEL, () => {
  const checks = {
    SessionStart: (e, p) => assert.equal(e.source, p.source),
    PreToolUse: (e, p) => {
      assert.equal(e.toolName, "Bash");
      assert.deepEqual(e.toolInput, p.tool_input);
      assert.equal(e.toolUseId, p.tool_use_id);
    },
    PostToolUse: (e, p) => assert.deepEqual(e.toolResponse, p.tool_response),
    Stop: (e) => {
      assert.equal(e.stopHookActive, false);
      assert.equal(e.lastAssistantMessage, "done");
    },
  };
  // UserPromptSubmit has no canonical event yet, so it is not mapped here.
  for (const [dir, host] of [["claude-code-2.1.332", "claude"], ["codex-0.171.0", "codex"]]) {
    for (const nativeEvent of Object.keys(checks)) {
      test(`${dir} ${nativeEvent}`, async () => {
        const payload = fixture(dir, nativeEvent);
        const seen = await observe(hostSpec(host, nativeEvent), payload);
        assert.equal(seen.event.sessionId, payload.session_id);
        assert.equal(seen.event.cwd, payload.cwd);
        assert.equal(seen.event.transcriptPath, payload.transcript_path);
        assert.equal(seen.event.permissionMode, payload.permission_mode);
        checks[nativeEvent](seen.event, payload);
        // fields the host did not send stay absent; undeclared extras are not decoded
        assert.ok(!seen.keys.includes("agentId") && !seen.keys.includes("promptId") && !seen.keys.includes("prompt_id"));
        assert.ok(seen.keys.every((key) => key in seen.event && seen.event[key] !== undefined));
        if (host === "claude" && payload.effort) assert.deepEqual(seen.event.effort, { level: "medium" });
        if (host === "codex") assert.equal(seen.event.model, "gpt-5.5");
      });
    }
  }

  test("codex transcript_path may be null", async () => {
    const seen = await observe(CODEX_PRE, { ...codexPre, transcript_path: null });
    assert.equal(seen.event.transcriptPath, null);
    assert.ok(seen.keys.includes("transcriptPath"));
  });

  test("codex string tool_response stays a string, JSON strings are decoded", async () => {
    const spec = hostSpec("codex", "PostToolUse");
    const payload = fixture("codex-0.171.0", "PostToolUse");
    assert.equal((await observe(spec, payload)).event.toolResponse, "hi\n");
    const json = await observe(spec, { ...payload, tool_response: '{"exit_code":0}' });
    assert.deepEqual(json.event.toolResponse, { exit_code: 0 });
  });

  test("canonical keys follow the spec's field order", async () => {
    const seen = await observe(CLAUDE_PRE, claudePre);
    assert.deepEqual(seen.keys, ["sessionId", "transcriptPath", "cwd", "permissionMode", "effort", "toolName", "toolInput", "toolUseId"]);
  });
});

describe("projection", PARALLEL, () => {
  const claudeOut = (body) => hookSpecific("PreToolUse", body);

  // A lone surrogate would be written as an escape strict JSON readers (Rust's, Codex's)
  // refuse, losing the answer: it becomes U+FFFD.
  test("a string cut inside a character is written well-formed", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => ({ outcome: "deny", reason: "no " + "😀".slice(0, 1) })` });
    writes(r, claudeOut({ permissionDecision: "deny", permissionDecisionReason: "no \ufffd" }));
    assert.ok(!r.stdout.includes("\\ud83d"), r.stdout);
  });

  test("claude deny", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => ({ outcome: "deny", reason: "no rm" })` });
    writes(r, claudeOut({ permissionDecision: "deny", permissionDecisionReason: "no rm" }));
  });

  test("a tool event's context names its tool canonically, by the spec's host patterns", async () => {
    const tools = { shell: "^(?:Bash|PowerShell)$", "file.write": "^(?:Edit|Write)$", mcp: "^mcp__" };
    const named = (toolName) =>
      run({ spec: { ...CLAUDE_PRE, tools }, input: { ...claudePre, tool_name: toolName }, handler: `(e, c) => ({ additionalContext: String(c.tool) })` });
    writes(await named("Bash"), claudeOut({ additionalContext: "shell" }));
    writes(await named("mcp__memory__read"), claudeOut({ additionalContext: "mcp" }));
    writes(await named("WebSearch"), claudeOut({ additionalContext: "null" }));
    const without = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `(e, c) => ({ additionalContext: String("tool" in c) })` });
    writes(without, claudeOut({ additionalContext: "false" }), "no tools in the spec, no tool in the context");
  });

  test("claude async deny", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `async (e) => ({ outcome: "deny", reason: "tool " + e.toolName })` });
    writes(r, claudeOut({ permissionDecision: "deny", permissionDecisionReason: "tool Bash" }));
  });

  test("claude context", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => ({ additionalContext: "be careful" })` });
    writes(r, claudeOut({ additionalContext: "be careful" }));
  });

  test("claude rewrite merged with context", async () => {
    const r = await run({
      spec: CLAUDE_PRE,
      input: claudePre,
      handler: `(e) => ({ updatedInput: { ...e.toolInput, command: "echo safe" }, additionalContext: "rewrote" })`,
    });
    writes(r, claudeOut({ additionalContext: "rewrote", updatedInput: { command: "echo safe", description: "Print hi" } }));
  });

  test("claude deny merged with context", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => ({ outcome: "deny", reason: "r", additionalContext: "c" })` });
    writes(r, claudeOut({ permissionDecision: "deny", permissionDecisionReason: "r", additionalContext: "c" }));
  });

  test("claude session start context", async () => {
    const r = await run({ spec: CLAUDE_START, input: fixture("claude-code-2.1.332", "SessionStart"), handler: `() => ({ additionalContext: "hello" })` });
    writes(r, hookSpecific("SessionStart", { additionalContext: "hello" }));
  });

  test("claude stop deny", async () => {
    const r = await run({ spec: CLAUDE_STOP, input: fixture("claude-code-2.1.332", "Stop"), handler: `() => ({ outcome: "deny", reason: "tests fail" })` });
    writes(r, { decision: "block", reason: "tests fail" });
  });

  test("an input nested deeper than JSON.stringify reaches is rewritten and answered whole", async () => {
    const depth = 100_000;
    const deep = "[".repeat(depth) + "]".repeat(depth);
    const input = JSON.stringify({ ...claudePre, tool_input: { ...claudePre.tool_input, deep: 0 } }).replace('"deep":0', `"deep":${deep}`);
    const handler = `(e) => ({ updatedInput: { ...e.toolInput, command: "echo safe" } })`;
    const r = await run({ spec: CLAUDE_PRE, input, handler });
    succeeds(r);
    // (Compared as text: the test's own JSON.stringify would overflow.)
    assert.ok(r.stdout.includes(`"updatedInput":{"command":"echo safe","description":"Print hi","deep":${deep}}`), r.stdout.slice(0, 300));
  });

  test("codex rewrite carries the template's allow", async () => {
    const r = await run({ spec: CODEX_PRE, input: codexPre, handler: `() => ({ updatedInput: { command: "echo safe" } })` });
    writes(r, hookSpecific("PreToolUse", { permissionDecision: "allow", updatedInput: { command: "echo safe" } }));
  });

  test("codex reads a rewritten Bash input only with a string command", async () => {
    const r = await run({ spec: CODEX_PRE, input: codexPre, handler: `() => ({ updatedInput: { cmd: "echo safe" } })` });
    failsWith(r, CODEX_PRE, "Codex PreToolUse reads a rewritten Bash input only with a string command");
    // Other tools carry no such requirement.
    const mcp = { ...codexPre, tool_name: "mcp__docs__search", tool_input: { query: "x" } };
    const other = await run({ spec: CODEX_PRE, input: mcp, handler: `() => ({ updatedInput: { query: "y" } })` });
    writes(other, hookSpecific("PreToolUse", { permissionDecision: "allow", updatedInput: { query: "y" } }));
  });

  test("cursor reads a subagentStop follow-up only when the subagent completed", async () => {
    const spec = CURSOR.subagentStop;
    const input = (status) => ({ hook_event_name: "subagentStop", conversation_id: "c1", subagent_type: "explore", status });
    const handler = `() => ({ outcome: "deny", reason: "keep going" })`;
    writes(await run({ spec, input: input("completed"), handler }), { followup_message: "keep going" });
    const error = await run({ spec, input: input("error"), handler });
    failsWith(error, spec, 'Cursor subagentStop reads this outcome only when status is "completed"; it is "error"');
    const absent = await run({ spec, input: input(undefined), handler });
    failsWith(absent, spec, 'Cursor subagentStop reads this outcome only when status is "completed"; it is absent');
    // What a deny would leave out goes unsaid when the deny is not answered either.
    const withContext = `() => ({ outcome: "deny", reason: "keep going", additionalContext: "x" })`;
    const unanswered = await run({ spec, input: input("error"), handler: withContext });
    failsWith(unanswered, spec, 'Cursor subagentStop reads this outcome only when status is "completed"; it is "error"');
    // Continuing is always fine.
    writesNothing(await run({ spec, input: input("aborted") }));
  });

  test("claude ignores a ConfigChange block of the managed policy settings", async () => {
    const spec = {
      ...CLAUDE_STOP,
      nativeEvent: "ConfigChange",
      fields: [...claudeCommon, field("source", "source", ["string"])],
      output: { deny: { decision: "block", reason: "$reason" }, requires: { deny: { field: "source", differs: "policy_settings" } } },
    };
    const input = (source) => ({ ...claudePre, hook_event_name: "ConfigChange", source });
    const handler = `() => ({ outcome: "deny", reason: "not now" })`;
    writes(await run({ spec, input: input("project_settings"), handler }), { decision: "block", reason: "not now" });
    const policy = await run({ spec, input: input("policy_settings"), handler });
    failsWith(policy, spec, 'Claude Code ConfigChange ignores this outcome when source is "policy_settings"');
    writesNothing(await run({ spec, input: input("policy_settings") }));
  });

  test("codex deny", async () => {
    const r = await run({ spec: CODEX_PRE, input: codexPre, handler: `() => ({ outcome: "deny", reason: "nope" })` });
    writes(r, hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "nope" }));
  });

  test("cursor deny, conversation_id alternative", async () => {
    const input = { hook_event_name: "preToolUse", conversation_id: "c1", tool_name: "Shell", tool_input: { command: "ls" } };
    const r = await run({ spec: CURSOR.preToolUse, input, handler: `(e) => ({ outcome: "deny", reason: "session " + e.sessionId })` });
    writes(r, { permission: "deny", user_message: "session c1", agent_message: "session c1" });
  });

  test("empty context is none, where the event takes none too", async () => {
    const r = await run({ spec: CLAUDE_STOP, input: fixture("claude-code-2.1.332", "Stop"), handler: `() => ({ additionalContext: "" })` });
    writesNothing(r);
  });

  test("a deny is answered without context the host has no place for, and that is said", async () => {
    const input = { hook_event_name: "preToolUse", conversation_id: "c1", tool_name: "Shell", tool_input: { command: "rm -rf /" } };
    const handler = `() => ({ outcome: "deny", reason: "no rm", additionalContext: "use trash" })`;
    const r = await run({ spec: CURSOR.preToolUse, input, handler });
    assert.equal(r.code, 0, "exit code");
    assert.deepEqual(JSON.parse(r.stdout), { permission: "deny", user_message: "no rm", agent_message: "no rm" });
    const note = "Cursor preToolUse takes no additionalContext: the deny is answered without it";
    assert.equal(r.stderr, `agent-bundle hook ${CURSOR.preToolUse.hook}: ${note}\n`);
  });

  test("cursor alternatives: first present wins", async () => {
    const input = { hook_event_name: "preToolUse", session_id: "s1", conversation_id: "c1", tool_name: "Shell", tool_input: {} };
    const seen = await observe(CURSOR.preToolUse, input);
    assert.equal(seen.event.sessionId, "s1");
  });

  test("cursor rewrite", async () => {
    const input = { hook_event_name: "preToolUse", conversation_id: "c1", tool_name: "Shell", tool_input: { command: "ls" } };
    const r = await run({ spec: CURSOR.preToolUse, input, handler: `() => ({ updatedInput: { command: "ls -a" } })` });
    writes(r, { permission: "allow", updated_input: { command: "ls -a" } });
  });

  test("cursor tool_output json decode and additional_context", async () => {
    const input = { hook_event_name: "postToolUse", conversation_id: "c1", tool_name: "Shell", tool_output: '{"exitCode":0,"out":"x"}' };
    const r = await run({ spec: CURSOR.postToolUse, input, handler: `(e) => ({ additionalContext: "exit " + e.toolResponse.exitCode })` });
    writes(r, { additional_context: "exit 0" });
    const plain = await observe(CURSOR.postToolUse, { ...input, tool_output: "not json {" });
    assert.equal(plain.event.toolResponse, "not json {");
  });

  test("cursor stop: loop_count positive-count and followup_message", async () => {
    const input = { hook_event_name: "stop", conversation_id: "c1", loop_count: 0, status: "completed" };
    assert.equal((await observe(CURSOR.stop, input)).event.stopHookActive, false);
    assert.equal((await observe(CURSOR.stop, { ...input, loop_count: 3 })).event.stopHookActive, true);
    const r = await run({ spec: CURSOR.stop, input, handler: `(e) => e.stopHookActive ? undefined : { outcome: "deny", reason: "run the tests" }` });
    writes(r, { followup_message: "run the tests" });
  });

  test("markers are substituted anywhere, templates stay unchanged otherwise", async () => {
    const spec = {
      ...CLAUDE_PRE,
      output: { ...CLAUDE_PRE.output, deny: { a: { b: ["$reason", { c: "$reason", d: "$reasonx" }], n: 1, t: true, z: null } } },
    };
    const r = await run({ spec, input: claudePre, handler: `() => ({ outcome: "deny", reason: "R" })` });
    writes(r, { a: { b: ["R", { c: "R", d: "$reasonx" }], n: 1, t: true, z: null } });
  });

  for (const [name, handler] of [
    ["returns undefined", "() => undefined"],
    ["returns null", "() => null"],
    ["explicit continue", `() => ({ outcome: "continue" })`],
    ["empty context", `() => ({ additionalContext: "" })`],
    ["undefined-valued known keys", `() => ({ outcome: undefined, reason: undefined, updatedInput: undefined })`],
    ["async continue", "async () => {}"],
  ]) {
    test(`continuing beforeTool writes nothing: ${name}`, async () => {
      writesNothing(await run({ spec: CLAUDE_PRE, input: claudePre, handler }));
    });
  }

  test("what a handler leaves running does not hold its answer back", { timeout: 5000 }, async () => {
    // The host waits for the process to end; a hook it times out fails open.
    const handler = `() => { setInterval(() => {}, 1000); return { outcome: "deny", reason: "x" }; }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    writes(r, claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
  });

  test("a method named class, or a frozen function, is a function, not a class", async () => {
    for (const handler of [
      `({ class() { return { outcome: "deny", reason: "x" }; } }).class`,
      `Object.freeze(function () { return { outcome: "deny", reason: "x" }; })`,
    ]) {
      const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
      assert.equal(r.code, 0, r.stderr);
    }
    const handler = `({ class() { return { outcome: "deny", reason: "x" }; } }).class`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
  });

  test("a handler's logging after it returned still gets out", async () => {
    const handler = `() => { setTimeout(() => console.error("later"), 10); }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "later\n");
  });

  test("handler console.log goes to stderr, not into the answer", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { console.log("noise"); return { outcome: "deny", reason: "x" }; }` });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
    assert.equal(r.stderr, "noise\n");
  });

  test("a process.exit the handler left for later keeps the answer's exit code", { timeout: 5000 }, async () => {
    const handler = `() => { setTimeout(() => process.exit(2), 10); return { outcome: "deny", reason: "x" }; }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
  });

  // Exit code 2 is a blocking error to Claude Code: one a handler's leftover work sets must
  // neither turn a failure into a block nor the answer into an error.
  test("an exit code the handler set, or left a timer to set, gives way to the hook's own", { timeout: 5000 }, async () => {
    const later = `setTimeout(() => { process.exitCode = 2; }, 5);`;
    const answered = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { ${later} return { outcome: "deny", reason: "x" }; }` });
    assert.equal(answered.code, 0, answered.stderr);
    assert.deepEqual(JSON.parse(answered.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
    const failed = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { ${later} throw new Error("bug"); }` });
    failsWith(failed, CLAUDE_PRE, "handler failed: bug");
    const now = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { process.exitCode = 2; }` });
    writesNothing(now);
    // An `exit` listener of the handler's runs after the hook's own.
    const listening = `process.on("exit", () => { process.exitCode = 2; })`;
    writesNothing(await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { ${listening}; }` }));
    failsWith(await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { ${listening}; throw new Error("bug"); }` }), CLAUDE_PRE, "handler failed: bug");
  });

  test("what the handler left running failing after the answer is a note; the answer and its exit code stand", { timeout: 5000 }, async () => {
    const deny = claudeOut({ permissionDecision: "deny", permissionDecisionReason: "r" });
    for (const [late, note] of [
      [`Promise.reject(new Error("x"))`, "handler left a promise rejected: x"],
      [`{ throw new Error("y"); }`, "handler failed: y"],
    ]) {
      const handler = `() => { setTimeout(() => ${late}, 0); return { outcome: "deny", reason: "r" }; }`;
      const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), deny);
      assert.equal(r.stderr, `agent-bundle hook ${CLAUDE_PRE.hook}: after the hook answered (the answer stands): ${note}\n`);
    }
  });

  test("what the handler left running failing before its answer is a note; the answer stands", { timeout: 5000 }, async () => {
    const deny = claudeOut({ permissionDecision: "deny", permissionDecisionReason: "r" });
    for (const [stray, note] of [
      [`setTimeout(() => { throw new Error("late"); }, 0)`, "handler failed: late"],
      [`Promise.reject(new Error("dropped"))`, "handler left a promise rejected: dropped"],
    ]) {
      const handler = `async () => { ${stray}; await new Promise((r) => setTimeout(r, 50)); return { outcome: "deny", reason: "r" }; }`;
      const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), deny);
      assert.equal(r.stderr, `agent-bundle hook ${CLAUDE_PRE.hook}: while the handler ran (the answer stands): ${note}\n`);
    }
    // Where the bundle's map has the line, the note says it.
    const mapped = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `async () => { setTimeout(() => { throw new Error("late"); }, 0); await new Promise((r) => setTimeout(r, 50)); }`, end: sourceMap(";;;AAME") });
    assert.equal(mapped.code, 0, mapped.stderr);
    assert.match(mapped.stderr, /while the handler ran \(the answer stands\): handler failed: late \(at src\/hooks\/x\.ts:7:3\)\n$/);
    // A handler that never answers still fails, after the note.
    const never = await run({ spec: CLAUDE_PRE, input: claudePre, handler: `() => { setTimeout(() => { throw new Error("late"); }, 0); return new Promise(() => {}); }` });
    assert.equal(never.code, 1);
    assert.equal(never.stdout, "");
    assert.match(never.stderr, /while the handler ran \(the answer stands\): handler failed: late\n.*handler never settled/);
  });

  test("a rejection the handler leaves as it answers comes after the answer: a note", async () => {
    const handler = `() => { Promise.reject(new Error("x")); return { outcome: "deny", reason: "r" }; }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "r" }));
    assert.match(r.stderr, /after the hook answered \(the answer stands\): handler left a promise rejected: x/);
  });

  test("after a failure, what the handler left running failing is not said: one line", { timeout: 5000 }, async () => {
    const handler = `() => { setTimeout(() => { throw new Error("later"); }, 0); throw new Error("now"); }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /handler failed: now/);
  });

  test("console.dir, console.table and process.stdout go to stderr too", async () => {
    const handler = `() => { console.dir({ a: 1 }); console.table([1]); process.stdout.write("raw\\n"); return { outcome: "deny", reason: "x" }; }`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, handler });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), claudeOut({ permissionDecision: "deny", permissionDecisionReason: "x" }));
    assert.ok(r.stderr.startsWith("{ a: 1 }\n") && r.stderr.endsWith("raw\n"), r.stderr);
  });

  test("console output of the handler's modules, while they load, goes to stderr too", async () => {
    // The prelude runs after hook.mjs is evaluated and before the handler is
    // defined, as a wrapper evaluates the runtime before the handler's modules.
    const prelude = `console.log("loading"); console.info("still loading");`;
    const r = await run({ spec: CLAUDE_PRE, input: claudePre, prelude });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, "loading\nstill loading\n");
  });
});

// A route's tool/before and permission/request, as the Rust tables write their specs:
// `allow` and `ask` where the event takes them, each with the host's template (or null).
describe("allow and ask", PARALLEL, () => {
  const decision = (value) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: value, permissionDecisionReason: "$reason" } });
  const ROUTE_PRE = {
    ...CLAUDE_PRE,
    event: "tool/before",
    rules: { ...CLAUDE_PRE.rules, allow: true, ask: true },
    output: { ...CLAUDE_PRE.output, allow: decision("allow"), ask: decision("ask") },
  };
  const returning = (result) => `() => (${JSON.stringify(result)})`;

  test("allow, ask and allow with a new input, in the host's decision", async () => {
    writes(await run({ spec: ROUTE_PRE, input: claudePre, handler: returning({ outcome: "allow" }) }), hookSpecific("PreToolUse", { permissionDecision: "allow" }));
    writes(
      await run({ spec: ROUTE_PRE, input: claudePre, handler: returning({ outcome: "ask", reason: "check the path" }) }),
      hookSpecific("PreToolUse", { permissionDecision: "ask", permissionDecisionReason: "check the path" }),
    );
    writes(
      await run({ spec: ROUTE_PRE, input: claudePre, handler: returning({ outcome: "allow", updatedInput: { command: "ls" } }) }),
      hookSpecific("PreToolUse", { permissionDecision: "allow", updatedInput: { command: "ls" } }),
    );
  });

  test("a host without the channel fails, as does a reason it has no place for", async () => {
    const codexLike = { ...ROUTE_PRE, output: { ...ROUTE_PRE.output, ask: null } };
    failsWith(await run({ spec: codexLike, input: claudePre, handler: returning({ outcome: "ask" }) }), codexLike, "Claude Code PreToolUse does not support outcome ask");
    const behaviorAllow = { hookSpecificOutput: { hookEventName: "PreToolUse", decision: { behavior: "allow" } } };
    const noReason = { ...ROUTE_PRE, rules: { ...ROUTE_PRE.rules, ask: undefined }, output: { ...ROUTE_PRE.output, allow: behaviorAllow } };
    writes(await run({ spec: noReason, input: claudePre, handler: returning({ outcome: "allow" }) }), behaviorAllow);
    failsWith(await run({ spec: noReason, input: claudePre, handler: returning({ outcome: "allow", reason: "fine" }) }), noReason, "Claude Code PreToolUse takes no reason with outcome allow");
    failsWith(await run({ spec: noReason, input: claudePre, handler: returning({ outcome: "ask" }) }), noReason, 'handler result outcome is invalid: "ask", where "continue", "deny" or "allow" is expected');
    failsWith(await run({ spec: ROUTE_PRE, input: claudePre, handler: returning({ reason: "r" }) }), ROUTE_PRE, 'reason is only valid with outcome "deny", "allow" or "ask"');
  });

  test("an allow a host reads only with a new input; an event that takes no decision lists none", async () => {
    const withInput = {
      ...ROUTE_PRE,
      output: { ...ROUTE_PRE.output, allow: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }, requires: { allow: { with: "updatedInput" } } },
    };
    failsWith(await run({ spec: withInput, input: claudePre, handler: returning({ outcome: "allow" }) }), withInput, "Claude Code PreToolUse reads outcome allow only with updatedInput");
    writes(
      await run({ spec: withInput, input: claudePre, handler: returning({ outcome: "allow", updatedInput: { command: "ls" } }) }),
      hookSpecific("PreToolUse", { permissionDecision: "allow", updatedInput: { command: "ls" } }),
    );
    const observing = { ...CLAUDE_PRE, rules: { deny: false, rewrite: false, context: false, violation: "tool/failure is observation-only" } };
    failsWith(await run({ spec: observing, input: claudePre, handler: returning({ outcome: "allow" }) }), observing, 'handler result outcome is invalid: "allow", where "continue" is expected');
    failsWith(await run({ spec: observing, input: claudePre, handler: returning({ reason: "r" }) }), observing, "tool/failure is observation-only");
  });

  test("a config hook answers neither", async () => {
    failsWith(await run({ spec: CLAUDE_PRE, input: claudePre, handler: returning({ outcome: "allow" }) }), CLAUDE_PRE, 'handler result outcome is invalid: "allow", where "continue" or "deny" is expected');
  });
});

describe("stdin", PARALLEL, () => {
  // A valid PreToolUse envelope of exactly `size` bytes.
  function paddedEnvelope(size) {
    const base = JSON.stringify({ ...claudePre, pad: "" });
    const text = JSON.stringify({ ...claudePre, pad: "x".repeat(size - base.length) });
    assert.equal(Buffer.byteLength(text), size);
    return text;
  }

  // What a wrapper reads at most: far past any envelope a host sends, since one it refuses
  // fails open (a Write too big for its guard would go through).
  const CAP = 64 * MiB;
  const TOO_BIG = "stdin exceeds the 64 MiB native-payload limit";
  const padOf = (size) => String(size - JSON.stringify({ ...claudePre, pad: "" }).length);

  test("exactly the 64 MiB cap of valid JSON is accepted", { timeout: 20_000 }, async () => {
    const r = await run({ spec: CLAUDE_PRE, input: paddedEnvelope(CAP), handler: `(e, c) => ({ outcome: "deny", reason: String(c.nativeInput.pad.length) })` });
    writes(r, hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: padOf(CAP) }));
  });

  test("a few MiB, past what a buffer first holds, are read whole", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: paddedEnvelope(3 * MiB + 7), handler: `(e, c) => ({ additionalContext: String(c.nativeInput.pad.length) })` });
    writes(r, hookSpecific("PreToolUse", { additionalContext: padOf(3 * MiB + 7) }));
  });

  test("the cap + 1 byte is rejected", { timeout: 20_000 }, async () => {
    failsWith(await run({ spec: CLAUDE_PRE, input: paddedEnvelope(CAP + 1) }), CLAUDE_PRE, TOO_BIG);
  });

  test("a much larger stdin fails without reading it all", { timeout: 20_000 }, async () => {
    failsWith(await run({ spec: CLAUDE_PRE, input: Buffer.alloc(CAP + 16 * MiB, 0x20) }), CLAUDE_PRE, TOO_BIG);
  });

  // Half the payload is read synchronously, then EAGAIN: the async fallback
  // must keep those bytes and read the rest.
  test("non-blocking stdin (EAGAIN) falls back to async reading", { timeout: 20_000 }, async () => {
    const text = JSON.stringify(claudePre);
    const r = await run({
      spec: CLAUDE_PRE,
      prelude: FALLBACK_PRELUDE,
      input: text,
      holdBack: text.length >> 1,
      handler: `(e) => ({ outcome: "deny", reason: e.toolInput.command })`,
    });
    assert.ok(r.fallback, "the async path ran");
    writes(r, hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "echo hi" }));
  });

  test("non-blocking stdin keeps the cap", { timeout: 20_000 }, async () => {
    const r = await run({ spec: CLAUDE_PRE, prelude: FALLBACK_PRELUDE, input: paddedEnvelope(CAP + 1), holdBack: 1000 });
    assert.ok(r.fallback, "the async path ran");
    failsWith(r, CLAUDE_PRE, TOO_BIG);
  });

  test("non-blocking stdin accepts exactly the cap", { timeout: 20_000 }, async () => {
    const r = await run({ spec: CLAUDE_PRE, prelude: FALLBACK_PRELUDE, input: paddedEnvelope(CAP), holdBack: 1000, handler: `(e, c) => ({ outcome: "deny", reason: "pad " + c.nativeInput.pad.length })` });
    assert.ok(r.fallback, "the async path ran");
    writes(r, hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: `pad ${padOf(CAP)}` }));
  });
});

describe("failures: stderr message, empty stdout, exit 1", PARALLEL, () => {
  const EXACT = "stdin must contain exactly one JSON value";
  const OBJECT = "stdin JSON value must be an object";
  const pre = CLAUDE_PRE;
  const { tool_name, ...withoutToolName } = claudePre;
  const deny = (extra = "") => `() => ({ outcome: "deny", reason: "r"${extra} })`;
  const cases = [
    // stdin and envelope
    ["empty stdin", { input: "" }, EXACT],
    ["whitespace-only stdin", { input: " \n\t " }, EXACT],
    ["bad JSON", { input: "{nope" }, EXACT],
    ["two JSON values", { input: "{} {}" }, EXACT],
    ["array", { input: "[]" }, OBJECT],
    ["null", { input: "null" }, OBJECT],
    ["string", { input: '"x"' }, OBJECT],
    ["wrong event name", { input: { ...claudePre, hook_event_name: "PostToolUse" } }, "native hook_event_name must equal PreToolUse"],
    ["missing event name", { input: { session_id: "s" } }, "native hook_event_name must equal PreToolUse"],
    ["missing required field", { input: withoutToolName }, "native PreToolUse tool_name is required"],
    ["wrongly typed field", { input: { ...claudePre, tool_name: 7 } }, "native PreToolUse tool_name must be string"],
    ["array where object is required", { input: { ...claudePre, tool_input: [] } }, "native PreToolUse tool_input must be object"],
    ["null where object is required", { input: { ...claudePre, tool_input: null } }, "native PreToolUse tool_input must be object"],
    ["enum violation", { input: { ...claudePre, permission_mode: "yolo" } }, `native PreToolUse permission_mode must be one of ${PERMISSION_MODES.join(", ")}`],
    ["string or null", { spec: CODEX_PRE, input: { ...codexPre, transcript_path: 1 } }, "native PreToolUse transcript_path must be string or null"],
    ["every field's problem at once", { input: { ...withoutToolName, tool_input: [] } }, "native PreToolUse tool_name is required; native PreToolUse tool_input must be object"],
    ["missing alternatives name native[0]", { spec: CURSOR.preToolUse, input: { hook_event_name: "preToolUse", tool_name: "x", tool_input: {} } }, "native preToolUse session_id is required"],
    ["wrongly typed alternative names its key", { spec: CURSOR.preToolUse, input: { hook_event_name: "preToolUse", conversation_id: 1, tool_name: "x", tool_input: {} } }, "native preToolUse conversation_id must be string"],
    // handler
    ["non-function handler", { handler: "42" }, "handler module must default-export a function"],
    // (What `agent-bundle validate` runs: the export is checked before any input is read.)
    ["non-function handler, on empty stdin", { handler: "42", input: "" }, "handler module must default-export a function"],
    ["class handler", { handler: "class Guard { static run() {} }" }, "handler module must default-export a function, not a class"],
    ["generator handler", { handler: "async function* () { yield {}; }" }, "handler module must default-export a function, not a generator function"],
    ["throwing handler", { handler: `() => { throw new Error("boom"); }` }, "handler failed: boom"],
    ["rejected promise", { handler: `async () => { throw new Error("async boom"); }` }, "handler failed: async boom"],
    ["thrown non-error", { handler: `() => { throw "plain"; }` }, "handler failed: plain"],
    ["a thrown object is printed, not [object Object]", { handler: `() => { throw { code: 42 }; }` }, "handler failed: { code: 42 }"],
    ["thrown null", { handler: `() => { throw null; }` }, "handler failed: null"],
    ["a module that throws while loading", { load: `() => { throw new Error("at load"); }` }, "handler module failed to load: at load"],
    // Where: the map's one mapping is at the start of a line (0-based) of the test wrapper;
    // `handler` is on line 3 and the loader on line 4.
    ["a throw where the bundle's map has the line", { handler: `() => { throw new Error("boom"); }`, end: sourceMap(";;;AAME") }, "handler failed: boom (at src/hooks/x.ts:7:3)"],
    ["a throw Node mapped already (--enable-source-maps)", { handler: `() => { throw new Error("boom"); }`, end: sourceMap(";;;AAME"), env: { NODE_OPTIONS: "--enable-source-maps" } }, "handler failed: boom (at src/hooks/x.ts:7:3)"],
    ["a file named in the message is no frame", { handler: `() => { throw new Error("see file:///etc/hostname:1:1"); }`, end: sourceMap(";;AAME") }, "handler failed: see file:///etc/hostname:1:1"],
    ["a throw where the bundle's map has no line", { handler: `() => { throw new Error("boom"); }`, end: sourceMap(";;AAME") }, "handler failed: boom"],
    ["a thrown non-error has no where", { handler: `() => { throw "plain"; }`, end: sourceMap(";;;AAME") }, "handler failed: plain"],
    ["a throw on a line the map gives no source (the tool's code)", { load: `() => { throw new Error("at load"); }`, end: sourceMap(";;;AAME;A;") }, "handler module failed to load: at load"],
    ["the same once Node mapped it (--enable-source-maps)", { load: `() => { throw new Error("at load"); }`, end: sourceMap(";;;AAME;A;"), env: { NODE_OPTIONS: "--enable-source-maps" } }, "handler module failed to load: at load"],
    ["a module throwing while loading where the map has the line", { load: `() => { throw new Error("at load"); }`, end: sourceMap(";;;;AAME") }, "handler module failed to load: at load (at src/hooks/x.ts:7:3)"],
    ["a promise that never settles", { handler: `() => new Promise(() => {})` }, "handler never settled: its promise is still pending and nothing keeps Node running"],
    ["process.exit in the handler", { handler: `() => { process.exit(2); }` }, "handler called process.exit(2) before it answered: return the outcome instead"],
    ["process.exit(0) in the handler", { handler: `() => { process.exit(0); }` }, "handler called process.exit(0) before it answered: return the outcome instead"],
    ["mutating the frozen event throws", { handler: `(e) => { try { e.toolInput.command = "x"; } catch { throw new Error("frozen"); } }` }, "handler failed: frozen"],
    // result shape
    ["string result", { handler: `() => "deny"` }, "handler must return void or a result object"],
    ["array result", { handler: `() => []` }, "handler must return void or a result object"],
    ["boolean result", { handler: `() => false` }, "handler must return void or a result object"],
    ["a class's object as result", { handler: `() => { class Deny { outcome = "deny"; reason = "r"; } return new Deny(); }` }, "handler must return void or a result object, not an object of class Deny"],
    ["an unnamed class's object as result", { handler: `() => new (class { outcome = "deny"; })()` }, "handler must return void or a result object, not an object of a class"],
    ["an object made on another as result", { handler: `() => Object.create({ outcome: "deny", reason: "r" })` }, "handler must return void or a result object, not an object with a prototype of its own"],
    ["a result whose getter throws", { handler: `() => ({ outcome: "deny", get reason() { throw new Error("not ready"); } })` }, "handler failed: not ready"],
    ["a result whose Proxy trap throws", { handler: `() => new Proxy({}, { ownKeys() { throw new Error("trap"); } })` }, "handler failed: trap"],
    ["an object whose constructor throws as result", { handler: `() => Object.create(Object.defineProperty({}, "constructor", { get() { throw new Error("boom"); } }))` }, "handler must return void or a result object, not an object of a class"],
    ["unsupported field", { handler: `() => ({ decision: "block" })` }, "handler result has unsupported field decision: use outcome, reason, updatedInput, additionalContext"],
    ["invalid outcome", { handler: `() => ({ outcome: "allow" })` }, 'handler result outcome is invalid: "allow", where "continue" or "deny" is expected'],
    ["outcome of another type", { handler: `() => ({ outcome: 1 })` }, 'handler result outcome is invalid: a number, where "continue" or "deny" is expected'],
    ["an object as outcome", { handler: `() => ({ outcome: {} })` }, 'handler result outcome is invalid: an object, where "continue" or "deny" is expected'],
    ["null as outcome", { handler: `() => ({ outcome: null })` }, 'handler result outcome is invalid: null, where "continue" or "deny" is expected'],
    ["reason not a string", { handler: `() => ({ outcome: "deny", reason: 1 })` }, "handler result reason must be a string"],
    ["additionalContext not a string", { handler: `() => ({ additionalContext: ["x"] })` }, "handler result additionalContext must be a string"],
    ["updatedInput not an object", { handler: `() => ({ updatedInput: "rm" })` }, "handler result updatedInput must be an object"],
    ["updatedInput array", { handler: `() => ({ updatedInput: [] })` }, "handler result updatedInput must be an object"],
    // event rules
    ["deny where the event cannot", { spec: CLAUDE_START, input: fixture("claude-code-2.1.332", "SessionStart"), handler: deny() }, RULES.sessionStart.violation],
    ["rewrite where the event cannot", { spec: CLAUDE_POST, input: fixture("claude-code-2.1.332", "PostToolUse"), handler: `() => ({ updatedInput: {} })` }, RULES.afterTool.violation],
    ["rewrite while denying", { handler: deny(", updatedInput: {}") }, RULES.beforeTool.violation],
    ["context where the event cannot", { spec: CLAUDE_STOP, input: fixture("claude-code-2.1.332", "Stop"), handler: `() => ({ additionalContext: "x" })` }, "stop takes no additionalContext"],
    ["reason without deny", { handler: `() => ({ reason: "r" })` }, 'reason is only valid with outcome "deny"'],
    ["updatedInput holding a bigint", { handler: `() => ({ updatedInput: { command: "ls", n: [1n] } })` }, "handler result updatedInput must hold JSON data only: updatedInput.n[0] is a bigint"],
    ["updatedInput holding a cycle", { handler: `() => { const input = { command: "ls" }; input.self = input; return { updatedInput: input }; }` }, "handler result updatedInput must hold JSON data only: updatedInput.self is a cycle back to an object that holds it"],
    ["updatedInput holding a class's object", { handler: `() => ({ updatedInput: { when: new Date(0) } })` }, "handler result updatedInput must hold JSON data only: updatedInput.when is an object of class Date"],
    ["updatedInput that is a class's object", { handler: `() => ({ updatedInput: new Map() })` }, "handler result updatedInput must hold JSON data only: updatedInput is an object of class Map"],
    ["updatedInput holding undefined in an array", { handler: `() => ({ updatedInput: { a: [1, undefined], b: undefined } })` }, "handler result updatedInput must hold JSON data only: updatedInput.a[1] is undefined"],
    ["updatedInput holding a hole", { handler: `() => ({ updatedInput: { a: [{ b: [1, , 2] }] } })` }, "handler result updatedInput must hold JSON data only: updatedInput.a[0].b[1] is a hole"],
    ["updatedInput holding NaN", { handler: `() => ({ updatedInput: { n: NaN } })` }, "handler result updatedInput must hold JSON data only: updatedInput.n is NaN"],
    ["reason with continue", { handler: `() => ({ outcome: "continue", reason: "r" })` }, 'reason is only valid with outcome "deny"'],
    ["deny without reason", { handler: `() => ({ outcome: "deny" })` }, "denied beforeTool hook requires a nonempty reason"],
    ["deny with blank reason", { handler: `() => ({ outcome: "deny", reason: " \\n " })` }, "denied beforeTool hook requires a nonempty reason"],
    ["stop deny without reason", { spec: CLAUDE_STOP, input: fixture("claude-code-2.1.332", "Stop"), handler: `() => ({ outcome: "deny", reason: "" })` }, "denied stop hook requires a nonempty reason"],
    // host capability
    ["codex PreToolUse context", { spec: CODEX_PRE, input: codexPre, handler: `() => ({ additionalContext: "x" })` }, "Codex PreToolUse does not support additionalContext"],
    ["codex SubagentStop context", { spec: CODEX_SUBAGENT_STOP, input: { hook_event_name: "SubagentStop", session_id: "s", transcript_path: null, cwd: "/", stop_hook_active: false }, handler: `() => ({ additionalContext: "x" })` }, "Codex SubagentStop does not support additionalContext"],
    ["host without deny", { spec: { ...CLAUDE_PRE, output: { ...CLAUDE_PRE.output, deny: null } }, handler: deny() }, "Claude Code PreToolUse does not support outcome deny"],
    ["host without rewrite", { spec: { ...CURSOR.preToolUse, output: { ...CURSOR.preToolUse.output, rewrite: null } }, input: { hook_event_name: "preToolUse", session_id: "s", tool_name: "x", tool_input: {} }, handler: `() => ({ updatedInput: {} })` }, "Cursor preToolUse does not support updatedInput"],
    ["cursor preToolUse context", { spec: CURSOR.preToolUse, input: { hook_event_name: "preToolUse", session_id: "s", tool_name: "x", tool_input: {} }, handler: `() => ({ additionalContext: "x" })` }, "Cursor preToolUse does not support additionalContext"],
  ];
  for (const [name, options, message] of cases) {
    test(name, async () => {
      const spec = options.spec ?? pre;
      failsWith(await run({ input: claudePre, ...options, spec }), spec, message);
    });
  }
});

describe("simulation mode", PARALLEL, () => {
  const SIM = ["--agent-bundle-simulation=canonical"];
  const canonical = {
    sessionId: "s1",
    transcriptPath: "/t.jsonl",
    cwd: "/p",
    permissionMode: "default",
    toolName: "Bash",
    toolInput: { command: "rm -rf /" },
    toolUseId: "u1",
  };

  function simulated(r) {
    succeeds(r);
    assert.ok(r.stdout.endsWith("\n") && r.stdout.indexOf("\n") === r.stdout.length - 1, "one JSON line");
    return JSON.parse(r.stdout);
  }

  test("claude round trip: canonical in, native input/output and result out", async () => {
    const handler = `(e, c) => ({ updatedInput: { command: e.toolInput.command.replace("rm", "echo") }, additionalContext: c.nativeInput.session_id })`;
    const out = simulated(await run({ spec: CLAUDE_PRE, input: canonical, args: SIM, handler }));
    assert.deepEqual(out, {
      nativeInput: {
        session_id: "s1",
        transcript_path: "/t.jsonl",
        cwd: "/p",
        permission_mode: "default",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
        tool_use_id: "u1",
        hook_event_name: "PreToolUse",
      },
      nativeOutput: hookSpecific("PreToolUse", { additionalContext: "s1", updatedInput: { command: "echo -rf /" } }),
      result: { outcome: "continue", updatedInput: { command: "echo -rf /" }, additionalContext: "s1" },
    });
  });

  test("continue gives nativeOutput null", async () => {
    const out = simulated(await run({ spec: CLAUDE_PRE, input: canonical, args: SIM }));
    assert.equal(out.nativeOutput, null);
    assert.deepEqual(out.result, { outcome: "continue" });
  });

  test("deny result keeps its reason", async () => {
    const out = simulated(await run({ spec: CODEX_PRE, input: { ...canonical, transcriptPath: null }, args: SIM, handler: `() => ({ outcome: "deny", reason: "no" })` }));
    assert.equal(out.nativeInput.transcript_path, null);
    assert.deepEqual(out.nativeOutput, hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no" }));
    assert.deepEqual(out.result, { outcome: "deny", reason: "no" });
  });

  test("decoders are reversed: json and positive-count", async () => {
    const post = simulated(
      await run({ spec: CURSOR.postToolUse, input: { sessionId: "s", toolName: "Shell", toolResponse: { exitCode: 2 } }, args: SIM, handler: `(e) => ({ additionalContext: "exit " + e.toolResponse.exitCode })` }),
    );
    assert.deepEqual(post.nativeInput, { session_id: "s", tool_name: "Shell", tool_output: '{"exitCode":2}', hook_event_name: "postToolUse" });
    assert.deepEqual(post.nativeOutput, { additional_context: "exit 2" });
    const text = simulated(await run({ spec: CURSOR.postToolUse, input: { sessionId: "s", toolName: "Shell", toolResponse: "plain" }, args: SIM }));
    assert.equal(text.nativeInput.tool_output, "plain");
    const numeric = simulated(await run({ spec: CURSOR.postToolUse, input: { sessionId: "s", toolName: "Shell", toolResponse: "42" }, args: SIM, handler: `(e) => ({ additionalContext: typeof e.toolResponse })` }));
    assert.equal(numeric.nativeInput.tool_output, '"42"', "a string that is JSON text stays a string");
    assert.deepEqual(numeric.nativeOutput, { additional_context: "string" });
    const stop = simulated(
      await run({ spec: CURSOR.stop, input: { sessionId: "s", stopHookActive: true }, args: SIM, handler: `(e) => e.stopHookActive ? undefined : { outcome: "deny", reason: "again" }` }),
    );
    assert.deepEqual(stop.nativeInput, { session_id: "s", loop_count: 1, hook_event_name: "stop" });
    assert.equal(stop.nativeOutput, null);
    const yes = await run({ spec: CURSOR.stop, input: { sessionId: "s", stopHookActive: "yes" }, args: SIM });
    failsWith(yes, CURSOR.stop, "simulation input stopHookActive must be boolean (native loop_count)");
    const again = simulated(
      await run({ spec: CURSOR.stop, input: { sessionId: "s", stopHookActive: false }, args: SIM, handler: `(e) => e.stopHookActive ? undefined : { outcome: "deny", reason: "again" }` }),
    );
    assert.equal(again.nativeInput.loop_count, 0);
    assert.deepEqual(again.nativeOutput, { followup_message: "again" });
  });

  test("unknown canonical field, and a host's own field, which is a hint to pass the host's input", async () => {
    const fields = CLAUDE_PRE.fields.map((f) => f.canonical).join(", ");
    const r = await run({ spec: CLAUDE_PRE, input: { ...canonical, toolNme: "Bash" }, args: SIM });
    failsWith(r, CLAUDE_PRE, `simulation input has unknown field toolNme for PreToolUse (its canonical fields: ${fields})`);
    const native = await run({ spec: CLAUDE_PRE, input: { ...canonical, tool_name: "Bash" }, args: SIM });
    failsWith(native, CLAUDE_PRE, `simulation input has unknown field tool_name for PreToolUse (its canonical fields: ${fields}); this is the host's own input: pass it with --native`);
    // And the other way round: canonical input given as the host's own.
    const asNative = await run({ spec: CLAUDE_PRE, input: canonical, args: ["--agent-bundle-simulation=native"] });
    failsWith(asNative, CLAUDE_PRE, "simulation input has no hook_event_name and the canonical field sessionId: this is canonical input: leave out --native");
  });

  test("simulated input is validated like a native envelope, in canonical names", async () => {
    const { toolName, ...rest } = canonical;
    failsWith(await run({ spec: CLAUDE_PRE, input: rest, args: SIM }), CLAUDE_PRE, "simulation input toolName is required for PreToolUse (native tool_name)");
    failsWith(await run({ spec: CLAUDE_PRE, input: { ...canonical, toolName: 1 }, args: SIM }), CLAUDE_PRE, "simulation input toolName must be string (native tool_name)");
    const both = "simulation input toolName is required for PreToolUse (native tool_name); simulation input toolInput must be object (native tool_input)";
    failsWith(await run({ spec: CLAUDE_PRE, input: { ...rest, toolInput: 1 }, args: SIM }), CLAUDE_PRE, both);
  });

  // Hosts pass their environment on to hooks: a variable a developer left exported after
  // testing must not turn a host's run into a simulation (whose answer the host ignores).
  test("only the argument simulates: no variable does, and a host's run answers natively", async () => {
    const deny = `() => ({ outcome: "deny", reason: "no" })`;
    const denied = hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no" });
    for (const value of ["1", "native", "canonical"]) {
      writes(await run({ spec: CLAUDE_PRE, input: claudePre, env: { AGENT_BUNDLE_HOOK_SIMULATION: value }, handler: deny }), denied);
    }
    writes(await run({ spec: CLAUDE_PRE, input: claudePre, args: ["--agent-bundle-simulation=other"], handler: deny }), denied);
    const native = simulated(await run({ spec: CLAUDE_PRE, input: claudePre, args: ["--agent-bundle-simulation=native"], handler: deny }));
    assert.deepEqual(native.nativeOutput, denied);
  });

  test("simulated failures write nothing to stdout", async () => {
    const r = await run({ spec: CLAUDE_PRE, input: canonical, args: SIM, handler: `() => ({ outcome: "deny" })` });
    failsWith(r, CLAUDE_PRE, "denied beforeTool hook requires a nonempty reason");
    failsWith(await run({ spec: CLAUDE_PRE, input: "[]", args: SIM }), CLAUDE_PRE, "stdin JSON value must be an object");
  });
});
