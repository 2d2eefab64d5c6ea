//! Integration tests: the real binary on real example projects, emitted wrappers run by
//! Node on recorded host payloads, and the JS runtime's own Node test suite.

mod support;

pub(crate) mod builds;
mod cache;
pub(crate) mod cache_remote;
mod cache_remote_s3;
mod diagnostics;
mod docs;
mod host_smoke;
mod host_validation;
mod routes;
mod runtime;
mod shared_code;
mod shared_runtime;
mod types;
mod validate;
mod watch;
mod workspace;
mod wrappers;
