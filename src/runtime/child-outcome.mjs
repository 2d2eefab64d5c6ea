// What the runtime tests assert about a finished child process ({ code,
// stdout, stderr }): stdin, stdout, stderr and the exit code are the
// contract of an emitted hook. Not embedded in any wrapper.

import assert from "node:assert/strict";

/** The environment a test's child runs with: nothing of the test runner's own. */
export const childEnv = { ...process.env };
delete childEnv.NODE_TEST_CONTEXT;
delete childEnv.NODE_OPTIONS;

export function succeeds(r) {
  assert.equal(r.stderr, "", "stderr");
  assert.equal(r.code, 0, "exit code");
}

/** Succeeds with exactly `expected` as JSON on stdout, without a trailing newline. */
export function writes(r, expected) {
  succeeds(r);
  assert.ok(!r.stdout.endsWith("\n"), "no trailing newline");
  assert.deepEqual(JSON.parse(r.stdout), expected);
}

export function writesNothing(r) {
  succeeds(r);
  assert.equal(r.stdout, "");
}

/** Fails as hook `spec.hook` does: exit 1, one line on stderr, nothing on stdout. */
export function failsWith(r, spec, message) {
  assert.equal(r.stdout, "", "stdout must stay empty on failure");
  assert.equal(r.code, 1, "exit code");
  assert.equal(r.stderr, `agent-bundle hook ${spec.hook}: ${message}\n`);
}
