//! agent-bundle compiles one plugin source tree (`agent-bundle.config.ts` plus TypeScript
//! handlers) into one artifact folder that Claude Code, Codex and Cursor each load as a
//! native plugin, with a portable Agent Plugins manifest beside them.
//!
//! The pipeline, as folders: `config` → `routes` → `model` → `hosts` → `bundle` → `emit`, driven as a
//! salsa query graph (`db`) by `build`; `loader` is the only reader of the project and
//! `emit::publish` the only writer of the artifact (but for watch mode putting back, in
//! publish's turn, a manifest removed by hand). See ARCHITECTURE.md.

pub mod actions;
pub mod artifact;
pub mod build;
pub mod bundle;
pub mod cache;
pub mod child;
pub mod cli;
pub mod config;
pub mod db;
pub mod declarations;
pub mod diagnostics;
pub mod emit;
pub mod hosts;
pub mod interrupt;
pub mod loader;
pub mod model;
pub mod output;
pub mod routes;
pub mod source;
pub mod stamp;
pub mod threads;
pub mod validate;
pub mod watch;
pub mod workspace;
