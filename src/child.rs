//! Running a child process to its end within a time limit: `hooks simulate` runs a wrapper
//! this way, `validate` every wrapper and `claude plugin validate`.
//!
//! The child leads a process group of its own, killed once the child exits or its time is
//! up, so whatever it started and left running goes with it. It also gets SIGKILL when
//! this process dies (Ctrl-C no longer reaches it through the terminal's group). Its
//! output is read on threads of their own, and waited for only briefly after the group is
//! gone: a process that left the group can hold the pipes open for ever.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the output of an exited child is waited for.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// How a child run by [`run`] ended, and what it printed until then.
pub struct Ran {
    /// `None` when it did not exit within its time (it was stopped).
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// What a node process's stderr says went wrong: Node's `…Error: …` line (it prints the
/// failing source line and a caret before it) with the location it gave first; else the
/// last line of this tool's own (`agent-bundle …`: what a module printed as it loaded comes
/// before); else its last line.
pub fn node_failure(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let Some(first) = lines.first() else { return "(it printed nothing)".to_owned() };
    let is_error =
        |line: &&str| line.split_once(": ").is_some_and(|(name, _)| name.ends_with("Error") && !name.contains(' '));
    if let Some(error) = lines.iter().find(|line| is_error(line)) {
        return if error == first { (*error).to_owned() } else { format!("{error} (at {first})") };
    }
    let own = lines.iter().rev().find(|line| line.starts_with("agent-bundle "));
    own.or(lines.last()).map_or_else(String::new, |line| (*line).to_owned())
}

/// How often a wait for a child looks whether this process was asked to stop.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Runs `command` with `input` on its stdin; its status is `None` once `timeout` passed
/// without it exiting. An `Err` is a child that could not be started, or one stopped because
/// this process was asked to ([`crate::interrupt`]; `ErrorKind::Interrupted`).
pub fn run(command: &mut Command, input: Vec<u8>, timeout: Duration) -> io::Result<Ran> {
    // Asked already: nothing more is started.
    if crate::interrupt::stops_here() {
        return Err(interrupted());
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    // SAFETY: prctl(2) is async-signal-safe, as a pre-exec hook must be.
    unsafe {
        command.pre_exec(|| match libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        })
    };
    let mut child = command.spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let stdout = Drain::start(child.stdout.take().expect("stdout is piped"));
    let stderr = Drain::start(child.stderr.take().expect("stderr is piped"));
    let leader = child.id();
    let (exited, exit) = mpsc::channel();
    std::thread::spawn(move || exited.send(child.wait()));
    let status = wait_unless_interrupted(&exit, timeout);
    kill_group(leader);
    let _ = writer.join();
    let status = status?.transpose()?;
    Ok(Ran { status, stdout: stdout.text(), stderr: stderr.text() })
}

/// What `exit` sends within `timeout` (`None` if nothing), unless the process is asked to
/// stop first (`ErrorKind::Interrupted`).
pub(crate) fn wait_unless_interrupted<T>(exit: &Receiver<T>, timeout: Duration) -> io::Result<Option<T>> {
    // (A timeout past what an `Instant` holds waits as long as one can.)
    let deadline = Instant::now().checked_add(timeout);
    loop {
        if crate::interrupt::stops_here() {
            return Err(interrupted());
        }
        let left = deadline.map_or(Duration::MAX, |deadline| deadline.saturating_duration_since(Instant::now()));
        match exit.recv_timeout(left.min(INTERRUPT_POLL)) {
            Ok(sent) => return Ok(Some(sent)),
            Err(RecvTimeoutError::Timeout) if left > INTERRUPT_POLL => {}
            Err(_) => return Ok(None),
        }
    }
}

fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted")
}

/// Kills the process group whose leader is `leader` (started with `process_group(0)`).
fn kill_group(leader: u32) {
    if let Ok(pid) = libc::pid_t::try_from(leader) {
        // SAFETY: a plain syscall on the group this process made for its child.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// A stream read to its end on a thread of its own (so a full pipe never blocks the child).
pub struct Drain {
    read: Arc<Mutex<Vec<u8>>>,
    ended: Receiver<()>,
}

impl Drain {
    pub fn start(mut stream: impl Read + Send + 'static) -> Drain {
        let read = Arc::new(Mutex::new(Vec::new()));
        let (end, ended) = mpsc::channel();
        let into = read.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n @ 1..) = stream.read(&mut chunk) {
                into.lock().expect("no panics while locked").extend_from_slice(&chunk[..n]);
            }
            let _ = end.send(());
        });
        Drain { read, ended }
    }

    /// What was read once the stream ended, or once `PIPE_GRACE` passed.
    pub fn text(self) -> String {
        let _ = self.ended.recv_timeout(PIPE_GRACE);
        String::from_utf8_lossy(&self.read.lock().expect("no panics while locked")).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Running, not a zombie waiting for a reaper that no container may have.
    fn alive(pid: &str) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
    }

    #[test]
    fn a_child_past_its_time_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 600 & echo $! > {}; wait", pid_file.display());
        let script = format!("echo started >&2; {script}");
        let ran = run(Command::new("sh").args(["-c", &script]), Vec::new(), Duration::from_millis(300)).unwrap();
        assert!(ran.status.is_none(), "no answer within the time");
        assert_eq!(ran.stderr, "started\n", "what it printed until then is kept");
        // SIGKILL lands asynchronously: the process may take a moment to go.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        for _ in 0..100 {
            if !alive(&pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(&pid));
    }

    #[test]
    fn what_node_said_went_wrong_is_its_error_line_or_the_tool_s_own() {
        let crash = "file:///a/event-runtime.mjs:3\nimport { readFilSync } from 'node:fs';\n         ^^^\n\
                     SyntaxError: The requested module 'node:fs' does not provide an export named 'readFilSync'\n\
                     \n    at ModuleJob._instantiate\n\nNode.js v20.20.2\n";
        assert_eq!(
            node_failure(crash),
            "SyntaxError: The requested module 'node:fs' does not provide an export named 'readFilSync' (at \
             file:///a/event-runtime.mjs:3)"
        );
        let printed = "hi from load\nagent-bundle hook h: handler module failed to load: x (at src/a.ts:1:1)\n";
        assert_eq!(node_failure(printed), "agent-bundle hook h: handler module failed to load: x (at src/a.ts:1:1)");
        assert_eq!(node_failure("only this\n"), "only this");
        assert_eq!(node_failure(""), "(it printed nothing)");
    }

    #[test]
    fn a_child_gets_its_input_and_its_output_is_read_whole() {
        let ran = run(&mut Command::new("cat"), b"hello".to_vec(), Duration::from_secs(30)).unwrap();
        assert!(ran.status.is_some_and(|status| status.success()));
        assert_eq!((ran.stdout.as_str(), ran.stderr.as_str()), ("hello", ""));
    }
}
