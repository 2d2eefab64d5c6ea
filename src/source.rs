//! Source positions: byte spans and the mapping from byte offsets to line/column; and which
//! files are modules, in which language, by their extension.
//!
//! Spans are UTF-8 byte offsets (what oxc reports); [`LineIndex`] turns them into the
//! 1-based line and 1-based UTF-16 column that tsc, editors and the LSP show. This module only
//! measures text: agent-bundle reads plugin sources statically and never executes them, so
//! every diagnostic position comes from these offsets rather than from a running program.

use std::ops::Range;

/// The language a module file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleLanguage {
    TypeScript,
    Tsx,
    JavaScript,
    Jsx,
}

impl ModuleLanguage {
    pub fn is_typescript(self) -> bool {
        matches!(self, ModuleLanguage::TypeScript | ModuleLanguage::Tsx)
    }
}

/// The extensions of the ES modules a bundle links, with their language, in the order an
/// import without an extension probes them. (A JSON module is imported by its full name.)
pub const MODULE_EXTENSIONS: [(&str, ModuleLanguage); 6] = [
    (".ts", ModuleLanguage::TypeScript),
    (".tsx", ModuleLanguage::Tsx),
    (".mts", ModuleLanguage::TypeScript),
    (".js", ModuleLanguage::JavaScript),
    (".mjs", ModuleLanguage::JavaScript),
    (".jsx", ModuleLanguage::Jsx),
];

/// The extensions of CommonJS modules, which a bundle cannot link.
pub const COMMONJS_EXTENSIONS: [&str; 2] = [".cjs", ".cts"];

/// The language of the module file `path`, by its extension (a file named `.ts` has none).
pub fn module_language(path: &str) -> Option<ModuleLanguage> {
    let extension = std::path::Path::new(path).extension()?.to_str()?;
    MODULE_EXTENSIONS
        .iter()
        .find(|(known, _)| known.strip_prefix('.') == Some(extension))
        .map(|&(_, language)| language)
}

/// A byte range in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    /// The byte range, for slicing the source text.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub const fn is_empty(self) -> bool {
        self.start >= self.end
    }
}

impl From<oxc_span::Span> for Span {
    fn from(span: oxc_span::Span) -> Self {
        Self { start: span.start, end: span.end }
    }
}

/// Another place in the same file a diagnostic points at, and what it is there (where the
/// brace a parser expected closed was opened).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Related {
    pub span: Span,
    pub label: String,
}

/// Where an oxc diagnostic points, and the other places it names: its primary label (else
/// its first; the start of the file when it has none), then every other label with a text.
pub fn oxc_span(diagnostic: &oxc_diagnostics::OxcDiagnostic) -> (Span, Vec<Related>) {
    let labels = &diagnostic.labels;
    let primary = labels.iter().position(|label| label.primary()).unwrap_or(0);
    let span = labels.get(primary).map_or(Span::default(), |label| Span::from(label.span()));
    let related = labels
        .iter()
        .enumerate()
        .filter(|&(index, _)| index != primary)
        .filter_map(|(_, label)| Some(Related { span: Span::from(label.span()), label: label.label()?.to_owned() }))
        .collect();
    (span, related)
}

/// A character outside ASCII: where it starts and how its UTF-8 and UTF-16 lengths differ.
#[derive(Clone, Copy, Debug)]
struct Wide {
    start: u32,
    utf8_len: u8,
    utf16_len: u8,
}

