// agent-bundle hook runtime.
//
// Every hook that agent-bundle emits is one self-contained ESM wrapper that a
// host (Claude Code, Codex, Cursor) runs as a fresh `node` process: the host
// writes one JSON envelope on stdin and reads the answer on stdout. The Rust
// compiler bundles the user's TypeScript handler together with this module and
// calls `runHook(spec, load)`, where `spec` is generated from the Rust host
// tables (see README.md beside this file for its format) and `load()` evaluates
// the handler's modules and returns the handler.
//
// Guarantees:
// - The native envelope is validated against the spec before the handler
//   runs; the handler sees a frozen canonical event that holds only the fields
//   the host really sent (nothing is invented) and a frozen context.
// - The handler's result is validated against the event's canonical rules and
//   the host's capabilities, then projected through the host's templates only:
//   a continuing hook never writes a permission decision, so it can never widen
//   what the host allows.
// - runHook never throws. Any failure (bad input, a throwing handler, an
//   invalid result) writes one line `agent-bundle hook <name>: <message>` to
//   stderr, nothing to stdout, and sets exit code 1, which hosts treat as a
//   non-blocking error: a failure never denies. What the handler left running
//   failing beside its call is a note on stderr: the answer stands.
// - Success writes the projected JSON without a trailing newline, or nothing
//   when there is nothing to say; exit code 0.
//
// This file is parsed on every tool call, so it does no work at load time and
// uses only `node:` builtins.

import { readFileSync, readSync, realpathSync, writeSync } from "node:fs";
import { inspect, types } from "node:util";
import { jsonText } from "./json.mjs";

// Far past any envelope a host sends (a tool's whole input or response): a cap only so that
// a runaway writer cannot take the machine's memory. Whatever a host can send, the hook must
// read: one it refuses fails open, and a tool call too big for its guard would go through.
const STDIN_CAP = 64 * 1024 * 1024;
const TOO_BIG = "stdin exceeds the 64 MiB native-payload limit";
// `hooks simulate` runs a wrapper with one argument naming its input's form: `canonical`
// (encoded into the host's envelope) or `native`; a host runs it with none. An argument,
// not a variable: one left exported in a shell would reach every hook a host runs there,
// and answer it in a shape the host ignores.
const SIMULATION_FLAG = "--agent-bundle-simulation=";
const RESULT_KEYS = ["outcome", "reason", "updatedInput", "additionalContext"];
// The decisions besides deny that some events take (a spec's `rules.allow`, `rules.ask`).
const APPROVALS = ["allow", "ask"];

// stdout belongs to the host protocol: a stray console.log would corrupt the
// answer (or, for some Claude Code events, be injected as context), so whatever
// the handler writes there goes to stderr: console output (`console.dir` and
// `console.table` too) and `process.stdout` itself, whose getter now gives
// stderr (both streams are still made only when first used). Set when this
// module is evaluated, which a wrapper does before its handler's modules: their
// top-level logging is covered too. Never restored: the process ends right after
// the answer is written to file descriptor 1, and the shared runtime writes MCP
// through `protocolStdout()` for as long as it runs.
const realStdout = Object.getOwnPropertyDescriptor(process, "stdout");
Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => process.stderr });
console.log = console.info = console.debug = console.error;

/** The process's own stdout stream, which carries the host protocol. */
export function protocolStdout() {
  return realStdout.get ? realStdout.get.call(process) : realStdout.value;
}

// The stdout stream, once part of the answer had to go through it (a full pipe): made only
// then, since a stream costs its making on every tool call.
let answerStream = null;

// Once the answer is written, how long what the handler left running (a timer, a socket,
// a child process) may keep the process alive.
const EXIT_GRACE_MS = 50;

/**
 * Runs one hook invocation end to end: stdin -> handler -> stdout/exit code. `load` gives
 * the handler; `source` names its module, for a default export that is no function.
 * Resolves (never rejects) once the answer is written.
 */
