//! Where a bundle's code came from: oxc's code generator maps the transpiled code back to the
//! original source; the linker's edits move that code ([`relocate`]), and [`assemble`]
//! (link.rs) stacks the chunks and ends the bundle with a standard source map in a comment.
//! The runtime reads it when a handler throws, to say where (`whereThrown` in hook.mjs), and so
//! does `node --enable-source-maps`.
//!
//! Positions are 0-based lines and columns counted in UTF-16 code units, as in source maps and
//! in V8's stack traces.
//!
//! [`assemble`]: super::assemble

use std::borrow::Cow;

use oxc_sourcemap::{SourceMap, Token};

use crate::source::LineIndex;

/// An original position (line, column), at a byte offset of the transpiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub offset: u32,
    pub line: u32,
    pub column: u32,
}

/// A chunk's line and column that came from an original line and column (of the chunk's
/// own module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(from = "[u32; 4]", into = "[u32; 4]")]
pub struct Mapping {
    pub line: u32,
    pub column: u32,
    pub original_line: u32,
    pub original_column: u32,
}

impl From<[u32; 4]> for Mapping {
    fn from([line, column, original_line, original_column]: [u32; 4]) -> Self {
        Mapping { line, column, original_line, original_column }
    }
}

impl From<Mapping> for [u32; 4] {
    fn from(m: Mapping) -> Self {
        [m.line, m.column, m.original_line, m.original_column]
    }
}

/// The origins of `code` (what oxc generated, with `map`), in code order.
pub fn origins(code: &str, map: &SourceMap<'_>) -> Vec<Origin> {
    let mut tokens: Vec<Token> = map.get_tokens().filter(|token| token.get_source_id().is_some()).collect();
    tokens.sort_by_key(|token| (token.get_dst_line(), token.get_dst_col()));
    let index = LineIndex::new(code);
    tokens
        .into_iter()
        .filter_map(|token| {
            let offset = index.offset(token.get_dst_line() + 1, token.get_dst_col() + 1)?;
            Some(Origin { offset, line: token.get_src_line(), column: token.get_src_col() })
        })
        .collect()
}

/// A piece of a chunk's code: `len` bytes copied from the transpiled code at `from`, to `to`.
#[derive(Clone, Copy, Debug)]
pub struct Copied {
    pub from: usize,
    pub to: usize,
    pub len: usize,
}

/// The mappings of `out` (a chunk) made of the transpiled code's `copied` pieces (in order)
/// and the linker's own text between them. An origin inside text the linker replaced maps
/// where the replacement starts, if it was the replaced text's start and the replacement is
/// not empty (a removed import statement maps nothing), or nowhere.
pub fn relocate(origins: &[Origin], copied: &[Copied], out: &str) -> Vec<Mapping> {
    let mut moved = Vec::with_capacity(origins.len());
    let mut pieces = copied.iter().enumerate().peekable();
    for origin in origins {
        let offset = origin.offset as usize;
        while pieces.next_if(|(_, piece)| piece.from + piece.len < offset).is_some() {}
        let Some(&(index, piece)) = pieces.peek() else { break };
        let Some(into) = offset.checked_sub(piece.from) else { continue };
        let to = piece.to + into;
        // At a piece's end is where the next edit's replacement begins.
        let removed = into == piece.len && copied.get(index + 1).is_some_and(|next| next.to == to);
        if !removed {
            moved.push((to, origin));
        }
    }
    let index = LineIndex::new(out);
    moved
        .into_iter()
        .map(|(offset, origin)| {
            let (line, column) = index.line_col(offset as u32);
            Mapping { line: line - 1, column: column - 1, original_line: origin.line, original_column: origin.column }
        })
        .collect()
}

/// The `//# sourceMappingURL=` line that ends a bundle whose modules start at the given
/// lines (an entry without mappings is code of no module of the plugin: a tool's module, the
/// end of the bundle); empty when nothing is mapped.
pub fn comment<'a>(modules: impl IntoIterator<Item = (&'a str, u32, &'a [Mapping])>) -> String {
    let Some(map) = source_map(modules) else { return String::new() };
    let map = map.to_json();
    // The last segment has no source, so its line is ended: Node 20 reads a last segment
    // without a source as having the one before it.
    let json = serde_json::json!({ "version": 3, "names": [], "sources": map.sources, "mappings": map.mappings + ";" });
    let base64 = base64_simd::STANDARD.encode_to_string(json.to_string());
    format!("//# sourceMappingURL=data:application/json;charset=utf-8;base64,{base64}\n")
}

