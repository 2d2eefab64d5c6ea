//! Ctrl-C (or SIGTERM, SIGHUP) during a build: no publish starts once it came, the ones under
//! way finish (each ends in one swap), and the command exits with 130 (one that came after
//! the last publish changes nothing: the build is whole, and says so); a second signal kills
//! at once. So an interrupted build leaves every artifact whole and nothing beside it.
//! `hooks simulate` and `validate`, once they run node, stop the processes they run
//! (`crate::child`) and remove their scratch folders the same way. (Watch mode has its own
//! handler: it stops between builds.)

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The signals that ask a command to stop: Ctrl-C, `kill`, a closed terminal. (Watch mode
/// routes them to a handler of its own, which wakes its loop and ends the session with 0.)
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
    // Any of them next kills the process (a Ctrl-C then a `kill`, as well as two Ctrl-C).
    for signal in SIGNALS {
        // SAFETY: signal(2) is async-signal-safe.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
}

/// Routes the signals to [`requested`] for the rest of the process.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for signal in SIGNALS {
        // SAFETY: the handler only stores an atomic and resets its own disposition.
        unsafe { libc::signal(signal, handler as libc::sighandler_t) };
    }
}

/// Set once work was left undone for a stop.
static CUT_SHORT: AtomicBool = AtomicBool::new(false);

/// Whether the command was asked to stop; if so, the caller starts no more work, and the
/// command ends with 130 ([`cut_short`]).
pub fn stops_here() -> bool {
    let requested = REQUESTED.load(Ordering::SeqCst);
    if requested {
        CUT_SHORT.store(true, Ordering::SeqCst);
    }
    requested
}

/// Whether a stop left work undone. (One that came after the last work was done changes
/// nothing: the command ends as it would have.)
pub fn cut_short() -> bool {
    CUT_SHORT.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After any one of the signals, each of them kills at once (a Ctrl-C then a `kill`):
    /// checked in a forked child, whose signal dispositions and stop request are its own.
    #[test]
    fn after_one_signal_every_one_kills() {
        // SAFETY: the child only sets and reads signal dispositions and ends with `_exit`,
        // all async-signal-safe, as a child of a threaded process must.
        unsafe {
            let child = libc::fork();
            if child == 0 {
                install();
                on_signal(libc::SIGINT);
                let mut killed_by_default = true;
                for signal in SIGNALS {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(signal, std::ptr::null(), &mut action);
                    killed_by_default &= action.sa_sigaction == libc::SIG_DFL;
                }
                libc::_exit(if killed_by_default { 0 } else { 1 });
            }
            let mut status = 0;
            assert_eq!(libc::waitpid(child, &mut status, 0), child);
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
        }
    }
}
