//! The `agent-bundle` binary: all behaviour lives in the library; see `cli`.

fn main() -> std::process::ExitCode {
    agent_bundle::cli::run()
}
