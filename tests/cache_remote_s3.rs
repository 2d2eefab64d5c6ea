//! The `s3://` remote against a real S3-compatible server that checks every request's
//! Signature Version 4: s3rver (from npm, pinned) on loopback, started by
//! `scripts/s3-cache-server.sh` with one account (S3RVER / S3RVER) and a bucket `cache`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::daemon::Daemon;
use crate::support::{self, artifact_files, work};

const REMOTE: &str = "s3://cache/ci";

struct S3rver {
    daemon: Daemon,
}

impl S3rver {
    fn start() -> S3rver {
        S3rver { daemon: Daemon::start("s3-cache-server.sh", &[], "the S3 remote cache tests need node") }
    }

    /// `agent-bundle build --json --remote-cache s3://cache/ci <args>` in `dir`, signing with
    /// `secret` (and the session token, if any); the report and stderr.
    fn build(&self, dir: &Path, secret: &str, session_token: Option<&str>, args: &[&str]) -> (Value, String) {
        let endpoint = format!("http://127.0.0.1:{}", self.daemon.port);
        let mut env = vec![("AWS_ENDPOINT_URL_S3", endpoint.as_str()), ("AWS_ACCESS_KEY_ID", "S3RVER")];
        env.push(("AWS_SECRET_ACCESS_KEY", secret));
        env.extend(session_token.map(|token| ("AWS_SESSION_TOKEN", token)));
        build_with(dir, &env, args)
    }

    /// The shared config file of an AWS profile `ci` that reaches this server.
    fn config_file(&self) -> String {
        format!("[profile ci]\nregion = eu-west-3\nendpoint_url = http://127.0.0.1:{}\n", self.daemon.port)
    }

    /// The bucket's objects under the prefix: key (`cas/<hex>`, `ac/<hex>`) → bytes.
    fn objects(&self) -> BTreeMap<String, Vec<u8>> {
        let prefix = self.daemon.path("store/cache/ci");
        self.daemon
            .snapshot()
            .into_iter()
            .filter_map(|(path, bytes)| {
                let key = path.strip_prefix(&prefix).ok()?.to_str()?.strip_suffix("._S3rver_object")?.to_owned();
                Some((key, bytes))
            })
            .collect()
    }
}

