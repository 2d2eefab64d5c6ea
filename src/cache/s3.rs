//! The remote store in an S3-compatible bucket: `s3://BUCKET[/PREFIX]` holds the same
//! entries as an HTTP remote, at the keys `PREFIX/cas/<hex>` and `PREFIX/ac/<hex>`, read
//! and written with plain `GetObject`/`HeadObject`/`PutObject` requests signed with AWS
//! Signature Version 4 (`cache-format/SPEC.md` §8.3).
//!
//! Signing is ~80 lines on `ring` (already in the build for rustls), so no SDK: the AWS SDK
//! brings tokio and hyper, and rusty-s3 brings `url`, `idna` and a date library for the
//! one timestamp format this needs.
//!
//! Settings come from the variables every AWS tool reads (the CLI layer gathers them into
//! [`S3Settings`]): `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for another service
//! (MinIO, R2, Garage, Ceph…; path-style addressing), else AWS itself at
//! `https://BUCKET.s3.REGION.amazonaws.com` (virtual-hosted); `AWS_REGION` or
//! `AWS_DEFAULT_REGION` (default `us-east-1`); `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`; and what the environment leaves
//! unset from the profile of the shared files (`endpoint_url`, `region`, the keys).
//! Without credentials requests go unsigned (a public bucket).

use std::fmt::Write as _;
use std::time::SystemTime;

use ring::{digest, hmac};

use super::aws_profile::Profile;
use super::lowercase_hex;

/// Where an `s3://` remote lives and how to sign for it; gathered from the environment by
/// the CLI, given directly by tests.
#[derive(Clone, Default)]
pub struct S3Settings {
    /// `http[s]://host[:port][/path]` of an S3-compatible service; `None` = AWS.
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    /// Why requests go unsigned although a profile was asked for (one warning).
    pub warning: Option<String>,
}

impl S3Settings {
    /// The settings AWS tools read: the environment, then the selected profile of the
    /// shared files (`aws_profile`).
    pub fn from_env() -> S3Settings {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        S3Settings::gather(&var, &|path| std::fs::read_to_string(path).ok())
    }

    fn gather(var: &dyn Fn(&str) -> Option<String>, read: &dyn Fn(&std::path::Path) -> Option<String>) -> S3Settings {
        let profile = Profile::load(var, read);
        // Keys come as a set, from the environment or else from the profile, never mixed.
        let from_env = var("AWS_ACCESS_KEY_ID").is_some() || var("AWS_SECRET_ACCESS_KEY").is_some();
        let key = |variable: &str, setting: &str| if from_env { var(variable) } else { profile.get(setting) };
        let access_key_id = key("AWS_ACCESS_KEY_ID", "aws_access_key_id");
        let secret_access_key = key("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key");
        let unsigned = access_key_id.is_none() && secret_access_key.is_none();
        S3Settings {
            endpoint: var("AWS_ENDPOINT_URL_S3")
                .or_else(|| var("AWS_ENDPOINT_URL"))
                .or_else(|| profile.get("endpoint_url")),
            region: var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")).or_else(|| profile.get("region")),
            session_token: key("AWS_SESSION_TOKEN", "aws_session_token"),
            access_key_id,
            secret_access_key,
            warning: if unsigned { profile.unsigned_because() } else { None },
        }
    }
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key.as_ref().map(|_| "<redacted>"))
            .field("session_token", &self.session_token.as_ref().map(|_| "<redacted>"))
            .field("warning", &self.warning)
            .finish()
    }
}

/// An `s3://` URL resolved to the HTTP base its entries hang from.
pub(super) struct Bucket {
    /// `<scheme>://<host>[/<path>]` without a trailing slash: entries are `<base>/<kind>/<hex>`.
    pub base: String,
    /// The `Host` header, signed: the base's host, with its port unless it is the default.
    pub host: String,
    /// The base's path (already URI-encoded, no trailing slash), the start of every
    /// entry's canonical URI.
    pub path: String,
    /// Whether the base names this machine (as the endpoint check found).
    pub loopback: bool,
    pub signer: Option<Signer>,
}

