//! Cache flags shared by the building commands, and `agent-bundle cache stats|gc|verify`.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::{Failure, report};
use crate::cache::{self, Cache, CacheOptions, GcOptions, RemoteOptions, S3Settings};

#[derive(Args, Debug)]
pub(super) struct CacheArgs {
    /// Local cache directory (default: $XDG_CACHE_HOME/agent-bundle/cache or ~/.cache/agent-bundle/cache).
    #[arg(long, env = "AGENT_BUNDLE_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Build without reading or writing any cache (overrides the cache options and their
    /// environment variables) and without trusting the last build's stamp: every stage runs.
    #[arg(long)]
    no_cache: bool,
    /// Bound the local cache: after a build that grew it past this, least recently used
    /// entries are removed down to 80% of it (e.g. 500M, 2G; 0 = no bound).
    #[arg(long, env = "AGENT_BUNDLE_CACHE_MAX_SIZE", value_name = "SIZE", default_value = "5G", value_parser = parse_size)]
    cache_max_size: u64,
    /// How many of the cache's written bytes [`CacheArgs::keep_bounded`] has counted.
    #[arg(skip)]
    bounded_bytes: Cell<u64>,
    /// Share the cache over HTTP or HTTPS (GET/PUT/HEAD on <URL>/cas/<hash> and <URL>/ac/<key>),
    /// or in an S3 bucket with s3://BUCKET[/PREFIX] (endpoint, region and credentials from
    /// the AWS_* environment variables, else the AWS_PROFILE of ~/.aws/credentials and
    /// ~/.aws/config).
    // The variable's value is not shown in `--help`: a URL may hold credentials (refused,
    // but only once parsed).
    #[arg(long, env = "AGENT_BUNDLE_REMOTE_CACHE", hide_env_values = true, value_name = "URL")]
    remote_cache: Option<String>,
    /// Only read from the remote cache, never upload (for untrusted CI jobs). The variable
    /// takes 1/0, true/false, yes/no or on/off.
    #[arg(long, env = "AGENT_BUNDLE_REMOTE_CACHE_READ_ONLY", value_parser = clap::builder::BoolishValueParser::new())]
    remote_cache_read_only: bool,
    /// Bearer token sent to the remote cache.
    #[arg(long, env = "AGENT_BUNDLE_REMOTE_CACHE_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    remote_cache_token: Option<String>,
    /// PEM certificates to trust for an https remote cache, instead of Mozilla's roots.
    #[arg(long, env = "AGENT_BUNDLE_REMOTE_CACHE_CA", value_name = "FILE")]
    remote_cache_ca: Option<PathBuf>,
}

impl CacheArgs {
    /// The local cache directory in use, if any.
    pub(super) fn dir(&self) -> Option<PathBuf> {
        if self.no_cache { None } else { self.cache_dir.clone().or_else(cache::default_dir) }
    }

    pub(super) fn open(&self) -> Result<Arc<Cache>, Failure> {
        if self.no_cache {
            return Ok(Arc::new(Cache::disabled()));
        }
        let remote = self.remote_cache.as_ref().map(|url| RemoteOptions {
            url: url.clone(),
            token: self.remote_cache_token.clone(),
            read_only: self.remote_cache_read_only,
            ca_file: self.remote_cache_ca.clone(),
            // Only an s3:// remote reads the AWS variables and files.
            s3: if url.starts_with("s3://") { S3Settings::from_env() } else { S3Settings::default() },
        });
        let options = CacheOptions { dir: self.dir(), remote };
        let cache = Cache::open(&options).map_err(Failure::Usage)?;
        if options.dir.is_none() {
            // (As an unusable one costs a warning, not the build.)
            cache.warn(format!("{}; building without a local cache", cache::NO_DEFAULT_DIR));
        }
        if let Some(unused) = self.remote_options_without_remote() {
            cache.warn(unused);
        }
        Ok(Arc::new(cache))
    }

