//! The build's threads: every thread that parses, checks or prints a syntax tree runs with a
//! deep stack ([`STACK_SIZE`]), on a pool made on first use ([`on_deep_pool`]) or for a
//! workspace's builds ([`thread_pool`]).

use std::sync::OnceLock;

use crate::cache::Cache;

/// How many threads builds run on: `jobs`, else one per core, or with a remote cache as
/// many as it takes requests at once, since its lookups wait on the network, not on the CPU
/// ([`crate::cache::remote_concurrency`]). Stamp checks never wait on the network.
#[derive(Clone, Copy, Debug)]
pub struct Threads {
    pub checks: usize,
    pub builds: usize,
}

impl Threads {
    pub fn new(cache: &Cache, jobs: Option<usize>) -> Threads {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let builds = jobs.unwrap_or(if cache.has_remote() { crate::cache::remote_concurrency() } else { cores });
        // (Checks stat files: more threads than cores only wait on each other.)
        Threads { checks: jobs.map_or(cores, |jobs| jobs.min(cores)), builds }
    }
}

/// The pool builds run on (see [`Threads`]).
pub fn thread_pool(cache: &Cache, jobs: Option<usize>) -> std::io::Result<rayon::ThreadPool> {
    pool_of(Threads::new(cache, jobs).builds)
}

/// A pool whose threads have [`STACK_SIZE`] stacks, and know it ([`on_deep_pool`]): of
/// `threads` threads, or of as many as can be had (half as many each time): each reserves
/// its stack's address space, which a limit (`ulimit -v`, strict overcommit) may grant for
/// a few only.
pub(crate) fn pool_of(threads: usize) -> std::io::Result<rayon::ThreadPool> {
    let mut threads = threads.max(1);
    loop {
        // Spawned here, to be joined when the pool fails: the threads it started exit, but
        // only once they run, and hold their stacks until then.
        let spawned = std::sync::Mutex::new(Vec::new());
        let built = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(STACK_SIZE)
            .start_handler(|_| ON_DEEP_POOL.set(true))
            .spawn_handler(|thread| {
                let builder = std::thread::Builder::new().stack_size(thread.stack_size().unwrap_or(STACK_SIZE));
                let handle = builder.spawn(|| thread.run())?;
                spawned.lock().expect("no panics while locked").push(handle);
                Ok(())
            })
            .build();
        match built {
            Ok(pool) => return Ok(pool),
            Err(_) if threads > 1 => {
                for handle in spawned.into_inner().expect("no panics while locked") {
                    let _ = handle.join();
                }
                threads /= 2;
            }
            Err(error) => {
                let message = format!("cannot start a thread with a {} MiB stack: {error}", STACK_SIZE >> 20);
                return Err(std::io::Error::other(message));
            }
        }
    }
}

