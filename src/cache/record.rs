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
    let mut plain = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[plain..i]);
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(DIGITS[usize::from(byte >> 4)] as char);
            out.push(DIGITS[usize::from(byte & 15)] as char);
        } else {
            out.push_str(escape);
        }
        plain = i + 1;
    }
    out.push_str(&text[plain..]);
    out.push('"');
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