/// Maps byte offsets to 1-based line and 1-based UTF-16 column (like tsc and LSP).
///
/// Line terminators are the ECMAScript ones tsc uses: `\n`, `\r\n`, `\r`, U+2028 and U+2029.
/// The index keeps no copy of the text: only line boundaries and the positions of non-ASCII
/// characters with a running sum of how much shorter each is in UTF-16, so a lookup either
/// way is a few binary searches, whatever the line's length (a minified module is one line).
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset where each line starts; the first after a byte order mark, which tsc and
    /// editors do not count as a column.
    line_starts: Vec<u32>,
    /// Byte offset where each line's content ends (before its terminator).
    line_ends: Vec<u32>,
    /// Non-ASCII characters in source order.
    wide: Vec<Wide>,
    /// `shrink[i]`: how many fewer UTF-16 units than bytes `wide[..i]` take.
    shrink: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let len = u32::try_from(text.len()).expect("source files are smaller than 4 GiB");
        let first = if text.starts_with(BYTE_ORDER_MARK) { BYTE_ORDER_MARK.len() } else { 0 };
        let mut line_starts = vec![first as u32];
        let mut line_ends = Vec::new();
        let mut wide = Vec::new();
        let mut i = first;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii() {
                match b {
                    b'\n' => {
                        line_ends.push(i as u32);
                        line_starts.push(i as u32 + 1);
                    }
                    b'\r' => {
                        line_ends.push(i as u32);
                        if bytes.get(i + 1) == Some(&b'\n') {
                            i += 1;
                        }
                        line_starts.push(i as u32 + 1);
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            // `i` is on a char boundary: every ASCII byte and every whole char was skipped.
            let ch = text[i..].chars().next().expect("char boundary");
            let utf8_len = ch.len_utf8();
            if ch == '\u{2028}' || ch == '\u{2029}' {
                line_ends.push(i as u32);
                line_starts.push((i + utf8_len) as u32);
            }
            wide.push(Wide { start: i as u32, utf8_len: utf8_len as u8, utf16_len: ch.len_utf16() as u8 });
            i += utf8_len;
        }
        line_ends.push(len);
        let shrink = std::iter::once(0)
            .chain(wide.iter().scan(0, |sum, w| {
                *sum += u32::from(w.utf8_len - w.utf16_len);
                Some(*sum)
            }))
            .collect();
        Self { line_starts, line_ends, wide, shrink, len }
    }

    /// The UTF-16 column (0-based) of `wide[index]` on the line starting at byte `start`,
    /// whose first non-ASCII character is `wide[first]`.
    fn wide_column(&self, index: usize, start: u32, first: usize) -> u32 {
        self.wide[index].start - start - (self.shrink[index] - self.shrink[first])
    }

    /// Number of lines (an empty text has one empty line).
    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// 1-based line and 1-based UTF-16 column of a byte offset.
    ///
    /// Offsets past the end clamp to the end; an offset inside a multi-byte character
    /// maps to that character's column.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let mut offset = offset.min(self.len).max(self.line_starts[0]);
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line];
        // Non-ASCII characters on this line before `offset`.
        let from = self.wide.partition_point(|w| w.start < line_start);
        let mut to = self.wide.partition_point(|w| w.start < offset);
        if to > from {
            let last = self.wide[to - 1];
            if last.start + u32::from(last.utf8_len) > offset {
                offset = last.start;
                to -= 1;
            }
        }
        (line as u32 + 1, offset - line_start - (self.shrink[to] - self.shrink[from]) + 1)
    }

    /// The byte offset of a 1-based line and 1-based UTF-16 column, the inverse of
    /// [`line_col`](Self::line_col); `None` past the line's end or inside a character.
    pub fn offset(&self, line: u32, column: u32) -> Option<u32> {
        let line = line.checked_sub(1)? as usize;
        let (start, end) = (*self.line_starts.get(line)?, self.line_ends[line]);
        let units = column.checked_sub(1)?;
        let first = self.wide.partition_point(|w| w.start < start);
        let last = first + self.wide[first..].partition_point(|w| w.start < end);
        // The non-ASCII characters on the line that start before the column (their columns
        // grow with their index: a binary search).
        let (mut before, mut after) = (first, last);
        while before < after {
            let middle = before + (after - before) / 2;
            if self.wide_column(middle, start, first) < units {
                before = middle + 1;
            } else {
                after = middle;
            }
        }
        let offset = match before.checked_sub(1).filter(|&i| i >= first) {
            None => start + units,
            Some(i) => {
                let (w, at) = (self.wide[i], self.wide_column(i, start, first));
                // Inside that character: no offset.
                let past = units.checked_sub(at + u32::from(w.utf16_len))?;
                w.start + u32::from(w.utf8_len) + past
            }
        };
        (offset <= end).then_some(offset)
    }

    /// Byte range of a 1-based line, without its terminator. Out-of-range lines give an
    /// empty range at the end of the text.
    pub fn line_range(&self, line: u32) -> Range<usize> {
        match line.checked_sub(1).map(|l| l as usize) {
            Some(l) if l < self.line_starts.len() => self.line_starts[l] as usize..self.line_ends[l] as usize,
            _ => self.len as usize..self.len as usize,
        }
    }
}

