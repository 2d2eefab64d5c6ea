// Shared plumbing of the model-API mocks: options, the request log, the loopback listener,
// and exiting with the parent. No npm dependencies.
//
//   node <mock>.mjs [--port N] [--log FILE] [--script JSON]
//
// The script (also MOCK_SCRIPT) is a JSON array with one step per model request, in order;
// the last step answers every later request. A step is {"shell": "<command>"} (call the
// client's shell tool), {"tool": "<name>", "input": {…}} (call another of its tools; an
// OpenAI step may add the tool's "namespace") or {"text": "<reply>"} (end the turn). Every
// request the mock receives is appended to the log (also MOCK_LOG) as one JSON line
// {"n", "method", "path", "body"}, before it is answered. Once listening, the mock prints
// `{"port": N}` on stdout. It exits when stdin closes or its parent dies.

import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

export function options(argv = process.argv.slice(2)) {
  const flag = (name) => {
    const at = argv.indexOf(`--${name}`);
    return at === -1 ? undefined : argv[at + 1];
  };
  const script = JSON.parse(flag('script') ?? process.env.MOCK_SCRIPT ?? '[{"text": "done"}]');
  if (!Array.isArray(script) || script.length === 0) throw new Error('the script must be a non-empty JSON array');
  return { port: Number(flag('port') ?? process.env.MOCK_PORT ?? 0), log: flag('log') ?? process.env.MOCK_LOG, script };
}

/**
 * Serves `answer(step, body, request, response)` for `POST <path>`; anything else gets 404.
 * `step` is the script entry for this model request (counted over `POST <path>` only).
 */
export function serve({ port, log, script }, path, answer) {
  let requests = 0;
  let models = 0;
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = raw;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {}
      const url = new URL(request.url, 'http://mock');
      if (log) appendFileSync(log, `${JSON.stringify({ n: requests++, method: request.method, path: url.pathname, body })}\n`);
      if (request.method === 'POST' && url.pathname === path) {
        answer(script[Math.min(models++, script.length - 1)], body, request, response);
      } else {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { type: 'not_found', message: `mock: no ${request.method} ${url.pathname}` } }));
      }
    });
  });
  server.listen(port, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
  });
  // Exit with whoever started us: stdin closing, or being re-parented.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && process.exit(0), 500).unref();
  return server;
}

/** Writes one server-sent event. */
export function sse(response, event, data) {
  response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
