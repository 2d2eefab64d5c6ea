//! The incremental build graph at scale, on a generated monorepo (default 100 plugins × 10
//! hooks, every hook on Claude Code, Codex and Cursor, handlers with relative imports).
//! Each figure is a ratio measured in this one run:
//!
//! - cold build (empty cache) against `esbuild --bundle` of the same handler entries;
//! - warm build in a new process with a full local cache against cold: without an artifact
//!   (also against the floor of writing its files), and with it kept while every input was
//!   touched or the stamp lost;
//! - no-op rebuild against the floor of walking and stat-ing the inputs;
//! - the cold and warm builds of the same fixture with every handler importing one module
//!   above the plugins (`shared/log.ts`);
//! - watch mode: one handler edited → artifact published (p50/p95, debounce included);
//! - empty local cache + warm remote cache (nginx, and an S3 bucket in s3rver, on
//!   loopback) against cold.
//!
//! `cargo bench --bench build_graph` (env: BENCH_PLUGINS, BENCH_HOOKS, BENCH_RUNS, and
//! BENCH_DIR for where the fixture and caches live, e.g. `/dev/shm` to leave the disk out).
//! `cargo bench --bench build_graph -- --generate DIR` only writes the fixture (see
//! `benches/hyperfine.sh`; with BENCH_SHARED set, the shared-code one). esbuild comes from npm, installed into ~/.cache/agent-bundle.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let plugins = env_number("BENCH_PLUGINS", 100);
    let hooks = env_number("BENCH_HOOKS", 10);
    if let Some(index) = args.iter().position(|a| a == "--generate") {
        let dir = PathBuf::from(args.get(index + 1).expect("--generate DIR"));
        let shared = std::env::var("BENCH_SHARED").is_ok_and(|value| !value.is_empty());
        generate(&dir, plugins, hooks, shared);
        println!("generated {plugins} plugins × {hooks} hooks in {}", dir.display());
        return;
    }
    if args.iter().any(|a| a == "--bench") && args.iter().any(|a| a == "--test") {
        return;
    }
    let runs = env_number("BENCH_RUNS", 3);
    // BENCH_DIR=/dev/shm measures the compiler without the disk (see README): every
    // temporary directory below (fixture, caches, esbuild's output) goes there.
    if let Some(dir) = std::env::var_os("BENCH_DIR") {
        // SAFETY: still single-threaded; nothing reads the environment concurrently.
        unsafe { std::env::set_var("TMPDIR", dir) };
    }
    let work = tempfile::tempdir().unwrap();
    SCRATCH.set(work.path().to_owned()).unwrap();
    let repo = work.path().join("monorepo");
    generate(&repo, plugins, hooks, false);
    let total_hooks = plugins * hooks;
    println!(
        "build graph benchmark: {plugins} plugins × {hooks} hooks = {total_hooks} hooks × 3 hosts ({runs} runs each, best taken)"
    );

    let cold = cold_build(&repo, runs);
    let esbuild = esbuild_floor(&repo, runs);
    report("cold build (empty cache) / esbuild --bundle", cold, esbuild, "goal ≤ 1.0");

    let cache = work.path().join("cache");
    let warm = warm_build(&repo, &cache, runs);
    report("warm build (new process, full cache, no artifact) / cold", warm, cold, "goal ≤ 0.1");
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let writing = write_floor(&repo, runs, threads);
    report("warm build (no artifact) / writing its files alone", warm, writing, "the floor of that case");
    let writing_alone = write_floor(&repo, runs, 1);
    report("… and against one thread writing them", warm, writing_alone, "the floor on one core");
    // The artifact kept: every input touched since the last build (a branch switched and
    // back), so each is read and hashed again, and the stamp vouches for the artifact; or
    // the stamp lost too, so the artifact is read and checked against its manifest.
    let up_to_date = |prepare: &dyn Fn()| {
        best(runs, || {
            prepare();
            let report = time_with(|| build(&repo, &["--cache-dir", cache.to_str().unwrap()]));
            assert_eq!(report.1.matches("(up to date, ").count(), plugins, "nothing runs, nothing is written");
            report.0
        })
    };
    // As for the no-op below, the last publish more than a second ago (a checkout is touched
    // some time after its build): directories changed within a second are never trusted
    // by their times, and walking them again would add ~20 ms to every build here.
    std::thread::sleep(Duration::from_millis(1100));
    let touched = up_to_date(&|| touch_inputs(&repo));
    report("warm build (new process, full cache, artifact kept, inputs touched) / cold", touched, cold, "goal ≤ 0.1");
    let lost = up_to_date(&|| clean_stamps(&repo));
    report("warm build (new process, full cache, artifact kept, stamp lost) / cold", lost, cold, "goal ≤ 0.1");

    // No-op: everything built and published already (and the stamps older than a second).
    build(&repo, &["--cache-dir", cache.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(1100));
    let noop = best(runs.max(5), || time(|| build(&repo, &["--cache-dir", cache.to_str().unwrap()])));
    let floor = best(runs.max(5), || time(|| walk_and_stat(&repo)));
    report("no-op rebuild / walk+stat of the inputs", noop, floor, "goal ≤ 2, and < 50 ms");

    // The same fixture with every handler's logger in one folder above the plugins, which the
    // build lists on demand (and a fresh checkout finds through the cache's outside-dirs).
    let shared = work.path().join("monorepo-shared");
    generate(&shared, plugins, hooks, true);
    let shared_cold = cold_build(&shared, runs);
    report("cold build, handlers importing shared code / cold", shared_cold, cold, "shared code costs");
    let shared_warm = warm_build(&shared, &work.path().join("shared-cache"), runs);
    report("warm build (no artifact), shared code / its cold", shared_warm, shared_cold, "goal ≤ 0.1");
    discard(&shared);

    let edits = runs.max(20);
    watch_latency("watch: one handler edited → published", &repo.join("plugins/p000"), &[], 1, &cache, edits);
    let workspace = ["--workspace", "."];
    watch_latency("watch --workspace: the same edit", &repo, &workspace, plugins, &cache, edits);

    remote_caches(&repo, cold, runs);
}