export async function runHook(spec, load, source) {
  // The process ending before the answer (a handler promise that never settles, with
  // nothing left to keep Node running; a handler calling process.exit) would say
  // nothing of why.
  // How the hook ended: null until then, "answered" or "failed".
  let ended = null;
  let exitedWith = null;
  const exit = process.exit;
  process.exit = (...code) => {
    // Once answered, the answer's exit code stands (a timer the handler left calling
    // process.exit(2) would make a host read the answer as a blocking error), and the
    // process ends once the answer is out (where a pipe's writes are asynchronous, as on
    // macOS, part of it may still be waiting).
    if (ended) return whenWritten(() => exit.call(process, exitCodeOf(ended)));
    exitedWith = code.map(String).join(", ");
    // As called: an explicit `undefined` would reset the exit code.
    return exit.apply(process, code);
  };
  // Once the hook answered or failed, its code is the process's, whatever the handler set
  // since (a timer's `process.exitCode = 2`, or an `exit` listener of its own, which runs
  // after any of ours: a code 2 would make a host read a failure, or the answer, as a
  // blocking error). Set once every `exit` listener has run.
  const emit = process.emit;
  process.emit = function (name, ...args) {
    const listened = emit.call(this, name, ...args);
    if (name === "exit" && ended) process.exitCode = exitCodeOf(ended);
    return listened;
  };
  process.once("exit", () => {
    if (ended) return;
    process.exitCode = 1;
    report(spec, exitedWith === null
      ? "handler never settled: its promise is still pending and nothing keeps Node running"
      : `handler called process.exit(${exitedWith}) before it answered: return the outcome instead`);
  });
  noteStrayFailures(spec, () => ended);
  try {
    const text = await answerOf(spec, load, source);
    if (text !== "") writeAll(1, text);
    ended = "answered";
    process.exitCode = exitCodeOf(ended);
  } catch (error) {
    process.exitCode = exitCodeOf("failed");
    report(spec, messageOf(error));
    ended = "failed";
  } finally {
    endSoon();
  }
}

