// agent-bundle shared-runtime protocol: the endpoint, the wire format, and the
// client side that a shared route's wrapper uses.
//
// A route with `runtime: 'shared'` renders inside the plugin's generated MCP
// server (server.mjs), which lives as long as the host session, so routes share
// module state. The wrapper the host runs forwards the validated envelope there:
//
//   wrapper --(one JSON line)--> Unix socket --> server renders the route
//   wrapper <--(one JSON line)-- { status: "ok", output } | { status: "error", code }
//
// - The socket is `<dir>/event-<install><build>.sock`, where dir is
//   $AGENT_BUNDLE_RUNTIME_DIR or `<tmpdir>/agent-bundle-<uid>` (0700, ours), install
//   is 16 hex digits of the cyrb128 hash of "<target>:<install root>" and build 16 of
//   "<epoch>:<target>:<install root>": two installs, two targets or two builds never
//   share a runtime, and a wrapper that finds no runtime of its build can tell one of
//   another build of its install (a host still running the previous build's). Not
//   sha256: the name proves nothing (the directory guards access, the epoch is
//   checked on every request), and loading node:crypto would cost every hook ~5 ms.
// - The wrapper starts connecting before it reads stdin, so the connection is
//   made while the host's envelope is read and validated; it takes node:net as
//   a builtin (process.getBuiltinModule), which starts faster than importing it
//   as an ES module.
// - A message is at most 64 MiB, newline-terminated; one request per connection.
// - Nothing is fabricated. The only fallback is the route's compiled standalone
//   form, and only when no live socket exists (runtime-unavailable; a directory
//   refused as unsafe holds none, and is never connected to). A timeout, an
//   epoch mismatch, an invalid message or a failed render is an error (the hook
//   exits 1, which hosts read as a failed hook): stale code never answers.

import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { jsonText } from "./json.mjs";

export const PROTOCOL_VERSION = 1;
// As much as a wrapper reads from its host (hook.mjs's STDIN_CAP), and room for the request's
// own fields: an envelope a wrapper took fits, written again about as long as it came.
export const MESSAGE_CAP = 64 * 1024 * 1024 + 64 * 1024;
export const TOO_BIG = "Event runtime message exceeds the 64 MiB limit.";

// A socket path must fit `sun_path`: 108 bytes on Linux, 104 on macOS and the BSDs, the
// terminator included. A socket's name is `event-<32 hex>.sock`.
const MAX_SOCKET_PATH = process.platform === "linux" ? 107 : 103;
const SOCKET_NAME_LENGTH = "event-.sock".length + 32;
// The part of a socket's name that all builds of one install (and target) share.
const INSTALL_PREFIX_LENGTH = "event-".length + 16;

/**
 * The per-user directory holding runtime sockets. macOS's per-user TMPDIR
 * (`/var/folders/…/T/`) leaves too little room for a socket's name: then the
 * directory is under /tmp instead, as wrappers and runtime both compute.
 */
export function runtimeDir() {
  const chosen = process.env.AGENT_BUNDLE_RUNTIME_DIR;
  // (Hooks run in the project's folder, the runtime in the plugin's: a relative path would
  // name two places.)
  if (chosen && !isAbsolute(chosen)) {
    const refused = runtimeError("runtime-unavailable", `AGENT_BUNDLE_RUNTIME_DIR must be an absolute path, not ${chosen}`);
    throw Object.assign(refused, { refusedDir: true });
  }
  if (chosen) return chosen;
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  const dir = join(tmpdir(), `agent-bundle-${uid}`);
  const fits = Buffer.byteLength(dir) + 1 + SOCKET_NAME_LENGTH <= MAX_SOCKET_PATH;
  return fits ? dir : join("/tmp", `agent-bundle-${uid}`);
}

/** Whether `path` fits a Unix socket address. */
export function fitsSocketAddress(path) {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH;
}

/** The socket path of the runtime for `epoch` and `target` installed at `root`. */
export function endpoint(epoch, target, root) {
  const install = cyrb128(`${target}:${root}`).slice(0, 16);
  const build = cyrb128(`${epoch}:${target}:${root}`).slice(0, 16);
  return join(runtimeDir(), `event-${install}${build}.sock`);
}

/** cyrb128 (bryc, public domain) over UTF-16 code units, as 32 hex digits. */
export function cyrb128(text) {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i += 1) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, "0")).join("");
}

/** The artifact root of a file at `<root>/<folder>/<file>` (symlinks resolved). */
export function installRoot(file) {
  return dirname(dirname(realpathSync(file)));
}

/** Why a directory may not hold runtime sockets, or null when it may. */
export function unsafeDir(stat) {
  // (A link is not followed: whoever may change it chooses where the sockets go.)
  if (stat.isSymbolicLink()) return "is a symbolic link, not a directory";
  if (!stat.isDirectory()) return "is not a directory";
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) return "belongs to another user";
  if ((stat.mode & 0o077) !== 0) {
    return "is accessible to other users (`chmod 700` it, or name a folder that does not exist yet: the runtime makes it 0700)";
  }
  return null;
}