/// Signs requests with one set of credentials for one region.
pub(super) struct Signer {
    region: String,
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

const DEFAULT_REGION: &str = "us-east-1";
/// The SHA-256 of no bytes, the payload hash of `GET` and `HEAD`.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Resolves `s3://BUCKET[/PREFIX]` with `settings`; `parse_endpoint` checks an endpoint URL
/// the way an HTTP remote's URL is checked, giving it without a trailing slash and whether
/// it names this machine.
pub(super) fn resolve(
    url: &str,
    settings: &S3Settings,
    parse_endpoint: impl FnOnce(&str) -> Result<(String, bool), String>,
) -> Result<Bucket, String> {
    let bad = |why: &str| format!("bad remote cache URL {url:?} (--remote-cache, or AGENT_BUNDLE_REMOTE_CACHE): {why}");
    let rest = url.strip_prefix("s3://").ok_or_else(|| bad("expected s3://BUCKET[/PREFIX]"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() || !bucket.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
        return Err(bad("a bucket name is letters, digits, '.', '_' and '-'"));
    }
    if !prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b)) {
        return Err(bad("a key prefix may only use A-Z a-z 0-9 - . _ ~ /"));
    }
    let prefix: Vec<&str> = prefix.split('/').filter(|segment| !segment.is_empty()).collect();
    let region = settings.region.clone().unwrap_or_else(|| DEFAULT_REGION.to_owned());
    if !region.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("bad AWS region {region:?}"));
    }
    let (origin, mut path, loopback) = match &settings.endpoint {
        // Another service: path-style, which every S3-compatible server answers.
        Some(endpoint) => {
            let (endpoint, loopback) = parse_endpoint(endpoint)?;
            let (origin, path) = split_origin(&endpoint);
            (origin.to_owned(), format!("{path}/{bucket}"), loopback)
        }
        // A dot in the name would break the TLS name check of a virtual host.
        None if bucket.contains('.') => (format!("https://s3.{region}.amazonaws.com"), format!("/{bucket}"), false),
        None => (format!("https://{bucket}.s3.{region}.amazonaws.com"), String::new(), false),
    };
    for segment in prefix {
        path.push('/');
        path.push_str(segment);
    }
    let host = host_header(&origin);
    // Both travel in headers (`Authorization`, `x-amz-security-token`); the secret never does.
    let headers = [("access key id", &settings.access_key_id), ("session token", &settings.session_token)];
    if let Some((what, _)) =
        headers.iter().find(|(_, v)| v.as_ref().is_some_and(|v| !v.bytes().all(|b| b.is_ascii_graphic())))
    {
        return Err(format!("the AWS {what} holds characters a request header cannot carry"));
    }
    let signer = match (&settings.access_key_id, &settings.secret_access_key) {
        (Some(id), Some(secret)) => Some(Signer {
            region,
            access_key_id: id.clone(),
            secret_access_key: secret.clone(),
            session_token: settings.session_token.clone(),
        }),
        (None, None) => None,
        (Some(_), None) => return Err("an AWS access key id without its secret access key".into()),
        (None, Some(_)) => return Err("an AWS secret access key without its access key id".into()),
    };
    Ok(Bucket { base: format!("{origin}{path}"), host, path, loopback, signer })
}

/// `scheme://authority[/path]` → (`scheme://authority`, `/path` or "").
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

/// The `Host` header for `scheme://authority`: the authority without a default port.
fn host_header(origin: &str) -> String {
    let (scheme, authority) = origin.split_once("://").unwrap_or(("https", origin));
    let default_port = if scheme.eq_ignore_ascii_case("http") { ":80" } else { ":443" };
    authority.strip_suffix(default_port).unwrap_or(authority).to_ascii_lowercase()
}