thread_local! {
    /// Whether this thread is a worker of a pool made by [`pool_of`].
    static ON_DEEP_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work`, and whatever it runs in parallel, on a pool of deep stacks: this thread's,
/// when it is a worker of one, else a shared one made on first use. Why not rayon's global
/// pool built with deep stacks at start: a command answered without compiling (a no-op
/// build, `hooks list`) would start a pool for nothing (0.4 ms of a 2 ms no-op).
pub fn on_deep_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static SHARED: OnceLock<rayon::ThreadPool> = OnceLock::new();
    if ON_DEEP_POOL.get() {
        return work();
    }
    if let Some(pool) = SHARED.get() {
        return pool.install(work);
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    match pool_of(cores) {
        Ok(pool) => SHARED.get_or_init(|| pool).install(work),
        // Not even one deep thread to be had (a memory limit): here, with rayon's global pool
        // for what runs in parallel, as before pools were made on demand (deep input may
        // overflow then); a pool is tried again next time.
        Err(_) => work(),
    }
}

/// Whether `run` returns on this thread's stack, where it could overflow it (oxc's parser
/// and the passes after it recurse once per level of nesting, and an overflow aborts the
/// whole process, whatever thread it is on): tried first in a forked copy of the process, on the same stack at the
/// same depth, which is the one to die. The copy runs `run` alone and leaves with `_exit`;
/// it touches no lock but the allocator's, which glibc makes safe across a fork. `Err` when
/// no copy can be made.
pub fn returns_within_stack(run: impl FnOnce()) -> Result<bool, String> {
    // SAFETY: the child runs `run` with its stderr on /dev/null (an overflow's message is
    // for no one) and no core to dump (one per module refused, of the whole process's
    // size), then leaves by `_exit`: no destructor, handler or buffered output runs twice.
    // The parent only waits for it.
    unsafe {
        match libc::fork() {
            -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
            0 => {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
                if null >= 0 {
                    libc::dup2(null, 2);
                }
                libc::setrlimit(libc::RLIMIT_CORE, &libc::rlimit { rlim_cur: 0, rlim_max: 0 });
                libc::prctl(libc::PR_SET_DUMPABLE, 0);
                let returned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_ok();
                libc::_exit(if returned { 0 } else { 1 })
            }
            child => {
                // Waited for within a bound: a copy stuck (on a lock another thread held at
                // the fork) tells nothing, and `run` is then taken to return.
                let started = std::time::Instant::now();
                let mut status = 0;
                loop {
                    match libc::waitpid(child, &mut status, libc::WNOHANG) {
                        0 if started.elapsed() < PROBE_LIMIT => std::thread::sleep(std::time::Duration::from_millis(2)),
                        0 => {
                            libc::kill(child, libc::SIGKILL);
                            libc::waitpid(child, &mut status, 0);
                            return Ok(true);
                        }
                        -1 if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                        -1 => return Ok(true),
                        // (An overflow aborts, or faults where no handler runs; Ctrl-C reaches
                        // the copy too, and a copy killed tells nothing.)
                        _ => {
                            let overflowed = libc::WIFSIGNALED(status)
                                && matches!(libc::WTERMSIG(status), libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS);
                            return Ok(!overflowed);
                        }
                    }
                }
            }
        }
    }
}

/// How long a copy of the process may take to tell whether a compile overflows
/// ([`returns_within_stack`]): that of a module of megabytes takes well under a second.
const PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The stack of every thread that parses, checks or prints a syntax tree: oxc recurses once
/// per level of nesting, and the usual 2 to 8 MiB overflow (an abort, no diagnostic) at a
/// few thousand levels of `[[[…]]]`. Reserved, not committed: a thread touches only as
/// many pages as its input is deep.
pub const STACK_SIZE: usize = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// Work meant for deep stacks leaves a thread that is not a deep pool's worker, and stays
    /// on one that is (no pool inside a pool).
    #[test]
    fn deep_work_runs_on_a_deep_pool_once() {
        let here = std::thread::current().id();
        let (flagged, outer, inner) = on_deep_pool(|| {
            let outer = std::thread::current().id();
            (ON_DEEP_POOL.get(), outer, on_deep_pool(|| std::thread::current().id()))
        });
        assert!(flagged && outer != here && inner == outer);
        let pool = pool_of(1).unwrap();
        let same = pool.install(|| std::thread::current().id() == on_deep_pool(|| std::thread::current().id()));
        assert!(same, "a build pool's worker runs it itself");
    }

    /// Whether code would overflow its stack is found out in a copy of the process, which
    /// dies of it alone.
    #[test]
    fn an_overflow_is_found_out_in_a_copy_of_the_process() {
        fn deeper(levels: u64) -> u64 {
            let frame = std::hint::black_box([levels; 64]);
            if levels == 0 { frame[0] } else { deeper(levels - 1) + frame[1] }
        }
        let on_a_small_stack = |levels: u64| {
            let probe = move || returns_within_stack(|| _ = std::hint::black_box(deeper(levels))).unwrap();
            std::thread::Builder::new().stack_size(1 << 20).spawn(probe).unwrap().join().unwrap()
        };
        assert!(on_a_small_stack(10));
        assert!(!on_a_small_stack(1_000_000), "a megabyte's stack holds no million frames");
    }

    #[test]
    fn a_remote_cache_gets_many_more_threads_than_cores() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(thread_pool(&Cache::disabled(), None).unwrap().current_num_threads(), cores);
        assert_eq!(thread_pool(&Cache::disabled(), Some(3)).unwrap().current_num_threads(), 3);
        let remote = crate::cache::RemoteOptions { url: "http://127.0.0.1:9/cache".into(), ..Default::default() };
        let options = crate::cache::CacheOptions { dir: None, remote: Some(remote) };
        let threads = thread_pool(&Cache::open(&options).unwrap(), None).unwrap().current_num_threads();
        assert!(threads >= 16 && threads >= cores, "{threads}");
    }
}
