//! The `agent-bundle` binary: all behaviour lives in the library; see `cli`.

fn main() -> std::process::ExitCode {
    // Like any Unix filter, stop quietly when the reader of stdout goes away
    // (`agent-bundle build --json | head`) instead of panicking in `println!`. Publishing
    // is atomic, so a build stopped this way leaves the previous artifact whole.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // A build allocates and frees thousands of buffers of tens to hundreds of KiB (sources,
    // wrappers, cache objects). glibc's defaults hand such memory back to the kernel and fault
    // it in again, zeroed, a page at a time: a warm build of 100 plugins spent a fifth of its
    // time there. Keep it in the heap instead (at most 64 MiB of it left unused).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
    let stack = agent_bundle::threads::STACK_SIZE;
    match std::thread::Builder::new().name("main".into()).stack_size(stack).spawn(agent_bundle::cli::run) {
        // A panic is a bug of ours, never bad input (1) or usage (2): Rust's own code for it.
        Ok(cli) => cli.join().unwrap_or(std::process::ExitCode::from(101)),
        Err(_) => agent_bundle::cli::run(),
    }
}
