// Tests for the event-route runtime: jsx.mjs, agent.mjs and route.mjs. As in
// hook.test.mjs, the contract is stdin, stdout, stderr and the exit code, so
// each case runs a real child process: a generated wrapper that imports the
// four runtime modules, defines a route component with `jsx(...)` calls (Node
// cannot parse JSX) and awaits
// runHook(SPEC, () => (e, c) => renderRoute(Route, e, c, ROUTE)), as an emitted route
// wrapper does.
//
// Run: node --test src/runtime/

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { Agent } from "./agent.mjs";
import { childEnv, failsWith, succeeds, writes, writesNothing } from "./child-outcome.mjs";
import { Fragment, createElement, jsx, jsxs } from "./jsx.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const url = (name) => JSON.stringify(pathToFileURL(join(HERE, name)).href);
const FIXTURES = join(HERE, "..", "..", "tests", "fixtures", "host-payloads", "claude-code-2.1.332");
const PARALLEL = { concurrency: 8 };

const workDir = mkdtempSync(join(tmpdir(), "agent-bundle-route-test-"));
after(() => rmSync(workDir, { recursive: true, force: true }));

let wrapperCount = 0;

/**
 * Runs one route process. `route` is JS source that defines `Route` (it may
 * use jsx, jsxs, Fragment, Agent and a `report(value)` helper that writes JSON
 * to stderr); `input` is an object sent as JSON, or the JSON text to send.
 */
function run({ spec, route, input, family = FAMILY[spec.nativeEvent], timeoutMs = 5000, env = {}, args = [], prelude = "" }) {
  const file = join(workDir, `route-${++wrapperCount}.mjs`);
  writeFileSync(
    file,
    `import { runHook } from ${url("hook.mjs")};\n` +
      `import { renderRoute } from ${url("route.mjs")};\n` +
      `import { jsx, jsxs, Fragment } from ${url("jsx.mjs")};\n` +
      `import { Agent } from ${url("agent.mjs")};\n${prelude}\n` +
      `const report = (value) => process.stderr.write(JSON.stringify(value) + "\\n");\n${route}\n` +
      `const SPEC = ${JSON.stringify(spec)};\nconst ROUTE = ${JSON.stringify({ family, timeoutMs })};\n` +
      `await runHook(SPEC, () => (e, c) => renderRoute(Route, e, c, ROUTE));\n`,
  );
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [file, ...args], { env: { ...childEnv, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (data) => (stdout += data));
    child.stderr.setEncoding("utf8").on("data", (data) => (stderr += data));
    child.stdin.on("error", () => {});
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    child.stdin.end(typeof input === "string" ? input : JSON.stringify(input));
  });
}

// A failure inside the render reaches stderr through runHook's handler wrapper.
const renderFails = (r, spec, message) => failsWith(r, spec, `handler failed: ${message}`);

// The objects written by `report`, without the runtime's own error line.
function reports(r) {
  return r.stderr.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
}

// ---------------------------------------------------------------- specs

const field = (native, canonical, types, required = true, extra = {}) => ({ native: [native], canonical, types, required, ...extra });
const common = [
  field("session_id", "sessionId", ["string"]),
  field("transcript_path", "transcriptPath", ["string"]),
  field("cwd", "cwd", ["string"]),
  field("permission_mode", "permissionMode", ["string"], false),
];
const toolFields = [
  field("tool_name", "toolName", ["string"]),
  field("tool_input", "toolInput", ["object"]),
  field("tool_use_id", "toolUseId", ["string"]),
];
const hookSpecific = (nativeEvent, body) => ({ hookSpecificOutput: { hookEventName: nativeEvent, ...body } });
const NONE = { deny: null, context: null, rewrite: null };

const FAMILY = { PreToolUse: "tool/before", Stop: "stop", SessionStart: "session/start", SessionEnd: "session/end" };

function claudeSpec(nativeEvent, event, fields, rules, output, host = "claude") {
  return {
    hook: `${event}-route-${host}`,
    host,
    hostName: host === "claude" ? "Claude Code" : "Codex",
    hostContractRevision: host === "claude" ? "claude-code-2.1.332" : "codex-0.171.0",
    event,
    nativeEvent,
    eventKey: "hook_event_name",
    fields: [...common, ...fields],
    rules,
    output: { ...NONE, ...output },
  };
}

