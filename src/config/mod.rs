//! The config stage: `agent-bundle.config.ts` → a typed, position-free [`Config`].
//!
//! `extract` reads the literal value of the default export statically (the file is never
//! executed); this module checks its shape against the schema: known keys, JSON types, and the
//! three forms a hook may take. Semantic checks (do targets exist, do selectors map, is the
//! timeout positive) belong to `model::normalize`, which sees the whole project.
//!
//! Architecture invariant: `Config` holds JSON paths, never spans, so reformatting the config
//! leaves it equal and every later stage is reused.

pub mod extract;

use crate::diagnostics::{Code, Diagnostic};
use extract::{ExtractErrorKind, ExtractTarget, Property, Value, ValueKind};

/// The names under which a project's config is looked up, in order.
pub const CONFIG_FILE_NAMES: [&str; 4] =
    ["agent-bundle.config.ts", "agent-bundle.config.mts", "agent-bundle.config.js", "agent-bundle.config.mjs"];

/// Whether `dir` holds a file under one of the config's names: a project's folder, as a
/// message tells one apart (the build itself reads only what the walk may read).
pub fn holds_config_file(dir: &std::path::Path) -> bool {
    CONFIG_FILE_NAMES.iter().any(|name| dir.join(name).is_file())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub plugin: PluginConfig,
    /// Raw target names with their JSON paths; `None` when the key is absent or refused.
    pub targets: Option<Vec<Item<String>>>,
    /// Whether `targets` was given and refused (said so): nothing can be said of what a hook's
    /// own targets select then.
    pub targets_refused: bool,
    pub hooks: Vec<HookDecl>,
    /// The keys of `hooks` given an empty list, which declares nothing (normalizing says so,
    /// or what is wrong with the key).
    pub empty_hook_lists: Vec<Item<String>>,
    pub payloads: Vec<PayloadDecl>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PluginConfig {
    pub name: Item<String>,
    pub description: Option<String>,
    pub version: Option<String>,
}

/// A config value together with the JSON path it was read from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item<T> {
    pub value: T,
    pub path: String,
}