/** An error carrying one of the protocol's failure codes. */
export function runtimeError(code, message) {
  return Object.assign(new Error(message), { code });
}

/**
 * Accumulates newline-terminated text from a socket, at most MESSAGE_CAP bytes.
 * Calls `onLine(text)` once with the first line (or with everything received
 * when the peer ends without a newline), `onTooBig()` past the cap.
 */
export function readLine(socket, onLine, onTooBig) {
  const chunks = [];
  let size = 0;
  let done = false;
  const finish = (text) => {
    if (done) return;
    done = true;
    onLine(text);
  };
  socket.on("data", (chunk) => {
    if (done) return;
    const newline = chunk.indexOf(10);
    const take = newline === -1 ? chunk : chunk.subarray(0, newline);
    size += take.length;
    if (size > MESSAGE_CAP) {
      done = true;
      onTooBig();
      return;
    }
    chunks.push(take);
    if (newline !== -1) finish(Buffer.concat(chunks).toString("utf8"));
  });
  socket.once("end", () => finish(Buffer.concat(chunks).toString("utf8")));
}

/**
 * Starts connecting to the runtime of `shared` (`{ epoch, target, startupWaitMs? }`) now, and
 * returns `{ socket, startedAt }`: the promise of the connected socket, and when the
 * route's time started to run. The socket does not keep the
 * process alive until a request is sent on it, and a rejection nobody awaits
 * (the envelope was invalid) goes unreported: the wrapper already failed.
 */
export function connectRuntime(shared) {
  const startedAt = Date.now();
  // Synchronous where it can be, so the connection is under way before stdin is
  // read; Node < 20.16 has no process.getBuiltinModule.
  const socket =
    typeof process.getBuiltinModule === "function"
      ? openSocket(process.getBuiltinModule("node:net"), shared)
      : import("node:net").then((net) => openSocket(net, shared));
  socket.catch(() => {});
  return { socket, startedAt };
}

// How often a wrapper that may run before its runtime listens (`startupWaitMs`) looks again.
const STARTUP_POLL_MS = 25;

// The argument `hooks simulate --standalone` runs a shared route's wrapper with: it starts no
// runtime, so none is waited for.
const NO_RUNTIME_FLAG = "--agent-bundle-no-runtime";

// The connected socket; while `shared.startupWaitMs` lasts, a runtime not there yet (a host
// that starts its MCP servers beside the hook) is looked for again.
function openSocket(net, shared) {
  const wait = process.argv.includes(NO_RUNTIME_FLAG) ? 0 : (shared.startupWaitMs ?? 0);
  const deadline = Date.now() + wait;
  const again = (error) => {
    // (A refused directory stays refused: a runtime starting would refuse it too.)
    if (error.code !== "runtime-unavailable" || error.refusedDir || Date.now() >= deadline) throw error;
    return new Promise((resolve) => setTimeout(resolve, STARTUP_POLL_MS).unref()).then(() =>
      connectOnce(net, shared).catch(again),
    );
  };
  return connectOnce(net, shared).catch(again);
}

function connectOnce(net, shared) {
  return new Promise((resolve, reject) => {
    const path = socketFor(shared.epoch, shared.target);
    const socket = net.connect(path);
    socket.unref();
    socket.once("connect", () => resolve(socket));
    // Stays attached: an error after connecting also reaches the exchange.
    socket.on("error", (error) => {
      const gone = error.code === "ENOENT" || error.code === "ECONNREFUSED";
      reject(gone ? unavailable(path) : runtimeError("runtime-failed", `shared runtime connection failed: ${error.message}`));
    });
  });
}

// Why no runtime answers at `path`. After a rebuild, the host's MCP server still runs the
// previous build's runtime, whose socket the wrappers of this build do not look for: that is
// worth saying (`staleBuild`: a fallback says it too), for one readdir on the failure path only.
function unavailable(path) {
  const message = `shared runtime unavailable: no live socket at ${path}`;
  const other = otherBuild(path);
  if (other === null) return runtimeError("runtime-unavailable", message);
  const stale =
    `${message}; another build of this plugin has a socket here (${other}): if the host's MCP server ` +
    "runs that build, restart it to load this one (a new session starts it anew)";
  return Object.assign(runtimeError("runtime-unavailable", stale), { staleBuild: true });
}

// The name of a socket of another build of the same install and target beside `path`, or null.
function otherBuild(path) {
  const name = basename(path);
  const install = name.slice(0, INSTALL_PREFIX_LENGTH);
  try {
    const others = readdirSync(dirname(path));
    return others.find((other) => other !== name && other.startsWith(install) && other.endsWith(".sock")) ?? null;
  } catch {
    return null;
  }
}