/// The deepest nesting of brackets a source may have. Node's own parser gives up near 2,000
/// nested objects, and no written code comes near either.
pub const MAX_BRACKETS: usize = 1_000;

/// The byte order mark some editors start a UTF-8 file with: JSON readers skip it (npm,
/// Node's JSON modules), where `JSON.parse` and serde_json refuse it.
pub const BYTE_ORDER_MARK: &str = "\u{feff}";

/// The deepest nesting a source may reach with brackets and operators that nest without
/// them (`a ? b : c ? …`, `=>`, `=`, prefix `!`, `else if`, `typeof`, …): well within what the
/// parser and the passes after it recurse through on a build thread's stack
/// ([`crate::threads::STACK_SIZE`] holds about 300,000 levels). Deeper input would abort
/// the process.
pub const MAX_NESTING: usize = 50_000;

/// Where `text` first nests deeper than [`MAX_BRACKETS`] or [`MAX_NESTING`], with what to
/// say about it. One pass over the bytes; strings and comments count too, an overestimate no
/// real source reaches. The operators are counted per bracket level from its last `;` or `,`,
/// where a chain of them ends.
pub fn too_deep(text: &str) -> Option<(Span, String)> {
    let bytes = text.as_bytes();
    // Per open bracket (and the top level): the operators chained in it so far.
    let mut chains: Vec<usize> = vec![0];
    let mut nesting = 0usize;
    // The last byte that is not white space: tells a prefix `+`/`-`/`<` from an infix one.
    let mut last = b';';
    let mut at = 0usize;
    while at < bytes.len() {
        let byte = bytes[at];
        let next = bytes.get(at + 1).copied().unwrap_or(b' ');
        let mut width = 1;
        match byte {
            b'(' | b'[' | b'{' => {
                chains.push(0);
                nesting += 1;
                if chains.len() - 1 > MAX_BRACKETS {
                    let message = format!("brackets nest more than {MAX_BRACKETS} levels deep here");
                    return Some((span_at(at, 1)?, message));
                }
            }
            b')' | b']' | b'}' if chains.len() > 1 => {
                nesting -= chains.pop().unwrap_or_default() + 1;
            }
            b';' | b',' => nesting -= std::mem::take(chains.last_mut().expect("the top level stays")),
            // `++` and `--`: after an operand they end it (`i++ + 1`), before one they nest nothing.
            b'+' | b'-' if next == byte => {
                at += 2;
                if !is_operand_end(last) {
                    last = byte;
                }
                continue;
            }
            _ => {
                width = nests(bytes, at, last).unwrap_or(0);
                if width > 0 {
                    *chains.last_mut().expect("the top level stays") += 1;
                    nesting += 1;
                    if nesting > MAX_NESTING {
                        let message = format!(
                            "expressions nest more than {MAX_NESTING} levels deep here (brackets and operators \
                             such as `?`, `=>`, `=`, `!` or `else`, chained without a `;` or `,`)"
                        );
                        return Some((span_at(at, width)?, message));
                    }
                } else {
                    width = 1;
                }
            }
        }
        if !byte.is_ascii_whitespace() {
            last = bytes[at + width - 1];
        }
        at += width;
    }
    None
}

/// From how many bytes a source could nest deep enough to overflow a build thread's stack,
/// however it is written. [`too_deep`] reads nesting as written, with no lexer (a `)` in a
/// string closes a bracket there), and no count bounds every pass's recursion (a chain of a
/// million `a / b` parses in a loop, and checks recurse down it), but no source nests
/// deeper than it has bytes: past this, a module's whole compile, or the config's reading,
/// is tried first where an overflow harms nothing ([`crate::threads::returns_within_stack`]).
/// The stack holds about 300,000 levels of brackets; this leaves a level of any pass 2.5 KiB.
pub const PROBED_FROM: usize = 100_000;