/// One hook declaration, in any of the seed's forms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HookDecl {
    /// The event key as written (validated in normalization).
    pub event: Item<String>,
    /// Path of the declaration itself, e.g. `hooks.beforeTool[1]`.
    pub path: String,
    pub handler: Item<HandlerDecl>,
    pub targets: Option<Vec<Item<String>>>,
    pub timeout: Option<Item<serde_json::Number>>,
    pub tools: Option<Item<Vec<Item<String>>>>,
    pub args: Option<Item<Vec<Item<String>>>>,
    /// Whether the reader refused a field of it (said so): what set it apart from another
    /// declaration may be what was refused.
    pub refused: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HandlerDecl {
    Module(String),
    Prebuilt(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PayloadDecl {
    pub name: Item<String>,
    pub source: Item<String>,
    pub targets: Option<Vec<Item<String>>>,
}

/// What the config stage produces.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConfigReturn {
    pub config: Option<Config>,
    /// The extracted literal, kept for locating diagnostics by JSON path.
    pub value: Option<Value>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and checks the config file `file` (project-relative name) with text `text`.
pub fn parse(file: &str, text: &str) -> ConfigReturn {
    let extracted = extract::extract(file, text, ExtractTarget::DefaultExport);
    let mut diagnostics: Vec<Diagnostic> = extracted
        .errors
        .iter()
        .map(|error| {
            let code = match error.kind {
                ExtractErrorKind::Syntax => Code::ConfigSyntax,
                // (A config's `export default` has no name to miss: `MisnamedExport` is a route's.)
                ExtractErrorKind::MissingExport
                | ExtractErrorKind::MisnamedExport
                | ExtractErrorKind::ConfigFactory
                | ExtractErrorKind::NotLiteral => Code::InvalidConfigValue,
            };
            error.to_diagnostic(file, code)
        })
        .collect();
    let config = extracted.value.as_ref().and_then(|value| {
        let mut reader = Reader { file, diagnostics: &mut diagnostics };
        reader.config(value)
    });
    // A config with extraction errors is incomplete: never build from it.
    let config = if extracted.errors.is_empty() { config } else { None };
    ConfigReturn { config, value: extracted.value, diagnostics }
}

/// Finds the span of the value at `json_path` in an extracted config; where the source leaves it out, the nearest value on the way there: a key not written
/// points at the object it would go in.
pub fn span_of(root: &Value, json_path: &str) -> crate::source::Span {
    let mut value = root;
    for segment in split_path(json_path) {
        let next = match (&value.kind, segment) {
            (ValueKind::Object(properties), PathSegment::Key(key)) => {
                properties.iter().rev().find(|p| p.key == key).map(|p| &p.value)
            }
            (ValueKind::Array(items), PathSegment::Index(index)) => items.get(index),
            _ => None,
        };
        let Some(next) = next else { break };
        value = next;
    }
    value.span
}

/// The span of the name of the key `json_path` ends with (`None` when it ends with an index).
pub fn key_span_of(root: &Value, json_path: &str) -> Option<crate::source::Span> {
    reach(root, json_path)?.1
}

/// The value at `json_path`, and the span of the key it is under when the path ends with one.
fn reach<'v>(root: &'v Value, json_path: &str) -> Option<(&'v Value, Option<crate::source::Span>)> {
    let (mut value, mut key_span) = (root, None);
    for segment in split_path(json_path) {
        (value, key_span) = match (&value.kind, segment) {
            (ValueKind::Object(properties), PathSegment::Key(key)) => {
                let property = properties.iter().rev().find(|p| p.key == key)?;
                (&property.value, Some(property.key_span))
            }
            (ValueKind::Array(items), PathSegment::Index(index)) => (items.get(index)?, None),
            _ => return None,
        };
    }
    Some((value, key_span))
}

enum PathSegment {
    Key(String),
    Index(usize),
}

/// The segments of a path [`join_key`] and [`join_index`] wrote: `a.b`, `[0]`, `["a.b]"]`.
fn split_path(path: &str) -> Vec<PathSegment> {
    let mut segments = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if rest.starts_with("[\"") {
            // A quoted key: a JSON string, whose escapes may hide `"` and `]`.
            let mut quoted = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
            let Some(Ok(key)) = quoted.next() else { break };
            rest = rest[1 + quoted.byte_offset()..].strip_prefix(']').unwrap_or("");
            segments.push(PathSegment::Key(key));
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').unwrap_or(after.len());
            rest = after.get(end + 1..).unwrap_or("");
            match after[..end].parse::<usize>() {
                Ok(index) => segments.push(PathSegment::Index(index)),
                Err(_) => break,
            }
        } else {
            let rest_trimmed = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trimmed.find(['.', '[']).unwrap_or(rest_trimmed.len());
            segments.push(PathSegment::Key(rest_trimmed[..end].to_owned()));
            rest = &rest_trimmed[end..];
        }
    }
    segments
}

/// `text` as a config would write it: a single-quoted JavaScript string, what it holds
/// escaped where a backslash or a quote would be read otherwise, a line break or another
/// control character (`\n`, `\u0007`) included.
fn js_quoted(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        match c {
            '\\' | '\'' => {
                quoted.push('\\');
                quoted.push(c);
            }
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('\'');
    quoted
}

/// Appends an object key to a JSON path, quoting keys that are not identifiers.
pub fn join_key(path: &str, key: &str) -> String {
    match (path.is_empty(), crate::source::is_plain_identifier(key)) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", serde_json::Value::from(key)),
    }
}

pub fn join_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// Walks the extracted value, reporting every shape problem before giving up.
struct Reader<'a> {
    file: &'a str,
    diagnostics: &'a mut Vec<Diagnostic>,
}

const TOP_LEVEL_KEYS: [&str; 4] = ["hooks", "payload", "plugin", "targets"];
const HOOK_ENTRY_KEYS: [&str; 5] = ["args", "handler", "targets", "timeout", "tools"];
const PLUGIN_KEYS: [&str; 3] = ["description", "name", "version"];
const PAYLOAD_KEYS: [&str; 2] = ["source", "targets"];