/// The best of `runs` cold builds of `repo`: an empty cache and no artifact every time.
fn cold_build(repo: &Path, runs: usize) -> Duration {
    best(runs, || {
        clean_artifacts(repo);
        let cache = fresh_dir();
        let elapsed = time(|| build(repo, &["--cache-dir", cache.to_str().unwrap()]));
        discard(&cache);
        elapsed
    })
}

/// The best of `runs` warm builds of `repo` over `cache` (filled first): a new process, no
/// artifact yet (so everything is published), and not one cache miss.
fn warm_build(repo: &Path, cache: &Path, runs: usize) -> Duration {
    clean_artifacts(repo);
    build(repo, &["--cache-dir", cache.to_str().unwrap()]);
    best(runs, || {
        clean_artifacts(repo);
        let elapsed = time(|| build(repo, &["--cache-dir", cache.to_str().unwrap()]));
        assert_eq!(action_misses(cache), 0, "a warm cache transpiles nothing");
        elapsed
    })
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Writes the fixture: `plugins/pNNN/` projects, each with `hooks` handlers importing two
/// shared relative modules of its own; with `shared`, the logger is one module above the
/// plugins (`shared/log.ts`) that every handler imports.
fn generate(dir: &Path, plugins: usize, hooks: usize, shared: bool) {
    let log = "import { appendFileSync } from 'node:fs';\nexport function log(line: string): void {\n  if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, line + '\\n');\n}\n";
    let log_import = if shared { "../../../../shared/log.js" } else { "./lib/log.js" };
    if shared {
        std::fs::create_dir_all(dir.join("shared")).unwrap();
        std::fs::write(dir.join("shared/log.ts"), log).unwrap();
    }
    for p in 0..plugins {
        let root = dir.join(format!("plugins/p{p:03}"));
        std::fs::create_dir_all(root.join("src/hooks/lib")).unwrap();
        let before: Vec<String> =
            (0..hooks / 2).map(|h| format!("{{ handler: './src/hooks/h{h:02}.ts', tools: ['shell'] }}")).collect();
        let after: Vec<String> = (hooks / 2..hooks).map(|h| format!("'./src/hooks/h{h:02}.ts'")).collect();
        let config = format!(
            "import {{ defineConfig }} from 'agent-bundle/config';\n\nexport default defineConfig({{\n  plugin: {{ name: 'bench-p{p:03}', version: '1.0.0' }},\n  targets: ['claude', 'codex', 'cursor'],\n  hooks: {{\n    beforeTool: [{}],\n    afterTool: [{}],\n  }},\n}});\n",
            before.join(", "),
            after.join(", ")
        );
        std::fs::write(root.join("agent-bundle.config.ts"), config).unwrap();
        std::fs::write(
            root.join("src/hooks/lib/rules.ts"),
            format!("export const PLUGIN = 'p{p:03}';\nexport interface Rule {{ pattern: RegExp; reason: string }}\nexport const RULES: Rule[] = [\n  {{ pattern: /rm -rf \\//, reason: `${{PLUGIN}}: no root removal` }},\n  {{ pattern: /--force/, reason: `${{PLUGIN}}: no force` }},\n];\n"),
        )
        .unwrap();
        if !shared {
            std::fs::write(root.join("src/hooks/lib/log.ts"), log).unwrap();
        }
        for h in 0..hooks {
            std::fs::write(
                root.join(format!("src/hooks/h{h:02}.ts")),
                format!(
                    "import {{ RULES }} from './lib/rules.js';\nimport {{ log }} from '{log_import}';\n\ninterface Event {{ toolName?: string; toolInput?: {{ command?: string }} }}\n\nexport default (event: Event) => {{\n  const command = event.toolInput?.command ?? '';\n  log(`h{h:02} ${{event.toolName}}`);\n  const rule = RULES.find((r) => r.pattern.test(command));\n  return rule ? {} : undefined;\n}};\n",
                    // (A tool's `afterTool` hook cannot deny: it says why instead.)
                    if h < hooks / 2 {
                        "{ outcome: 'deny' as const, reason: rule.reason }"
                    } else {
                        "{ additionalContext: rule.reason }"
                    }
                ),
            )
            .unwrap();
        }
    }
}

/// A workspace build with human output, as a developer runs it (`--json` adds reading
/// every hook index back and about 1.3 MB of output); returns what it printed.
fn build(repo: &Path, extra: &[&str]) -> String {
    build_with_env(repo, extra, &[])
}

fn build_with_env(repo: &Path, extra: &[&str], env: &[(&str, String)]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-bundle"))
        .args(["build", "--workspace", "."])
        .args(extra)
        .current_dir(repo)
        .env_remove("AGENT_BUNDLE_REMOTE_CACHE")
        .envs(env.iter().map(|(name, value)| (name, value)))
        .output()
        .unwrap();
    assert!(output.status.success(), "the fixture builds: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The last build's cache misses (`cache-format/SPEC.md` §7.3): zero means every action,
/// every transpile and link included, was answered by the cache.
fn action_misses(cache: &Path) -> u64 {
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cache.join("v1/last-build.json")).unwrap()).unwrap();
    record["action_misses"].as_u64().unwrap()
}

fn clean_artifacts(repo: &Path) {
    for entry in std::fs::read_dir(repo.join("plugins")).unwrap() {
        discard(&entry.unwrap().path().join("artifact"));
    }
    clean_stamps(repo);
}

/// Forgets the no-op stamps, so the next build cannot trust file states.
fn clean_stamps(repo: &Path) {
    for entry in std::fs::read_dir(repo.join("plugins")).unwrap() {
        discard(&entry.unwrap().path().join(".agent-bundle"));
    }
}

/// Sets every input's modification time to now, as a `git checkout` that switched branches
/// and back leaves it: the same bytes, none of the states the stamp recorded.
fn touch_inputs(repo: &Path) {
    let now = std::time::SystemTime::now();
    let inputs = walkdir::WalkDir::new(repo.join("plugins"))
        .into_iter()
        .filter_entry(|e| e.file_name() != "artifact" && e.file_name() != ".agent-bundle");
    for entry in inputs.map(Result::unwrap).filter(|entry| entry.file_type().is_file()) {
        std::fs::File::options().append(true).open(entry.path()).unwrap().set_modified(now).unwrap();
    }
}

/// The directory every temporary tree of the run lives in (removed at the end).
static SCRATCH: OnceLock<PathBuf> = OnceLock::new();

fn scratch_path() -> PathBuf {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    SCRATCH.get().unwrap().join(format!("scratch-{}", COUNT.fetch_add(1, Ordering::Relaxed)))
}

/// A new empty directory for one run (a cache, an output folder).
fn fresh_dir() -> PathBuf {
    let dir = scratch_path();
    std::fs::create_dir(&dir).unwrap();
    dir
}

/// Moves a tree out of the way instead of deleting it. Why: right after thousands of files
/// are deleted, ext4 spends much of the next file creations skipping their inodes
/// (`recently_deleted` in a profile), so deleting between runs made each later figure on
/// disk measure the deletions before it, for every tool alike.
fn discard(path: &Path) {
    if path.exists() {
        std::fs::rename(path, scratch_path()).unwrap();
    }
}

/// Times `f` as a user waits for it: writes count once they are in the page cache (the
/// kernel writes them out later). Flushing before each run was tried: on the development
/// VM it makes every file creation several times slower, for tools and the write floor
/// alike, so that measures the disk rather than the build; `BENCH_DIR=/dev/shm` leaves
/// the disk out.
fn time<T>(f: impl FnOnce() -> T) -> Duration {
    time_with(f).0
}

fn time_with<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let value = f();
    (started.elapsed(), value)
}

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap()
}

