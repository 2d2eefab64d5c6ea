//! The `agent-bundle` binary: all behaviour lives in the library; see `cli`.

fn main() -> std::process::ExitCode {
    // Like any Unix filter, stop quietly when the reader of stdout goes away
    // (`agent-bundle build --json | head`) instead of panicking in `println!`. Publishing
    // is atomic, so a build stopped this way leaves the previous artifact whole.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let stack = agent_bundle::workspace::STACK_SIZE;
    // Work that runs on rayon's global pool gets the same deep stacks as the build pools.
    let _ = rayon::ThreadPoolBuilder::new().stack_size(stack).build_global();
    match std::thread::Builder::new().name("main".into()).stack_size(stack).spawn(agent_bundle::cli::run) {
        Ok(cli) => cli.join().unwrap_or(std::process::ExitCode::FAILURE),
        Err(_) => agent_bundle::cli::run(),
    }
}
