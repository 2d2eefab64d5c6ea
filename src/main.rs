//! The `agent-bundle` binary: all behaviour lives in the library; see `cli`.

fn main() -> std::process::ExitCode {
    // Like any Unix filter, stop quietly when the reader of stdout goes away
    // (`agent-bundle build --json | head`) instead of panicking in `println!`. Publishing
    // is atomic, so a build stopped this way leaves the previous artifact whole.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    agent_bundle::cli::run()
}