/** `"a" or "b"`, `"a", "b" or "c"`: the quoted `values`, as a sentence lists them. */
function alternatives(values) {
  const quoted = values.map((value) => JSON.stringify(value));
  return quoted.length < 2 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

/** The exit code of a hook that `ended` ("answered" or "failed"): a failure never blocks. */
function exitCodeOf(ended) {
  return ended === "answered" ? 0 : 1;
}

/**
 * Why a module's default export can be no handler, as the end of a message: "" for what is
 * no function; a class (which only `new` calls) or a generator function (whose call gives
 * an iterator, never a result); `undefined` for a function a run can call. The build
 * refuses those it sees; one re-exported from another module it cannot.
 */
function uncallable(handler) {
  if (typeof handler !== "function") return "";
  if (isClass(handler)) return ", not a class";
  if (types.isGeneratorFunction(handler)) return ", not a generator function";
  return undefined;
}

/**
 * Whether the function `value` is a class: its source says so, and its `prototype` cannot be
 * written (a method named `class` has none; a frozen function's source is no class's). What
 * cannot be read (a revoked Proxy) is left for the call to say.
 */
function isClass(value) {
  try {
    return (
      Object.getOwnPropertyDescriptor(value, "prototype")?.writable === false &&
      /^class\b/.test(Function.prototype.toString.call(value))
    );
  } catch {
    return false;
  }
}

/** The text to write on stdout for the envelope on stdin ("" for none); throws on any failure. */
async function answerOf(spec, load, source) {
  // The handler's modules are evaluated (and its default export checked) first, whatever
  // the input: a module that throws fails every run, which `agent-bundle validate` (empty
  // stdin) must see.
  const handler = await attempt("handler module failed to load", load);
  const why = uncallable(handler);
  if (why !== undefined) {
    fail(`handler module ${source === undefined ? "" : `${source} `}must default-export a function${why}`);
  }
  const simulation = simulationForm();
  const input = parseInput(await readStdin());
  const given = simulation === "canonical" ? encodeCanonical(spec, input) : simulation === "native" ? nativeSimulationInput(spec, input) : input;
  const { event, context } = decodeNative(spec, given);
  const envelope = context.nativeInput;
  const value = await attempt("handler failed", () => handler(event, context));
  // (What an answer leaves out is said once the host is sure to read the answer: its
  // requirements met.)
  const notes = [];
  const result = await attempt("handler failed", () => checkResult(spec, value, (note) => notes.push(note)), HookFailure);
  checkRequirements(spec, event, result);
  for (const note of notes) report(spec, note);
  const output = project(spec.output, result);
  if (simulation) return jsonText({ nativeInput: envelope, nativeOutput: output, result }, true) + "\n";
  return output === null ? "" : jsonText(output, true);
}


/** The form of a simulation's input (`canonical` or `native`), or null when a host runs the hook. */
function simulationForm() {
  const argument = process.argv[2] ?? "";
  const form = argument.startsWith(SIMULATION_FLAG) ? argument.slice(SIMULATION_FLAG.length) : null;
  return form === "canonical" || form === "native" ? form : null;
}

/**
 * Says what the handler left running failing outside its call (a throw in a timer, a
 * rejection nobody awaits), which would crash Node with a raw trace and exit code 1, as a
 * note on stderr: the hook's answer (and its exit code) stands, before or after it. A deny
 * is answered whatever fails beside it, as the shared runtime answers it, where no such
 * failure can be told to belong to one render. After a failure, whose one line is said, it
 * is not said.
 */
function noteStrayFailures(spec, ended) {
  const on = (what) => (error) => {
    if (ended() === "failed") return;
    const when = ended() === "answered" ? "after the hook answered" : "while the handler ran";
    located(what, error).then(({ message }) => report(spec, `${when} (the answer stands): ${message}`));
  };
  process.on("uncaughtException", on("handler failed"));
  process.on("unhandledRejection", on("handler left a promise rejected"));
}

// The host waits for the process to end, and a hook it times out fails open: a handle the
// handler left open must not turn its deny into nothing. The timer is unref'd, so a process
// with nothing left ends at once, as it would anyway; stdout and stderr drain first.
function endSoon() {
  setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
}

/** Calls `then` once what was written to stdout and stderr has drained. */
function whenWritten(then) {
  const pending = [answerStream, process.stderr].filter((stream) => stream?.writableLength > 0);
  let left = pending.length;
  if (left === 0) return then();
  for (const stream of pending) stream.once("drain", () => --left === 0 && then());
}

/** Writes the one failure line to stderr. */
function report(spec, message) {
  try {
    writeAll(2, `agent-bundle hook ${spec?.hook}: ${message}\n`);
  } catch {
    // stderr is gone too; the exit code is all that is left to report.
  }
}

/**
 * Validates a native envelope against `spec` and returns the frozen canonical
 * `event` with the handler's `context`. Throws on any mismatch. The shared
 * runtime (server.mjs) decodes forwarded envelopes with it too.
 */
export function decodeNative(spec, input) {
  const envelope = deepFreeze(input);
  const event = decodeEnvelope(spec, envelope);
  const context = Object.freeze({
    host: spec.host,
    hostContractRevision: spec.hostContractRevision,
    nativeEvent: spec.nativeEvent,
    nativeInput: envelope,
    ...(spec.tools && { tool: canonicalTool(spec.tools, event.toolName) }),
  });
  return { event, context };
}

// The canonical selector (`shell`, `file.write`, …) whose host pattern the tool's name
// matches, or null: what the handler can branch on whatever the host calls the tool.
function canonicalTool(tools, name) {
  const found = compiledTools(tools).find(([, pattern]) => pattern.test(name));
  return found ? found[0] : null;
}

// A spec's tool patterns, compiled once (the shared runtime decodes many events per spec).
const compiled = new WeakMap();
function compiledTools(tools) {
  let patterns = compiled.get(tools);
  if (patterns === undefined) {
    patterns = Object.entries(tools).map(([tool, pattern]) => [tool, new RegExp(pattern)]);
    compiled.set(tools, patterns);
  }
  return patterns;
}

function fail(message) {
  throw new HookFailure(message);
}

// What the wrapper's own checks throw, told apart from what the handler's code throws while
// they read its result (a getter, a Proxy's trap).
class HookFailure extends Error {}

/**
 * The message of a thrown value, whatever was thrown: an error's message, a string as it is,
 * anything else on one line as Node prints it (`{ code: 42 }`, `null`), not `[object Object]`.
 */
export function messageOf(error) {
  try {
    // (`isNativeError`: an Error of another realm, a `vm` context's, is one too.)
    if (types.isNativeError(error)) return error.message || error.name;
    if (typeof error === "string") return error;
    return inspect(error, { depth: 2, breakLength: Infinity, maxArrayLength: 10, maxStringLength: 200 });
  } catch {
    return "unprintable error";
  }
}

// Reads all of stdin, failing as soon as it grows past STDIN_CAP. Synchronous
// reads are the fast path (no stream set-up); a non-blocking stdin (EAGAIN)
// falls back to the async stream for the rest. Returns a string or a promise.
function readStdin() {
  // Grown as it fills, so a usual envelope costs one small buffer; a byte past the cap is
  // how overflow is noticed without ever buffering more than the cap.
  let buf = Buffer.allocUnsafe(64 * 1024);
  let size = 0;
  for (;;) {
    if (size === buf.length) {
      // (Straight to the cap past the last step short of it: no copy of 64 MiB to see a byte more.)
      const grown = Buffer.allocUnsafe(buf.length * 4 >= STDIN_CAP ? STDIN_CAP + 1 : buf.length * 4);
      buf.copy(grown, 0, 0, size);
      buf = grown;
    }
    let n;
    try {
      n = readSync(0, buf, size, buf.length - size, null);
    } catch (error) {
      if (error.code === "EAGAIN") return readStdinAsync(buf.subarray(0, size));
      if (error.code === "EOF") break; // Windows pipes report end of input this way
      throw error;
    }
    if (n === 0) break;
    size += n;
    if (size > STDIN_CAP) fail(TOO_BIG);
  }
  return buf.toString("utf8", 0, size);
}

function readStdinAsync(head) {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    const chunks = [head];
    let size = head.length;
    stdin.on("data", (chunk) => {
      size += chunk.length;
      if (size > STDIN_CAP) {
        stdin.destroy();
        reject(new Error(TOO_BIG));
      } else {
        chunks.push(chunk);
      }
    });
    stdin.once("end", () => resolve(Buffer.concat(chunks, size).toString("utf8")));
    stdin.once("error", reject);
  });
}

