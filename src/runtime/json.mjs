// JSON text of data of any depth. V8's `JSON.stringify` recurses on the call stack and
// overflows a few thousand levels deep, where `JSON.parse` does not: a host may send input
// that deep (a model writes a tool's arguments), and a guard must still judge it and
// answer. No import: every wrapper and the shared runtime carry it.

/**
 * `JSON.stringify(value)` of JSON data (what `JSON.parse` gives, and results checked to be
 * data), whatever its depth. With `wellFormed`, every string value is made well-formed
 * first (a lone surrogate becomes U+FFFD).
 */
export function jsonText(value, wellFormed = false) {
  const replacer = wellFormed ? wellFormedString : undefined;
  try {
    // Native, where it can: several times faster than any writer in JavaScript.
    return JSON.stringify(value, replacer);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return deepJsonText(value, replacer);
  }
}

/**
 * What `JSON.stringify` writes, with a stack of its own rather than the call stack. What
 * has a `toJSON` (a `Date`) is left to `JSON.stringify`; a cycle throws, as it does there.
 */
function deepJsonText(value, replacer) {
  const parts = [];
  // Values to write (each in an array of one), text to write, and the ends of the
  // objects and arrays open (`{ end, value }`).
  const stack = [[value]];
  const open = new Set();
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === "string") {
      parts.push(next);
      continue;
    }
    if (!Array.isArray(next)) {
      open.delete(next.value);
      parts.push(next.end);
      continue;
    }
    const [item] = next;
    if (item === null || typeof item !== "object" || typeof item.toJSON === "function") {
      // (A function, a symbol or `undefined` in an array is written `null`, as there.)
      parts.push(JSON.stringify(item, replacer) ?? "null");
      continue;
    }
    if (open.has(item)) throw new TypeError("Converting circular structure to JSON");
    open.add(item);
    const array = Array.isArray(item);
    const keys = array ? null : Object.keys(item).filter((key) => !leftOut(item[key]));
    const count = array ? item.length : keys.length;
    stack.push({ end: array ? "]" : "}", value: item });
    for (let i = count - 1; i >= 0; i--) {
      stack.push(array ? [item[i]] : [item[keys[i]]]);
      if (!array) stack.push(`${JSON.stringify(keys[i])}:`);
      if (i > 0) stack.push(",");
    }
    parts.push(array ? "[" : "{");
  }
  return parts.join("");
}

// What JSON leaves out of an object.
function leftOut(value) {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

// A string cut inside a character (`"😀".slice(0, 1)`) holds a lone surrogate, which JSON
// writes as an escape that hosts parsing strictly refuse (Codex is written in Rust): the
// answer would be lost, and a deny with it. Such a part becomes U+FFFD instead.
function wellFormedString(_key, value) {
  return typeof value === "string" ? value.toWellFormed() : value;
}
