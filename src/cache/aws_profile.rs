//! The AWS shared files that every AWS tool reads: `~/.aws/credentials` and
//! `~/.aws/config` (moved by `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`), in the
//! profile `AWS_PROFILE` names (else `default`). A developer's machine keeps its keys
//! there; a CI job usually exports them instead, and the environment wins.
//!
//! Only static settings are read: keys, `region`, `endpoint_url`. A profile that gets its
//! credentials by running something (`credential_process`, SSO, an assumed role) is
//! recognized and named in a warning, never run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Settings that fetch credentials instead of holding them.
const CREDENTIAL_SOURCES: [&str; 5] =
    ["credential_process", "sso_session", "sso_start_url", "role_arn", "web_identity_token_file"];

/// One profile's settings, as found in the shared files.
pub(super) struct Profile {
    name: String,
    /// Where they were looked for: the credentials file, then the config file.
    files: [Option<PathBuf>; 2],
    /// Both files' `key = value` pairs for the profile; the credentials file wins.
    values: Option<BTreeMap<String, String>>,
    /// Whether the profile was asked for by name (`AWS_PROFILE`), not by default.
    named: bool,
}

impl Profile {
    /// The profile the environment selects, read with `read` (a file's text, `None` when
    /// it cannot be read).
    pub(super) fn load(var: &dyn Fn(&str) -> Option<String>, read: &dyn Fn(&Path) -> Option<String>) -> Profile {
        let home = var("HOME").map(PathBuf::from);
        let file = |variable: &str, default: &str| {
            var(variable).map(PathBuf::from).or_else(|| Some(home.as_ref()?.join(default)))
        };
        let files = [file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"), file("AWS_CONFIG_FILE", ".aws/config")];
        let named = var("AWS_PROFILE");
        let name = named.clone().unwrap_or_else(|| "default".to_owned());
        // The config file calls a profile `[profile NAME]`, and the default one also `[default]`.
        let config_sections = [(name == "default").then(|| "default".to_owned()), Some(format!("profile {name}"))];
        let text = |file: &Option<PathBuf>| file.as_deref().and_then(read);
        let from_config =
            text(&files[1]).and_then(|text| config_sections.iter().flatten().find_map(|s| section(&text, s)));
        let from_credentials = text(&files[0]).and_then(|text| section(&text, &name));
        let values = match (from_config, from_credentials) {
            (None, None) => None,
            (config, credentials) => Some(config.into_iter().chain(credentials).flatten().collect()),
        };
        Profile { name, files, values, named: named.is_some() }
    }

    pub(super) fn get(&self, key: &str) -> Option<String> {
        self.values.as_ref()?.get(key).filter(|value| !value.is_empty()).cloned()
    }

    /// Why this profile signs nothing although it was asked for, if it does not (called
    /// when it holds no keys and the environment has none).
    pub(super) fn unsigned_because(&self) -> Option<String> {
        let name = &self.name;
        let Some(values) = &self.values else {
            let files: Vec<String> = self.files.iter().flatten().map(|f| f.display().to_string()).collect();
            return self.named.then(|| {
                format!("AWS profile {name} is not in {}: requests to the S3 remote go unsigned", files.join(" or "))
            });
        };
        let source = CREDENTIAL_SOURCES.iter().find(|key| values.contains_key(**key))?;
        Some(format!(
            "AWS profile {name} gets its credentials from {source}, which agent-bundle does not run: export them \
             first, e.g. eval \"$(aws configure export-credentials --profile {name} --format env)\"; requests to \
             the S3 remote go unsigned"
        ))
    }
}

/// The `key = value` pairs of the section `[name]` of an AWS shared file, or `None` when
/// it has no such section. Comment lines (`#`, `;`) and nested settings (indented lines
/// below a key without a value, e.g. `s3 =`) are skipped; a repeated section adds to the
/// first.
fn section(text: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let mut values: Option<BTreeMap<String, String>> = None;
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
            inside = header.split_whitespace().eq(name.split_whitespace());
            if inside {
                values.get_or_insert_default();
            }
        } else if inside
            && !line.starts_with(char::is_whitespace)
            && let Some((key, value)) = trimmed.split_once('=')
            && let Some(values) = values.as_mut()
        {
            values.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREDENTIALS: &str = "\
# keys
[default]
aws_access_key_id = AKIDEFAULT
aws_secret_access_key = default-secret

[ci]
aws_access_key_id=AKICI
aws_secret_access_key=ci-secret
aws_session_token = ci-token
";

    const CONFIG: &str = "\
[default]
region = eu-west-1

[profile  ci]
region = eu-central-1
endpoint_url = https://minio.internal:9000
s3 =
  endpoint_url = https://nested.example
; a comment
[profile sso]
sso_session = corp
region = us-west-2

[profile role]
role_arn = arn:aws:iam::123456789012:role/ci
source_profile = default
";

    fn load(env: &[(&str, &str)], files: &[(&str, &str)]) -> Profile {
        let env: BTreeMap<String, String> = env.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        let files: BTreeMap<PathBuf, String> = files.iter().map(|(p, t)| (PathBuf::from(p), (*t).into())).collect();
        Profile::load(&|name| env.get(name).cloned(), &|path| files.get(path).cloned())
    }

    fn home(env: &[(&'static str, &'static str)]) -> Profile {
        let env = [env, &[("HOME", "/home/dev")]].concat();
        load(&env, &[("/home/dev/.aws/credentials", CREDENTIALS), ("/home/dev/.aws/config", CONFIG)])
    }

    #[test]
    fn the_default_profile_comes_from_both_files_in_home() {
        let profile = home(&[]);
        assert_eq!(profile.get("aws_access_key_id").as_deref(), Some("AKIDEFAULT"));
        assert_eq!(profile.get("aws_secret_access_key").as_deref(), Some("default-secret"));
        assert_eq!(profile.get("region").as_deref(), Some("eu-west-1"));
        assert_eq!(profile.get("aws_session_token"), None);
        assert_eq!(profile.unsigned_because(), None);
    }

    #[test]
    fn a_named_profile_reads_its_own_sections_and_skips_nested_settings() {
        let profile = home(&[("AWS_PROFILE", "ci")]);
        assert_eq!(profile.get("aws_access_key_id").as_deref(), Some("AKICI"));
        assert_eq!(profile.get("aws_session_token").as_deref(), Some("ci-token"));
        assert_eq!(profile.get("region").as_deref(), Some("eu-central-1"));
        assert_eq!(profile.get("endpoint_url").as_deref(), Some("https://minio.internal:9000"));
        assert_eq!(profile.get("s3"), None);
    }

    #[test]
    fn the_files_can_be_moved_and_a_missing_one_is_no_error() {
        let env = [("AWS_SHARED_CREDENTIALS_FILE", "/ci/creds"), ("AWS_CONFIG_FILE", "/ci/none"), ("HOME", "/h")];
        let profile = load(&env, &[("/ci/creds", CREDENTIALS), ("/h/.aws/config", CONFIG)]);
        assert_eq!(profile.get("aws_access_key_id").as_deref(), Some("AKIDEFAULT"));
        assert_eq!(profile.get("region"), None, "the moved config file does not exist");
        assert_eq!(load(&[], &[]).get("region"), None, "no HOME, no files");
    }

    #[test]
    fn a_profile_that_cannot_sign_says_why() {
        let sso = home(&[("AWS_PROFILE", "sso")]).unsigned_because().unwrap();
        assert!(sso.contains("sso_session") && sso.contains("export-credentials --profile sso"), "{sso}");
        let role = home(&[("AWS_PROFILE", "role")]).unsigned_because().unwrap();
        assert!(role.contains("role_arn"), "{role}");
        let missing = home(&[("AWS_PROFILE", "typo")]).unsigned_because().unwrap();
        assert!(missing.contains("typo") && missing.contains("/home/dev/.aws/credentials"), "{missing}");
        assert_eq!(load(&[], &[]).unsigned_because(), None, "no profile asked for, none found: a public bucket");
    }
}
