// Tests for json.mjs: the JSON text of data of any depth is JSON.stringify's.
//
// Run: node --test src/runtime/

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { jsonText } from "./json.mjs";

const nested = (depth) => JSON.parse("[".repeat(depth) + "{}" + "]".repeat(depth));

describe("jsonText", () => {
  test("writes what JSON.stringify writes", () => {
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
    for (const value of values) assert.equal(jsonText(value), JSON.stringify(value));
  });

  test("writes data far deeper than JSON.stringify can", () => {
    const deep = nested(200_000);
    assert.throws(() => JSON.stringify(deep), RangeError);
    const text = jsonText(deep);
    assert.equal(text, "[".repeat(200_000) + "{}" + "]".repeat(200_000));
  });

  test("makes strings well-formed when asked, keys as they are", () => {
    const value = { "\ud800": ["a\udc00b"] };
    assert.equal(jsonText(value), JSON.stringify(value));
    assert.equal(jsonText(value, true), '{"\\ud800":["a\ufffdb"]}');
  });

  test("a cycle throws; an object met twice, not in a cycle, is written twice", () => {
    const cycle = { a: [] };
    cycle.a.push(cycle);
    assert.throws(() => jsonText(cycle), TypeError);
    const shared = { x: 1 };
    assert.equal(jsonText([shared, { shared }]), '[{"x":1},{"shared":{"x":1}}]');
  });
});