fn report(what: &str, measured: Duration, baseline: Duration, goal: &str) {
    println!(
        "  {what:<48} {:>9.1} ms / {:>9.1} ms = {:>6.3}×   ({goal})",
        ms(measured),
        ms(baseline),
        measured.as_secs_f64() / baseline.as_secs_f64()
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The floor of any build: find every input file and stat it.
fn walk_and_stat(repo: &Path) {
    let mut count = 0usize;
    for entry in walkdir::WalkDir::new(repo).into_iter().filter_entry(|e| e.file_name() != "artifact") {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            std::fs::metadata(entry.path()).unwrap();
            count += 1;
        }
    }
    assert!(count > 0);
}

/// Writing every artifact file of the fixture (bytes already in memory) into a fresh tree on
/// `threads` threads, each taking an equal run of the files in path order: what any build
/// that has no artifact yet must do at least, on as many cores as the build has.
fn write_floor(repo: &Path, runs: usize, threads: usize) -> Duration {
    let files = artifacts(repo);
    let share = files.len().div_ceil(threads).max(1);
    best(runs, || {
        let out = fresh_dir();
        time(|| {
            std::thread::scope(|scope| {
                for part in files.chunks(share) {
                    let out = &out;
                    scope.spawn(move || {
                        for (path, bytes) in part {
                            let target = out.join(path.strip_prefix(repo).unwrap());
                            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                            std::fs::write(target, bytes).unwrap();
                        }
                    });
                }
            })
        })
    })
}

/// esbuild bundling every handler entry of the fixture, once, in one process.
fn esbuild_floor(repo: &Path, runs: usize) -> Duration {
    let tools = Path::new(&std::env::var("HOME").unwrap()).join(".cache/agent-bundle/bench-tools");
    let binary = tools.join("node_modules/.bin/esbuild");
    if !binary.exists() {
        let status = Command::new("npm")
            .args([
                "install",
                "--prefix",
                tools.to_str().unwrap(),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "esbuild@0.28.2",
            ])
            .status()
            .expect("npm is installed");
        assert!(status.success(), "installing esbuild from npm");
    }
    let entries: Vec<PathBuf> = walkdir::WalkDir::new(repo)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().parent().is_some_and(|p| p.ends_with("src/hooks")) && e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    best(runs, || {
        let out = fresh_dir();
        time(|| {
            let status = Command::new(&binary)
                .args(&entries)
                .args(["--bundle", "--platform=node", "--format=esm", "--log-level=error"])
                .arg(format!("--outdir={}", out.display()))
                .arg(format!("--outbase={}", repo.display()))
                .status()
                .unwrap();
            assert!(status.success());
        })
    })
}

/// Edits one handler (of `plugins/p000` in a workspace) in a watch session started in `dir`
/// with `extra` arguments, repeatedly; time from the write to the report of the published
/// build, once the session's `initial` first builds were reported.
fn watch_latency(label: &str, dir: &Path, extra: &[&str], initial: usize, cache: &Path, edits: usize) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-bundle"))
        .args(["watch", "--json", "--cache-dir", cache.to_str().unwrap()])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || serde_json::from_str::<serde_json::Value>(&lines.next().unwrap().unwrap()).unwrap();
    let started = Instant::now();
    for _ in 0..initial {
        assert_eq!(next()["ok"], true);
    }
    let first_builds = started.elapsed();
    let project = if extra.contains(&"--workspace") { dir.join("plugins/p000") } else { dir.to_owned() };
    let handler = project.join("src/hooks/h00.ts");
    let original = std::fs::read_to_string(&handler).unwrap();
    let mut samples = Vec::new();
    let mut rewritten_ok = true;
    for edit in 0..edits {
        std::thread::sleep(Duration::from_millis(60));
        let started = Instant::now();
        std::fs::write(&handler, format!("{original}// edit {edit}\n")).unwrap();
        let report = next();
        samples.push(started.elapsed());
        let written = report["published"]["written"].as_array().map(|w| w.len()).unwrap_or(0);
        // Three wrappers of the edited hook plus the manifest.
        rewritten_ok &= report["ok"] == true && written == 4;
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
    std::fs::write(&handler, original).unwrap();
    samples.sort();
    let p50 = samples[samples.len() / 2];
    let p95 = samples[(samples.len() * 95 / 100).min(samples.len() - 1)];
    println!(
        "  {label:<45}p50 {:>6.1} ms, p95 {:>6.1} ms over {edits} edits (goal p95 < 100 ms; only that hook's wrappers rewritten: {}; first builds of {initial} project(s): {:.0} ms)",
        ms(p50),
        ms(p95),
        if rewritten_ok { "yes" } else { "NO" },
        ms(first_builds)
    );
}

/// A cache server on loopback, started by one of the project's scripts.
struct RemoteServer {
    label: &'static str,
    root: tempfile::TempDir,
    pid_file: &'static str,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
}

impl RemoteServer {
    fn start(label: &'static str, script: &str, pid_file: &'static str) -> (RemoteServer, u16) {
        let root = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(script);
        let started =
            Command::new(script).arg(root.path()).arg(port.to_string()).stdout(Stdio::null()).status().unwrap();
        assert!(started.success(), "{label} starts");
        (RemoteServer { label, root, pid_file, args: Vec::new(), env: Vec::new() }, port)
    }

    /// nginx's WebDAV module, the plain HTTP remote: on loopback, or behind a proxy that
    /// makes each request take `rtt` longer (a cache server in another network).
    fn nginx(label: &'static str, rtt: Option<Duration>) -> Option<RemoteServer> {
        if Command::new("nginx").arg("-v").stderr(Stdio::null()).status().is_err() {
            println!("  remote cache (nginx): skipped (nginx is not installed: apt-get install -y nginx)");
            return None;
        }
        let (mut server, port) = RemoteServer::start(label, "nginx-cache-server.sh", "nginx.pid");
        let port = rtt.map_or(port, |rtt| latency_proxy(port, rtt));
        server.args = ["--remote-cache", &format!("http://127.0.0.1:{port}/cache"), "--remote-cache-token", "secret"]
            .map(str::to_owned)
            .to_vec();
        Some(server)
    }

    /// s3rver, an S3-compatible server that checks every request's signature.
    fn s3rver() -> Option<RemoteServer> {
        if Command::new("node").arg("--version").stdout(Stdio::null()).status().is_err() {
            println!("  remote cache (S3): skipped (node is not installed)");
            return None;
        }
        let (mut server, port) = RemoteServer::start("S3, s3rver", "s3-cache-server.sh", "s3rver.pid");
        server.args = vec!["--remote-cache".into(), "s3://cache/bench".into()];
        server.env = vec![
            ("AWS_ENDPOINT_URL_S3", format!("http://127.0.0.1:{port}")),
            ("AWS_ACCESS_KEY_ID", "S3RVER".into()),
            ("AWS_SECRET_ACCESS_KEY", "S3RVER".into()),
        ];
        Some(server)
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.root.path().join(self.pid_file)) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

/// Forwards a new loopback port to `port`, holding each new connection for `rtt` (its TCP
/// handshake) and each message (a read after 2 ms of quiet) for half of `rtt` in each
/// direction: a remote `rtt` away, bandwidth aside.
fn latency_proxy(port: u16, rtt: Duration) -> u16 {
    use std::net::{TcpListener, TcpStream};
    fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
        use std::io::{Read, Write};
        let (mut buffer, mut last) = (vec![0; 1 << 16], None::<Instant>);
        while let Ok(read @ 1..) = from.read(&mut buffer) {
            if last.is_none_or(|last| last.elapsed() > Duration::from_millis(2)) {
                std::thread::sleep(delay);
            }
            if to.write_all(&buffer[..read]).is_err() {
                break;
            }
            last = Some(Instant::now());
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            std::thread::spawn(move || {
                std::thread::sleep(rtt);
                let server = TcpStream::connect(("127.0.0.1", port)).unwrap();
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (client_out, server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pipe(client, server_out, rtt / 2));
                pipe(server, client_out, rtt / 2);
            });
        }
    });
    proxy_port
}

