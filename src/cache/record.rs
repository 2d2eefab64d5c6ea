//! The action record encoding (`cache-format/SPEC.md`, "Action records").
//!
//! ```text
//! {"format":"agent-bundle-action/1","outputs":{"<name>":"<64 hex>",…},"values":{"<name>":"<string>",…}}\n<64 hex blake3 of the body>\n
//! ```
//!
//! The body is canonical JSON written by hand here (not through serde_json's map, whose
//! key order depends on a crate feature): keys sorted by their UTF-8 bytes, no whitespace,
//! strings escaped minimally. The trailer makes a truncated or bit-flipped record
//! detectable without trusting the file name; the decoder also insists that the body is
//! exactly what the encoder would write, so every implementation writes the same bytes.

use std::collections::BTreeMap;

use super::{ActionRecord, Hash};

pub(super) const RECORD_FORMAT: &str = "agent-bundle-action/1";

/// The file bytes of `record`.
pub(super) fn encode(record: &ActionRecord) -> Vec<u8> {
    let body = body(record);
    let mut bytes = Vec::with_capacity(body.len() + 66);
    bytes.extend_from_slice(body.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(Hash::of(body.as_bytes()).to_hex().as_bytes());
    bytes.push(b'\n');
    bytes
}

fn body(record: &ActionRecord) -> String {
    let mut out = String::with_capacity(64 + 90 * record.outputs.len());
    out.push_str("{\"format\":");
    json_string(&mut out, RECORD_FORMAT);
    out.push_str(",\"outputs\":");
    json_object(&mut out, record.outputs.iter().map(|(name, hash)| (name, hash.to_hex())));
    out.push_str(",\"values\":");
    json_object(&mut out, record.values.iter().map(|(name, value)| (name, value.as_str())));
    out.push('}');
    out
}

fn json_object<V: AsRef<str>>(out: &mut String, entries: impl Iterator<Item = (impl AsRef<str>, V)>) {
    out.push('{');
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(out, key.as_ref());
        out.push(':');
        json_string(out, value.as_ref());
    }
    out.push('}');
}

/// A JSON string with the minimal escapes: `"` `\` and U+0000–U+001F (short forms
/// `\b \f \n \r \t`, otherwise `\u00xx` in lowercase hex); everything else is raw UTF-8.
/// This is also exactly what serde_json writes.
pub(super) fn json_string(out: &mut String, text: &str) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(text.len() + 2);
    out.push('"');
    // Copy runs of plain text whole; every byte that needs escaping is ASCII, so slicing
    // around it stays on character boundaries.
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let run = plain_run(&bytes[at..]);
        out.push_str(&text[at..at + run]);
        at += run;
        let Some(&byte) = bytes.get(at) else { break };
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(DIGITS[usize::from(byte >> 4)] as char);
                out.push(DIGITS[usize::from(byte & 15)] as char);
            }
        }
        at += 1;
    }
    out.push('"');
}

/// How many bytes at the start of `bytes` need no escape. Sixteen at a time without an
/// early exit, which the compiler vectorizes: records inline whole wrappers, and a byte
/// at a time made escaping them a tenth of a cold build's CPU.
fn plain_run(bytes: &[u8]) -> usize {
    let needs_escape = |byte: u8| byte < 0x20 || byte == b'"' || byte == b'\\';
    let mut run = 0;
    while let Some(chunk) = bytes.get(run..run + 16) {
        if chunk.iter().fold(false, |any, &byte| any | needs_escape(byte)) {
            break;
        }
        run += 16;
    }
    run + bytes[run..].iter().position(|&byte| needs_escape(byte)).unwrap_or(bytes.len() - run)
}

/// The record in `bytes`, or `None` if they are not a valid, canonical record.
pub(super) fn decode(bytes: &[u8]) -> Option<ActionRecord> {
    // `body \n hex64 \n`
    let n = bytes.len();
    if n < 66 || bytes[n - 1] != b'\n' || bytes[n - 66] != b'\n' {
        return None;
    }
    let body = &bytes[..n - 66];
    let digest = Hash::from_canonical_hex(&bytes[n - 65..n - 1])?;
    if Hash::of(body) != digest {
        return None;
    }
    Canonical { text: std::str::from_utf8(body).ok()?, at: 0 }.record()
}

/// A reader of exactly the canonical body, in one pass: anything `body` would not have
/// written (other key order, whitespace, duplicate keys, other escapes) is rejected, so every
/// implementation writes the same bytes.
struct Canonical<'a> {
    text: &'a str,
    at: usize,
}