const preOutput = {
  deny: hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "$reason" }),
  context: hookSpecific("PreToolUse", { additionalContext: "$context" }),
  rewrite: hookSpecific("PreToolUse", { updatedInput: "$updatedInput" }),
};
const preRules = { deny: true, rewrite: true, context: true, violation: "tool/before cannot replace input while denying" };
const PRE = claudeSpec("PreToolUse", "beforeTool", toolFields, preRules, preOutput);
const CODEX_PRE = claudeSpec("PreToolUse", "beforeTool", toolFields, preRules, preOutput, "codex");
const STOP = claudeSpec(
  "Stop",
  "stop",
  [field("stop_hook_active", "stopHookActive", ["boolean"]), field("last_assistant_message", "lastAssistantMessage", ["string"], false)],
  { deny: true, rewrite: false, context: false, violation: "stop cannot replace input or add context" },
  { deny: { decision: "block", reason: "$reason" } },
);
const START = claudeSpec(
  "SessionStart",
  "sessionStart",
  [field("source", "source", ["string"], true, { enum: ["startup", "resume", "clear", "compact"] })],
  { deny: false, rewrite: false, context: true, violation: "session/start cannot deny or replace input" },
  { context: hookSpecific("SessionStart", { additionalContext: "$context" }) },
);
const END = claudeSpec(
  "SessionEnd",
  "sessionEnd",
  [field("reason", "reason", ["string"])],
  { deny: false, rewrite: false, context: false, violation: "session/end is observation-only" },
  {},
);

const payload = (name) => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")).stdin;
const preInput = payload("PreToolUse");
const stopInput = payload("Stop");
const startInput = payload("SessionStart");
const endInput = { session_id: "s1", transcript_path: "/t.jsonl", cwd: "/p", hook_event_name: "SessionEnd", reason: "clear" };

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

// ---------------------------------------------------------------- tests

describe("element modules", () => {
  test("jsx makes frozen plain elements; jsxs is jsx; key is ignored", () => {
    const props = { a: 1, children: ["x", 2] };
    const element = jsx("div", props, "k");
    assert.equal(element.$$typeof, Symbol.for("agent-bundle.element"));
    assert.deepEqual(Object.keys(element), ["$$typeof", "type", "props"]);
    assert.equal(element.type, "div");
    assert.deepEqual(element.props, props);
    assert.notEqual(element.props, props, "props are copied");
    assert.ok(Object.isFrozen(element) && Object.isFrozen(element.props));
    assert.equal(jsxs, jsx);
    assert.deepEqual(jsx(Fragment, null).props, {});
    assert.equal(typeof Fragment, "symbol");
  });

  test("createElement (a key after a spread) makes the element jsx makes, without the key", () => {
    const props = { a: 1, key: "k" };
    assert.deepEqual(createElement("div", props), jsx("div", { a: 1 }));
    assert.deepEqual(createElement("div", props, "x"), jsx("div", { a: 1, children: "x" }));
    assert.deepEqual(createElement("div", null, "x", 2), jsx("div", { children: ["x", 2] }));
  });

  test("Agent is frozen; its markers are functions that refuse to be called", () => {
    assert.ok(Object.isFrozen(Agent));
    assert.deepEqual(Object.keys(Agent), ["Result", "Context"]);
    assert.throws(() => Agent.Result({}), /Agent\.Result is rendered by agent-bundle/);
    assert.throws(() => Agent.Context({}), /Agent\.Context is rendered by agent-bundle/);
  });
});