/// `agent-bundle build --json --remote-cache s3://cache/ci <args>` in `dir` with exactly the
/// AWS settings of `env` (none of this machine's variables or shared files); the report and
/// stderr.
fn build_with(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (Value, String) {
    build_against(REMOTE, dir, env, args)
}

/// [`build_with`] against the remote `remote`.
fn build_against(remote: &str, dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (Value, String) {
    let mut command = support::bin();
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("AWS_")) {
        command.env_remove(name);
    }
    let nowhere = dir.join("no-aws-files");
    command.env("AWS_SHARED_CREDENTIALS_FILE", &nowhere).env("AWS_CONFIG_FILE", &nowhere).envs(env.iter().copied());
    let output =
        command.args(["build", "--json", "--remote-cache", remote]).args(args).current_dir(dir).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    (serde_json::from_slice(&output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn two_machines_share_one_s3_bucket_with_signed_requests() {
    let s3 = S3rver::start();
    let first_cache = tempfile::tempdir().unwrap();
    let first = support::example("policy");
    let (cold, _) = s3.build(first.path(), "S3RVER", None, &["--cache-dir", first_cache.path().to_str().unwrap()]);
    assert!(work(&cold, "transpiled") > 0);
    assert_eq!(cold["work"]["cacheWarnings"], serde_json::json!([]), "every signed request was accepted");

    // The bucket holds the cache's entries as they are: objects named by their blake3.
    let objects = s3.objects();
    let cas: Vec<_> = objects.iter().filter(|(key, _)| key.starts_with("cas/")).collect();
    assert!(!cas.is_empty() && objects.keys().any(|key| key.starts_with("ac/")), "{:?}", objects.keys());
    for (key, bytes) in cas {
        assert_eq!(key["cas/".len()..], *blake3::hash(bytes).to_hex(), "{key}");
    }

    // A second machine (with a session token, which is signed too): nothing transpiled.
    let second_cache = tempfile::tempdir().unwrap();
    let second = support::example("policy");
    let args = ["--cache-dir", second_cache.path().to_str().unwrap()];
    let (warm, _) = s3.build(second.path(), "S3RVER", Some("session-token"), &args);
    assert_eq!((work(&warm, "transpiled"), work(&warm, "bundled")), (0, 0), "{:#}", warm["work"]);
    assert!(work(&warm, "remoteHits") > 0, "{:#}", warm["work"]);
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&second.path().join("artifact")));

    // A read-only job with an edited source shares every other stage and uploads nothing.
    let before = s3.daemon.snapshot();
    let third = support::example("policy");
    fs::write(third.path().join("src/hooks/stop.ts"), "export default () => undefined;\n").unwrap();
    let third_cache = tempfile::tempdir().unwrap();
    let args = ["--cache-dir", third_cache.path().to_str().unwrap(), "--remote-cache-read-only"];
    let (edited, _) = s3.build(third.path(), "S3RVER", None, &args);
    assert_eq!(s3.daemon.snapshot(), before, "read-only never writes");
    assert_eq!(work(&edited, "transpiled"), 1, "{:#}", edited["work"]);
    assert!(work(&edited, "remoteHits") > 0, "{:#}", edited["work"]);
}

/// A wrong secret fails the server's signature check: one warning naming S3's error code,
/// a local build, nothing stored.
#[test]
fn a_wrong_secret_costs_one_warning_with_the_s3_error_code() {
    let s3 = S3rver::start();
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    let (report, stderr) =
        s3.build(dir.path(), "not-the-secret", None, &["--cache-dir", cache.path().to_str().unwrap()]);
    assert_eq!(report["ok"], true);
    assert!(work(&report, "transpiled") > 0);
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains(REMOTE) && warning.contains("SignatureDoesNotMatch"), "{warning}");
    assert!(!warning.contains("not-the-secret"), "{warning}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(s3.objects().is_empty());
}

/// A developer's machine: endpoint, region and keys from the shared files' profile, none
/// in the environment.
#[test]
fn the_shared_files_profile_signs_like_the_environment() {
    let s3 = S3rver::start();
    let aws = tempfile::tempdir().unwrap();
    let (credentials, config) = (aws.path().join("credentials"), aws.path().join("config"));
    fs::write(&credentials, "[ci]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n").unwrap();
    fs::write(&config, s3.config_file()).unwrap();
    let env = [
        ("AWS_PROFILE", "ci"),
        ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
    ];
    let first = support::example("policy");
    let first_cache = tempfile::tempdir().unwrap();
    let (cold, _) = build_with(first.path(), &env, &["--cache-dir", first_cache.path().to_str().unwrap()]);
    assert_eq!(cold["work"]["cacheWarnings"], serde_json::json!([]), "every signed request was accepted");
    assert!(!s3.objects().is_empty());
    let second = support::example("policy");
    let second_cache = tempfile::tempdir().unwrap();
    let (warm, _) = build_with(second.path(), &env, &["--cache-dir", second_cache.path().to_str().unwrap()]);
    assert_eq!((work(&warm, "transpiled"), work(&warm, "bundled")), (0, 0), "{:#}", warm["work"]);

    // The requests were signed with the file's keys, not sent unsigned (which s3rver also
    // takes): a wrong secret in the file fails the server's signature check.
    fs::write(&credentials, "[ci]\naws_access_key_id = S3RVER\naws_secret_access_key = wrong\n").unwrap();
    let rejected_cache = tempfile::tempdir().unwrap();
    let args = ["--cache-dir", rejected_cache.path().to_str().unwrap()];
    let (rejected, _) = build_with(support::example("policy").path(), &env, &args);
    let warnings = rejected["work"]["cacheWarnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("SignatureDoesNotMatch")), "{warnings:?}");

    // A profile that would run something for its keys is named in the one warning.
    fs::write(&config, s3.config_file() + "sso_session = corp\n").unwrap();
    fs::write(&credentials, "").unwrap();
    let third = support::example("policy");
    let third_cache = tempfile::tempdir().unwrap();
    let (unsigned, _) = build_with(third.path(), &env, &["--cache-dir", third_cache.path().to_str().unwrap()]);
    assert_eq!(unsigned["ok"], true);
    let warnings = unsigned["work"]["cacheWarnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("sso_session")), "{warnings:?}");
}

#[test]
fn a_bad_s3_remote_is_a_usage_error() {
    let dir = support::example("policy");
    let run = |args: &[&str]| {
        let output = support::bin().arg("build").args(args).current_dir(dir.path()).output().unwrap();
        (output.status.code(), String::from_utf8(output.stderr).unwrap())
    };
    let (code, stderr) = run(&["--remote-cache", "s3://cache/ci", "--remote-cache-token", "t"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("AWS_ACCESS_KEY_ID"), "{stderr}");
    let (code, stderr) = run(&["--remote-cache", "s3://my bucket"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("bucket name"), "{stderr}");
}

/// A signed request is for its own host: followed, a redirect would hand the credentials
/// ureq passes on (the session token, the signature) to wherever it points.
#[test]
fn an_s3_request_follows_no_redirect_so_its_credentials_stay_with_the_endpoint() {
    let nginx = crate::cache_remote::Nginx::start();
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let endpoint = format!("http://127.0.0.1:{}", nginx.port());
    let env = [
        ("AWS_ENDPOINT_URL_S3", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "KEY"),
        ("AWS_SECRET_ACCESS_KEY", "SECRET"),
        ("AWS_SESSION_TOKEN", "SESSION"),
    ];
    // The bucket `moved` is nginx's `/moved/` location, which redirects every request.
    let (report, _) =
        build_against("s3://moved/ci", dir.path(), &env, &["--cache-dir", cache.path().to_str().unwrap()]);
    assert_eq!(report["ok"], true);
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains("HTTP 302 for GET") && warning.contains("S3 requests follow no redirect"), "{warning}");
    assert_eq!(nginx.requests("/cache/"), 0, "no request followed the redirect");
}