/// Why `compile`, the compile of `text`, may not run on this thread's stack, if it may not:
/// none below [`PROBED_FROM`] bytes; past it, `compile` is tried first in a copy of the
/// process, and an overflow there, or no copy to be had, refuses it.
pub fn refusal_to_compile(text: &str, compile: impl FnOnce()) -> Option<String> {
    if text.len() < PROBED_FROM {
        return None;
    }
    match crate::threads::returns_within_stack(compile) {
        Ok(true) => None,
        Ok(false) => Some("this file nests too deep to compile: it would overflow the build thread's stack".into()),
        Err(why) => {
            Some(format!("this file is large enough to nest too deep to compile, and could not be tried first ({why})"))
        }
    }
}

/// The length of the operator at `at` when it nests what follows it, given the last byte
/// before it that is not white space.
fn nests(bytes: &[u8], at: usize, last: u8) -> Option<usize> {
    let byte = bytes[at];
    let next = bytes.get(at + 1).copied().unwrap_or(b' ');
    let prev = at.checked_sub(1).map(|i| bytes[i]).unwrap_or(b' ');
    let operand_before = is_operand_end(last);
    match byte {
        // `?` of a conditional, not `?.` or `??`.
        b'?' if !matches!(next, b'.' | b'?') && prev != b'?' => Some(1),
        b'=' if next == b'>' => Some(2),
        // An assignment, not `==`, `!=`, `<=` or `>=`.
        b'=' if next != b'=' && !matches!(prev, b'=' | b'!' | b'<' | b'>') => Some(1),
        b'!' | b'~' if next != b'=' => Some(1),
        // Prefix signs (`- - x`), a type argument or a JSX tag (`A<B<…`, `><…`).
        b'+' | b'-' if !operand_before => Some(1),
        b'<' if (operand_before || last == b'>') && !matches!(next, b'=' | b'<') => Some(1),
        b'a'..=b'z' if !(prev.is_ascii_alphanumeric() || matches!(prev, b'_' | b'$')) => {
            let word = bytes[at..].iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$')).count();
            let nesting_word = matches!(
                &bytes[at..at + word],
                b"else" | b"typeof" | b"void" | b"delete" | b"await" | b"new" | b"yield"
            );
            nesting_word.then_some(word)
        }
        _ => None,
    }
}

/// Whether an operand can end with `byte` (so a `+` after it is infix).
fn is_operand_end(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b')' | b']' | b'}' | b'"' | b'\'' | b'`')
}

fn span_at(at: usize, width: usize) -> Option<Span> {
    let at = u32::try_from(at).ok()?;
    Some(Span::new(at, at + width as u32))
}

/// Where in `text` serde_json's `error` stopped, as a byte offset on a character boundary
/// (it says a 1-based line and a byte column, a `\r` counting as one), and what it says
/// without that place, which a diagnostic shows itself.
pub fn json_error_at(text: &[u8], error: &serde_json::Error) -> (u32, String) {
    let line_start: usize =
        text.split_inclusive(|&byte| byte == b'\n').take(error.line().saturating_sub(1)).map(<[u8]>::len).sum();
    let mut at = (line_start + error.column().saturating_sub(1)).min(text.len());
    // (Back over UTF-8 continuation bytes.)
    while at > 0 && text.get(at).is_some_and(|byte| byte & 0xC0 == 0x80) {
        at -= 1;
    }
    let message = error.to_string();
    let what = message.rsplit_once(" at line ").map_or(message.as_str(), |(what, _)| what).to_owned();
    (at as u32, what)
}