function parseInput(text) {
  let value;
  try {
    value = JSON.parse(text); // rejects empty, whitespace-only and trailing values
  } catch {
    fail("stdin must contain exactly one JSON value");
  }
  if (!isPlainObject(value)) fail("stdin JSON value must be an object");
  return value;
}

/**
 * Where `value` holds what JSON would not carry as it is (a Map, a class instance, a
 * bigint, a function, NaN, a cycle, an array's `undefined` or hole, which JSON writes as
 * null), as "<path> is <what>", or null. (An object's `undefined` field is left out, as
 * JSON leaves it.) Walked with a stack of its own, as `jsonText` writes: an input that
 * deep may come back rewritten.
 */
function notJsonData(value, path) {
  // The objects and arrays being walked (`keys` null for an array), with which item is next.
  const open = [];
  const enclosing = new Set();
  const step = ({ keys, next }) => (keys === null ? `[${next - 1}]` : `.${keys[next - 1]}`);
  const at = () => path + open.map(step).join("");
  let item = value;
  for (;;) {
    const what = notJsonValue(item, enclosing);
    if (what !== null) return `${at()} is ${what}`;
    if (item !== null && typeof item === "object") {
      const keys = Array.isArray(item) ? null : Object.keys(item);
      open.push({ value: item, keys, length: (keys ?? item).length, next: 0 });
      enclosing.add(item);
    }
    // The next item of the innermost object or array not walked whole.
    let walked;
    while ((walked = open.at(-1)) !== undefined && walked.next === walked.length) {
      enclosing.delete(open.pop().value);
    }
    if (walked === undefined) return null;
    const index = walked.next++;
    item = walked.keys === null ? walked.value[index] : walked.value[walked.keys[index]];
    if (walked.keys === null && item === undefined) return `${at()} is ${index in walked.value ? "undefined" : "a hole"}`;
  }
}

// What `value` itself is that JSON would not carry, or null; `enclosing` holds what holds it.
function notJsonValue(value, enclosing) {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return null;
    case "number":
      return Number.isFinite(value) ? null : String(value);
    case "object":
      break;
    default:
      return `a ${typeof value}`;
  }
  if (value === null) return null;
  if (enclosing.has(value)) return "a cycle back to an object that holds it";
  if (!Array.isArray(value) && !isPlainObject(value)) return classOf(value);
  return null;
}