impl Reader<'_> {
    fn error(&mut self, code: Code, value: &Value, path: &str, message: String, help: &str) {
        let mut diagnostic = Diagnostic::error(code, message).in_file(self.file).at(value.span).at_path(path);
        if !help.is_empty() {
            diagnostic = diagnostic.with_help(help);
        }
        self.diagnostics.push(diagnostic);
    }

    /// Reports each key of `properties` (an object at `path`) that is not one of `known`, at
    /// the key itself: `unknown <what> `key``.
    fn unknown_keys<'p>(
        &mut self,
        properties: impl IntoIterator<Item = &'p Property>,
        known: &[&str],
        path: &str,
        what: &str,
        help: &str,
    ) {
        for property in properties.into_iter().filter(|property| !known.contains(&property.key.as_str())) {
            self.diagnostics.push(
                Diagnostic::error(Code::UnknownConfigKey, format!("unknown {what} `{}`", property.key))
                    .in_file(self.file)
                    .at(property.key_span)
                    .at_path(join_key(path, &property.key))
                    .with_help_suggesting(&property.key, known.iter().copied(), help),
            );
        }
    }

    fn expected(&mut self, value: &Value, path: &str, expected: &str) {
        let message = format!("`{path}` must be {expected}, found {}", value.describe());
        self.error(Code::InvalidConfigValue, value, path, message, "");
    }

    fn config(&mut self, root: &Value) -> Option<Config> {
        let ValueKind::Object(properties) = &root.kind else {
            self.expected(root, "", "an object literal");
            return None;
        };
        // The plugin's own keys written beside `plugin` (as a package.json has them).
        let (misplaced, others): (Vec<&Property>, Vec<&Property>) =
            properties.iter().partition(|property| PLUGIN_KEYS.contains(&property.key.as_str()));
        for property in misplaced {
            self.diagnostics.push(
                Diagnostic::error(Code::UnknownConfigKey, format!("`{}` belongs in `plugin`", property.key))
                    .in_file(self.file)
                    .at(property.key_span)
                    .at_path(&property.key)
                    .with_help(format!("write it inside the plugin's entry: `plugin: {{ {}: … }}`", property.key)),
            );
        }
        let help = format!("this version of agent-bundle reads {}", TOP_LEVEL_KEYS.join(", "));
        self.unknown_keys(others, &TOP_LEVEL_KEYS, "", "config key", &help);
        let plugin = self.plugin(root.get("plugin"), root);
        let targets = root.get("targets").and_then(|v| self.targets(v, "targets"));
        let targets_refused = targets.is_none() && root.get("targets").is_some();
        let (hooks, empty_hook_lists) = root.get("hooks").map(|v| self.hooks(v)).unwrap_or_default();
        let payloads = root.get("payload").map(|v| self.payloads(v)).unwrap_or_default();
        Some(Config { plugin: plugin?, targets, targets_refused, hooks, empty_hook_lists, payloads })
    }

    fn plugin(&mut self, value: Option<&Value>, root: &Value) -> Option<PluginConfig> {
        let Some(value) = value else {
            self.error(
                Code::MissingPluginName,
                root,
                "",
                "the config has no `plugin`".into(),
                "add `plugin: { name: 'my-plugin' }`",
            );
            return None;
        };
        let ValueKind::Object(properties) = &value.kind else {
            self.expected(value, "plugin", "an object");
            return None;
        };
        self.unknown_keys(
            properties,
            &PLUGIN_KEYS,
            "plugin",
            "plugin key",
            "`plugin` takes name, description and version",
        );
        let description = value.get("description").and_then(|v| self.string(v, "plugin.description"));
        let version = value.get("version").and_then(|v| self.string(v, "plugin.version"));
        let Some(name_value) = value.get("name") else {
            self.error(
                Code::MissingPluginName,
                value,
                "plugin",
                "`plugin.name` is required".into(),
                "add `name: 'my-plugin'` (lowercase letters, digits and dashes)",
            );
            return None;
        };
        let name = self.string(name_value, "plugin.name")?;
        Some(PluginConfig { name: Item { value: name, path: "plugin.name".into() }, description, version })
    }

    fn string(&mut self, value: &Value, path: &str) -> Option<String> {
        match &value.kind {
            ValueKind::String(text) => Some(text.clone()),
            _ => {
                self.expected(value, path, "a string");
                None
            }
        }
    }

    /// A `targets` list; an empty one, which would build for nothing, is an error (and then
    /// read as absent, so no later check reports it again).
    fn targets(&mut self, value: &Value, path: &str) -> Option<Vec<Item<String>>> {
        let targets = self.string_list(value, path)?;
        if targets.is_empty() {
            let message = format!("`{path}` is empty: it selects no target");
            self.error(Code::InvalidConfigValue, value, path, message, "name a target, or leave `targets` out");
            return None;
        }
        Some(targets)
    }

    fn string_list(&mut self, value: &Value, path: &str) -> Option<Vec<Item<String>>> {
        let items = match &value.kind {
            ValueKind::Array(items) => items,
            ValueKind::String(text) => {
                let message = format!("`{path}` must be an array of strings, found {}", value.describe());
                // (`'claude, codex'` is two names; `'--host claude'` two arguments, whose
                // commas are their own.)
                let entries: Vec<String> = if path.ends_with("args") {
                    text.split_whitespace().map(js_quoted).collect()
                } else {
                    text.split(',').map(str::trim).filter(|name| !name.is_empty()).map(js_quoted).collect()
                };
                let help = match entries.as_slice() {
                    [] => "write a list of what it names, or leave it out".to_owned(),
                    _ => format!("write it as a list: `[{}]`", entries.join(", ")),
                };
                self.error(Code::InvalidConfigValue, value, path, message, &help);
                return None;
            }
            _ => {
                self.expected(value, path, "an array of strings");
                return None;
            }
        };
        let mut list = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let item_path = join_index(path, index);
            if let Some(text) = self.string(item, &item_path) {
                list.push(Item { value: text, path: item_path });
            }
        }
        // A list none of whose items could be read (each said why) is no empty list: read as
        // absent, so that nothing reports it as one.
        (list.is_empty() == items.is_empty()).then_some(list)
    }

    /// The hooks `value` declares, and the keys it gives an empty list.
    fn hooks(&mut self, value: &Value) -> (Vec<HookDecl>, Vec<Item<String>>) {
        let ValueKind::Object(properties) = &value.kind else {
            self.expected(value, "hooks", "an object keyed by event");
            return Default::default();
        };
        let (mut hooks, mut empty) = (Vec::new(), Vec::new());
        for property in properties {
            let event_path = join_key("hooks", &property.key);
            let event = Item { value: property.key.clone(), path: event_path.clone() };
            match &property.value.kind {
                ValueKind::Array(entries) if entries.is_empty() => empty.push(event),
                ValueKind::Array(entries) => {
                    for (index, entry) in entries.iter().enumerate() {
                        let path = join_index(&event_path, index);
                        hooks.extend(self.checked_hook_entry(entry, &event, path));
                    }
                }
                _ => hooks.extend(self.checked_hook_entry(&property.value, &event, event_path.clone())),
            }
        }
        (hooks, empty)
    }

    /// [`Self::hook_entry`], marked `refused` when a field of it was.
    fn checked_hook_entry(&mut self, value: &Value, event: &Item<String>, path: String) -> Option<HookDecl> {
        let said = self.diagnostics.len();
        let mut declaration = self.hook_entry(value, event, path)?;
        declaration.refused = self.diagnostics.len() > said;
        Some(declaration)
    }

    fn hook_entry(&mut self, value: &Value, event: &Item<String>, path: String) -> Option<HookDecl> {
        let declaration = |handler| HookDecl {
            event: event.clone(),
            path: path.clone(),
            handler,
            targets: None,
            timeout: None,
            tools: None,
            args: None,
            refused: false,
        };
        match &value.kind {
            ValueKind::String(handler) => {
                Some(declaration(Item { value: HandlerDecl::Module(handler.clone()), path: path.clone() }))
            }
            ValueKind::Object(properties) => {
                // (`{ prebuilt: './x.js' }` is the handler's form: written in the entry itself,
                // the handler is what is missing.)
                let prebuilt = properties.iter().find(|property| property.key == "prebuilt");
                let misplaced = prebuilt.filter(|_| value.get("handler").is_none());
                let help = "a hook entry takes handler, targets, timeout, tools and args";
                let others = properties
                    .iter()
                    .filter(|property| misplaced.is_none_or(|misplaced| !std::ptr::eq(*property, misplaced)));
                self.unknown_keys(others, &HOOK_ENTRY_KEYS, &path, "hook entry key", help);
                let handler_path = join_key(&path, "handler");
                let handler = match value.get("handler") {
                    None if let Some(prebuilt) = misplaced => {
                        let written = match &prebuilt.value.kind {
                            ValueKind::String(text) => js_quoted(text),
                            _ => "'./<script>.js'".to_owned(),
                        };
                        self.diagnostics.push(
                            Diagnostic::error(Code::UnknownConfigKey, "`prebuilt` belongs in the hook's `handler`")
                                .in_file(self.file)
                                .at(prebuilt.key_span)
                                .at_path(join_key(&path, "prebuilt"))
                                .with_help(format!("write `handler: {{ prebuilt: {written} }}`")),
                        );
                        None
                    }
                    None => {
                        self.error(
                            Code::EmptyHandler,
                            value,
                            &path,
                            format!("hook {} requires a handler", event.value),
                            "add `handler: './src/hooks/<name>.ts'`",
                        );
                        None
                    }
                    Some(handler) => self.handler(handler, &handler_path),
                };
                let targets = value.get("targets").and_then(|v| self.targets(v, &join_key(&path, "targets")));
                let timeout = value.get("timeout").and_then(|v| {
                    let timeout_path = join_key(&path, "timeout");
                    match &v.kind {
                        ValueKind::Number(number) => Some(Item { value: number.clone(), path: timeout_path }),
                        _ => {
                            self.expected(v, &timeout_path, "a number of seconds");
                            None
                        }
                    }
                });
                let list = |reader: &mut Self, key: &str| {
                    let list_path = join_key(&path, key);
                    let items = reader.string_list(value.get(key)?, &list_path)?;
                    Some(Item { value: items, path: list_path })
                };
                let tools = list(self, "tools");
                let args = list(self, "args");
                let mut decl = declaration(handler?);
                decl.targets = targets;
                decl.timeout = timeout;
                decl.tools = tools;
                decl.args = args;
                Some(decl)
            }
            _ => {
                // (An item of the event's array may not be an array itself.)
                let expected = if path.ends_with(']') {
                    "a handler path or an entry object"
                } else {
                    "a handler path, an entry object, or an array of them"
                };
                self.expected(value, &path, expected);
                None
            }
        }
    }

    fn handler(&mut self, value: &Value, path: &str) -> Option<Item<HandlerDecl>> {
        match &value.kind {
            ValueKind::String(module) => Some(Item { value: HandlerDecl::Module(module.clone()), path: path.into() }),
            ValueKind::Object(properties) => {
                let help = "a handler object takes only `prebuilt` (put `args`, `timeout`, … on the hook entry)";
                self.unknown_keys(properties, &["prebuilt"], path, "handler key", help);
                let prebuilt_path = join_key(path, "prebuilt");
                match value.get("prebuilt") {
                    Some(prebuilt) => {
                        let file = self.string(prebuilt, &prebuilt_path)?;
                        Some(Item { value: HandlerDecl::Prebuilt(file), path: prebuilt_path })
                    }
                    None => {
                        self.expected(value, path, "a module path or `{ prebuilt: '<path in a payload>' }`");
                        None
                    }
                }
            }
            _ => {
                self.expected(value, path, "a module path or `{ prebuilt: '<path in a payload>' }`");
                None
            }
        }
    }

    fn payloads(&mut self, value: &Value) -> Vec<PayloadDecl> {
        let ValueKind::Object(properties) = &value.kind else {
            self.expected(value, "payload", "an object keyed by destination directory");
            return Vec::new();
        };
        let mut payloads = Vec::new();
        for property in properties {
            let path = join_key("payload", &property.key);
            let name = Item { value: property.key.clone(), path: path.clone() };
            match &property.value.kind {
                ValueKind::String(source) => {
                    payloads.push(PayloadDecl { name, source: Item { value: source.clone(), path }, targets: None })
                }
                ValueKind::Object(entry) => {
                    self.unknown_keys(entry, &PAYLOAD_KEYS, &path, "payload key", "a payload takes source and targets");
                    let source_path = join_key(&path, "source");
                    let source = match property.value.get("source") {
                        Some(source) => self.string(source, &source_path),
                        None => {
                            let message = format!("`{path}` has no `source`: the directory the payload copies");
                            let help = "name it: `{ source: './dist' }`";
                            self.error(Code::InvalidConfigValue, &property.value, &path, message, help);
                            None
                        }
                    };
                    let targets =
                        property.value.get("targets").and_then(|v| self.targets(v, &join_key(&path, "targets")));
                    if let Some(source) = source {
                        payloads.push(PayloadDecl { name, source: Item { value: source, path: source_path }, targets });
                    }
                }
                _ => self.expected(&property.value, &path, "a source directory or `{ source, targets }`"),
            }
        }
        payloads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_hook_form() {
        let parsed = parse("agent-bundle.config.ts", extract::tests::SEED_GUARDED);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let config = parsed.config.unwrap();
        assert_eq!(config.plugin.name.value, "guarded");
        assert_eq!(config.hooks.len(), 2);
        assert_eq!(config.hooks[0].path, "hooks.beforeTool[0]");
        assert_eq!(config.hooks[1].handler.value, HandlerDecl::Module("./src/hooks/guard-writes.ts".into()));
        let tools: Vec<_> = config.hooks[1].tools.as_ref().unwrap().value.iter().map(|t| t.value.as_str()).collect();
        assert_eq!(tools, ["file.write", "shell"]);
        assert_eq!(config.hooks[1].tools.as_ref().unwrap().value[1].path, "hooks.beforeTool[1].tools[1]");
    }

    #[test]
    fn reformatting_keeps_the_config_equal() {
        let reformatted = extract::tests::SEED_GUARDED.replace("  ", "    ").replace("{ handler", "{\n handler");
        assert_eq!(
            parse("agent-bundle.config.ts", extract::tests::SEED_GUARDED).config,
            parse("agent-bundle.config.ts", &reformatted).config
        );
    }

    #[test]
    fn shape_errors_are_located_and_reported_together() {
        let text = "export default { plugin: { name: 3 }, hooks: { stop: [42] }, extra: 1 };\n";
        let parsed = parse("agent-bundle.config.ts", text);
        assert!(parsed.config.is_none());
        let paths: Vec<_> = parsed.diagnostics.iter().map(|d| d.json_path.clone().unwrap()).collect();
        assert_eq!(paths, ["extra", "plugin.name", "hooks.stop[0]"]);
        let value = parsed.value.unwrap();
        assert_eq!(Some(span_of(&value, "hooks.stop[0]")), parsed.diagnostics[2].span);
        assert_eq!(
            parsed.diagnostics[2].message,
            "`hooks.stop[0]` must be a handler path or an entry object, found a number"
        );
        let parsed =
            parse("c.ts", "export default { plugin: { name: 'p' }, payload: { b: { targets: ['claude'] } } };\n");
        assert_eq!(parsed.diagnostics[0].message, "`payload.b` has no `source`: the directory the payload copies");
    }

    #[test]
    fn unknown_keys_are_reported_at_the_key_at_every_level() {
        let text = "export default { plugin: { name: 'p', verison: '1.0.0' }, extra: 1, hooks: { stop: [\
                    { handler: { prebuilt: 'bin/x', args: [] }, timeuot: 5 }] }, payload: { bin: { source: './b', \
                    target: [] } } };\n";
        let parsed = parse("agent-bundle.config.ts", text);
        let found: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.as_str(), d.json_path.as_deref().unwrap(), &text[d.span.unwrap().range()]))
            .collect();
        assert_eq!(
            found,
            [
                (Code::UnknownConfigKey, "unknown config key `extra`", "extra", "extra"),
                (Code::UnknownConfigKey, "unknown plugin key `verison`", "plugin.verison", "verison"),
                (Code::UnknownConfigKey, "unknown hook entry key `timeuot`", "hooks.stop[0].timeuot", "timeuot"),
                (Code::UnknownConfigKey, "unknown handler key `args`", "hooks.stop[0].handler.args", "args"),
                (Code::UnknownConfigKey, "unknown payload key `target`", "payload.bin.target", "target"),
            ]
        );
        let helps: Vec<_> = parsed.diagnostics.iter().map(|d| d.help.as_deref().unwrap()).collect();
        assert_eq!(helps[1], "did you mean `version`? `plugin` takes name, description and version");
        assert_eq!(helps[4], "did you mean `targets`? a payload takes source and targets");
    }

    /// A `prebuilt` written in the hook entry is said to belong in its `handler`, once: the
    /// entry's handler is not also said missing.
    #[test]
    fn a_prebuilt_in_the_entry_is_said_to_belong_in_the_handler() {
        let text = "export default { plugin: { name: 'p' }, hooks: { agentStart: { prebuilt: './tools/check.js', \
                    args: ['--fast'] } } };\n";
        let parsed = parse("c.ts", text);
        let said: Vec<_> =
            parsed.diagnostics.iter().map(|d| (d.message.as_str(), d.help.as_deref().unwrap())).collect();
        assert_eq!(
            said,
            [("`prebuilt` belongs in the hook's `handler`", "write `handler: { prebuilt: './tools/check.js' }`")]
        );
        // A list written as one string with commas is its entries.
        let listed = parse("c.ts", "export default { plugin: { name: 'p' }, targets: 'claude, codex' };");
        assert_eq!(listed.diagnostics[0].help.as_deref(), Some("write it as a list: `['claude', 'codex']`"));
        // An argument's commas are its own.
        let argument = "export default { plugin: { name: 'p' }, hooks: { stop: { handler: { prebuilt: './x.js' }, \
                        args: '--ignore=a,b --host claude' } } };";
        let argument = parse("c.ts", argument);
        let help = "write it as a list: `['--ignore=a,b', '--host', 'claude']`";
        assert_eq!(argument.diagnostics[0].help.as_deref(), Some(help));
        let nothing = parse("c.ts", "export default { plugin: { name: 'p' }, targets: ' , ' };");
        assert_eq!(nothing.diagnostics[0].help.as_deref(), Some("write a list of what it names, or leave it out"));
        // What the help writes reads back as the value given.
        let escaped = "export default { plugin: { name: 'p' }, hooks: { stop: { prebuilt: '.\\\\t\\'s\\n' } } };";
        let help = parse("c.ts", escaped).diagnostics[0].help.clone().unwrap();
        assert_eq!(help, "write `handler: { prebuilt: '.\\\\t\\'s\\n' }`");
        let beside = "export default { plugin: { name: 'p' }, hooks: { stop: { handler: './a.ts', prebuilt: 'x' } } };";
        assert_eq!(parse("c.ts", beside).diagnostics[0].message, "unknown hook entry key `prebuilt`");
    }

    /// The plugin's name or version written at the top, as a package.json has them, is said
    /// to belong in `plugin`.
    #[test]
    fn a_plugin_key_at_the_top_is_said_to_belong_in_plugin() {
        let text = "export default { name: 'p', version: '1.0.0', targets: ['claude'] };\n";
        let parsed = parse("agent-bundle.config.ts", text);
        let found: Vec<_> =
            parsed.diagnostics.iter().map(|d| (d.code, d.message.as_str(), d.help.as_deref().unwrap())).collect();
        assert_eq!(
            found,
            [
                (
                    Code::UnknownConfigKey,
                    "`name` belongs in `plugin`",
                    "write it inside the plugin's entry: `plugin: { name: … }`"
                ),
                (
                    Code::UnknownConfigKey,
                    "`version` belongs in `plugin`",
                    "write it inside the plugin's entry: `plugin: { version: … }`"
                ),
                (Code::MissingPluginName, "the config has no `plugin`", "add `plugin: { name: 'my-plugin' }`"),
            ]
        );
    }

    #[test]
    fn json_paths_quote_odd_keys() {
        assert_eq!(join_key("payload", "my dir"), "payload[\"my dir\"]");
        assert_eq!(join_key("", "hooks"), "hooks");
        assert_eq!(join_index("hooks.stop", 2), "hooks.stop[2]");
    }

    #[test]
    fn a_quoted_key_is_found_whatever_it_holds() {
        let text = r#"export default { payload: { 'a]b': './x', 'q"\\': './y', 'x.y': { source: './z' } } };"#;
        let value = parse("agent-bundle.config.ts", text).value.unwrap();
        for (key, expected) in [("a]b", "'./x'"), ("q\"\\", "'./y'")] {
            let path = join_key("payload", key);
            let span = span_of(&value, &path);
            assert_eq!(&text[span.range()], expected, "{path}");
        }
        let path = join_key(&join_key("payload", "x.y"), "source");
        assert_eq!(&text[span_of(&value, &path).range()], "'./z'", "{path}");
    }

    /// A diagnostic about a key the source leaves out points at the object it would go in.
    #[test]
    fn a_path_the_source_leaves_out_is_found_at_its_nearest_value() {
        let text = "export default { plugin: { name: 'p' }, hooks: [] };";
        let value = parse("agent-bundle.config.ts", text).value.unwrap();
        assert_eq!(&text[span_of(&value, "plugin.version").range()], "{ name: 'p' }");
        assert_eq!(&text[span_of(&value, "hooks[3].handler").range()], "[]");
        assert_eq!(&text[span_of(&value, "timeoutMs").range()], &text[15..text.len() - 1]);
    }
}