describe("projection", PARALLEL, () => {
  test("tool/before deny on a Claude-like host", async () => {
    const route = `async function Route({ canonical }) {
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "no " + canonical.payload.toolName } });
    }`;
    writes(await run({ spec: PRE, route, input: preInput }), hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no Bash" }));
  });

  test("a tool family's canonical names its tool canonically", async () => {
    const route = `async function Route({ canonical }) {
      return jsx(Agent.Result, { value: { outcome: "deny", reason: String(canonical.tool) } });
    }`;
    const spec = { ...PRE, tools: { shell: "^Bash$", "file.write": "^Write$" } };
    writes(await run({ spec, route, input: preInput }), hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "shell" }));
  });

  test("tool/before deny with context inside the Result", async () => {
    const route = `async function Route() {
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "no" }, children: jsx(Agent.Context, { children: "see policy" }) });
    }`;
    writes(
      await run({ spec: PRE, route, input: preInput }),
      hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no", additionalContext: "see policy" }),
    );
  });

  test("a tool input nested deeper than JSON.stringify reaches is judged, its key made", async () => {
    const route = `async function Route({ canonical }) {
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "deep " + canonical.idempotencyKey.length } });
    }`;
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const input = JSON.stringify({ ...preInput, tool_input: { ...preInput.tool_input, deep: 0 } }).replace('"deep":0', `"deep":${deep}`);
    writes(await run({ spec: PRE, route, input }), hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "deep 64" }));
  });

  test("tool/before rewrite", async () => {
    const route = `function Route({ canonical }) {
      return jsx(Agent.Result, { value: { outcome: "continue", updatedInput: { ...canonical.payload.toolInput, command: "echo safe" } } });
    }`;
    writes(
      await run({ spec: PRE, route, input: preInput }),
      hookSpecific("PreToolUse", { updatedInput: { command: "echo safe", description: "Print hi" } }),
    );
  });

  test("a route that renders nothing, or an empty Result, writes nothing", async () => {
    for (const body of ["null", "undefined", "false", "[]", "jsx(Fragment, {})", "jsx(Agent.Result, {})", `jsx(Agent.Result, { value: { outcome: "continue" } })`, `jsx(Agent.Context, { children: "  " })`]) {
      writesNothing(await run({ spec: PRE, route: `async function Route() { return ${body}; }`, input: preInput }));
    }
  });

  test("stop blocks", async () => {
    const route = `async function Route({ canonical }) {
      if (canonical.payload.stopHookActive) return null;
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "tests are failing" } });
    }`;
    writes(await run({ spec: STOP, route, input: stopInput }), { decision: "block", reason: "tests are failing" });
    writesNothing(await run({ spec: STOP, route, input: { ...stopInput, stop_hook_active: true } }));
  });

  test("session/start adds context; several Contexts are trimmed and joined by newlines", async () => {
    const route = `async function Route({ canonical }) {
      return jsxs(Fragment, { children: [
        jsx(Agent.Context, { children: ["  Started from ", canonical.payload.source, ".\\n"] }),
        jsx(Agent.Context, { children: [] }),
        jsx(Agent.Context, { children: ["Build ", 42, " ", 7n, false, null, undefined, true] }),
      ] });
    }`;
    writes(await run({ spec: START, route, input: startInput }), hookSpecific("SessionStart", { additionalContext: "Started from startup.\nBuild 42 7" }));
  });
});

describe("rendering", PARALLEL, () => {
  test("nested async and sync components, fragments, arrays and promises, in document order", async () => {
    const route = `
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      async function Slow({ ms, children }) { await sleep(ms); return children; }
      function Upper({ text }) { return text.toUpperCase(); }
      async function Line({ n }) { await null; return jsx(Agent.Context, { children: jsxs(Fragment, { children: ["line ", n] }) }); }
      function List() { return [1, 2].map((n) => jsx(Line, { n })); }
      async function Route() {
        return jsx(Agent.Result, { children: jsxs(Fragment, { children: [
          jsx(Slow, { ms: 60, children: jsx(Agent.Context, { children: "first" }) }),
          jsx(Agent.Context, { children: [jsx(Upper, { text: "second" }), " ", Promise.resolve("and more")] }),
          jsx(List, {}),
          jsx(Slow, { ms: 0, children: jsx(Fragment, { children: jsx(Slow, { ms: 20, children: jsx(Line, { n: 3 }) }) }) }),
        ] }) });
      }`;
    writes(await run({ spec: START, route, input: startInput }), hookSpecific("SessionStart", { additionalContext: "first\nSECOND and more\nline 1\nline 2\nline 3" }));
  });

  test("siblings render concurrently", async () => {
    const route = `
      async function Wait() { await new Promise((resolve) => setTimeout(resolve, 300)); return null; }
      async function Route() { return [jsx(Wait, {}), jsx(Wait, {}), jsx(Wait, {}), jsx(Wait, {})]; }`;
    const r = await run({ spec: PRE, route, input: preInput, timeoutMs: 1000 });
    writesNothing(r); // four 300 ms waits in sequence would exceed the 1000 ms budget
  });

  test("a successful route does not wait for its timeout timer", async () => {
    const r = await run({ spec: PRE, route: "async function Route() { return null; }", input: preInput, timeoutMs: 60_000 });
    writesNothing(r);
    assert.ok(r.ms < 20_000, `exited after ${r.ms} ms`);
  });

  test("console.log inside a route goes to stderr", async () => {
    const route = `async function Route() { console.log("debug"); return jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } }); }`;
    const r = await run({ spec: PRE, route, input: preInput });
    assert.equal(r.stderr, "debug\n");
    assert.equal(r.code, 0);
    assert.equal(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision, "deny");
  });
});