impl Signer {
    /// The headers that sign a request for `canonical_uri` with `body` at `now`:
    /// `x-amz-content-sha256`, `x-amz-date`, `x-amz-security-token` with a session token,
    /// and `authorization`. The `Host` header, signed as `host`, is the caller's to send.
    pub(super) fn headers(
        &self,
        method: &str,
        host: &str,
        canonical_uri: &str,
        body: Option<&[u8]>,
        now: SystemTime,
    ) -> Vec<(&'static str, String)> {
        let payload_sha256 = body.map_or_else(|| EMPTY_SHA256.to_owned(), sha256_hex);
        let timestamp = amz_date(now);
        let mut sent = vec![("x-amz-content-sha256", payload_sha256.clone()), ("x-amz-date", timestamp.clone())];
        if let Some(token) = &self.session_token {
            sent.push(("x-amz-security-token", token.clone()));
        }
        let mut signed = sent.clone();
        signed.push(("host", host.to_owned()));
        let authorization = self.authorization(method, canonical_uri, &signed, &payload_sha256, &timestamp);
        sent.push(("authorization", authorization));
        sent
    }

    /// The `Authorization` header value for a request (no query string) whose `headers` —
    /// lowercase names, every one of them signed — include `host`.
    fn authorization(
        &self,
        method: &str,
        canonical_uri: &str,
        headers: &[(&str, String)],
        payload_sha256: &str,
        timestamp: &str,
    ) -> String {
        let mut headers: Vec<&(&str, String)> = headers.iter().collect();
        headers.sort_by_key(|(name, _)| *name);
        let signed_headers = headers.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(";");
        let mut canonical = format!("{method}\n{canonical_uri}\n\n");
        for (name, value) in &headers {
            let _ = writeln!(canonical, "{name}:{}", value.trim());
        }
        let _ = write!(canonical, "\n{signed_headers}\n{payload_sha256}");

        let date = &timestamp[..8];
        let scope = format!("{date}/{}/s3/aws4_request", self.region);
        let string_to_sign = format!("AWS4-HMAC-SHA256\n{timestamp}\n{scope}\n{}", sha256_hex(canonical.as_bytes()));
        let mut key = hmac_sha256(format!("AWS4{}", self.secret_access_key).as_bytes(), date.as_bytes());
        for part in [self.region.as_str(), "s3", "aws4_request"] {
            key = hmac_sha256(&key, part.as_bytes());
        }
        let signature = lowercase_hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope},SignedHeaders={signed_headers},Signature={signature}",
            self.access_key_id
        )
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    lowercase_hex(digest::digest(&digest::SHA256, bytes).as_ref())
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), message).as_ref().to_vec()
}