/**
 * The handler of a shared route's wrapper: sends the validated envelope to the
 * runtime and returns the route's rendered result. `shared` is
 * `{ hook, epoch, target, family, timeoutMs }`; `standalone(leftMs)` renders the route in
 * this process within `leftMs` and is null when the route has no fallback; `connection` is
 * what `connectRuntime(shared)` returned when the wrapper started.
 *
 * `timeoutMs` bounds it all, the wait for a runtime that is starting and the fallback
 * included: the host's timeout for the hook is the route's, plus a second.
 */
export async function forwardRoute(shared, context, standalone, connection = connectRuntime(shared)) {
  const request = {
    protocolVersion: PROTOCOL_VERSION,
    artifactEpoch: shared.epoch,
    event: shared.family,
    hostContractRevision: context.hostContractRevision,
    target: context.host,
    native: context.nativeInput,
  };
  const left = () => Math.max(1, shared.timeoutMs - (Date.now() - connection.startedAt));
  try {
    return await exchange(connection.socket, request, left(), shared);
  } catch (error) {
    if (error.code !== "runtime-unavailable" || !standalone) throw error;
    // Said, as it lasts until someone fixes the directory (a runtime refuses it too), or
    // restarts the host's MCP server (every render standalone starts its module state anew).
    if (error.refusedDir) say(shared, `${error.message}: no runtime serves from it; the route renders standalone`);
    if (error.staleBuild) say(shared, `${error.message}; until then the route renders standalone`);
    return standalone(left());
  }
}

/**
 * A line on the hook's stderr that does not fail it, as hook.mjs words its own (not imported
 * from there: hook.mjs takes `process.stdout` over when loaded, and this module is loaded
 * without it too, as the runtime's tests do).
 */
function say(shared, message) {
  process.stderr.write(`agent-bundle hook ${shared.hook}: ${message}\n`);
}

function socketFor(epoch, target) {
  const dir = runtimeDir();
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    throw runtimeError("runtime-unavailable", `shared runtime unavailable: ${dir} does not exist`);
  }
  const unsafe = unsafeDir(stat);
  // Another user's directory, or one others may enter, holds no runtime of ours (a runtime
  // refuses it) and whatever listens there is not asked: no runtime is live.
  if (unsafe) {
    const refused = runtimeError("runtime-unavailable", `refusing the shared runtime: ${dir} ${unsafe}`);
    throw Object.assign(refused, { refusedDir: true });
  }
  return endpoint(epoch, target, installRoot(process.argv[1]));
}

// Sends `request` on the `connected` socket and waits `waitMs` at most for the reply (the
// rest of `shared.timeoutMs`, which the message names).
function exchange(connected, request, waitMs, { timeoutMs, epoch }) {
  // (About the size of the envelope the wrapper read, at most STDIN_CAP: one written again
  // longer, as `1e20` is, past MESSAGE_CAP, is refused by the runtime as invalid-message.)
  const text = jsonText(request);
  return new Promise((resolve, reject) => {
    let socket = null;
    let settled = false;
    const settle = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const timer = setTimeout(
      () => settle(runtimeError("runtime-timeout", `shared runtime did not answer within ${timeoutMs} ms`)),
      waitMs,
    );
    connected.then((connection) => {
      if (settled) return connection.destroy();
      socket = connection;
      socket.ref();
      // EPIPE: the runtime closed the connection before the request reached it. It stopped,
      // or it dropped a connection whose request came too late (see server.mjs).
      socket.once("error", (error) => {
        const message =
          error.code === "EPIPE"
            ? "shared runtime closed the connection before the request reached it " +
              "(it may have stopped, or the request came too late)"
            : `shared runtime connection failed: ${error.message}`;
        settle(runtimeError("runtime-failed", message));
      });
      readLine(
        socket,
        (line) => {
          try {
            settle(null, decodeReply(line, epoch));
          } catch (error) {
            settle(error);
          }
        },
        () => settle(runtimeError("invalid-message", TOO_BIG)),
      );
      socket.end(`${text}\n`);
    }, settle);
  });
}

// The runtime's reply -> the route's result, or the error it reports.
function decodeReply(line, epoch) {
  if (line === "") {
    throw runtimeError("runtime-failed", "shared runtime closed the connection without answering (it may have stopped)");
  }
  let reply;
  try {
    reply = JSON.parse(line);
  } catch {
    throw runtimeError("invalid-message", "shared runtime reply is not JSON");
  }
  if (reply === null || typeof reply !== "object" || reply.protocolVersion !== PROTOCOL_VERSION) {
    throw runtimeError("invalid-message", "shared runtime reply does not match the wire schema");
  }
  if (reply.status === "error") {
    // (A render that failed was taken, not refused.)
    const what = reply.code === "runtime-failed" ? "could not answer" : "refused the request";
    throw runtimeError(reply.code, `shared runtime ${what} (${reply.code}): ${reply.message}`);
  }
  if (reply.status !== "ok") throw runtimeError("invalid-message", "shared runtime reply has no status");
  // A runtime of another build must never answer for this one.
  if (reply.artifactEpoch !== epoch) throw runtimeError("epoch-mismatch", "shared runtime answered for another build");
  return reply.output;
}