impl Canonical<'_> {
    fn record(mut self) -> Option<ActionRecord> {
        self.literal("{\"format\":")?;
        if self.string()? != RECORD_FORMAT {
            return None;
        }
        self.literal(",\"outputs\":")?;
        let outputs = self.object(|reader| Hash::from_canonical_hex(reader.string()?.as_bytes()))?;
        self.literal(",\"values\":")?;
        let values = self.object(Canonical::string)?;
        self.literal("}")?;
        (self.at == self.text.len()).then_some(ActionRecord { outputs, values })
    }

    fn literal(&mut self, literal: &str) -> Option<()> {
        self.text[self.at..].starts_with(literal).then(|| self.at += literal.len())
    }

    /// `{}` or `{"k":v,…}` with keys strictly increasing by their UTF-8 bytes.
    fn object<V>(&mut self, mut value: impl FnMut(&mut Self) -> Option<V>) -> Option<BTreeMap<String, V>> {
        self.literal("{")?;
        let mut entries = BTreeMap::new();
        if self.literal("}").is_some() {
            return Some(entries);
        }
        loop {
            let key = self.string()?;
            if entries.last_key_value().is_some_and(|(last, _): (&String, _)| *last >= key) {
                return None;
            }
            self.literal(":")?;
            let value = value(self)?;
            entries.insert(key, value);
            if self.literal("}").is_some() {
                return Some(entries);
            }
            self.literal(",")?;
        }
    }

    /// A string with exactly the escapes `json_string` writes.
    fn string(&mut self) -> Option<String> {
        self.literal("\"")?;
        let mut out = String::new();
        loop {
            let rest = &self.text.as_bytes()[self.at..];
            let special = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
            out.push_str(&self.text[self.at..self.at + special]);
            self.at += special + 1;
            match rest[special] {
                b'"' => return Some(out),
                b'\\' => out.push(self.escape()?),
                _ => return None, // a raw control character
            }
        }
    }

    fn escape(&mut self) -> Option<char> {
        let bytes = self.text.as_bytes();
        let c = match *bytes.get(self.at)? {
            b'"' => '"',
            b'\\' => '\\',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = bytes.get(self.at + 1..self.at + 5)?;
                let digit = |b: u8| match b {
                    b'0'..=b'9' => Some(b - b'0'),
                    b'a'..=b'f' => Some(b - b'a' + 10),
                    _ => None,
                };
                if &hex[..2] != b"00" {
                    return None;
                }
                let code = digit(hex[2])? << 4 | digit(hex[3])?;
                // Only control characters without a short form are written this way.
                if code >= 0x20 || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                self.at += 4;
                char::from(code)
            }
            _ => return None,
        };
        self.at += 1;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_file(body: &str) -> Vec<u8> {
        format!("{body}\n{}\n", Hash::of(body.as_bytes()).to_hex()).into_bytes()
    }

    #[test]
    fn every_string_round_trips() {
        let tricky: String = (0u8..0x20).map(char::from).chain("\"\\/é\u{2028}\u{7f}😀 plain".chars()).collect();
        let record = ActionRecord {
            outputs: BTreeMap::from([("code".to_owned(), Hash::of(b"x"))]),
            values: BTreeMap::from([
                ("a".to_owned(), tricky.clone()),
                ("b".to_owned(), String::new()),
                (tricky, "k".into()),
            ]),
        };
        assert_eq!(decode(&encode(&record)), Some(record));
    }

    /// Escapes at every offset around the 16-byte runs the scan takes, as serde_json
    /// writes them (SPEC §5).
    #[test]
    fn strings_escape_as_serde_json_writes_them_at_any_offset() {
        for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "😀"] {
            for at in 0..40 {
                let text = format!("{}{special}{}", "a".repeat(at), "b".repeat(40 - at));
                let mut out = String::new();
                json_string(&mut out, &text);
                assert_eq!(out, serde_json::to_string(&text).unwrap(), "{text:?}");
            }
        }
    }

    #[test]
    fn only_the_escapes_the_encoder_writes_are_read() {
        let with_value =
            |value: &str| format!(r#"{{"format":"{RECORD_FORMAT}","outputs":{{}},"values":{{"v":"{value}"}}}}"#);
        assert!(decode(&record_file(&with_value(r"a\u001fb\n"))).is_some());
        for refused in [r"\u001F", r"\u0041", r"\u000a", r"\u00", r"\x", "\u{1}", r"\"] {
            assert_eq!(decode(&record_file(&with_value(refused))), None, "{refused:?}");
        }
    }
}