// What an object that is no plain one is said to be: "an object of class Date". Its class is
// its prototype's own constructor; a prototype with none, or with Object's (another realm's),
// is an object's made on another. (A constructor may also throw, or be named nothing.)
export function classOf(value) {
  let name;
  try {
    const proto = Object.getPrototypeOf(value);
    name = Object.hasOwn(proto ?? {}, "constructor") ? proto.constructor?.name : undefined;
  } catch {
    return "an object of a class";
  }
  if (name === undefined || name === "Object") return "an object with a prototype of its own";
  return typeof name === "string" && name !== "" ? `an object of class ${name}` : "an object of a class";
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function hasType(value, type) {
  switch (type) {
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    default: // string, number, boolean
      return typeof value === type;
  }
}

// Own properties only: envelope keys must never resolve through the prototype.
function own(object, key) {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

// Iterative so that a deeply nested (but capped) payload cannot overflow the stack.
function deepFreeze(root) {
  const stack = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== "object" || Object.isFrozen(value)) continue;
    Object.freeze(value);
    for (const child of Object.values(value)) stack.push(child);
  }
  return root;
}

// Native envelope -> frozen canonical event, validating every declared field.
function decodeEnvelope(spec, envelope) {
  const native = spec.nativeEvent;
  if (own(envelope, spec.eventKey) !== native) fail(`native ${spec.eventKey} must equal ${native}`);
  const event = {};
  // Every field's problem is said at once: one run tells all a payload lacks.
  const problems = [];
  for (const field of spec.fields) {
    const key = field.native.find((name) => own(envelope, name) !== undefined);
    if (key === undefined) {
      if (field.required) problems.push(`${field.native[0]} is required`);
      continue; // absent stays absent
    }
    const value = envelope[key];
    const problem = fieldProblem(field, value);
    if (problem !== null) problems.push(`${key} ${problem}`);
    else event[field.canonical] = decodeValue(field, value);
  }
  if (problems.length > 0) fail(problems.map((problem) => `native ${native} ${problem}`).join("; "));
  return deepFreeze(event);
}

/** What is wrong with a native field's value (`must be string`), or null. */
function fieldProblem(field, value) {
  if (field.types.length > 0 && !field.types.some((type) => hasType(value, type))) {
    return `must be ${field.types.join(" or ")}`;
  }
  if (field.enum && !field.enum.includes(value)) return `must be one of ${field.enum.join(", ")}`;
  return null;
}

/** `{ value }` parsed from `text`, or `null` when it is not JSON text. */
function parsedJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

function decodeValue(field, value) {
  switch (field.decode ?? null) {
    case null:
      return value;
    case "json":
      // Hosts that send structured output as a string: parse it when it is
      // JSON, otherwise the string itself is the value (e.g. plain stdout).
      if (typeof value === "string") {
        const parsed = parsedJson(value);
        if (parsed !== null) return parsed.value;
      }
      return value;
    case "positive-count":
      // A loop counter standing in for a boolean flag: n > 0 means "active".
      return typeof value === "number" ? value > 0 : value;
    default:
      return fail(`spec field ${field.canonical} has unknown decode ${field.decode}`);
  }
}

// Simulation: canonical input -> native envelope, reversing the decoders, so
// that the normal validation path runs on exactly what a host would send.
function encodeCanonical(spec, input) {
  const known = new Set(spec.fields.map((field) => field.canonical));
  const unknown = Object.keys(input).find((key) => !known.has(key));
  if (unknown !== undefined) {
    // The host's own input (`hook_event_name`, `session_id`), as captured from it.
    const native = new Set([spec.eventKey, ...spec.fields.flatMap((field) => field.native)]);
    const hint = Object.keys(input).some((key) => !known.has(key) && native.has(key))
      ? "; this is the host's own input: pass it with --native"
      : "";
    fail(`simulation input has unknown field ${unknown} for ${spec.nativeEvent} (its canonical fields: ${[...known].join(", ")})${hint}`);
  }
  const envelope = {};
  const problems = [];
  for (const field of spec.fields) {
    const said = (problem) => problems.push(`simulation input ${field.canonical} ${problem} (native ${field.native[0]})`);
    if (!Object.hasOwn(input, field.canonical)) {
      if (field.required) said(`is required for ${spec.nativeEvent}`);
      continue;
    }
    let value = input[field.canonical];
    // JSON text, or a string that is not JSON as it is: decoding gives the very value back
    // (a string that is JSON text, `"42"`, is encoded so as not to decode to a number).
    if (field.decode === "json" && (typeof value !== "string" || parsedJson(value) !== null)) value = JSON.stringify(value);
    else if (field.decode === "positive-count") {
      // (Canonically a flag, natively a count.)
      if (typeof value !== "boolean") {
        said("must be boolean");
        continue;
      }
      value = value ? 1 : 0;
    }
    const problem = fieldProblem(field, value);
    if (problem !== null) said(problem);
    else envelope[field.native[0]] = value;
  }
  if (problems.length > 0) fail(problems.join("; "));
  envelope[spec.eventKey] = spec.nativeEvent;
  return envelope;
}

