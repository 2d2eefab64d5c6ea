// Tests for the shared event runtime (server.mjs) and its client (ipc.mjs).
// Each case lays out a small artifact in a temporary directory, as the build
// does: `mcp/event-runtime.mjs` calls serve() with routes written as jsx(...)
// calls, and `hooks/<name>.mjs` wrappers call runHook with forwardRoute. The
// server runs as a real child process speaking MCP on stdio; wrappers are run
// as the host would run them, with their own AGENT_BUNDLE_RUNTIME_DIR.
//
// Run: node --test src/runtime/

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const url = (name) => JSON.stringify(pathToFileURL(join(HERE, name)).href);
const FIXTURE = JSON.parse(
  readFileSync(join(HERE, "..", "..", "tests", "fixtures", "host-payloads", "claude-code-2.1.332", "PreToolUse.json"), "utf8"),
).stdin;

const workDir = mkdtempSync(join(tmpdir(), "agent-bundle-server-test-"));
const children = new Set();
after(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(workDir, { recursive: true, force: true });
});

const childEnv = { ...process.env };
for (const key of ["NODE_TEST_CONTEXT", "NODE_OPTIONS", "AGENT_BUNDLE_RUNTIME_DIR"]) {
  delete childEnv[key];
}

const field = (native, canonical, types, required = true) => ({ native: [native], canonical, types, required });
const SPEC = {
  hook: "event-route-tool-before",
  host: "claude",
  hostName: "Claude Code",
  hostContractRevision: "claude-code-2.1.332",
  event: "tool/before",
  nativeEvent: "PreToolUse",
  eventKey: "hook_event_name",
  fields: [
    field("session_id", "sessionId", ["string"]),
    field("cwd", "cwd", ["string"]),
    field("tool_name", "toolName", ["string"]),
    field("tool_input", "toolInput", ["object"]),
    field("tool_use_id", "toolUseId", ["string"]),
  ],
  rules: { deny: true, rewrite: true, context: true, violation: "tool/before cannot replace input while denying" },
  output: {
    deny: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "$reason" } },
    context: { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "$context" } },
    rewrite: null,
  },
};

// The route both forms render: a module-level counter shows whether state is shared.
const ROUTE = `
let calls = 0;
const Route = async ({ canonical, signal }) => {
  calls += 1;
  if (canonical.payload.toolInput.command === "fail") throw new Error("boom");
  if (canonical.payload.toolInput.command === "fail-object") throw { code: 42 };
  if (canonical.payload.toolInput.command === "exit") {
    process.exit(3);
    console.error("ran on after process.exit");
  }
  if (canonical.payload.toolInput.command === "exit-later") setTimeout(() => process.exit(4), 0);
  if (canonical.payload.toolInput.command === "exit-in-timer") {
    setTimeout(() => process.exit(5), 0);
    await new Promise((r) => signal.addEventListener("abort", r));
    console.error(\`aborted: \${signal.reason.message}\`);
  }
  if (canonical.payload.toolInput.command === "slow") {
    console.error("rendering slow");
    await new Promise((r) => setTimeout(r, 2000));
  }
  if (canonical.payload.toolInput.command === "bigint") return jsx(Agent.Result, { value: { updatedInput: { n: 1n } } });
  if (canonical.payload.toolInput.command === "map") return jsx(Agent.Result, { value: { updatedInput: new Map([["command", "ls"]]) } });
  if (canonical.payload.toolInput.command === "deny-with-context") {
    return [jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } }), jsx(Agent.Context, { children: "use trash" })];
  }
  if (canonical.payload.toolInput.command === "linger") {
    console.error("lingering");
    await new Promise((r) => setTimeout(r, 500));
  }
  if (canonical.payload.toolInput.command === "spin") {
    console.error("spinning");
    for (const end = Date.now() + 1500; Date.now() < end; );
  }
  if (canonical.payload.toolInput.command === "stray") {
    setTimeout(() => { throw new Error("stray timer"); }, 50);
    setTimeout(() => { Promise.reject(new Error("stray rejection")); }, 50);
  }
  if (canonical.payload.toolInput.command === "stray-timer-now") {
    setTimeout(() => { throw new Error("stray timer now"); }, 0);
    await new Promise((r) => setTimeout(r, 50));
    return jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } });
  }
  if (canonical.payload.toolInput.command === "stray-now") {
    Promise.reject(new Error("stray rejection now"));
    await new Promise((r) => setTimeout(r, 50));
    return jsx(Agent.Result, { value: { outcome: "deny", reason: "no" } });
  }
  return jsx(Agent.Context, { children: \`call \${calls} seq \${canonical.sequence} pid \${process.pid}\` });
};`;

let artifacts = 0;

/** Writes an artifact with the runtime and two wrappers (with and without fallback). */
function artifact({ epoch = "demo@1.0.0+0001", timeoutMs = 1000, requestDeadlineMs, probeAnswerMs, startupWaitMs, spec = SPEC } = {}) {
  const root = join(workDir, `artifact-${++artifacts}`);
  mkdirSync(join(root, "mcp"), { recursive: true });
  mkdirSync(join(root, "hooks"), { recursive: true });
  const imports =
    `import { jsx } from ${url("jsx.mjs")};\nimport { Agent } from ${url("agent.mjs")};\n${ROUTE}\n`;
  const options = JSON.stringify({ requestDeadlineMs, probeAnswerMs }); // (undefined ones are left out)
  writeFileSync(
    join(root, "mcp", "event-runtime.mjs"),
    `import { serve } from ${url("server.mjs")};\n${imports}` +
      `await serve({ plugin: "demo", version: "1.0.0", epoch: ${JSON.stringify(epoch)}, routes: [{ family: "tool/before", ` +
      `timeoutMs: ${timeoutMs}, load: () => ({ default: Route }), specs: { claude: ${JSON.stringify(spec)} } }] }, import.meta.url, ` +
      `${options});\n`,
  );
  for (const fallback of [true, false]) {
    writeFileSync(
      join(root, "hooks", `route${fallback ? "-fallback" : ""}.mjs`),
      `import { runHook } from ${url("hook.mjs")};\nimport { renderRoute } from ${url("route.mjs")};\n` +
        `import { connectRuntime, forwardRoute } from ${url("ipc.mjs")};\n${imports}` +
        `const SHARED = ${JSON.stringify({ hook: spec.hook, epoch, target: "claude", family: "tool/before", timeoutMs, startupWaitMs })};\n` +
        `const connection = connectRuntime(SHARED);\n` +
        `await runHook(${JSON.stringify(spec)}, () => (event, context) => forwardRoute(SHARED, context, ` +
        (fallback ? `(leftMs) => renderRoute(Route, event, context, { family: "tool/before", timeoutMs: ${timeoutMs}, leftMs })` : "null") +
        `, connection));\n`,
    );
  }
  return root;
}

