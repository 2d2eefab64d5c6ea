//! The JS/TS bundler: turns a hook handler and the relative modules it imports into one
//! self-contained ES module ("wrapper") that Node 20 runs.
//!
//! Each module is compiled on its own, by [`transpile`] then [`link_module`] (two cache
//! actions: a warm cache never parses): oxc parses the original source,
//! every problem is reported at a byte span of that source, and the transformer strips types
//! and lowers JSX. The JavaScript output is parsed again and rewritten with plain text edits at
//! known spans (no AST is built): imports become reads of namespace objects (`__ab_i0.name`,
//! so bindings stay live), exports become getters, and the module is wrapped in an
//! `__ab_define(key, function* (__ab_exports) { ... }, names, stars)` chunk whose first step
//! (up to a `yield`) links it: it installs the getters and binds its imports' namespaces; the
//! export names and `export *` sources let the runtime resolve star exports statically, as
//! ESM does. Keys are project-relative paths or `agent-bundle:` virtual keys ([`resolve`]
//! maps specifiers to them), so chunks are independent of each other and of the machine.
//! [`assemble`] puts the chunks behind static `node:` builtin imports and a tiny lazy module
//! runtime that, as ESM, links a module's whole static graph before it runs any of it, then
//! runs the bodies depth-first post-order, each once (`__ab_require`; both from worklists, not
//! by recursion, so a chain of thousands of imports works): in a cycle, a hoisted
//! function of a module that has not run yet works, and does not run it; an early
//! `let`/`const`/class read throws a ReferenceError. One difference is left: a module that
//! throws marks itself failed, not the other modules of its cycle, which Node marks too (a
//! later `import()` of one of them gives it, half run; a wrapper has failed already).

mod answers;
mod builtins;
mod check;
mod default_export;
mod enums;
mod link;
mod namespaces;
mod nesting;
mod renders;
mod resolve;
mod source_map;
mod transpile;
mod wrapper;

#[cfg(test)]
mod tests;

pub use answers::Rendering;
#[cfg(test)]
pub use link::compile_module;
pub use link::{Assembled, Binding, LinkSource, ModuleChunk, ModuleImport, assemble, link_module};
pub use renders::Renders;
pub use resolve::{ResolveFailure, Resolved, is_importable_file, outside_dirs, resolve};
pub use transpile::{BundleDiagnostic, BundleErrorKind, Severity, Span, Transpiled, transpile};
pub use wrapper::{
    IPC_KEY, ModuleGraph, ROUTE_KEY, RUNTIME_KEY, RuntimeRoute, SERVER_KEY, SharedCall, aliases, handler_body,
    hook_epilogue, route_epilogue, runtime_epilogue, shared_route_epilogue, virtual_module,
};