// Simulation: the host's own input, as given; canonical input given as native (no
// `hook_event_name`, camelCase fields) is said to be so.
function nativeSimulationInput(spec, input) {
  const native = new Set([spec.eventKey, ...spec.fields.flatMap((field) => field.native)]);
  const canonical = spec.fields.map((field) => field.canonical).find((key) => Object.hasOwn(input, key) && !native.has(key));
  if (!Object.hasOwn(input, spec.eventKey) && canonical !== undefined) {
    fail(`simulation input has no ${spec.eventKey} and the canonical field ${canonical}: this is canonical input: leave out --native`);
  }
  return input;
}

/**
 * Runs `run`; what it throws fails the hook as `<what>: <message> (at <where>)`, but for a
 * failure of the class `ours` (the wrapper's own check of what the handler's code gave),
 * which is said as it is.
 */
async function attempt(what, run, ours = null) {
  try {
    return await run();
  } catch (error) {
    // (A failure of the wrapper's own, `ours`, is said as it is.)
    if (ours !== null && error instanceof ours) throw error;
    throw await located(what, error);
  }
}

/** The failure `<what>: <message> (at <where>)` of a thrown value. */
async function located(what, error) {
  return new Error(`${what}: ${messageOf(error)}${await whereThrown(error)}`);
}

// The wrapper's own file and the source map that ends it, once a failure needs them (`null`:
// it has none, or it could not be read).
let bundle;

/**
 * ` (at src/hooks/guard.ts:12:5)`: the innermost frame of the error's stack in the plugin's
 * own modules, by the source map that ends the running bundle (a line it has no entry on, or
 * one without a source, is the tool's); "" for a thrown non-error, a failure in Node alone,
 * a bundle without a map.
 * With `--enable-source-maps`, Node has mapped the frames already, to paths resolved from the
 * bundle's folder: those are read back to the module's key.
 */
export async function whereThrown(error) {
  try {
    const stack = error?.stack;
    if (typeof stack !== "string") return "";
    if (bundle === undefined) {
      bundle = null; // (Read once, whatever comes of it.)
      const [{ SourceMap }, { pathToFileURL }, { dirname, join }] =
        await Promise.all([import("node:module"), import("node:url"), import("node:path")]);
      const file = realpathSync(process.argv[1]);
      const text = readFileSync(file, "latin1");
      const map = JSON.parse(Buffer.from(text.slice(text.lastIndexOf("base64,") + 7), "base64").toString());
      const sources = map.sources.map((source) => [join(dirname(file), source), source]);
      bundle = { url: pathToFileURL(file).href, map: new SourceMap(map), sources };
    }
    if (!bundle) return "";
    for (const frame of stack.split("\n").filter((line) => line.startsWith("    at "))) {
      const [line, column] = position(frame, bundle.url);
      const at = line === undefined ? {} : bundle.map.findEntry(line - 1, column - 1);
      if (at.generatedLine === line - 1 && at.originalSource !== undefined) {
        return ` (at ${at.originalSource}:${at.originalLine + 1}:${at.originalColumn + 1})`;
      }
      for (const [path, source] of bundle.sources) {
        const [line, column] = position(frame, path);
        if (line !== undefined) return ` (at ${source}:${line}:${column})`;
      }
    }
  } catch {
    // Where is a courtesy: the message says what.
  }
  return "";
}