    /// What says that options of a remote cache were given (on the command line or by their
    /// variables: a CI job's token, a misspelt URL variable) where no remote cache is.
    fn remote_options_without_remote(&self) -> Option<String> {
        let given = [
            ("--remote-cache-token", self.remote_cache_token.is_some()),
            ("--remote-cache-ca", self.remote_cache_ca.is_some()),
            ("--remote-cache-read-only", self.remote_cache_read_only),
        ];
        let unused: Vec<&str> = given.iter().filter(|(_, given)| *given).map(|(flag, _)| *flag).collect();
        (self.remote_cache.is_none() && !unused.is_empty()).then(|| {
            format!(
                "{} given (or set by its variable) without --remote-cache (AGENT_BUNDLE_REMOTE_CACHE): no remote \
                 cache is used",
                unused.join(", ")
            )
        })
    }

    /// Records the build's hit rate for `cache stats`, keeps the cache within its size
    /// bound, and returns the cache's warnings. A build that never consulted the cache
    /// (every project up to date by its stamp) leaves the last record alone: it has no hit
    /// rate, and a no-op should write nothing.
    pub(super) fn finish(&self, cache: &Cache) -> Vec<String> {
        cache.finish_uploads();
        let stats = cache.stats();
        if let Some(dir) = cache.local_dir()
            && stats != cache::CacheStats::default()
        {
            let _ = cache::record_build(dir, &stats);
        }
        self.keep_bounded(cache);
        cache.take_warnings()
    }

    /// Keeps the local cache within `--cache-max-size`, counting what was written since the
    /// last call (a watch session calls this after every build).
    pub(super) fn keep_bounded(&self, cache: &Cache) {
        let written = cache.stats().bytes_written;
        let new_bytes = written - self.bounded_bytes.replace(written);
        if let Some(dir) = cache.local_dir()
            && new_bytes > 0
        {
            // Without a bound the estimate still grows, so that a later build with one
            // starts from what the cache holds. Like every cache error, a failed collection
            // never fails the build.
            let bound = if self.cache_max_size == 0 { u64::MAX } else { self.cache_max_size };
            let _ = cache::bound(dir, bound, new_bytes);
        }
    }
}

