// agent-bundle JSX runtime (`agent-bundle/jsx-runtime`).
//
// Event routes (`src/events/<family>.tsx`) are compiled by oxc with the
// automatic JSX runtime and import source `agent-bundle`, so `<X a={1}>hi</X>`
// becomes `jsx(X, { a: 1, children: "hi" })` imported from here. The Rust
// bundler maps the bare specifier to this file.
//
// An element is a plain frozen object `{ $$typeof, type, props }`: `$$typeof`
// is `Symbol.for("agent-bundle.element")`, `type` is a function component,
// `Fragment`, or whatever the author wrote (route.mjs rejects the rest), and
// `props` is a frozen copy of the props, children in `props.children` (one
// value or an array). There is no React and no reconciliation, so `key` is
// accepted and ignored. route.mjs renders these elements.
//
// This file is parsed on every route run: it does no work at load time.

const ELEMENT = Symbol.for("agent-bundle.element");

/** Marker type of `<>…</>`: its children render in place. */
export const Fragment = Symbol.for("agent-bundle.fragment");

/** Creates an element. `key` is ignored (nothing is reconciled). */
export function jsx(type, props, key) {
  return Object.freeze({ $$typeof: ELEMENT, type, props: Object.freeze({ ...props }) });
}

/** Same as `jsx`; oxc calls it when the children are a static array. */
export const jsxs = jsx;

/**
 * The classic form, which the automatic transform still emits for `<X {...p} key="k" />`
 * (imported from `agent-bundle` itself): children as arguments.
 */
export function createElement(type, props, ...children) {
  const all = children.length === 0 ? {} : { children: children.length === 1 ? children[0] : children };
  const { key: _key, ...rest } = props ?? {};
  return jsx(type, { ...rest, ...all });
}