/** The `line:column` a stack frame gives after `file`, as numbers; `[]` if it names another. */
function position(frame, file) {
  const at = frame.lastIndexOf(`${file}:`);
  const found = at < 0 ? null : /^(\d+):(\d+)/.exec(frame.slice(at + file.length + 1));
  return found === null ? [] : [Number(found[1]), Number(found[2])];
}

// Validates the handler's return value; returns the normalized result
// { outcome, reason?, updatedInput?, additionalContext? }. What it leaves out of an answer
// it gives (context beside a deny, where the host has no place for it) is told to `note`.
export function checkResult(spec, value, note = () => {}) {
  if (value === undefined || value === null) return { outcome: "continue" };
  if (!isPlainObject(value)) {
    // (A class's instance has the fields, but no host would see them as a result's.)
    const instance = typeof value === "object" && !Array.isArray(value) ? `, not ${classOf(value)}` : "";
    fail(`handler must return void or a result object${instance}`);
  }
  for (const key of Object.keys(value)) {
    if (!RESULT_KEYS.includes(key)) {
      fail(`handler result has unsupported field ${key}: use ${RESULT_KEYS.join(", ")}`);
    }
  }
  // Known keys holding `undefined` count as absent (as they would in JSON).
  const { outcome = "continue", reason, updatedInput, additionalContext } = value;
  const { rules, output } = spec;
  // `allow` and `ask` only where the event takes them (a route's tool/before, say): a config
  // hook's outcomes are continue and deny.
  const approvals = APPROVALS.filter((approval) => rules[approval]);
  // (A deny where the event takes none is said by the rules' own message, below.)
  const decisions = [...(rules.deny ? ["deny"] : []), ...approvals];
  if (!["continue", "deny", ...approvals].includes(outcome)) {
    const given =
      typeof outcome === "string" ? JSON.stringify(outcome)
      : outcome === null ? "null"
      : Array.isArray(outcome) ? "an array"
      : /^[aeiou]/.test(typeof outcome) ? `an ${typeof outcome}`
      : `a ${typeof outcome}`;
    fail(`handler result outcome is invalid: ${given}, where ${alternatives(["continue", ...decisions])} is expected`);
  }
  if (reason !== undefined && typeof reason !== "string") fail("handler result reason must be a string");
  if (additionalContext !== undefined && typeof additionalContext !== "string") {
    fail("handler result additionalContext must be a string");
  }
  // (An object of a class, a Map, say, is one: the JSON-data check below says which class.)
  const object = typeof updatedInput === "object" && updatedInput !== null && !Array.isArray(updatedInput);
  if (updatedInput !== undefined && !object) {
    fail("handler result updatedInput must be an object");
  }
  const notData = updatedInput === undefined ? null : notJsonData(updatedInput, "updatedInput");
  if (notData) fail(`handler result updatedInput must hold JSON data only: ${notData}`);

  const denied = outcome === "deny";
  if ((denied && !rules.deny) || (updatedInput !== undefined && (!rules.rewrite || denied))) {
    fail(rules.violation);
  }
  // Where the context has no place: the event's (for every host), or this host's.
  const noContext = !rules.context ? spec.event : !output.context ? `${spec.hostName} ${spec.nativeEvent}` : null;
  // (Empty text is no context, as for a host without the channel below.)
  if (additionalContext && !rules.context && !denied) {
    fail(rules.deny || rules.rewrite ? `${noContext} takes no additionalContext` : rules.violation);
  }
  if (reason !== undefined && outcome === "continue") {
    const observes = !rules.deny && !rules.rewrite && !rules.context;
    fail(observes ? rules.violation
      : decisions.length === 0 ? `reason is only valid with a decision, and ${spec.event} takes none`
      : `reason is only valid with outcome ${alternatives(decisions)}`);
  }
  if (denied && !reason?.trim()) fail(`denied ${spec.event} hook requires a nonempty reason`);

  // A deny is answered whatever comes with it: failing the hook would let the tool run (or
  // the agent stop). Context with no place beside it is left out, and `note` told (the
  // wrapper says it on the hook's stderr; the shared runtime leaves it to the wrapper).
  const contextDropped = denied && Boolean(additionalContext) && noContext !== null;
  const missing =
    outcome !== "continue" && !output[outcome] ? `outcome ${outcome}`
    : additionalContext && !output.context && !contextDropped ? "additionalContext"
    : updatedInput !== undefined && !output.rewrite ? "updatedInput"
    : null;
  if (missing) fail(`${spec.hostName} ${spec.nativeEvent} does not support ${missing}`);
  // A reason the host's answer has no place for would be dropped unsaid.
  if (reason !== undefined && !JSON.stringify(output[outcome]).includes('"$reason"')) {
    fail(`${spec.hostName} ${spec.nativeEvent} takes no reason with outcome ${outcome}`);
  }

  const result = { outcome };
  if (reason !== undefined) result.reason = reason;
  if (updatedInput !== undefined) result.updatedInput = updatedInput;
  if (additionalContext !== undefined && !contextDropped) result.additionalContext = additionalContext;
  if (contextDropped) note(`${noContext} takes no additionalContext: the deny is answered without it`);
  return result;
}