/// Where the value of the member `key` of the JSON object `text` is written (the last, as
/// readers keep the last of a repeated key), if `text` is one and has it.
pub fn json_member_at(text: &[u8], key: &str) -> Option<Span> {
    type Members<'a> = std::collections::HashMap<std::borrow::Cow<'a, str>, &'a serde_json::value::RawValue>;
    let members: Members<'_> = serde_json::from_slice(text).ok()?;
    let raw = members.get(key)?.get();
    // (The raw value borrows `text`: its place is its address's distance from the start.)
    let start = (raw.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    span_at(start, raw.len())
}

/// Whether `text` is a whole number as written plainly in decimal: digits only, no sign,
/// no leading zero but for `0` itself (which some readers take for octal).
pub fn is_plain_decimal(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'))
}

/// Whether `name` is an identifier in ASCII (`_a1`, `$x`): one written after a dot, or as an
/// unquoted key, in JavaScript and in JSON paths alike (ASCII only, to be safe).
pub fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_members_value_is_located() {
        let text = br#"{ "name": "p", "version": { "x": 1 }, "a\u0062": 2 }"#;
        let at = json_member_at(text, "version").unwrap();
        assert_eq!(&text[at.range()], br#"{ "x": 1 }"#);
        assert_eq!(&text[json_member_at(text, "ab").unwrap().range()], b"2", "a key written with an escape");
        assert_eq!(json_member_at(text, "main"), None);
        assert_eq!(json_member_at(b"[1]", "version"), None);
        let repeated = br#"{"version": "1", "version": "2"}"#;
        assert_eq!(&repeated[json_member_at(repeated, "version").unwrap().range()], br#""2""#);
    }

    #[test]
    fn brackets_are_measured_up_to_their_bound() {
        let nested = |n: usize| format!("x = {}{};", "([{".repeat(n / 3), "}])".repeat(n / 3));
        assert_eq!(too_deep(&nested(MAX_BRACKETS - 1)), None);
        assert_eq!(too_deep(&"(1)".repeat(MAX_BRACKETS * 2)), None, "only open brackets count");
        let deep = format!("x = {};", "[".repeat(MAX_BRACKETS + 5));
        let (span, message) = too_deep(&deep).unwrap();
        assert_eq!(span, Span::new(4 + MAX_BRACKETS as u32, 5 + MAX_BRACKETS as u32));
        assert_eq!(message, "brackets nest more than 1000 levels deep here");
    }

    #[test]
    fn operators_that_nest_without_brackets_are_measured_too() {
        let n = MAX_NESTING + 1;
        let chains = [
            format!("x = {}1{};", "1 ? ".repeat(n), " : 1".repeat(n)),
            format!("f = {}1;", "() => ".repeat(n)),
            format!("x = {}1;", "a = ".repeat(n)),
            format!("x = {}1;", "!".repeat(n)),
            format!("x = {}1;", "- ".repeat(n)),
            format!("if (1) {{}} {}", "else if (1) {} ".repeat(n)),
            format!("x = {}1;", "typeof ".repeat(n)),
            format!("type T = {}1{};", "A<".repeat(n), ">".repeat(n)),
        ];
        for chain in &chains {
            let (_, message) = too_deep(chain).unwrap_or_else(|| panic!("not measured: {}", &chain[..40]));
            assert!(message.starts_with("expressions nest more than 50000 levels"), "{message}");
        }
    }

    #[test]
    fn chains_end_where_statements_and_lists_do() {
        let n = MAX_NESTING + 1;
        // Nothing here nests: each `;` or `,` ends its chain, and infix operators never start one.
        let flat = [
            "a = 1;\n".repeat(n),
            format!("x = [{}];", "!0, ".repeat(n)),
            format!("x = {}1;", "a - ".repeat(n)),
            format!("x = {}1;", "a == b && a <= b || a != ".repeat(n)),
            format!("x = {}1;", "a?.b ?? ".repeat(n)),
            format!("x = {}1;", "i++ + i-- + ".repeat(n)),
            format!("x = {}1;", "renew + elsewhere + ".repeat(n)),
        ];
        for text in &flat {
            assert_eq!(too_deep(text).map(|(_, m)| m), None, "{}", &text[..40]);
        }
    }

    #[test]
    fn ascii_lines_and_columns() {
        let text = "ab\ncd\n\nxyz";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_col(2), (1, 3)); // the newline itself
        assert_eq!(index.line_col(3), (2, 1));
        assert_eq!(index.line_col(6), (3, 1));
        assert_eq!(index.line_col(9), (4, 3));
        assert_eq!(index.line_col(10), (4, 4)); // end of text
        assert_eq!(index.line_col(999), (4, 4)); // clamped
        assert_eq!(&text[index.line_range(1)], "ab");
        assert_eq!(&text[index.line_range(3)], "");
        assert_eq!(&text[index.line_range(4)], "xyz");
        assert_eq!(index.line_range(0), 10..10);
        assert_eq!(index.line_range(5), 10..10);
    }

    #[test]
    fn crlf_cr_and_unicode_separators() {
        let text = "a\r\nb\rc\u{2028}d\u{2029}e\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 6);
        assert_eq!(&text[index.line_range(1)], "a");
        assert_eq!(&text[index.line_range(2)], "b");
        assert_eq!(&text[index.line_range(3)], "c");
        assert_eq!(&text[index.line_range(4)], "d");
        assert_eq!(&text[index.line_range(5)], "e");
        assert_eq!(&text[index.line_range(6)], "");
        let d = text.find('d').unwrap() as u32;
        assert_eq!(index.line_col(d), (4, 1));
        let e = text.find('e').unwrap() as u32;
        assert_eq!(index.line_col(e), (5, 1));
    }

    #[test]
    fn utf16_columns_after_non_ascii() {
        // é: 2 bytes / 1 unit; 中: 3 bytes / 1 unit; 😀: 4 bytes / 2 units.
        let text = "x\né中😀z";
        let index = LineIndex::new(text);
        let z = text.find('z').unwrap() as u32;
        assert_eq!(z, 2 + 2 + 3 + 4);
        assert_eq!(index.line_col(z), (2, 1 + 1 + 1 + 2));
        let emoji = text.find('😀').unwrap() as u32;
        assert_eq!(index.line_col(emoji), (2, 3));
        // Inside the emoji: snaps to its start.
        assert_eq!(index.line_col(emoji + 2), (2, 3));
        // Characters on earlier lines do not shift later lines.
        let text = "😀😀\nab";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text.find('b').unwrap() as u32), (2, 2));
        assert_eq!(index.line_col(8), (1, 5));
    }

    #[test]
    fn offsets_invert_line_and_column() {
        let text = "a\nbé😀c\r\nd\u{2028}e\rf";
        let index = LineIndex::new(text);
        for (offset, _) in text.char_indices().filter(|&(_, c)| c != '\n') {
            let (line, column) = index.line_col(offset as u32);
            assert_eq!(index.offset(line, column), Some(offset as u32), "{offset}");
        }
        // `c` is after `b` (1), `é` (1) and `😀` (2 units, 4 bytes).
        assert_eq!(index.offset(2, 5), Some(2 + 1 + 2 + 4));
        assert_eq!(index.offset(2, 6), Some(10), "the end of a line");
        assert_eq!(index.offset(2, 7), None, "past its line's end");
        assert_eq!(index.offset(2, 4), None, "inside the emoji");
        assert_eq!(index.offset(3, 1), Some(12), "after `\\r\\n`");
        assert_eq!(index.offset(7, 1), None, "past the last line");
        assert_eq!(index.offset(0, 1), None);
        assert_eq!(LineIndex::new("").offset(1, 1), Some(0));
        // A long line of mixed widths (a minified module), then a short one.
        let text = format!("{}\nzé", "aé😀中b".repeat(400));
        let index = LineIndex::new(&text);
        for (offset, _) in text.char_indices().filter(|&(_, c)| c != '\n') {
            let (line, column) = index.line_col(offset as u32);
            assert_eq!(index.offset(line, column), Some(offset as u32), "{offset}");
        }
        assert_eq!(index.line_col(text.find('z').unwrap() as u32), (2, 1));
        assert_eq!(index.offset(1, 3), Some(3), "the emoji after `aé`");
        assert_eq!(index.offset(1, 4), None, "inside it");
    }

    #[test]
    fn a_byte_order_mark_is_no_column() {
        let index = LineIndex::new("\u{feff}ab\ncd");
        assert_eq!(index.line_col(3), (1, 1));
        assert_eq!(index.line_col(4), (1, 2));
        assert_eq!(index.line_col(0), (1, 1), "inside the mark: where the line starts");
        assert_eq!(index.offset(1, 1), Some(3));
        assert_eq!(index.line_range(1), 3..5);
        assert_eq!(index.line_col(7), (2, 2));
    }

    #[test]
    fn empty_text() {
        let index = LineIndex::new("");
        assert_eq!(index.line_count(), 1);
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_range(1), 0..0);
    }
}
