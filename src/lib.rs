//! agent-bundle compiles one plugin source tree (`agent-bundle.config.ts` plus TypeScript
//! handlers) into one artifact folder that Claude Code, Codex and Cursor each load as a
//! native plugin, with a portable Agent Plugins manifest beside them.
//!
//! The pipeline, as folders: `config` → `routes` → `model` → `hosts` → `bundle` → `emit`, driven as a
//! salsa query graph (`db`) by `build`; `loader` is the only reader of the project and
//! `emit::publish` the only writer of the artifact (but for watch mode putting back, in
//! publish's turn, a manifest removed by hand). See ARCHITECTURE.md.
//!
//! Only what the binary, the integration tests and the benches use is public; every other
//! module is the crate's own, so the compiler reports what nothing uses.

pub(crate) mod actions;
pub mod artifact;
pub mod build;
pub(crate) mod bundle;
pub mod cache;
pub(crate) mod child;
pub mod cli;
pub(crate) mod config;
pub(crate) mod db;
pub(crate) mod declarations;
pub(crate) mod diagnostics;
pub mod emit;
pub(crate) mod hosts;
pub(crate) mod interrupt;
pub(crate) mod loader;
pub(crate) mod model;
pub(crate) mod output;
pub(crate) mod routes;
pub(crate) mod source;
pub(crate) mod stamp;
pub mod threads;
pub(crate) mod validate;
pub(crate) mod watch;
pub(crate) mod workspace;