describe("canonical props", PARALLEL, () => {
  const REPORTER = `async function Route(props) {
    const { canonical, native, signal } = props;
    report({
      keys: Object.keys(props),
      frozen: [props, canonical, canonical.provenance, canonical.payload, native].every(Object.isFrozen),
      canonical,
      native,
      signal: { isSignal: signal instanceof AbortSignal, aborted: signal.aborted },
    });
    return null;
  }`;

  async function observe(spec, input) {
    const before = Date.now();
    const r = await run({ spec, route: REPORTER, input });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    const [seen] = reports(r);
    const observedAt = Date.parse(seen.canonical.observedAt);
    assert.ok(observedAt >= before - 1000 && observedAt <= Date.now(), "observedAt is now");
    return seen;
  }

  test("props are { canonical, native, signal }, frozen", async () => {
    const seen = await observe(PRE, preInput);
    assert.deepEqual(seen.keys, ["canonical", "native", "signal"]);
    assert.equal(seen.frozen, true);
    assert.deepEqual(seen.signal, { isSignal: true, aborted: false });
    assert.deepEqual(seen.native, preInput, "native is the host envelope");
    const { idempotencyKey, observedAt, ...rest } = seen.canonical;
    assert.match(observedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(idempotencyKey, /^[0-9a-f]{64}$/);
    assert.deepEqual(Object.keys(seen.canonical), ["event", "idempotencyKey", "observedAt", "sequence", "provenance", "payload"]);
    assert.deepEqual(rest, {
      event: "tool/before",
      sequence: 1,
      provenance: { host: "claude", hostContractRevision: "claude-code-2.1.332", nativeEvent: "PreToolUse", source: "native" },
      // the decoded canonical event: declared fields only, camelCase
      payload: {
        sessionId: preInput.session_id,
        transcriptPath: preInput.transcript_path,
        cwd: preInput.cwd,
        permissionMode: "default",
        toolName: "Bash",
        toolInput: preInput.tool_input,
        toolUseId: "toolu_mock0001",
      },
    });
  });

  test("idempotencyKey = sha256 of { event, native, target }: stable, and distinct per host and per payload", async () => {
    const [a, b, codex, other] = await Promise.all([
      observe(PRE, preInput),
      observe(PRE, preInput),
      observe(CODEX_PRE, preInput),
      observe(PRE, { ...preInput, tool_use_id: "toolu_other" }),
    ]);
    const key = a.canonical.idempotencyKey;
    assert.equal(key, sha256(JSON.stringify({ event: "tool/before", native: preInput, target: "claude" })));
    assert.equal(b.canonical.idempotencyKey, key, "equal inputs, equal keys");
    assert.notEqual(codex.canonical.idempotencyKey, key, "another host, another key");
    assert.equal(codex.canonical.provenance.host, "codex");
    assert.equal(codex.canonical.provenance.hostContractRevision, "codex-0.171.0");
    assert.notEqual(other.canonical.idempotencyKey, key, "another payload, another key");
  });

  test("node:crypto is loaded only when a route reads idempotencyKey", async () => {
    const route = `async function Route({ canonical }) {
      const loaded = () => process.moduleLoadList.includes("NativeModule crypto");
      const before = loaded();
      const key = canonical.idempotencyKey;
      report({ before, after: loaded(), same: key === canonical.idempotencyKey });
      return null;
    }`;
    const r = await run({ spec: PRE, route, input: preInput });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(reports(r), [{ before: false, after: true, same: true }]);
  });

  test("without process.getBuiltinModule (Node < 20.16) the key is the same", async () => {
    const route = `async function Route({ canonical }) { report({ key: canonical.idempotencyKey }); return null; }`;
    const r = await run({ spec: PRE, route, input: preInput, prelude: "delete process.getBuiltinModule;" });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(reports(r), [{ key: sha256(JSON.stringify({ event: "tool/before", native: preInput, target: "claude" })) }]);
  });

  test("a spec without hostContractRevision leaves it unset", async () => {
    const { hostContractRevision, ...spec } = START;
    const seen = await observe(spec, startInput);
    assert.deepEqual(seen.canonical.provenance, { host: "claude", nativeEvent: "SessionStart", source: "native" });
    assert.equal(seen.canonical.event, "session/start");
  });
});

describe("observation-only family", PARALLEL, () => {
  test("rendering nothing succeeds silently", async () => {
    writesNothing(await run({ spec: END, route: "async function Route() { return null; }", input: endInput }));
    writesNothing(await run({ spec: END, route: "async function Route() { return jsx(Agent.Result, {}); }", input: endInput }));
  });

  test("a Context fails", async () => {
    const route = `async function Route() { return jsx(Agent.Context, { children: "bye" }); }`;
    failsWith(await run({ spec: END, route, input: endInput }), END, "session/end is observation-only");
  });

  test("a deny fails", async () => {
    const route = `async function Route() { return jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } }); }`;
    failsWith(await run({ spec: END, route, input: endInput }), END, "session/end is observation-only");
  });
});

describe("errors", PARALLEL, () => {
  test("timeout: the signal aborts, the route fails, and the process ends promptly", async () => {
    const route = `async function Route({ signal }) {
      signal.addEventListener("abort", () => report({ aborted: signal.aborted, reason: signal.reason.name }));
      await new Promise((resolve) => setTimeout(resolve, 30_000)); // ignores the signal
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "too late" } });
    }`;
    const r = await run({ spec: PRE, route, input: preInput, timeoutMs: 50 });
    assert.equal(r.stdout, "");
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `{"aborted":true,"reason":"TimeoutError"}\nagent-bundle hook ${PRE.hook}: handler failed: route tool/before timed out after 50 ms\n`,
    );
    assert.ok(r.ms < 15_000, `exited after ${r.ms} ms`);
  });

  test("timeout of a route whose synchronous work holds the event loop past it: late all the same", async () => {
    const route = `function Route({ signal }) {
      const until = Date.now() + 200;
      while (Date.now() < until);
      return jsx(Agent.Result, { value: { outcome: "deny", reason: signal.aborted ? "aborted" : "too late" } });
    }`;
    const r = await run({ spec: PRE, route, input: preInput, timeoutMs: 50 });
    renderFails(r, PRE, "route tool/before timed out after 50 ms");
  });

  test("timeout of a route that honours the signal", async () => {
    const route = `async function Route({ signal }) {
      await new Promise((resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    }`;
    const r = await run({ spec: STOP, route, input: stopInput, timeoutMs: 50 });
    renderFails(r, STOP, "route stop timed out after 50 ms");
  });

  test("text outside Agent.Context", async () => {
    const route = `async function Route() { return jsx(Agent.Result, { children: ["ok ", jsx(Agent.Context, { children: "x" })] }); }`;
    renderFails(await run({ spec: PRE, route, input: preInput }), PRE, 'route rendered text outside Agent.Context: "ok "');
    const number = `function Route() { return 3; }`;
    renderFails(await run({ spec: PRE, route: number, input: preInput }), PRE, 'route rendered text outside Agent.Context: "3"');
    const long = `function Route() { return "x".repeat(100); }`;
    renderFails(await run({ spec: PRE, route: long, input: preInput }), PRE, `route rendered text outside Agent.Context: "${"x".repeat(57)}..."`);
    // The space JSX keeps between two tags on one line (`<Agent.Result /> <Agent.Context>`) is no text.
    const spaced = `function Route() { return jsxs(Fragment, { children: [jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } }), " ", jsx(Agent.Context, { children: "why" })] }); }`;
    writes(await run({ spec: PRE, route: spaced, input: preInput }), hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no", additionalContext: "why" }));
  });

  test("two Results", async () => {
    const route = `
      function Deny() { return jsx(Agent.Result, { value: { outcome: "deny", reason: "a" } }); }
      async function Route() { return jsxs(Fragment, { children: [jsx(Deny, {}), jsx(Agent.Result, { children: jsx(Agent.Result, {}) })] }); }`;
    renderFails(await run({ spec: PRE, route, input: preInput }), PRE, "a route may render at most one Agent.Result");
  });

  test("unknown element types and values", async () => {
    const cases = [
      [`jsx("div", { children: "hi" })`, "route rendered unsupported element type <div>: use function components, fragments (<>…</>), Agent.Result or Agent.Context"],
      [`jsx(Symbol("x"), {})`, "route rendered unsupported element type Symbol(x): use function components, fragments (<>…</>), Agent.Result or Agent.Context"],
      [`jsx(Agent.Contxt, {})`, "route rendered unsupported element type undefined (a tag naming nothing): use function components, fragments (<>…</>), Agent.Result or Agent.Context"],
      [`{ type: "div" }`, "route rendered an object: a route renders elements (<Agent.Result value={…} />, <Agent.Context>text</Agent.Context>) or null"],
      [`() => null`, "route rendered a function: a route renders elements (<Agent.Result value={…} />, <Agent.Context>text</Agent.Context>) or null"],
    ];
    for (const [value, message] of cases) {
      renderFails(await run({ spec: PRE, route: `async function Route() { return ${value}; }`, input: preInput }), PRE, message);
    }
  });

  test("bad Agent.Result and Agent.Context usage", async () => {
    const cases = [
      [`jsx(Agent.Result, { value: { outcome: "deny", reason: "no", extra: 1 } })`, "Agent.Result value has unsupported field extra: use outcome, reason and updatedInput"],
      [`jsx(Agent.Result, { value: { additionalContext: "x" } })`, "Agent.Result value has unsupported field additionalContext: use outcome, reason and updatedInput"],
      [`jsx(Agent.Result, { value: "deny" })`, "Agent.Result value must be an object { outcome?, reason?, updatedInput? }"],
      [`jsx(Agent.Result, { value: [] })`, "Agent.Result value must be an object { outcome?, reason?, updatedInput? }"],
      [`jsx(Agent.Result, { value: null })`, "Agent.Result value must be an object { outcome?, reason?, updatedInput? }"],
      [`jsx(Agent.Result, { value: new (class Deny { outcome = "deny"; reason = "r"; })() })`, "Agent.Result value must be an object { outcome?, reason?, updatedInput? }, not an object of class Deny"],
      [`jsx(Agent.Result, { outcome: "deny" })`, "Agent.Result takes only value and children, not outcome"],
      [`jsx(Agent.Context, { value: 1 })`, "Agent.Context takes only children, not value"],
      [`jsx(Agent.Context, { children: jsx(Agent.Context, { children: "x" }) })`, "Agent.Context cannot contain Agent.Context"],
      [`jsx(Agent.Context, { children: jsx(Agent.Result, {}) })`, "Agent.Context cannot contain Agent.Result"],
    ];
    for (const [value, message] of cases) {
      renderFails(await run({ spec: PRE, route: `async function Route() { return ${value}; }`, input: preInput }), PRE, message);
    }
  });

  test("runHook's checks apply to the rendered result", async () => {
    const deny = `async function Route() { return jsx(Agent.Result, { value: { outcome: "deny" } }); }`;
    failsWith(await run({ spec: PRE, route: deny, input: preInput }), PRE, "denied beforeTool hook requires a nonempty reason");
    const bad = `async function Route() { return jsx(Agent.Result, { value: { outcome: "block" } }); }`;
    failsWith(await run({ spec: PRE, route: bad, input: preInput }), PRE, 'handler result outcome is invalid: "block", where "continue" or "deny" is expected');
    const context = `async function Route() { return jsx(Agent.Context, { children: "x" }); }`;
    failsWith(await run({ spec: STOP, route: context, input: stopInput }), STOP, "stop takes no additionalContext");
  });

  test("a deny is answered without context its event takes none of, and that is said", async () => {
    const route = `async function Route() { return [jsx(Agent.Context, { children: "x" }), jsx(Agent.Result, { value: { outcome: "deny", reason: "tests first" } })]; }`;
    const r = await run({ spec: STOP, route, input: stopInput });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { decision: "block", reason: "tests first" });
    assert.equal(r.stderr, `agent-bundle hook ${STOP.hook}: stop takes no additionalContext: the deny is answered without it\n`);
  });

  test("a throwing component, and a module without a component", async () => {
    const route = `function Boom() { throw new Error("boom"); }\nasync function Route() { return [jsx(Boom, {})]; }`;
    renderFails(await run({ spec: PRE, route, input: preInput }), PRE, "boom");
    const sync = `function Route() { throw new Error("sync boom"); }`;
    renderFails(await run({ spec: PRE, route: sync, input: preInput }), PRE, "sync boom");
    renderFails(await run({ spec: PRE, route: "const Route = undefined;", input: preInput }), PRE, "route module must default-export a function component");
  });

  test("invalid envelopes fail before the route renders", async () => {
    const route = `async function Route() { report("rendered"); return null; }`;
    const { tool_name, ...rest } = preInput;
    failsWith(await run({ spec: PRE, route, input: rest }), PRE, "native PreToolUse tool_name is required");
  });
});