/// The map of the modules that have mappings. No sources' content: the map says where, for
/// stack traces, and names each module by its key (`src/hooks/guard.ts`). Where code of no
/// module of the plugin follows mapped code, a segment without a source starts it: a lookup
/// there finds no origin, rather than the last mapped one before it (as
/// `node --enable-source-maps` would otherwise report).
fn source_map<'a>(modules: impl IntoIterator<Item = (&'a str, u32, &'a [Mapping])>) -> Option<SourceMap<'a>> {
    let (mut sources, mut tokens) = (Vec::new(), Vec::new());
    let mut after_mapped = false;
    for (key, first_line, mappings) in modules {
        if mappings.is_empty() {
            if std::mem::take(&mut after_mapped) {
                tokens.push(Token::new(first_line, 0, 0, 0, None, None));
            }
            continue;
        }
        let source = sources.len() as u32;
        sources.push(Cow::Borrowed(key));
        tokens.extend(mappings.iter().map(|m| {
            Token::new(first_line + m.line, m.column, m.original_line, m.original_column, Some(source), None)
        }));
        after_mapped = true;
    }
    if sources.is_empty() {
        return None;
    }
    let contents = vec![None; sources.len()];
    Some(SourceMap::new(None, Vec::new(), None, sources, contents, tokens.into_boxed_slice(), None))
}

/// The line breaks of `text`, as JavaScript and oxc count them (`\r\n` is one).
pub fn line_breaks(text: &str) -> u32 {
    // Nearly always only `\n`: counted without decoding (every bundle's runtime is counted).
    if memchr::memchr2(b'\r', 0xE2, text.as_bytes()).is_none() {
        return memchr::memchr_iter(b'\n', text.as_bytes()).count() as u32;
    }
    LineIndex::new(text).line_count() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_are_every_javascript_line_terminator() {
        let code = "a\nbé😀c\r\nd\u{2028}e\rf";
        assert_eq!(line_breaks(code), 4);
        assert_eq!(line_breaks("a\nb\n"), 2);
    }

    #[test]
    fn relocation_follows_copied_pieces_and_drops_what_was_replaced() {
        // "import 'x';let x = foo;\n", whose import (0..11) the linker removed and whose `foo`
        // (19..22) became `__ab_i0.foo`, after a prologue line.
        let out = "// prologue\nlet x = __ab_i0.foo;\n";
        let copied = [
            Copied { from: 0, to: 12, len: 0 },
            Copied { from: 11, to: 12, len: 8 },
            Copied { from: 22, to: 31, len: 2 },
        ];
        let at = |offset, column| Origin { offset, line: 3, column };
        let origins = [at(0, 0), at(11, 11), at(15, 15), at(19, 19), at(20, 20), at(22, 22)];
        let mappings = relocate(&origins, &copied, out);
        let found: Vec<_> = mappings.iter().map(|m| (m.line, m.column, m.original_column)).collect();
        assert_eq!(found, [(1, 0, 11), (1, 4, 15), (1, 8, 19), (1, 19, 22)]);
    }

    #[test]
    fn the_map_is_a_standard_one_of_the_mapped_modules_only() {
        let mapping = Mapping { line: 1, column: 2, original_line: 4, original_column: 6 };
        assert_eq!(comment([("agent-bundle:x", 3, &[][..])]), "");
        let map = |modules: &[(&str, u32, &[Mapping])]| {
            let line = comment(modules.iter().copied());
            let data = line.strip_prefix("//# sourceMappingURL=data:application/json;charset=utf-8;base64,").unwrap();
            let json = base64_simd::STANDARD.decode_to_vec(data.trim_end()).unwrap();
            serde_json::from_slice::<serde_json::Value>(&json).unwrap()
        };
        // Line 11 (after 11 unmapped ones), column 2 → source 0, line 4, column 6; then line
        // 12, where a tool's module starts, has no source (`A`), and so has all after it
        // (the end of the bundle needs no mark of its own there); the last line is ended
        // (`;`), which Node 20 needs to read its segment as one without a source.
        let modules =
            [("agent-bundle:x", 0, &[][..]), ("src/a.ts", 10, &[mapping][..]), ("agent-bundle:y", 12, &[][..])];
        let expected = serde_json::json!({
            "version": 3, "names": [], "sources": ["src/a.ts"], "mappings": ";;;;;;;;;;;EAIM;A;"
        });
        assert_eq!(map(&[modules[0], modules[1], modules[2], ("", 14, &[][..])]), expected);
        assert_eq!(map(&[modules[0], modules[1], ("", 12, &[][..])]), expected);
    }
}