/// `YYYYMMDDTHHMMSSZ` in UTC, the SigV4 timestamp.
fn amz_date(now: SystemTime) -> String {
    let seconds = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let time = seconds % 86_400;
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", time / 3600, time / 60 % 60, time % 60)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The `<Code>` of an S3 error body, e.g. `SignatureDoesNotMatch`.
pub(super) fn error_code(body: &str) -> Option<&str> {
    let start = body.find("<Code>")? + "<Code>".len();
    let length = body[start..].find("</Code>")?;
    Some(&body[start..start + length])
        .filter(|code| code.len() <= 64 && code.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The credentials of AWS's published SigV4 examples for S3.
    fn example_signer() -> Signer {
        Signer {
            region: "us-east-1".into(),
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        pairs.iter().map(|(name, value)| (*name, (*value).to_owned())).collect()
    }

    // "Examples: Signature Calculations in AWS Signature Version 4", Amazon S3 API
    // Reference (sig-v4-header-based-auth): GET Object with a Range header.
    #[test]
    fn the_published_get_object_example_signs_the_same() {
        let signed = headers(&[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
        ]);
        assert_eq!(
            example_signer().authorization("GET", "/test.txt", &signed, EMPTY_SHA256, "20130524T000000Z"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,\
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    // The same page's PUT Object example: a body, an encoded key, headers out of order.
    #[test]
    fn the_published_put_object_example_signs_the_same() {
        let body_sha256 = sha256_hex(b"Welcome to Amazon S3.");
        assert_eq!(body_sha256, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
        let signed = headers(&[
            ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            ("date", "Fri, 24 May 2013 00:00:00 GMT"),
            ("host", "examplebucket.s3.amazonaws.com"),
            ("x-amz-date", "20130524T000000Z"),
            ("x-amz-content-sha256", &body_sha256),
        ]);
        assert_eq!(
            example_signer().authorization("PUT", "/test%24file.text", &signed, &body_sha256, "20130524T000000Z"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,\
             Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
        );
    }

    #[test]
    fn a_request_carries_its_date_payload_hash_token_and_signature() {
        let signer = Signer { session_token: Some("token".into()), ..example_signer() };
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_369_353_600); // 2013-05-24
        let sent = signer.headers("GET", "examplebucket.s3.amazonaws.com", "/test.txt", None, at);
        let names: Vec<&str> = sent.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["x-amz-content-sha256", "x-amz-date", "x-amz-security-token", "authorization"]);
        assert_eq!(sent[1].1, "20130524T000000Z");
        assert!(sent[3].1.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"));
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = |seconds: u64| amz_date(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z"); // a leap day of a century leap year
        assert_eq!(at(1_709_251_199), "20240229T235959Z");
        assert_eq!(at(1_796_338_366), "20261203T225246Z");
        assert_eq!(at(4_107_542_400), "21000301T000000Z"); // 2100 is not a leap year
    }

    fn resolved(url: &str, settings: &S3Settings) -> Result<Bucket, String> {
        resolve(url, settings, |endpoint| {
            Ok((endpoint.trim_end_matches('/').to_owned(), endpoint.contains("127.0.0.1")))
        })
    }

    #[test]
    fn aws_buckets_are_virtual_hosts_unless_their_name_has_a_dot() {
        let settings = S3Settings { region: Some("eu-west-3".into()), ..S3Settings::default() };
        let bucket = resolved("s3://ci-cache/agent-bundle//v1/", &settings).unwrap();
        assert_eq!(bucket.base, "https://ci-cache.s3.eu-west-3.amazonaws.com/agent-bundle/v1");
        assert_eq!(
            (bucket.host.as_str(), bucket.path.as_str()),
            ("ci-cache.s3.eu-west-3.amazonaws.com", "/agent-bundle/v1")
        );
        assert!(bucket.signer.is_none(), "no credentials: unsigned");
        assert!(!bucket.loopback);

        let dotted = resolved("s3://cache.example.com", &S3Settings::default()).unwrap();
        assert_eq!(dotted.base, "https://s3.us-east-1.amazonaws.com/cache.example.com");
        assert_eq!(dotted.path, "/cache.example.com");
    }

    #[test]
    fn another_service_is_addressed_path_style_at_its_endpoint() {
        let settings = S3Settings {
            endpoint: Some("http://127.0.0.1:9000/".into()),
            access_key_id: Some("id".into()),
            secret_access_key: Some("secret".into()),
            ..S3Settings::default()
        };
        let bucket = resolved("s3://cache/ci", &settings).unwrap();
        assert_eq!(bucket.base, "http://127.0.0.1:9000/cache/ci");
        assert_eq!((bucket.host.as_str(), bucket.path.as_str()), ("127.0.0.1:9000", "/cache/ci"));
        assert!(bucket.loopback, "as the endpoint check found");
        assert_eq!(bucket.signer.unwrap().region, "us-east-1");

        let behind_a_proxy =
            S3Settings { endpoint: Some("https://Store.Example:443/s3".into()), ..S3Settings::default() };
        let bucket = resolved("s3://cache", &behind_a_proxy).unwrap();
        assert_eq!(
            (bucket.base.as_str(), bucket.host.as_str()),
            ("https://Store.Example:443/s3/cache", "store.example")
        );
        assert_eq!(bucket.path, "/s3/cache");
    }

    fn gathered(env: &[(&str, &str)]) -> S3Settings {
        let credentials = "[default]\naws_access_key_id = AKIFILE\naws_secret_access_key = file-secret\n\
                           [sso]\nsso_session = corp\n";
        let config = "[default]\nregion = eu-west-1\nendpoint_url = http://127.0.0.1:9000\n";
        let env: std::collections::BTreeMap<&str, &str> =
            [("HOME", "/h")].into_iter().chain(env.iter().copied()).collect();
        let read = |path: &std::path::Path| match path.to_str()? {
            "/h/.aws/credentials" => Some(credentials.to_owned()),
            "/h/.aws/config" => Some(config.to_owned()),
            _ => None,
        };
        S3Settings::gather(&|name| env.get(name).map(|v| (*v).to_owned()), &read)
    }

    #[test]
    fn the_environment_wins_over_the_shared_files_and_keys_are_never_mixed() {
        let files = gathered(&[]);
        assert_eq!(
            (files.access_key_id.as_deref(), files.secret_access_key.as_deref()),
            (Some("AKIFILE"), Some("file-secret"))
        );
        assert_eq!(
            (files.region.as_deref(), files.endpoint.as_deref()),
            (Some("eu-west-1"), Some("http://127.0.0.1:9000"))
        );
        assert!(files.warning.is_none());

        let env = gathered(&[
            ("AWS_ACCESS_KEY_ID", "AKIENV"),
            ("AWS_SECRET_ACCESS_KEY", "env"),
            ("AWS_REGION", "ap-south-1"),
        ]);
        assert_eq!((env.access_key_id.as_deref(), env.region.as_deref()), (Some("AKIENV"), Some("ap-south-1")));
        let half = gathered(&[("AWS_ACCESS_KEY_ID", "AKIENV")]);
        assert_eq!((half.access_key_id.as_deref(), half.secret_access_key.as_deref()), (Some("AKIENV"), None));

        let sso = gathered(&[("AWS_PROFILE", "sso")]);
        assert!(sso.access_key_id.is_none() && sso.warning.unwrap().contains("sso_session"));
        let env_over_sso =
            gathered(&[("AWS_PROFILE", "sso"), ("AWS_ACCESS_KEY_ID", "A"), ("AWS_SECRET_ACCESS_KEY", "S")]);
        assert!(env_over_sso.warning.is_none(), "the environment's keys sign");
    }

    #[test]
    fn bad_urls_and_half_credentials_are_refused() {
        let none = S3Settings::default();
        for url in ["s3://", "s3:///prefix", "s3://bucket name", "s3://b/a b", "s3://b/%41", "s3://b/x?y", "http://b"] {
            assert!(resolved(url, &none).is_err(), "{url} should be refused");
        }
        let region = S3Settings { region: Some("us-east-1/../x".into()), ..S3Settings::default() };
        assert!(resolved("s3://b", &region).is_err());
        let pasted = S3Settings {
            access_key_id: Some("id".into()),
            secret_access_key: Some("secret".into()),
            session_token: Some("token\n".into()),
            ..S3Settings::default()
        };
        assert_eq!(
            resolved("s3://b", &pasted).err().unwrap(),
            "the AWS session token holds characters a request header cannot carry"
        );
        let half = S3Settings { access_key_id: Some("id".into()), ..S3Settings::default() };
        assert_eq!(resolved("s3://b", &half).err().unwrap(), "an AWS access key id without its secret access key");
        let endpoint_error =
            resolve("s3://b", &S3Settings { endpoint: Some("ftp://x".into()), ..none }, |_| Err("no".into()));
        assert_eq!(endpoint_error.err().unwrap(), "no");
    }

    #[test]
    fn error_codes_are_read_from_s3_error_bodies() {
        let body = "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>…</Message></Error>";
        assert_eq!(error_code(body), Some("SignatureDoesNotMatch"));
        assert_eq!(error_code("<html>403 Forbidden</html>"), None);
        assert_eq!(error_code("<Code>not a code</Code>"), None);
    }

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let settings = S3Settings {
            secret_access_key: Some("wJalr".into()),
            session_token: Some("FwoG".into()),
            ..S3Settings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("wJalr") && !shown.contains("FwoG"), "{shown}");
    }
}