// The conditions under which the host reads an outcome at all (`output.requires`):
// failing the hook beats an answer the host would silently drop.
function checkRequirements(spec, event, result) {
  const given = {
    deny: result.outcome === "deny",
    allow: result.outcome === "allow",
    ask: result.outcome === "ask",
    context: Boolean(result.additionalContext),
    rewrite: result.updatedInput !== undefined,
  };
  for (const [outcome, requirement] of Object.entries(spec.output.requires ?? {})) {
    if (given[outcome]) checkRequirement(spec, event, result, requirement);
  }
}

function checkRequirement(spec, event, result, { field, equals, differs, stringInput, tools, with: companion }) {
  const where = `${spec.hostName} ${spec.nativeEvent}`;
  if (companion !== undefined && result[companion] === undefined) {
    fail(`${where} reads outcome ${result.outcome} only with ${companion}`);
  }
  const name = () => spec.fields.find((f) => f.canonical === field)?.native[0] ?? field;
  if (equals !== undefined && event[field] !== equals) {
    const actual = event[field] === undefined ? "absent" : JSON.stringify(event[field]);
    fail(`${where} reads this outcome only when ${name()} is ${JSON.stringify(equals)}; it is ${actual}`);
  }
  if (differs !== undefined && event[field] === differs) {
    fail(`${where} ignores this outcome when ${name()} is ${JSON.stringify(differs)}`);
  }
  if (stringInput !== undefined && tools.includes(event.toolName)) {
    if (typeof result.updatedInput?.[stringInput] !== "string") {
      fail(`${where} reads a rewritten ${event.toolName} input only with a string ${stringInput}`);
    }
  }
}

// Result -> native output, built only from the host's templates. Returns null
// when there is nothing to write.
function project(templates, result) {
  const merged = {};
  if (result.outcome !== "continue") merge(merged, templates[result.outcome]);
  if (result.additionalContext) merge(merged, templates.context);
  if (result.updatedInput !== undefined) merge(merged, templates.rewrite);
  if (Object.keys(merged).length === 0) return null;
  return fill(merged, {
    $reason: result.reason,
    $context: result.additionalContext,
    $updatedInput: result.updatedInput,
  });
}

// Merges template objects recursively into fresh objects (never into the spec).
function merge(target, template) {
  for (const [key, value] of Object.entries(template)) {
    target[key] = isPlainObject(value) ? merge(isPlainObject(target[key]) ? target[key] : {}, value) : value;
  }
  return target;
}

// Copies a merged template, replacing the $reason/$context/$updatedInput markers by result values.
function fill(value, values) {
  if (typeof value === "string") return Object.hasOwn(values, value) ? values[value] : value;
  if (Array.isArray(value)) return value.map((item) => fill(item, values));
  if (isPlainObject(value)) {
    const copy = {};
    for (const [key, item] of Object.entries(value)) copy[key] = fill(item, values);
    return copy;
  }
  return value;
}

function writeAll(fd, text) {
  const buf = Buffer.from(text);
  let offset = 0;
  try {
    while (offset < buf.length) offset += writeSync(fd, buf, offset);
  } catch (error) {
    // A non-blocking pipe that is full: hand the rest to the stream, which
    // drains before the process ends (`endSoon` waits for it).
    if (error.code !== "EAGAIN") throw error;
    if (fd === 1) answerStream = protocolStdout();
    (fd === 1 ? answerStream : process.stderr).write(buf.subarray(offset));
  }
}