describe("simulation mode", PARALLEL, () => {
  const SIM = ["--agent-bundle-simulation=canonical"];

  test("canonical input in; native input, output and result out", async () => {
    const route = `async function Route({ canonical, native }) {
      report({ key: canonical.idempotencyKey, native, payload: canonical.payload });
      return jsx(Agent.Result, { value: { outcome: "deny", reason: "no " + canonical.payload.toolInput.command },
        children: jsx(Agent.Context, { children: canonical.provenance.nativeEvent }) });
    }`;
    const input = { sessionId: "s1", transcriptPath: "/t.jsonl", cwd: "/p", toolName: "Bash", toolInput: { command: "rm -rf /" }, toolUseId: "u1" };
    const r = await run({ spec: PRE, route, input, args: SIM });
    assert.equal(r.code, 0, r.stderr);
    const nativeInput = { session_id: "s1", transcript_path: "/t.jsonl", cwd: "/p", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "u1", hook_event_name: "PreToolUse" };
    assert.deepEqual(reports(r), [{ key: sha256(JSON.stringify({ event: "tool/before", native: nativeInput, target: "claude" })), native: nativeInput, payload: input }]);
    assert.ok(r.stdout.endsWith("\n") && r.stdout.indexOf("\n") === r.stdout.length - 1, "one JSON line");
    assert.deepEqual(JSON.parse(r.stdout), {
      nativeInput,
      nativeOutput: hookSpecific("PreToolUse", { permissionDecision: "deny", permissionDecisionReason: "no rm -rf /", additionalContext: "PreToolUse" }),
      result: { outcome: "deny", reason: "no rm -rf /", additionalContext: "PreToolUse" },
    });
  });

  test("an observation-only route simulates to a null output", async () => {
    const input = { sessionId: "s1", transcriptPath: "/t.jsonl", cwd: "/p", reason: "clear" };
    const r = await run({ spec: END, route: "async function Route() { return null; }", input, args: SIM });
    succeeds(r);
    assert.deepEqual(JSON.parse(r.stdout), {
      nativeInput: { session_id: "s1", transcript_path: "/t.jsonl", cwd: "/p", reason: "clear", hook_event_name: "SessionEnd" },
      nativeOutput: null,
      result: { outcome: "continue" },
    });
  });
});