/// The cache a maintenance command works on, and how it reports.
#[derive(Args, Debug)]
pub(super) struct Maintained {
    /// Local cache directory (default: $XDG_CACHE_HOME/agent-bundle/cache or ~/.cache/agent-bundle/cache).
    #[arg(long, env = "AGENT_BUNDLE_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Print machine-readable JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
pub(super) enum CacheCommand {
    /// Entries, bytes, and the hit rate of the last build.
    Stats {
        #[command(flatten)]
        cache: Maintained,
    },
    /// Remove least recently used entries beyond a size bound and/or older than an age.
    Gc {
        #[command(flatten)]
        cache: Maintained,
        /// Keep at most this much, e.g. 500M, 2G, 100000 (bytes); 0 empties the cache (unlike
        /// a build's --cache-max-size, where 0 means no bound).
        #[arg(long, value_parser = parse_size)]
        max_size: Option<u64>,
        /// Drop entries not used for this long, e.g. 30d, 12h, 45m (an entry's last use is
        /// known to the day, so one may stay up to a day longer).
        #[arg(long, value_parser = parse_age)]
        max_age: Option<Duration>,
    },
    /// Re-hash every entry; corrupt ones are removed.
    Verify {
        #[command(flatten)]
        cache: Maintained,
    },
}

impl CacheCommand {
    pub(super) fn wants_json(&self) -> bool {
        match self {
            CacheCommand::Stats { cache } | CacheCommand::Gc { cache, .. } | CacheCommand::Verify { cache } => {
                cache.json
            }
        }
    }
}

impl Maintained {
    fn directory(&self) -> Result<PathBuf, Failure> {
        let dir = self.cache_dir.clone().or_else(cache::default_dir);
        let dir = dir.ok_or_else(|| Failure::Usage(cache::NO_DEFAULT_DIR.into()))?;
        // (An absent one is an empty cache.)
        if dir.exists() && !dir.is_dir() {
            return Err(Failure::Usage(format!("the cache directory {} is not a directory", dir.display())));
        }
        // Absolute, as every command's `--json` names its folders.
        Ok(std::path::absolute(&dir).unwrap_or(dir))
    }
}

pub(super) fn run(command: CacheCommand) -> Result<bool, Failure> {
    let io = |e: std::io::Error| Failure::Run(e.to_string());
    match command {
        CacheCommand::Stats { cache } => {
            let dir = cache.directory()?;
            let stats = cache::dir_stats(&dir).map_err(io)?;
            let last = stats.last_build.map(|b| {
                let lookups = b.action_hits.saturating_add(b.action_misses);
                let rate = if lookups == 0 { 0.0 } else { b.action_hits as f64 / lookups as f64 };
                (b, rate)
            });
            if cache.json {
                report::print_json(&serde_json::json!({
                    "ok": true, "dir": dir.display().to_string(), "exists": dir.is_dir(),
                    // What this binary's action keys start with (SPEC.md §5.1).
                    "compiler": crate::actions::COMPILER,
                    "objects": stats.objects, "objectBytes": stats.object_bytes,
                    "actions": stats.actions, "actionBytes": stats.action_bytes,
                    "lastBuild": last.map(|(b, rate)| serde_json::json!({
                        "actionHits": b.action_hits, "actionMisses": b.action_misses, "hitRate": rate,
                        "objectHits": b.object_hits, "objectMisses": b.object_misses,
                        "remoteHits": b.remote_hits, "remoteErrors": b.remote_errors, "bytesWritten": b.bytes_written,
                    })),
                }));
            } else {
                // (A folder mistyped is no cache: said, lest its zeros read as an emptied one.)
                let absent = if dir.is_dir() { "" } else { " (no such folder: no build has used it)" };
                outln!("{}{absent}", dir.display());
                outln!("  compiler: {}", crate::actions::COMPILER);
                outln!("  objects: {} ({} bytes)", stats.objects, stats.object_bytes);
                outln!("  actions: {} ({} bytes)", stats.actions, stats.action_bytes);
                match last {
                    Some((b, rate)) => {
                        let mut line = format!(
                            "  last build: {} hits, {} misses ({:.0}% hit rate), {} from the remote",
                            b.action_hits,
                            b.action_misses,
                            rate * 100.0,
                            b.remote_hits,
                        );
                        // A record whose object is gone or corrupt answers nothing: its stage ran.
                        if b.object_misses > 0 {
                            line += &format!("; {} object(s) missing or corrupt", b.object_misses);
                        }
                        if b.remote_errors > 0 {
                            line +=
                                &format!("; {} remote request(s) failed or served a corrupt entry", b.remote_errors);
                        }
                        outln!("{line}");
                    }
                    None => outln!("  last build: none recorded"),
                }
            }
            Ok(true)
        }
        CacheCommand::Gc { cache, max_size, max_age } => {
            if max_size.is_none() && max_age.is_none() {
                return Err(Failure::Usage("give --max-size and/or --max-age".into()));
            }
            let dir = cache.directory()?;
            let gc = cache::gc(&dir, &GcOptions { max_bytes: max_size, max_age }).map_err(io)?;
            if cache.json {
                report::print_json(&serde_json::json!({
                    "ok": true, "dir": dir.display().to_string(),
                    "removedEntries": gc.removed_entries, "removedBytes": gc.removed_bytes,
                    "keptEntries": gc.kept_entries, "keptBytes": gc.kept_bytes,
                }));
            } else {
                outln!(
                    "Removed {} entries ({} bytes); kept {} ({} bytes)",
                    gc.removed_entries,
                    gc.removed_bytes,
                    gc.kept_entries,
                    gc.kept_bytes
                );
            }
            Ok(true)
        }
        CacheCommand::Verify { cache } => {
            let dir = cache.directory()?;
            let verified = cache::verify(&dir).map_err(io)?;
            let shown = |paths: &[PathBuf]| paths.iter().map(|path| path.display().to_string()).collect::<Vec<_>>();
            if cache.json {
                report::print_json(&serde_json::json!({
                    // (As its exit code: 1 when it removed or could not read an entry.)
                    "ok": verified.corrupt.is_empty() && verified.unreadable.is_empty(),
                    "dir": dir.display().to_string(), "checked": verified.checked,
                    "corrupt": shown(&verified.corrupt), "unreadable": shown(&verified.unreadable),
                }));
            } else {
                for path in &verified.corrupt {
                    errln!("removed corrupt entry {}", path.display());
                }
                for path in &verified.unreadable {
                    errln!("cannot read entry {} (left as it is)", path.display());
                }
                let unreadable = match verified.unreadable.len() {
                    0 => String::new(),
                    n => format!("; {n} unreadable"),
                };
                let corrupt = match verified.corrupt.len() {
                    0 => "none corrupt".to_owned(),
                    n => format!("{n} corrupt (removed)"),
                };
                outln!("Verified {} entries: {corrupt}{unreadable}", verified.checked);
            }
            Ok(verified.corrupt.is_empty() && verified.unreadable.is_empty())
        }
    }
}

fn parse_size(text: &str) -> Result<u64, String> {
    let unit = |unit: &str| match unit.to_ascii_uppercase().as_str() {
        "" | "B" => Some(1),
        "K" | "KB" | "KIB" => Some(1 << 10),
        "M" | "MB" | "MIB" => Some(1 << 20),
        "G" | "GB" | "GIB" => Some(1 << 30),
        _ => None,
    };
    parse_scaled(text, &Scale { what: "a size", unit, units: "K, M or G", example: "500M", max: u64::MAX })
}

fn parse_age(text: &str) -> Result<Duration, String> {
    let unit = |unit: &str| match unit {
        "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3600),
        "d" => Some(86400),
        _ => None,
    };
    // Bounded so that adding the cache's day of read-time granularity cannot overflow.
    let max = u64::MAX / 2;
    parse_scaled(text, &Scale { what: "an age", unit, units: "s, m, h or d", example: "30d", max })
        .map(Duration::from_secs)
}

/// How [`parse_scaled`] reads one kind of quantity.
struct Scale<'a, F> {
    what: &'a str,
    unit: F,
    units: &'a str,
    example: &'a str,
    max: u64,
}