/// For each remote server this machine can run: a cold build that fills an empty remote,
/// and an empty local cache with the warm remote, against a cold local build.
fn remote_caches(repo: &Path, cold: Duration, runs: usize) {
    let servers = [
        RemoteServer::nginx("nginx", None),
        RemoteServer::nginx("nginx, 10 ms away", Some(Duration::from_millis(10))),
        RemoteServer::s3rver(),
    ];
    for server in servers.into_iter().flatten() {
        let with_cache = |cache: &Path| {
            let mut args = vec!["--cache-dir", cache.to_str().unwrap()];
            args.extend(server.args.iter().map(String::as_str));
            build_with_env(repo, &args, &server.env)
        };
        clean_artifacts(repo);
        let seed_cache = tempfile::tempdir().unwrap();
        let filling = time(|| with_cache(seed_cache.path()));
        report(&format!("cold build filling an empty remote ({}) / cold", server.label), filling, cold, "once");
        let reference = artifacts(repo);
        let from_remote = best(runs, || {
            clean_artifacts(repo);
            let local = fresh_dir();
            let elapsed = time(|| with_cache(&local));
            assert_eq!(action_misses(&local), 0, "a warm remote transpiles nothing");
            discard(&local);
            elapsed
        });
        assert!(artifacts(repo) == reference, "byte-identical artifacts from the remote");
        let what = format!("empty local + warm remote ({}) / cold", server.label);
        report(&what, from_remote, cold, "no transpiling, identical bytes");
    }
}

fn artifacts(repo: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(repo)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().components().any(|c| c.as_os_str() == "artifact"))
        .map(|e| (e.path().to_owned(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}
