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
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    if object.len() != 3 || object.get("format")?.as_str()? != RECORD_FORMAT {
        return None;
    }
    let mut outputs = BTreeMap::new();
    for (name, hex) in object.get("outputs")?.as_object()? {
        outputs.insert(name.clone(), Hash::from_canonical_hex(hex.as_str()?.as_bytes())?);
    }
    let mut values = BTreeMap::new();
    for (name, value) in object.get("values")?.as_object()? {
        values.insert(name.clone(), value.as_str()?.to_owned());
    }
    let record = ActionRecord { outputs, values };
    // Canonical form only: rejects reordered keys, whitespace, other escapes, duplicates.
    (self::body(&record).as_bytes() == body).then_some(record)
}