/// A whole number followed by a unit (`500M`, `30d`), in the unit's base (bytes, seconds).
fn parse_scaled(text: &str, scale: &Scale<'_, impl Fn(&str) -> Option<u64>>) -> Result<u64, String> {
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let Scale { what, units, example, max, .. } = scale;
    if number.is_empty() {
        return Err(format!("`{text}` is not {what}: give a whole number and a unit ({units}), e.g. {example}"));
    }
    let multiplier = match (scale.unit)(unit) {
        Some(multiplier) => multiplier,
        None if unit.is_empty() => return Err(format!("`{text}` has no unit: give one of {units}, e.g. {example}")),
        None => return Err(format!("unknown unit `{unit}` in `{text}` (use {units})")),
    };
    let value = number.parse::<u64>().ok().and_then(|n| n.checked_mul(multiplier)).filter(|value| value <= max);
    value.ok_or_else(|| format!("`{text}` is too large for {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ages_parse() {
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("1024"), Ok(1024));
        assert!(parse_size("5X").is_err());
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86400)));
        assert!(parse_age("30").is_err());
        assert!(parse_size("18446744073709551615G").is_err(), "too large is an error, not a wrap");
        assert!(parse_age("18446744073709551615d").is_err());
        assert!(parse_age("18446744073709551615s").is_err(), "past what gc can add its day to");
        assert!(parse_size("-1").unwrap_err().contains("give a whole number and a unit"));
        assert!(parse_age("-5d").unwrap_err().contains("give a whole number and a unit"));
        assert!(parse_age("5y").unwrap_err().contains("unknown unit `y`"));
        assert_eq!(parse_age("0").unwrap_err(), "`0` has no unit: give one of s, m, h or d, e.g. 30d");
    }
}