function freshRuntimeDir() {
  return mkdtempSync(join(workDir, "run-"));
}

/** Starts the runtime of `root`; resolves once it listens or stands by. */
function startServer(root, runtimeDir) {
  const child = spawn(process.execPath, [join(root, "mcp", "event-runtime.mjs"), "--target", "claude"], {
    env: { ...childEnv, AGENT_BUNDLE_RUNTIME_DIR: runtimeDir },
  });
  children.add(child);
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  const server = { child, stderr: "", stdout: "", exited: new Promise((r) => child.on("close", (code) => r(code))) };
  child.stdout.on("data", (data) => (server.stdout += data));
  child.on("close", () => children.delete(child));
  server.ready = new Promise((resolve, reject) => {
    child.stderr.on("data", (data) => {
      server.stderr += data;
      if (/listening on|standing by/.test(server.stderr)) resolve(server);
    });
    child.on("close", () => reject(new Error(`runtime exited: ${server.stderr}`)));
  });
  return server;
}

/** Runs the runtime of `root` to its end with `args`, `input` on stdin; resolves with how it ended. */
function runRuntime(root, runtimeDir, { args = ["--target", "claude"], input = "" } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "mcp", "event-runtime.mjs"), ...args], {
      env: { ...childEnv, AGENT_BUNDLE_RUNTIME_DIR: runtimeDir },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.stdin.on("error", () => {}); // EPIPE when it ends before reading
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Closes the server's stdin (as a host does at the end of a session) and waits for it. */
async function stopServer(server) {
  server.child.stdin.end();
  return server.exited;
}

function runWrapper(root, runtimeDir, { fallback = false, command = "echo hi", input, nodeArgs = [], args = [], stdinAfter } = {}) {
  const envelope = input ?? { ...FIXTURE, tool_input: { command } };
  return new Promise((resolve, reject) => {
    const script = join(root, "hooks", `route${fallback ? "-fallback" : ""}.mjs`);
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      env: { ...childEnv, AGENT_BUNDLE_RUNTIME_DIR: runtimeDir },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // `stdinAfter` (a promise) makes a late host: the wrapper connects long before its
    // envelope arrives. A rejection writes too, so no wrapper is left waiting.
    const write = () => child.stdin.end(JSON.stringify(envelope));
    if (stdinAfter) stdinAfter.then(write, write);
    else write();
  });
}

const contextOf = (r) => JSON.parse(r.stdout).hookSpecificOutput.additionalContext;

/** Resolves once the runtime's stderr matches `pattern`; rejects after `ms`. */
async function logged(server, pattern, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!pattern.test(server.stderr)) {
    if (Date.now() > deadline) throw new Error(`the runtime never logged ${pattern}: ${server.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function sockets(runtimeDir) {
  return readdirSync(runtimeDir).filter((name) => name.endsWith(".sock"));
}

/** Sends one raw line to the runtime socket and returns the parsed reply. */
function rawRequest(socketPath, text) {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => (data += d));
    socket.on("end", () => resolve(JSON.parse(data)));
    socket.on("error", reject);
    socket.on("connect", () => socket.end(text));
  });
}

/** Connects now; `send(text)` later writes `text`, ends, and resolves with the parsed reply. */
async function earlyClient(socketPath) {
  const socket = connect(socketPath);
  let data = "";
  socket.setEncoding("utf8");
  socket.on("data", (d) => (data += d));
  const answered = new Promise((resolve, reject) => {
    socket.on("end", () => resolve(data === "" ? null : JSON.parse(data)));
    socket.on("error", reject);
  });
  await new Promise((resolve) => socket.once("connect", resolve));
  return { write: (text) => socket.write(text), send: (text) => (socket.end(text), answered) };
}

/**
 * Connects, writes `text` if any, then waits (at most `giveUpMs`) for the runtime to close
 * the connection; resolves with what it answered and whether it closed first.
 */
function stalledClient(socketPath, text = "", giveUpMs = 3000) {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const started = Date.now();
    let data = "";
    const timer = setTimeout(() => socket.destroy(), giveUpMs);
    socket.setEncoding("utf8");
    socket.on("data", (d) => (data += d));
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      resolve({ closedByRuntime: ms < giveUpMs, data, ms });
    });
    socket.on("connect", () => text && socket.write(text));
  });
}

function request(overrides = {}) {
  return {
    protocolVersion: 1,
    artifactEpoch: "demo@1.0.0+0001",
    event: "tool/before",
    hostContractRevision: "claude-code-2.1.332",
    target: "claude",
    native: { ...FIXTURE, tool_input: { command: "echo hi" } },
    ...overrides,
  };
}

describe("shared runtime", { concurrency: 4 }, () => {
  test("two invocations share the runtime's state; the socket is 0600 in a 0700 directory", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const first = await runWrapper(root, dir);
    const second = await runWrapper(root, dir);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.code, 0, second.stderr);
    const pid = server.child.pid;
    assert.equal(contextOf(first), `call 1 seq 1 pid ${pid}`);
    assert.equal(contextOf(second), `call 2 seq 2 pid ${pid}`);
    const [socket] = sockets(dir);
    assert.equal(statSync(join(dir, socket)).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(await stopServer(server), 0);
    assert.deepEqual(sockets(dir), [], "a clean shutdown removes the socket");
  });

  test("the runtime directory is created 0700 when missing", async () => {
    const dir = join(freshRuntimeDir(), "nested");
    const server = await startServer(artifact(), dir).ready;
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    await stopServer(server);
  });

  test("a runtime whose directory was removed makes it again, 0700, and listens there; one made open to others it refuses", async () => {
    const root = artifact();
    const dir = join(freshRuntimeDir(), "cleaned");
    const server = await startServer(root, dir).ready;
    rmSync(dir, { recursive: true });
    await logged(server, /was removed; standing by[^]*had no live owner; took it over/);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.match(contextOf(await runWrapper(root, dir)), new RegExp(`pid ${server.child.pid}$`));
    rmSync(dir, { recursive: true });
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    await logged(server, /cannot take over .*refusing the runtime directory .*accessible to other users/);
    assert.deepEqual(sockets(dir), [], "no socket in a directory others may enter");
    // Said once while it lasts; a file where the directory goes is said to be no directory.
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "");
    await logged(server, /refusing the runtime directory \S+: it is not a directory/);
    assert.equal(server.stderr.match(/accessible to other users/g).length, 1, server.stderr);
    // A link where it goes, even to a private folder, is said to be one.
    rmSync(dir);
    const linked = join(freshRuntimeDir(), "private");
    mkdirSync(linked, { mode: 0o700 });
    symlinkSync(linked, dir);
    await logged(server, /refusing the runtime directory \S+: it is a symbolic link, not a directory/);
    await stopServer(server);
  });

  test("a second install of the same plugin gets another socket", async () => {
    const root = artifact();
    const copy = `${root}-copy`;
    cpSync(root, copy, { recursive: true });
    const dir = freshRuntimeDir();
    const one = await startServer(root, dir).ready;
    const two = await startServer(copy, dir).ready;
    assert.equal(sockets(dir).length, 2);
    assert.match(contextOf(await runWrapper(root, dir)), new RegExp(`pid ${one.child.pid}$`));
    assert.match(contextOf(await runWrapper(copy, dir)), new RegExp(`pid ${two.child.pid}$`));
    await Promise.all([stopServer(one), stopServer(two)]);
  });

  test("without a runtime, the fallback renders standalone and a route without one exits non-zero", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const fallback = await runWrapper(root, dir, { fallback: true });
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.match(contextOf(fallback), /^call 1 seq 1 pid \d+$/);
    const closed = await runWrapper(root, dir);
    assert.equal(closed.code, 1);
    assert.equal(closed.stdout, "");
    assert.match(closed.stderr, /handler failed: shared runtime unavailable: no live socket at /);
  });

  // Another user's directory (made ahead of the user's runtime) or one open to others holds no
  // runtime: a guard with a fallback still judges the call, at once; one without fails.
  test("a runtime directory open to others is no runtime: the fallback renders, saying why", async () => {
    const root = artifact({ timeoutMs: 4000, startupWaitMs: 2000 });
    const dir = freshRuntimeDir();
    chmodSync(dir, 0o755);
    const started = Date.now();
    const fallback = await runWrapper(root, dir, { fallback: true });
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.match(contextOf(fallback), /^call 1 seq 1 pid \d+$/);
    assert.equal(
      fallback.stderr,
      `agent-bundle hook ${SPEC.hook}: refusing the shared runtime: ${dir} is accessible to other users (\`chmod 700\` it, or name a folder that does not exist yet: the runtime makes it 0700): ` +
        "no runtime serves from it; the route renders standalone\n",
    );
    assert.ok(Date.now() - started < 1500, "no wait for a runtime that cannot come");
    const strict = await runWrapper(root, dir);
    assert.deepEqual([strict.code, strict.stdout], [1, ""]);
    assert.match(strict.stderr, /handler failed: refusing the shared runtime: \S+ is accessible to other users \(`chmod 700` it, or name a folder that does not exist yet: the runtime makes it 0700\)\n$/);
  });

  // Checked in the runtime as its wrapper checks it standalone: not changed by the reply's
  // JSON (a Map arriving as `{}`, a tool's whole input replaced), nor a reply never sent.
  test("a result JSON would not carry fails at once, shared as standalone", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    for (const [command, message] of [
      ["bigint", /updatedInput must hold JSON data only: updatedInput\.n is a bigint/],
      ["map", /updatedInput is an object of class Map/],
    ]) {
      const shared = await runWrapper(root, dir, { command });
      assert.equal(shared.code, 1, shared.stderr);
      assert.match(shared.stderr, message);
      const standalone = await runWrapper(root, freshRuntimeDir(), { fallback: true, command });
      assert.equal(standalone.code, 1, standalone.stderr);
      assert.match(standalone.stderr, message);
    }
    await stopServer(server);
  });

  // A wrapper forwards whatever envelope it read: the runtime takes as much.
  test("an envelope of several MiB renders in the runtime", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const input = { ...FIXTURE, tool_input: { command: "x".repeat(3 * 1024 * 1024) } };
    const server = await startServer(root, dir).ready;
    const r = await runWrapper(root, dir, { input });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(contextOf(r), `call 1 seq 1 pid ${server.child.pid}`);
    await stopServer(server);
  });

  // A host that starts its MCP servers beside the hook (Claude Code's SessionStart): a wrapper
  // told to wait finds the runtime once it listens, its folder made meanwhile; one not told
  // to fails at once.
  test("a wrapper waits for a runtime still starting only where told to", async () => {
    const root = artifact({ timeoutMs: 4000, startupWaitMs: 2000 });
    const dir = join(freshRuntimeDir(), "r");
    const pending = runWrapper(root, dir);
    await new Promise((r) => setTimeout(r, 300));
    const server = await startServer(root, dir).ready;
    const r = await pending;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(contextOf(r), `call 1 seq 1 pid ${server.child.pid}`);
    await stopServer(server);
    const started = Date.now();
    const eager = await runWrapper(artifact({ timeoutMs: 4000 }), join(freshRuntimeDir(), "n"));
    assert.equal(eager.code, 1);
    assert.match(eager.stderr, /shared runtime unavailable: .* does not exist/);
    assert.ok(Date.now() - started < 2000, "no wait where none was asked");
  });

  // A host with no place for context beside a deny (Cursor's preToolUse): the deny is
  // answered without it, and the hook's stderr says so, not the runtime's log.
  test("context left out of a shared deny is said by the hook", async () => {
    const spec = { ...SPEC, output: { ...SPEC.output, context: null } };
    const root = artifact({ spec });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const r = await runWrapper(root, dir, { command: "deny-with-context" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision, "deny");
    assert.equal(r.stderr, `agent-bundle hook ${SPEC.hook}: Claude Code PreToolUse takes no additionalContext: the deny is answered without it\n`);
    await stopServer(server);
    assert.doesNotMatch(server.stderr, /additionalContext/);
  });

  // `hooks simulate --standalone` starts no runtime: its wrapper renders the fallback at once,
  // though it would wait ten minutes for one a host was starting.
  test("a wrapper run without a runtime waits for none", { timeout: 60_000 }, async () => {
    const root = artifact({ timeoutMs: 600_000, startupWaitMs: 600_000 });
    const r = await runWrapper(root, join(freshRuntimeDir(), "none"), {
      fallback: true,
      args: ["--agent-bundle-simulation=native", "--agent-bundle-no-runtime"],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).nativeOutput.hookSpecificOutput.additionalContext, /./);
  });

  // The host's timeout for the hook is the route's plus a second: what waiting for a runtime
  // that never came took is not given to the fallback again.
  test("the wait for a runtime comes out of the route's time, the fallback's too", async () => {
    // The render takes 2 s: within a fresh 2.5 s it would answer, in the 1 s left it cannot.
    const root = artifact({ timeoutMs: 2500, startupWaitMs: 1500 });
    const r = await runWrapper(root, join(freshRuntimeDir(), "none"), { fallback: true, command: "slow" });
    assert.equal(r.code, 1, r.stderr);
    // (Named by the route's time, as the config gives it, not by what was left of it.)
    assert.match(r.stderr, /route tool\/before timed out after 2500 ms\n$/);
  });

  test("a runtime that stops mid-request fails the hook, saying so", async () => {
    const root = artifact({ timeoutMs: 5000 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const pending = runWrapper(root, dir, { fallback: true, command: "slow" });
    await logged(server, /rendering slow/); // the request is in: a fixed wait loses that race under load
    server.child.kill("SIGKILL");
    const r = await pending;
    assert.equal(r.code, 1);
    assert.match(r.stderr, /shared runtime closed the connection without answering/);
  });

  test("a wrapper of an older build is refused, even with a fallback", async () => {
    const old = artifact({ epoch: "demo@1.0.0+0001" });
    const current = artifact({ epoch: "demo@1.0.0+0002" });
    const dir = freshRuntimeDir();
    const server = await startServer(current, dir).ready;
    const [socket] = sockets(dir);
    const reply = await rawRequest(join(dir, socket), `${JSON.stringify(request())}\n`);
    assert.equal(reply.status, "error");
    assert.equal(reply.code, "epoch-mismatch");
    // The old wrapper, installed where the new build now runs, finds no runtime of its epoch.
    cpSync(join(old, "hooks"), join(current, "hooks"), { recursive: true });
    const stale = await runWrapper(current, dir);
    assert.equal(stale.code, 1);
    assert.equal(stale.stdout, "");
    // As a rebuild's wrappers do while the host still runs the previous build's runtime.
    const hint =
      `; another build of this plugin has a socket here (${socket}): if the host's MCP server ` +
      "runs that build, restart it to load this one (a new session starts it anew)\n";
    assert.match(stale.stderr, /handler failed: shared runtime unavailable: no live socket at /);
    assert.ok(stale.stderr.endsWith(hint), stale.stderr);
    // With a fallback, the route renders standalone, and says why each time.
    const fallen = await runWrapper(current, dir, { fallback: true });
    assert.equal(fallen.code, 0, fallen.stderr);
    assert.ok(fallen.stderr.endsWith(`${hint.trimEnd()}; until then the route renders standalone\n`), fallen.stderr);
    await stopServer(server);
  });

  test("another install's runtime is not taken for another build of this one", async () => {
    const root = artifact();
    const other = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(other, dir).ready;
    const r = await runWrapper(root, dir);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /handler failed: shared runtime unavailable: no live socket at \S+\n$/);
    await stopServer(server);
  });

  test("invalid messages, unknown routes and oversized messages are refused", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const path = join(dir, sockets(dir)[0]);
    const refused = async (text, message) => {
      const reply = await rawRequest(path, text);
      assert.deepEqual([reply.status, reply.code], ["error", "invalid-message"], JSON.stringify(reply));
      if (message) assert.match(reply.message, message);
    };
    await refused("not json\n", /is invalid/);
    await refused(`${JSON.stringify({ ...request(), extra: 1 })}\n`, /wire schema/);
    await refused(`${JSON.stringify(request({ event: "stop" }))}\n`, /no shared route for stop/);
    await refused(`${JSON.stringify(request({ target: "codex" }))}\n`, /serves claude/);
    await refused(`${JSON.stringify(request({ hostContractRevision: "claude-code-1" }))}\n`, /follows claude-code-2.1.332/);
    await refused(`${JSON.stringify(request({ native: { hook_event_name: "PreToolUse" } }))}\n`, /envelope is invalid/);
    await refused(`${"x".repeat(64 * 1024 * 1024 + 64 * 1024 + 1)}\n`, /64 MiB/);
    const status = await rawRequest(path, `${JSON.stringify({ kind: "status", protocolVersion: 1 })}\n`);
    assert.deepEqual([status.status, status.runtime.pid], ["ok", server.child.pid]);
    await stopServer(server);
  });

  test("a failing render is runtime-failed; a slow one times out in the wrapper", async () => {
    const root = artifact({ timeoutMs: 300 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const failed = await runWrapper(root, dir, { command: "fail" });
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, "");
    assert.match(failed.stderr, /shared runtime could not answer \(runtime-failed\): Event route rendering failed: boom/);
    const object = await runWrapper(root, dir, { command: "fail-object" });
    assert.equal(object.code, 1);
    assert.match(object.stderr, /\(runtime-failed\): Event route rendering failed: \{ code: 42 \}\n$/);
    const slow = await runWrapper(root, dir, { command: "slow", fallback: true });
    assert.equal(slow.code, 1, "a timeout never falls back");
    assert.equal(slow.stdout, "");
    assert.match(slow.stderr, /did not answer within 300 ms|timed out after 300 ms/);
    // The runtime survives both.
    assert.equal((await runWrapper(root, dir)).code, 0);
    await stopServer(server);
  });

  test("a second server stands by and takes over when the owner goes; stale sockets are reclaimed", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const owner = await startServer(root, dir).ready;
    const standby = await startServer(root, dir).ready;
    assert.match(standby.stderr, /owned by another process; standing by/);
    owner.child.kill("SIGKILL"); // dies without cleaning up: its socket is stale
    await owner.exited;
    const deadline = Date.now() + 5000;
    while (!/took it over/.test(standby.stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.match(standby.stderr, /took it over/);
    assert.match(contextOf(await runWrapper(root, dir)), new RegExp(`pid ${standby.child.pid}$`));
    await stopServer(standby);
    assert.deepEqual(sockets(dir), []);
  });

  // A stopped owner (SIGSTOP, Ctrl-Z) still takes connections, so only an answer counts: the
  // standby takes over, and the owner, resumed, stands by. One busy rendering keeps its socket.
  test("a standby takes over from an owner that does not answer its probe, not from a busy one", async () => {
    const root = artifact({ timeoutMs: 5000, probeAnswerMs: 300 });
    const dir = freshRuntimeDir();
    const owner = await startServer(root, dir).ready;
    const standby = await startServer(root, dir).ready;
    assert.match(standby.stderr, /owned by another process; standing by/);
    const slow = await runWrapper(root, dir, { command: "slow" }); // 2 s of probes meanwhile
    assert.match(contextOf(slow), new RegExp(`pid ${owner.child.pid}$`));
    assert.doesNotMatch(standby.stderr, /took it over/);
    owner.child.kill("SIGSTOP");
    await logged(standby, /did not answer 2 status probes in a row within 300 ms each \(stopped or hung\)/);
    await logged(standby, /had no live owner; took it over/);
    assert.match(contextOf(await runWrapper(root, dir)), new RegExp(`pid ${standby.child.pid}$`));
    const [name] = sockets(dir);
    owner.child.kill("SIGCONT");
    await logged(owner, /was taken over; standing by/);
    assert.equal(await stopServer(owner), 0);
    assert.deepEqual(sockets(dir), [name], "the resumed owner leaves the new owner's socket");
    assert.equal(await stopServer(standby), 0);
    assert.deepEqual(sockets(dir), []);
  });

  // Renders that keep the owner's one thread busy past the probes' waits (a queue of
  // synchronous ones) may lose it the socket; what it accepted before is answered all the
  // same: those hooks came to it, and a reset connection would fail them.
  test("an owner taken over while busy answers the hooks it accepted", async () => {
    const root = artifact({ timeoutMs: 15000, probeAnswerMs: 300 });
    const dir = freshRuntimeDir();
    const owner = await startServer(root, dir).ready;
    const standby = await startServer(root, dir).ready;
    const spins = await Promise.all([1, 2, 3, 4].map(() => runWrapper(root, dir, { command: "spin" })));
    await logged(standby, /had no live owner; took it over/);
    for (const spin of spins) assert.equal(spin.code, 0, spin.stderr);
    // (A wrapper that started late may have reached the new owner: either answers.)
    const owners = spins.map((spin) => Number(contextOf(spin).match(/pid (\d+)$/)[1]));
    assert.ok(owners.includes(owner.child.pid), `the old owner answered what it had accepted: ${owners}`);
    assert.equal(await stopServer(owner), 0);
    assert.equal(await stopServer(standby), 0);
  });

  test("a runtime told to stop (stdin closed, SIGTERM, SIGHUP) answers what it took first, then removes its socket", async () => {
    for (const stop of [(child) => child.stdin.end(), (child) => child.kill("SIGTERM"), (child) => child.kill("SIGHUP")]) {
      const root = artifact();
      const dir = freshRuntimeDir();
      const server = await startServer(root, dir).ready;
      // A render of 500 ms, under way when the runtime is told to stop.
      const lingering = runWrapper(root, dir, { command: "linger" });
      await logged(server, /lingering/);
      stop(server.child);
      const answered = await lingering;
      assert.equal(answered.code, 0, answered.stderr);
      assert.match(contextOf(answered), new RegExp(`^call 1 seq 1 pid ${server.child.pid}$`));
      assert.equal(await server.exited, 0);
      assert.deepEqual(sockets(dir), []);
    }
  });

  test("a second signal while the runtime drains ends it at once", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const lingering = runWrapper(root, dir, { command: "linger" });
    await logged(server, /lingering/);
    server.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 50));
    server.child.kill("SIGTERM");
    assert.equal(await server.exited, 0);
    const dropped = await lingering;
    assert.equal(dropped.code, 1, "the render under way is dropped");
    assert.deepEqual(sockets(dir), []);
  });

  test("a route's stray error outside its render is reported and the runtime serves on", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    assert.equal((await runWrapper(root, dir, { command: "stray" })).code, 0);
    await new Promise((r) => setTimeout(r, 150));
    const after = await runWrapper(root, dir);
    assert.equal(after.code, 0, after.stderr);
    assert.equal(contextOf(after), `call 2 seq 2 pid ${server.child.pid}`);
    assert.match(server.stderr, /a route failed outside its render's call: stray timer/);
    assert.match(server.stderr, /a route left a promise rejected: stray rejection/);
    assert.equal(await stopServer(server), 0);
  });

  test("a route's stray error during its render is logged and its answer stands, as a standalone hook's", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    for (const [command, logged] of [
      ["stray-now", /a route left a promise rejected: stray rejection now/],
      ["stray-timer-now", /a route failed outside its render's call: stray timer now/],
    ]) {
      const answered = await runWrapper(root, dir, { command });
      assert.equal(answered.code, 0, answered.stderr);
      assert.match(answered.stdout, /"permissionDecision": ?"deny"/);
      assert.match(server.stderr, logged);
    }
    assert.equal(await stopServer(server), 0);
  });

  test("a route's process.exit fails its render, or is ignored after it; the runtime serves on", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const exited = await runWrapper(root, dir, { command: "exit", fallback: true });
    assert.equal(exited.code, 1, "a refused request never falls back");
    assert.equal(exited.stdout, "");
    assert.match(
      exited.stderr,
      /\(runtime-failed\): Event route rendering failed: route called process\.exit\(3\) while rendering: the shared runtime does not exit for a route; render the outcome or throw instead\n$/,
    );
    // Called from a timer of the render's, it fails the render, whose signal aborts.
    const timed = await runWrapper(root, dir, { command: "exit-in-timer" });
    assert.equal(timed.code, 1, timed.stderr);
    await logged(server, /aborted: route called process\.exit\(5\) while rendering/);
    const later = await runWrapper(root, dir, { command: "exit-later" });
    assert.equal(later.code, 0, later.stderr);
    await logged(server, /a route failed outside its render's call: route code called process\.exit\(4\), which the shared runtime does not do for a route/);
    assert.doesNotMatch(server.stderr, /ran on after process\.exit/, "nothing after the call runs");
    const after = await runWrapper(root, dir);
    assert.equal(after.code, 0, after.stderr);
    assert.match(contextOf(after), new RegExp(`^call 4 seq 4 pid ${server.child.pid}$`));
    // The runtime's own exit still works, and removes the socket.
    assert.equal(await stopServer(server), 0);
    assert.deepEqual(sockets(dir), []);
  });

  test("a runtime that cannot own its socket exits 1 before answering MCP, saying why", async () => {
    const root = artifact();
    const initialize = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })}\n`;
    const open = freshRuntimeDir();
    chmodSync(open, 0o755);
    const refused = await runRuntime(root, open, { input: initialize });
    assert.deepEqual([refused.code, refused.stdout], [1, ""]);
    assert.equal(
      refused.stderr,
      `agent-bundle event runtime: could not start: refusing the runtime directory ${open}: it is accessible to other users (\`chmod 700\` it, or name a folder that does not exist yet: the runtime makes it 0700)\n`,
    );
    // A relative directory names one place for the runtime and another for each hook.
    const relative = await runRuntime(root, "rel-rt", { input: initialize });
    assert.deepEqual([relative.code, relative.stdout], [1, ""]);
    assert.equal(
      relative.stderr,
      "agent-bundle event runtime: could not start: AGENT_BUNDLE_RUNTIME_DIR must be an absolute path, not rel-rt\n",
    );
    const hook = await runWrapper(root, "rel-rt");
    assert.deepEqual([hook.code, hook.stdout], [1, ""]);
    assert.match(hook.stderr, /handler failed: AGENT_BUNDLE_RUNTIME_DIR must be an absolute path, not rel-rt\n$/);
    const fallback = await runWrapper(root, "rel-rt", { fallback: true });
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.match(fallback.stderr, /AGENT_BUNDLE_RUNTIME_DIR must be an absolute path, not rel-rt: no runtime serves from it; the route renders standalone\n$/);
    const deep = join(freshRuntimeDir(), "d".repeat(100));
    const tooLong = await runRuntime(root, deep, { input: initialize });
    assert.deepEqual([tooLong.code, tooLong.stdout], [1, ""]);
    assert.match(tooLong.stderr, /^agent-bundle event runtime: could not start: the socket path \S+ is too long for a Unix socket/);
  });

  test("a target the runtime was not built for is a usage error naming the ones it serves", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const usage = "agent-bundle event runtime: usage: event-runtime.mjs --target <host>, where <host> is one of claude";
    const bogus = await runRuntime(root, dir, { args: ["--target", "bogus"] });
    assert.deepEqual([bogus.code, bogus.stdout, bogus.stderr], [2, "", `${usage} (not bogus)\n`]);
    const missing = await runRuntime(root, dir, { args: [] });
    assert.deepEqual([missing.code, missing.stderr], [2, `${usage}\n`]);
    assert.deepEqual(sockets(dir), []);
  });

  test("a runtime whose socket was taken over leaves the new owner's socket in place", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const first = await startServer(root, dir).ready;
    const [name] = sockets(dir);
    unlinkSync(join(dir, name)); // e.g. a cleanup that took it for stale
    const second = await startServer(root, dir).ready;
    const deadline = Date.now() + 5000;
    while (!/was taken over/.test(first.stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.match(first.stderr, /was taken over; standing by/);
    assert.deepEqual(sockets(dir), [name], "the new owner's socket is still there");
    assert.match(contextOf(await runWrapper(root, dir)), new RegExp(`pid ${second.child.pid}$`));
    assert.equal(await stopServer(first), 0);
    assert.deepEqual(sockets(dir), [name], "stopping the old runtime leaves it too");
    assert.equal(await stopServer(second), 0);
    assert.deepEqual(sockets(dir), []);
  });

  test("speaks MCP on stdio: initialize, tools/list, ping, unknown methods", async () => {
    const server = await startServer(artifact(), freshRuntimeDir()).ready;
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "ping" },
      { jsonrpc: "2.0", id: 4, method: "resources/list" },
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "x", arguments: {} } },
    ];
    server.child.stdin.write(messages.map((m) => JSON.stringify(m)).join("\n") + "\n");
    server.child.stdin.end();
    assert.equal(await server.exited, 0);
    const replies = server.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(replies.length, 5, "a notification gets no answer");
    assert.equal(replies[0].result.protocolVersion, "2025-06-18");
    assert.equal(replies[0].result.serverInfo.name, "demo-event-runtime");
    assert.deepEqual(replies[1], { jsonrpc: "2.0", id: 2, result: { tools: [] } });
    assert.deepEqual(replies[2], { jsonrpc: "2.0", id: 3, result: {} });
    assert.equal(replies[3].error.code, -32601);
    assert.deepEqual(replies[4], { jsonrpc: "2.0", id: 5, error: { code: -32602, message: "Unknown tool: x" } });
  });

  test("MCP: no method or an id of another type is an invalid request, a response is not answered", async () => {
    const server = await startServer(artifact(), freshRuntimeDir()).ready;
    const initialize = (id, protocolVersion) => ({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion, capabilities: {} } });
    const messages = [
      // 2025-03-26 servers must take batches, which this one refuses: it answers an older revision.
      initialize(1, "2025-03-26"),
      initialize(2, "2099-01-01"),
      { jsonrpc: "2.0", id: 5 },
      { jsonrpc: "2.0", id: 12, result: {} },
      { jsonrpc: "2.0", id: 13, error: { code: -32601, message: "Method not found" } },
      { jsonrpc: "2.0", id: { n: 1 }, method: "ping" },
      { jsonrpc: "2.0", id: true, method: "ping" },
      { jsonrpc: "2.0", id: null, method: "ping" },
      [{ jsonrpc: "2.0", id: 20, method: "ping" }],
      { jsonrpc: "2.0", id: "last", method: "ping" },
    ];
    server.child.stdin.end(messages.map((m) => JSON.stringify(m)).join("\n") + "\n");
    assert.equal(await server.exited, 0);
    const replies = server.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      replies.map((reply) => [reply.id, reply.result?.protocolVersion ?? reply.error?.code ?? reply.result]),
      [[1, "2024-11-05"], [2, "2025-11-25"], [5, -32600], [null, -32600], [null, -32600], [null, -32600], [null, -32600], ["last", {}]],
    );
  });

  test("a connection that sends nothing is dropped unanswered after the deadline; others are served", async () => {
    const root = artifact({ requestDeadlineMs: 150 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const path = join(dir, sockets(dir)[0]);
    const idle = stalledClient(path);
    assert.equal((await rawRequest(path, `${JSON.stringify(request())}\n`)).status, "ok");
    const dropped = await idle;
    assert.deepEqual([dropped.closedByRuntime, dropped.data], [true, ""]);
    assert.ok(dropped.ms >= 140, `dropped after ${dropped.ms} ms, before the deadline`);
    assert.match(server.stderr, /dropped a connection that sent no request within 150 ms/);
    await stopServer(server);
  });

  test("a client that keeps its side open after its reply is dropped after the deadline", async () => {
    const root = artifact({ requestDeadlineMs: 150 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    // Answered, the client never closes its side (a Node socket does unless half-open).
    const socket = connect({ path: join(dir, sockets(dir)[0]), allowHalfOpen: true });
    const answered = new Promise((resolve) => {
      let data = "";
      socket.setEncoding("utf8");
      socket.on("data", (d) => (data += d));
      socket.on("end", () => resolve(data));
    });
    // Timed from before the request (the runtime's deadline starts after its reply): when
    // this process sees the reply end is up to the scheduler.
    const written = Date.now();
    socket.write(`${JSON.stringify(request())}\n`);
    assert.equal(JSON.parse(await answered).status, "ok");
    await logged(server, /dropped a connection that kept its side open 150 ms after its reply/);
    assert.ok(Date.now() - written >= 150, "dropped after the deadline, not before");
    // The runtime's end is gone: writing to it now fails.
    const failed = await new Promise((resolve) => {
      socket.on("error", (error) => resolve(error.code));
      socket.write("more\n");
    });
    assert.equal(failed, "EPIPE");
    await stopServer(server);
  });

  // A route computing synchronously holds the loop past a connection's deadline while its
  // request arrives: the request counts, whole or still coming (past the socket's buffer).
  test("a request sent while a route held the loop past the deadline is answered", async () => {
    const root = artifact({ requestDeadlineMs: 500, timeoutMs: 5000 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const path = join(dir, sockets(dir)[0]);
    const small = await earlyClient(path);
    const large = await earlyClient(path);
    await new Promise((r) => setTimeout(r, 100)); // accepted: their deadlines run
    const spin = rawRequest(path, `${JSON.stringify(request({ native: { ...FIXTURE, tool_input: { command: "spin" } } }))}\n`);
    await logged(server, /spinning/);
    const long = { ...FIXTURE, tool_input: { command: "x".repeat(3 * 1024 * 1024) } };
    const replies = await Promise.all([
      small.send(`${JSON.stringify(request())}\n`),
      large.send(`${JSON.stringify(request({ native: long }))}\n`),
      spin,
    ]);
    assert.deepEqual(replies.map((reply) => reply?.status), ["ok", "ok", "ok"], server.stderr);
    assert.doesNotMatch(server.stderr, /dropped a connection/);
    await stopServer(server);
  });

  // A request whose bytes are still coming at the deadline, paced across it (a slow host),
  // is given as long again: any byte since the deadline was set counts.
  test("a request still arriving at the deadline is answered", async () => {
    const root = artifact({ requestDeadlineMs: 500, timeoutMs: 5000 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const client = await earlyClient(join(dir, sockets(dir)[0]));
    await new Promise((r) => setTimeout(r, 350));
    const long = { ...FIXTURE, tool_input: { command: "x".repeat(3 * 1024 * 1024) } };
    const text = `${JSON.stringify(request({ native: long }))}\n`;
    const chunk = 64 * 1024;
    for (let at = 0; at + chunk < text.length; at += chunk) {
      client.write(text.slice(at, at + chunk));
      await new Promise((r) => setTimeout(r, 10));
    }
    const reply = await client.send(text.slice(Math.floor((text.length - 1) / chunk) * chunk));
    assert.equal(reply?.status, "ok", server.stderr);
    assert.doesNotMatch(server.stderr, /dropped a connection/);
    await stopServer(server);
  });

  test("a connection that sends half a line and stalls is dropped; the runtime serves on", async () => {
    const root = artifact({ requestDeadlineMs: 150 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const half = JSON.stringify(request()).slice(0, 40);
    const dropped = await stalledClient(join(dir, sockets(dir)[0]), half);
    assert.deepEqual([dropped.closedByRuntime, dropped.data], [true, ""]);
    const r = await runWrapper(root, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(contextOf(r), `call 1 seq 1 pid ${server.child.pid}`);
    await stopServer(server);
  });

  test("a route rendering longer than the request deadline still answers", async () => {
    const root = artifact({ requestDeadlineMs: 150, timeoutMs: 5000 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const r = await runWrapper(root, dir, { command: "linger" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(contextOf(r), `call 1 seq 1 pid ${server.child.pid}`);
    await stopServer(server);
  });

  test("a wrapper whose envelope comes after the deadline fails at once, saying so", async () => {
    const root = artifact({ requestDeadlineMs: 150 });
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    let written;
    const stdinAfter = logged(server, /dropped a connection/).finally(() => (written = Date.now()));
    const late = await runWrapper(root, dir, { fallback: true, stdinAfter });
    assert.equal(late.code, 1, "a dropped connection never falls back");
    assert.equal(late.stdout, "");
    assert.match(late.stderr, /shared runtime closed the connection (before the request reached it|without answering)/);
    assert.ok(Date.now() - written < 2000, "the wrapper does not hang");
    await stopServer(server);
  });

  // Without the guard, the wrapper's open connection would keep it alive forever.
  test("a wrapper connected ahead of an invalid envelope exits and the runtime serves on", { timeout: 30_000 }, async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    await startServer(root, dir).ready;
    const bad = await runWrapper(root, dir, { input: { ...FIXTURE, hook_event_name: "Stop" } });
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    const good = await runWrapper(root, dir);
    assert.equal(good.code, 0, good.stderr);
    assert.match(contextOf(good), /^call 1 seq 1 /);
  });
});

describe("older Node", () => {
  test("without process.getBuiltinModule (Node < 20.16) the wrapper still reaches the runtime", async () => {
    const root = artifact();
    const dir = freshRuntimeDir();
    const server = await startServer(root, dir).ready;
    const preload = join(workDir, "no-get-builtin-module.cjs");
    writeFileSync(preload, "delete process.getBuiltinModule;\n");
    const r = await runWrapper(root, dir, { nodeArgs: ["-r", preload] });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(contextOf(r), `call 1 seq 1 pid ${server.child.pid}`);
  });
});

describe("endpoint", () => {
  test("the socket name is cyrb128 of target and install root, then of epoch, target and install root", async () => {
    const { cyrb128, endpoint } = await import("./ipc.mjs");
    assert.equal(cyrb128(""), "027ae52ecfc796215593990d4b41437c");
    assert.equal(cyrb128("demo@1.0.0+0001:claude:/plugins/demo"), cyrb128("demo@1.0.0+0001:claude:/plugins/demo"));
    assert.notEqual(cyrb128("demo@1.0.0+0001:claude:/a"), cyrb128("demo@1.0.0+0001:claude:/b"));
    const name = `event-${cyrb128("claude:/r").slice(0, 16)}${cyrb128("e:claude:/r").slice(0, 16)}.sock`;
    assert.equal(basename(endpoint("e", "claude", "/r")), name);
    // Two builds of one install share the first half; another install or target does not.
    const install = (path) => basename(path).slice(0, "event-".length + 16);
    assert.equal(install(endpoint("f", "claude", "/r")), install(name));
    assert.notEqual(install(endpoint("e", "claude", "/s")), install(name));
    assert.notEqual(install(endpoint("e", "codex", "/r")), install(name));
  });

  test("a temporary folder too deep for a socket address moves the sockets under /tmp", async () => {
    const dirOf = (tmp) =>
      new Promise((resolve) => {
        const code = `import(${JSON.stringify(url("ipc.mjs").slice(1, -1))}).then((m) => process.stdout.write(m.runtimeDir()))`;
        const env = { ...childEnv, TMPDIR: tmp };
        delete env.AGENT_BUNDLE_RUNTIME_DIR;
        const child = spawn(process.execPath, ["-e", code], { env });
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
        child.on("close", () => resolve(out));
      });
    const uid = process.getuid();
    assert.equal(await dirOf("/tmp/short"), `/tmp/short/agent-bundle-${uid}`);
    // Deeper than macOS's per-user TMPDIR (49 characters, already past its 104 bytes with
    // the socket's name), so that it is past Linux's 108 too.
    const deep = "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/and/then/some/more/";
    assert.equal(await dirOf(deep), `/tmp/agent-bundle-${uid}`);
  });
});
