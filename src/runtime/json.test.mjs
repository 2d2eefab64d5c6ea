// Tests for json.mjs: the JSON text of data of any depth is JSON.stringify's.
//
// Run: node --test src/runtime/

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { jsonText } from "./json.mjs";

// Deeper than V8's JSON.stringify reaches: jsonText writes these with its own stack.
const DEPTH = 20_000;
const deep = (value) => {
  let wrapped = value;
  for (let i = 0; i < DEPTH; i++) wrapped = [wrapped];
  return wrapped;
};
const deepText = (text) => "[".repeat(DEPTH) + text + "]".repeat(DEPTH);

describe("jsonText", () => {
  test("writes what JSON.stringify writes, natively where it can and at any depth", () => {
    const values = [
      { a: 1, b: [true, null, "x\n\"y\"", 1.5e300, -0], c: {}, d: [] },
      { skipped: undefined, f() {}, [Symbol("s")]: 1, s: Symbol("t"), kept: 0 },
      [undefined, () => {}, Symbol("u"), NaN, Infinity, , 3],
      { when: new Date(0), nested: { when: new Date(1) } },
      "text",
      42,
      null,
      { "key with \"quotes\"": { "": [[], [{}]] } },
    ];
    assert.throws(() => JSON.stringify(deep(0)), RangeError);
    for (const value of values) {
      assert.equal(jsonText(value), JSON.stringify(value));
      assert.equal(jsonText(deep(value)), deepText(JSON.stringify(value)));
    }
  });

  test("makes strings well-formed when asked, keys as they are, at any depth", () => {
    const value = { "\ud800": ["a\udc00b"] };
    assert.equal(jsonText(value), JSON.stringify(value));
    assert.equal(jsonText(value, true), '{"\\ud800":["a\ufffdb"]}');
    assert.equal(jsonText(deep(value), true), deepText('{"\\ud800":["a\ufffdb"]}'));
  });

  test("a cycle throws; an object met twice, not in a cycle, is written twice", () => {
    const cycle = { a: [] };
    cycle.a.push(cycle);
    assert.throws(() => jsonText(cycle), TypeError);
    assert.throws(() => jsonText(deep(cycle)), TypeError);
    const shared = { x: 1 };
    assert.equal(jsonText(deep([shared, { shared }])), deepText('[{"x":1},{"shared":{"x":1}}]'));
  });
});
