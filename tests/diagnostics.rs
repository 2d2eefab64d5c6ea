//! Bad input gets a located diagnostic with a stable code, all at once, and exit code 1.

use std::fs;

use serde_json::Value;

use crate::support::{self, build_json, project};

const HANDLER: &str = "export default () => undefined;\n";

fn config(hooks: &str, targets: &str) -> String {
    format!(
        "import {{ defineConfig }} from 'agent-bundle/config';\nexport default defineConfig({{\n  plugin: {{ name: 'demo' }},\n  targets: {targets},\n  hooks: {hooks},\n}});\n"
    )
}

/// Builds a project with `config` and a handler at `src/hooks/h.ts`; returns (code, path,
/// host, severity) of every diagnostic, and the exit code.
fn diagnose(config: &str, extra: &[(&str, &str)]) -> (i32, Vec<(String, String, String, String)>) {
    let mut files = vec![("agent-bundle.config.ts", config), ("src/hooks/h.ts", HANDLER)];
    files.extend_from_slice(extra);
    let dir = project(&files);
    let (code, report) = build_json(dir.path(), &[]);
    let diagnostics = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let text = |key: &str| d[key].as_str().unwrap_or("").to_owned();
            assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()));
            (text("code"), text("jsonPath"), text("host"), text("severity"))
        })
        .collect();
    (code, diagnostics)
}

fn expect_one(config: &str, extra: &[(&str, &str)], code: &str, path: &str, host: &str) {
    let (exit, diagnostics) = diagnose(config, extra);
    assert_eq!(exit, 1, "{diagnostics:?}");
    assert_eq!(diagnostics, [(code.into(), path.into(), host.into(), "error".into())], "{config}");
}

/// An empty list of hooks declares none: an error, said of what is wrong with its key first.
#[test]
fn an_empty_list_of_hooks_is_an_error() {
    expect_one(&config("{ stop: [] }", "['claude']"), &[], "AB4004", "hooks.stop", "");
    expect_one(&config("{ stpo: [] }", "['claude']"), &[], "AB4213", "hooks.stpo", "");
    expect_one(&config("{ workspaceOpen: [] }", "['claude']"), &[], "AB4204", "hooks.workspaceOpen", "");
}

#[test]
fn unknown_event_key() {
    expect_one(
        &config("{ beforeToolUse: './src/hooks/h.ts' }", "['claude']"),
        &[],
        "AB4213",
        "hooks.beforeToolUse",
        "",
    );
    // A host's own name, given two handlers, is said once, as what it is here.
    let config = config("{ PreToolUse: ['./src/hooks/h.ts', './src/hooks/h.ts'] }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/hooks/h.ts", HANDLER)]);
    let (_, report) = build_json(dir.path(), &[]);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report:#}");
    // At the key, whose name is the fault (`  hooks: { PreToolUse: …`).
    assert_eq!((&diagnostics[0]["line"], &diagnostics[0]["column"]), (&5.into(), &12.into()), "{report:#}");
    let help = diagnostics[0]["help"].as_str().unwrap();
    assert!(
        help.starts_with("`PreToolUse` is what Claude Code and Codex call the config event `beforeTool`; "),
        "{help}"
    );
    // A route family written as a config event is told where its route goes.
    let config = self::config("{ promptSubmit: './src/hooks/h.ts' }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/hooks/h.ts", HANDLER)]);
    let (_, report) = build_json(dir.path(), &[]);
    assert_eq!(
        report["diagnostics"][0]["help"],
        "prompt/submit is an event route, not a config hook: write its handler as `src/events/prompt/submit.tsx`"
    );
    // One a config event has, cased otherwise, is that event's near miss.
    let config = self::config("{ sessionstart: './src/hooks/h.ts' }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/hooks/h.ts", HANDLER)]);
    let (_, report) = build_json(dir.path(), &[]);
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(help.starts_with("did you mean `sessionStart`?"), "{help}");
}

#[test]
fn tools_on_an_event_that_is_not_a_tool_event() {
    let hooks = "{ stop: { handler: './src/hooks/h.ts', tools: ['shell'] } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4201", "hooks.stop.tools", "");
}

#[test]
fn unknown_selector() {
    let hooks = "{ beforeTool: { handler: './src/hooks/h.ts', tools: ['files.write'] } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4202", "hooks.beforeTool.tools[0]", "");
    // A host's matcher pattern is refused alone: the host the rest do not apply to is not
    // told so again.
    let hooks = "{ beforeTool: { handler: './src/hooks/h.ts', tools: ['claude:Edit|Write', 'cursor:Shell'] } }";
    expect_one(&config(hooks, "['claude', 'cursor']"), &[], "AB4202", "hooks.beforeTool.tools[0]", "");
}

#[test]
fn unknown_target() {
    expect_one(&config("{ stop: './src/hooks/h.ts' }", "['claude', 'gemini']"), &[], "AB4100", "targets[1]", "");
    // The only target mistyped: the hooks that then reach no host are not said to, each.
    expect_one(&config("{ stop: './src/hooks/h.ts' }", "['claud']"), &[], "AB4100", "targets[0]", "");
}

#[test]
fn timeouts_must_be_positive_whole_seconds() {
    for timeout in ["0", "1.5", "-3", "4294967296"] {
        let hooks = format!("{{ stop: {{ handler: './src/hooks/h.ts', timeout: {timeout} }} }}");
        expect_one(&config(&hooks, "['claude']"), &[], "AB4205", "hooks.stop.timeout", "");
    }
    // Milliseconds written as seconds build, with a warning that says so.
    let hooks = "{ stop: { handler: './src/hooks/h.ts', timeout: 5000 } }";
    let (exit, diagnostics) =
        diagnose(&config(hooks, "['claude']"), &[("src/hooks/h.ts", "export default () => {};\n")]);
    assert_eq!(exit, 0);
    assert_eq!(diagnostics, [("AB4205".into(), "hooks.stop.timeout".into(), "".into(), "warning".into())]);
    let hooks = "{ stop: { handler: './src/hooks/h.ts', timeout: '10' } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4004", "hooks.stop.timeout", "");
}

#[test]
fn args_only_on_prebuilt_handlers_and_only_shell_safe() {
    let hooks = "{ stop: { handler: './src/hooks/h.ts', args: ['--x'] } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4746", "hooks.stop.args", "");
    let hooks = "{ stop: { handler: { prebuilt: './dist/h.js' }, args: ['$(rm -rf ~)'] } }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
    expect_one(&config, &[("dist/h.js", "")], "AB4746", "hooks.stop.args[0]", "");
}

/// A second config beside the one the build reads is a warning naming both; a `--config`
/// that is not there is named in the error.
#[test]
fn a_second_config_is_a_warning_and_a_missing_one_is_named() {
    let other = "export default { plugin: { name: 'other' }, targets: ['codex'], hooks: {} };\n";
    let (exit, diagnostics) = diagnose(&config("{}", "['claude']"), &[("agent-bundle.config.mjs", other)]);
    assert_eq!(exit, 0);
    assert_eq!(diagnostics, [("AB4006".into(), "".into(), "".into(), "warning".into())]);
    let dir = project(&[("agent-bundle.config.ts", &config("{}", "['claude']"))]);
    let (code, report) = build_json(dir.path(), &["--config", "nope.ts"]);
    assert_eq!(code, 1);
    assert_eq!(report["diagnostics"][0]["message"], "no config `nope.ts` in the project", "{report:#}");
}

/// `--config plugin/agent-bundle.config.ts` from the folder above: handlers are looked for
/// from the root, which the help says, since the config's folder holds them.
#[test]
fn a_handler_beside_a_config_in_a_subfolder_says_to_pass_its_root() {
    let dir = project(&[
        ("plugin/agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
        ("plugin/src/hooks/h.ts", HANDLER),
    ]);
    let (code, report) = build_json(dir.path(), &["--config", "plugin/agent-bundle.config.ts"]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4217")), "{report:#}");
    let help = "handler paths are relative to the project root, not to the config's folder `plugin`, which holds \
                `src/hooks/h.ts`: make that folder the root (pass its path as --root)";
    assert_eq!(report["diagnostics"][0]["help"], help);
}

/// A version no host can install (Codex makes a folder of it) fails the build, wherever it
/// comes from.
#[test]
fn a_plugin_version_that_is_no_path_segment() {
    let long = "1".repeat(256);
    for version in ["", "1.0/2", "1 2", "..", long.as_str()] {
        let config = config("{}", "['claude']").replace("name: 'demo'", &format!("name: 'demo', version: {version:?}"));
        expect_one(&config, &[], "AB4104", "plugin.version", "");
    }
    let (exit, diagnostics) = diagnose(&config("{}", "['claude']"), &[("package.json", "{\"version\": \"\"}")]);
    assert_eq!((exit, diagnostics[0].0.as_str()), (1, "AB4104"), "{diagnostics:?}");
    let config = config("{}", "['claude']").replace("name: 'demo'", "name: 'demo', version: 'v1.2.3-rc.1+b_7'");
    assert_eq!(diagnose(&config, &[]), (0, vec![]));
}

/// Without `plugin.version`, a package.json that gives no readable version is a warning
/// naming it (the version was 0.0.0 without a word); no `version`, or a byte order mark
/// before the JSON (npm reads it), is fine.
#[test]
fn a_package_json_version_that_cannot_be_read_is_a_warning() {
    for package in ["{\"version\":\"2.0.0\"", "{\"version\": 2}"] {
        let (exit, diagnostics) = diagnose(&config("{}", "['claude']"), &[("package.json", package)]);
        assert_eq!(exit, 0);
        assert_eq!(diagnostics, [("AB4007".into(), "".into(), "".into(), "warning".into())], "{package}");
    }
    for package in ["{\"name\":\"p\"}", "\u{feff}{\"version\":\"2.0.0\"}"] {
        assert_eq!(diagnose(&config("{}", "['claude']"), &[("package.json", package)]).1, [], "{package}");
    }
    // Where the JSON breaks is said.
    let package = "{\n  \"name\": \"p\",\n  \"version\": \"2.0.0\"\n  \"x\": 1\n}\n";
    let dir = project(&[("agent-bundle.config.ts", &config("{}", "['claude']")), ("package.json", package)]);
    let (_, report) = build_json(dir.path(), &[]);
    let warning = &report["diagnostics"][0];
    assert_eq!((&warning["line"], &warning["column"]), (&serde_json::json!(4), &serde_json::json!(3)), "{report:#}");
    // After a byte order mark too (which no editor shows: not a column).
    std::fs::write(dir.path().join("package.json"), "\u{feff}{\"version\": \"2.0.0\",}").unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    let warning = &report["diagnostics"][0];
    assert_eq!((&warning["line"], &warning["column"]), (&serde_json::json!(1), &serde_json::json!(21)), "{report:#}");
    // A version that is no string, or no version hosts can install, is said where it is written.
    for (package, code) in [("{\n  \"version\": 2\n}", "AB4007"), ("\u{feff}{\n  \"version\": \"1 2\"\n}", "AB4104")] {
        std::fs::write(dir.path().join("package.json"), package).unwrap();
        let (_, report) = build_json(dir.path(), &[]);
        let said = &report["diagnostics"][0];
        assert_eq!(said["code"], code, "{report:#}");
        assert_eq!((&said["line"], &said["column"]), (&serde_json::json!(2), &serde_json::json!(14)), "{report:#}");
    }
    // A package.json of another JSON value than an object has no version to give.
    for package in ["null", "[\"1.0.0\"]", "\"1.0.0\""] {
        std::fs::write(dir.path().join("package.json"), package).unwrap();
        let (_, report) = build_json(dir.path(), &[]);
        let said = &report["diagnostics"][0];
        assert_eq!((&said["code"], &said["severity"]), (&"AB4007".into(), &"warning".into()), "{report:#}");
        assert!(said["message"].as_str().unwrap().contains("is no JSON object"), "{report:#}");
    }
}

/// A handler or route module whose default export can be no function fails the build, as
/// it would fail every run of its hook.
#[test]
fn a_default_export_that_is_no_function() {
    let generator = "a generator function, whose call returns an iterator, never a result";
    for (handler, what) in [
        ("export default 'hello';\n", "a string, not a function"),
        ("const a = 1;\n\nexport default class {}\n", "a class, not a function"),
        ("export default function* () {}\n", generator),
        ("export default async function* named() {}\n", generator),
        ("export default (function* () {});\n", generator),
    ] {
        let dir = project(&[
            ("agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
            ("src/hooks/h.ts", handler),
        ]);
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 1, "{report:#}");
        assert_eq!(report["diagnostics"][0]["code"], "AB4219", "{report:#}");
        let message = report["diagnostics"][0]["message"].as_str().unwrap();
        assert_eq!(message, format!("`src/hooks/h.ts` default-exports {what}"));
        // Pointed at where it is exported.
        let line = handler.lines().position(|line| line.starts_with("export default")).unwrap() + 1;
        let at = (&report["diagnostics"][0]["line"], &report["diagnostics"][0]["column"]);
        assert_eq!(at, (&line.into(), &8.into()), "{report:#}");
    }
    // Named: a top-level `const` or class the export names, pointed at where it names it.
    for (handler, what, at) in [
        ("const rules = { a: 1 };\nexport default rules;\n", "an object, not a function", (2, 16)),
        ("class Rules {}\nconst n = 5 as const;\nexport { n as default };\n", "a number, not a function", (3, 10)),
        ("class Rules {}\nexport default Rules;\n", "a class, not a function", (2, 16)),
    ] {
        let dir = project(&[
            ("agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
            ("src/hooks/h.ts", handler),
        ]);
        let (code, report) = build_json(dir.path(), &[]);
        let said = &report["diagnostics"][0];
        assert_eq!((code, &said["code"]), (1, &"AB4219".into()), "{report:#}");
        assert_eq!(said["message"], format!("`src/hooks/h.ts` default-exports {what}"));
        assert_eq!((&said["line"], &said["column"]), (&at.0.into(), &at.1.into()), "{report:#}");
    }
    // A `let` may be given a function later; a function's name is one.
    for handler in ["let h = {};\nh = () => {};\nexport default h;\n", "const h = () => {};\nexport default h;\n"] {
        let dir = project(&[
            ("agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
            ("src/hooks/h.ts", handler),
        ]);
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 0, "{handler}: {report:#}");
    }
    // A route is told to export its component.
    let config = config("{}", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/events/stop.tsx", "export default { a: 1 };\n")]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4219")), "{report:#}");
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(help.starts_with("export the route's component"), "{help}");
}

#[test]
fn an_unknown_key_in_a_handler_object() {
    let hooks = "{ stop: { handler: { prebuilt: './dist/h.js', args: ['x'] } } }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
    expect_one(&config, &[("dist/h.js", "")], "AB4003", "hooks.stop.handler.args", "");
}

/// A handler file the build does not compile (CommonJS's `.cts`, a `.txt`) is said where the
/// config names it.
#[test]
fn a_handler_of_no_module_type_is_said_at_the_config() {
    for (file, help) in [("src/hooks/h.cts", "a CommonJS module"), ("src/hooks/h.txt", "handlers are .ts")] {
        let hooks = format!("{{ stop: './{file}' }}");
        let dir =
            project(&[("agent-bundle.config.ts", &config(&hooks, "['claude']")), (file, "module.exports = 1;\n")]);
        let (code, report) = build_json(dir.path(), &[]);
        let said = &report["diagnostics"][0];
        assert_eq!(
            (code, &said["code"], &said["file"]),
            (1, &"AB4836".into(), &"agent-bundle.config.ts".into()),
            "{report:#}"
        );
        assert_eq!(said["jsonPath"], "hooks.stop", "{report:#}");
        assert!(said["help"].as_str().unwrap().starts_with(help), "{report:#}");
    }
}

#[test]
fn missing_handler_file() {
    expect_one(&config("{ stop: './src/hooks/missing.ts' }", "['claude']"), &[], "AB4217", "hooks.stop", "");
}

/// A handler given as a folder says so, and names the folder's index module when it has one.
#[test]
fn a_handler_that_is_a_folder_says_so() {
    let config = config("{ stop: './src/hooks/guard' }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/hooks/guard/index.ts", HANDLER)]);
    let (code, report) = build_json(dir.path(), &[]);
    let said = &report["diagnostics"][0];
    assert_eq!((code, &said["code"]), (1, &serde_json::json!("AB4217")), "{report:#}");
    assert_eq!(said["message"], "handler `src/hooks/guard` is a folder, not a module file");
    assert_eq!(said["help"], "a handler names its module's file: `./src/hooks/guard/index.ts`");
}

/// A link, a pipe or an empty folder where a handler is named is said to be that (`ls`
/// shows something there), not to be missing.
#[test]
fn a_handler_that_is_a_link_a_pipe_or_an_empty_folder_says_so() {
    let config = config("{ stop: './src/hooks/h.ts' }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &config), ("src/hooks/real.ts", HANDLER)]);
    let handler = dir.path().join("src/hooks/h.ts");
    let said = || {
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4217")), "{report:#}");
        report["diagnostics"][0]["message"].as_str().unwrap().to_owned()
    };
    std::os::unix::fs::symlink("real.ts", &handler).unwrap();
    assert_eq!(said(), "handler `src/hooks/h.ts` is a symbolic link, which is never read as a module");
    std::fs::remove_file(&handler).unwrap();
    let fifo = std::ffi::CString::new(handler.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    assert!(said().contains("is a special file (a FIFO, a socket or a device)"));
    std::fs::remove_file(&handler).unwrap();
    std::fs::create_dir(&handler).unwrap();
    assert_eq!(said(), "handler `src/hooks/h.ts` is a folder, not a module file");
    std::fs::remove_dir(&handler).unwrap();
    assert_eq!(said(), "handler file `src/hooks/h.ts` does not exist");
    // A link to a folder on the way; and `inspect` says what `build` says.
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    std::fs::write(dir.path().join("elsewhere/h.ts"), HANDLER).unwrap();
    std::fs::remove_dir_all(dir.path().join("src/hooks")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", dir.path().join("src/hooks")).unwrap();
    let linked = "handler `src/hooks/h.ts` is in `src/hooks`, a symbolic link, which the build never reads";
    assert_eq!(said(), linked);
    // A file in a folder never read (its help says which are).
    std::fs::create_dir_all(dir.path().join("node_modules/x")).unwrap();
    std::fs::write(dir.path().join("node_modules/x/h.ts"), HANDLER).unwrap();
    let elsewhere = config.replace("./src/hooks/h.ts", "./node_modules/x/h.ts");
    std::fs::write(dir.path().join("agent-bundle.config.ts"), elsewhere).unwrap();
    assert_eq!(said(), "handler `node_modules/x/h.ts` is in a folder the build never reads");
    // First on the way, before a link in it; and a folder there is never read either.
    std::os::unix::fs::symlink("../../elsewhere", dir.path().join("node_modules/x/linked")).unwrap();
    for (path, shown) in
        [("./node_modules/x/linked/h.ts", "node_modules/x/linked/h.ts"), ("./node_modules/x", "node_modules/x")]
    {
        let there = config.replace("./src/hooks/h.ts", path);
        std::fs::write(dir.path().join("agent-bundle.config.ts"), there).unwrap();
        assert_eq!(said(), format!("handler `{shown}` is in a folder the build never reads"));
    }
    // A link on the way before such a folder comes first.
    std::fs::create_dir_all(dir.path().join("elsewhere/node_modules")).unwrap();
    std::fs::write(dir.path().join("elsewhere/node_modules/h.ts"), HANDLER).unwrap();
    let behind_link = config.replace("./src/hooks/h.ts", "./src/hooks/node_modules/h.ts");
    std::fs::write(dir.path().join("agent-bundle.config.ts"), behind_link).unwrap();
    let linked_first =
        "handler `src/hooks/node_modules/h.ts` is in `src/hooks`, a symbolic link, which the build never reads";
    assert_eq!(said(), linked_first);
    let (_, report) = build_json(dir.path(), &[]);
    assert_eq!(report["diagnostics"][0]["help"], "move the module out of it", "past the link, it is never read");
    // Where nothing is, no module is to be moved out of it.
    std::fs::write(
        dir.path().join("agent-bundle.config.ts"),
        config.replace("./src/hooks/h.ts", "./node_modules/y/h.ts"),
    )
    .unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    assert_eq!(report["diagnostics"][0]["message"], "handler file `node_modules/y/h.ts` does not exist");
    assert!(report["diagnostics"][0]["help"].as_str().unwrap().starts_with("create the module"), "{report:#}");
    // So is one in a folder tagged as a cache.
    std::fs::create_dir_all(dir.path().join("tc")).unwrap();
    std::fs::write(dir.path().join("tc/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    std::fs::write(dir.path().join("tc/h.ts"), HANDLER).unwrap();
    std::fs::write(dir.path().join("agent-bundle.config.ts"), config.replace("./src/hooks/h.ts", "./tc/h.ts")).unwrap();
    let cached = "handler `tc/h.ts` is in `tc`, a cache folder, tagged by a CACHEDIR.TAG, which the build never reads";
    assert_eq!(said(), cached);
    // Where nothing is, in such a folder too, nothing is (a mistyped path, no module to move).
    std::fs::write(dir.path().join("agent-bundle.config.ts"), config.replace("./src/hooks/h.ts", "./tc/typo.ts"))
        .unwrap();
    assert_eq!(said(), "handler file `tc/typo.ts` does not exist");
    std::fs::write(dir.path().join("agent-bundle.config.ts"), &config).unwrap();
    assert_eq!(said(), linked);
    let inspect = support::run(dir.path(), &["inspect", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(report["diagnostics"][0]["message"], linked, "{report:#}");
}

#[test]
fn prebuilt_path_outside_every_payload() {
    let hooks = "{ stop: { handler: { prebuilt: './dist/h.js' } } }";
    expect_one(&config(hooks, "['claude']"), &[("dist/h.js", "")], "AB4744", "hooks.stop.handler.prebuilt", "");
}

/// A payload limited to hosts the build leaves out is not carried: a hook another host
/// registers would run a script the artifact does not hold.
#[test]
fn a_prebuilt_script_in_a_payload_the_build_leaves_out() {
    let hooks = "{ stop: { handler: { prebuilt: './dist/h.js' } } }";
    let payload = |targets: &str| format!("payload: {{ dist: {{ source: './dist', targets: {targets} }} }},\n  hooks:");
    let left_out = config(hooks, "['claude', 'codex']").replace("hooks:", &payload("['cursor']"));
    let (exit, diagnostics) = diagnose(&left_out, &[("dist/h.js", "")]);
    assert_eq!(exit, 1);
    assert_eq!(diagnostics, [("AB4744".into(), "hooks.stop.handler.prebuilt".into(), "".into(), "error".into())]);
    // Narrowed by `--target` to a host the payload is not for.
    let for_claude = config(hooks, "['claude', 'codex']").replace("hooks:", &payload("['claude']"));
    let dir = project(&[("agent-bundle.config.ts", for_claude.as_str()), ("dist/h.js", "")]);
    let (code, report) = build_json(dir.path(), &["--target", "codex"]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &"AB4744".into()), "{report:#}");
    // Carried for one host, the script is there for every host.
    assert_eq!(build_json(dir.path(), &[]).0, 0);
}

/// The hook command quotes a prebuilt handler's path for a shell: a name that would be
/// expanded there (`$HOME`, a backtick) or end the quotes is refused, spaces are fine.
#[test]
fn prebuilt_path_a_shell_would_read() {
    for name in ["$HOME.js", "`id`.js", "a\\\"b.js"] {
        let on_disk = name.replace("\\\"", "\"");
        let hooks = format!("{{ stop: {{ handler: {{ prebuilt: './dist/{name}' }} }} }}");
        let config = config(&hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
        let file = format!("dist/{on_disk}");
        expect_one(&config, &[(file.as_str(), "")], "AB4749", "hooks.stop.handler.prebuilt", "");
    }
    let hooks = "{ stop: { handler: { prebuilt: './dist/my hook.js' } } }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
    assert_eq!(diagnose(&config, &[("dist/my hook.js", "")]).0, 0);
}

/// A module handler inside a payload is most likely a script meant to run as it is: a
/// warning names the `{ prebuilt }` handler it would be.
#[test]
fn a_module_handler_inside_a_payload_is_warned_of() {
    let hooks = "{ stop: './tools/check.js' }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { tools: './tools' },\n  hooks:");
    let dir = project(&[("agent-bundle.config.ts", config.as_str()), ("tools/check.js", HANDLER)]);
    let (exit, report) = build_json(dir.path(), &[]);
    assert_eq!(exit, 0, "{report:#}");
    let warning = &report["diagnostics"][0];
    assert_eq!((warning["code"].as_str(), warning["severity"].as_str()), (Some("AB4751"), Some("warning")));
    assert!(
        warning["help"].as_str().unwrap().starts_with(
            "a script that runs as it is, reading the host's own input, is `handler: { prebuilt: './tools/check.js' }`"
        ),
        "{warning:#}"
    );
}

/// Hosts run a prebuilt handler as `node <file>`: one Node cannot run (a shell script, a
/// TypeScript file) would fail every run, and the host then go on as if it had no hook.
#[test]
fn a_prebuilt_handler_node_cannot_run_is_refused() {
    for name in ["guard.sh", "guard.py", "guard.ts"] {
        let hooks = format!("{{ stop: {{ handler: {{ prebuilt: './dist/{name}' }} }} }}");
        let config = config(&hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
        let file = format!("dist/{name}");
        expect_one(&config, &[(file.as_str(), "")], "AB4750", "hooks.stop.handler.prebuilt", "");
    }
    for name in ["guard.cjs", "guard", ".guard"] {
        let hooks = format!("{{ stop: {{ handler: {{ prebuilt: './dist/{name}' }} }} }}");
        let config = config(&hooks, "['claude']").replace("hooks:", "payload: { dist: './dist' },\n  hooks:");
        let file = format!("dist/{name}");
        assert_eq!(diagnose(&config, &[(file.as_str(), "")]).0, 0, "{name}");
    }
}

/// A payload may not take a folder of the artifact's own, in any case (macOS's file system
/// would put `Hooks/` in `hooks/`).
#[test]
fn a_payload_named_as_an_artifact_folder_is_refused_in_any_case() {
    for name in ["hooks", "Hooks", "MCP", "portable", "skills"] {
        let config =
            config("{}", "['claude']").replace("hooks:", &format!("payload: {{ {name}: './dist' }},\n  hooks:"));
        expect_one(&config, &[("dist/x.js", "")], "AB4741", &format!("payload.{name}"), "");
    }
}

/// Two payloads whose names differ only in case would share one folder where case is ignored.
#[test]
fn payloads_named_alike_but_for_case_are_refused() {
    let payload = "payload: { docs: './a', Docs: './b' },\n  hooks:";
    let config = config("{}", "['claude']").replace("hooks:", payload);
    expect_one(&config, &[("a/x.md", "a"), ("b/x.md", "b")], "AB4741", "payload.Docs", "");
}

#[test]
fn payload_outside_the_project_root() {
    let config = config("{}", "['claude']").replace("hooks:", "payload: { up: '../elsewhere' },\n  hooks:");
    expect_one(&config, &[], "AB4742", "payload.up", "");
}

/// A payload source in a folder the build never reads says so, not that it is missing.
#[test]
fn a_payload_source_in_a_folder_the_build_never_reads() {
    // (A prebuilt handler in it is said no more of: the payload's error is the one to fix.)
    let hooks = "{ stop: { handler: { prebuilt: './node_modules/tool/index.js' } } }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { tool: './node_modules/tool' },\n  hooks:");
    let dir = project(&[("agent-bundle.config.ts", &config), ("node_modules/tool/index.js", "")]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(1), "{report:#}");
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4747")), "{report:#}");
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "payload source `node_modules/tool` is or lies in a folder named `node_modules`, which agent-bundle never \
         reads"
    );
}

/// A prebuilt handler in a cache of its payload (never shipped) says why it is not there.
#[test]
fn a_prebuilt_handler_in_a_cache_folder_says_the_build_never_reads_it() {
    let hooks = "{ stop: { handler: { prebuilt: './dist/tool/__pycache__/index.js' } } }";
    let config = config(hooks, "['claude']").replace("hooks:", "payload: { tool: './dist/tool' },\n  hooks:");
    let files =
        [("agent-bundle.config.ts", config.as_str()), ("dist/tool/run.js", ""), ("dist/tool/__pycache__/index.js", "")];
    let dir = project(&files);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4748")), "{report:#}");
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(help.contains("lies in a folder named `__pycache__`, which the build never reads"), "{help}");
}

/// Two declarations that run as one hook are AB4101: written alike, with `tools` in another
/// order, or one naming the config's own targets; two reaching different hosts, or none of
/// the selected ones but by different targets of their own, are not.
#[test]
fn duplicate_hooks() {
    let hooks = "{ stop: ['./src/hooks/h.ts', 'src/hooks/h.ts'] }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4101", "hooks.stop[1]", "");
    let entry = |extra: &str| format!("{{ handler: './src/hooks/h.ts'{extra} }}");
    let reordered =
        format!("{{ beforeTool: [{}, {}] }}", entry(", tools: ['shell', 'mcp']"), entry(", tools: ['mcp', 'shell']"));
    expect_one(&config(&reordered, "['claude']"), &[], "AB4101", "hooks.beforeTool[1]", "");
    let own_targets = format!("{{ stop: [{}, {}] }}", entry(""), entry(", targets: ['codex', 'claude']"));
    expect_one(&config(&own_targets, "['claude', 'codex']"), &[], "AB4101", "hooks.stop[1]", "");
    // One reaching a host the other reaches too runs twice there, whatever `--target` builds,
    // a host the config does not name too; tools native to another host do not count.
    let shared_host = format!("{{ stop: [{}, {}] }}", entry(""), entry(", targets: ['claude']"));
    let native = |second: &str| {
        format!("{{ beforeTool: [{}, {}] }}", entry(", tools: ['claude:Bash', 'codex:Bash']"), entry(second))
    };
    let twice = [
        (config(&shared_host, "['claude', 'codex']"), &[][..]),
        (config(&shared_host, "['claude', 'codex']"), &["--target", "codex"][..]),
        (config(&shared_host, "['codex']"), &["--target", "claude"][..]),
        (config(&native(", tools: ['claude:Bash', 'codex:apply_patch']"), "['claude', 'codex']"), &[][..]),
    ];
    for (config_of, narrowed) in twice {
        let dir = project(&[("agent-bundle.config.ts", &config_of), ("src/hooks/h.ts", HANDLER)]);
        let (code, report) = build_json(dir.path(), narrowed);
        let said = &report["diagnostics"][0];
        assert_eq!((code, &said["code"]), (1, &"AB4101".into()), "{config_of} {narrowed:?}: {report:#}");
        assert!(said["message"].as_str().unwrap().contains("does on claude"), "{report:#}");
    }
    let apart = format!("{{ stop: [{}, {}] }}", entry(", targets: ['claude']"), entry(", targets: ['codex']"));
    let unreached = format!("{{ stop: [{}, {}] }}", entry(", targets: ['cursor']"), entry(", targets: ['codex']"));
    let other_hosts_tools = format!(
        "{{ beforeTool: [{}, {}] }}",
        entry(", tools: ['codex:Bash']"),
        entry(", tools: ['codex:apply_patch']")
    );
    for (hooks, targets) in
        [(apart, "['claude', 'codex']"), (unreached, "['claude']"), (other_hosts_tools, "['claude', 'codex']")]
    {
        let dir = project(&[("agent-bundle.config.ts", &config(&hooks, targets)), ("src/hooks/h.ts", HANDLER)]);
        let (_, report) = build_json(dir.path(), &[]);
        let codes: Vec<&str> =
            report["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["code"].as_str()).collect();
        assert!(!codes.contains(&"AB4101"), "{hooks}: {report:#}");
    }
}

#[test]
fn a_plugin_name_the_host_rejects() {
    let config = config("{}", "['claude', 'codex']").replace("name: 'demo'", "name: 'claude-helper'");
    expect_one(&config, &[], "AB4102", "plugin.name", "claude");
    // A name every host refuses is one error naming them all, each with its rule.
    let every_host =
        config.replace("claude-helper", "My Plugin").replace("['claude', 'codex']", "['claude', 'codex', 'cursor']");
    let dir = project(&[("agent-bundle.config.ts", every_host.as_str())]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report:#}");
    assert_eq!((&diagnostics[0]["code"], &diagnostics[0]["host"]), (&"AB4102".into(), &serde_json::Value::Null));
    assert_eq!(
        diagnostics[0]["message"],
        "Claude Code, Codex and Cursor do not accept the plugin name `My Plugin`: Claude Code and Codex: it must be \
         lowercase kebab-case (a-z, 0-9, single dashes), at most 64 characters; Cursor: it must be lowercase letters, \
         digits, `-` and `.`, at most 64 characters"
    );
}

/// A hook no selected host can receive is a warning where the config chose its targets, and
/// an error where it names none (the build would be for `portable` alone, running nothing).
#[test]
fn a_hook_no_selected_host_can_receive_is_a_warning() {
    // Portable takes no hooks at all: a build for it alone has nowhere to put them.
    let (exit, diagnostics) = diagnose(&config("{ stop: './src/hooks/h.ts' }", "['portable']"), &[]);
    assert_eq!(exit, 0);
    assert_eq!(diagnostics, [("AB4216".into(), "hooks.stop".into(), "".into(), "warning".into())]);
    let no_targets = config("{ stop: './src/hooks/h.ts' }", "['portable']").replace("  targets: ['portable'],\n", "");
    assert!(!no_targets.contains("targets"), "{no_targets}");
    expect_one(&no_targets, &[], "AB4216", "hooks.stop", "");
}

/// A module in a folder the build never reads (`target`, `node_modules`, …) is reported as
/// missing with that reason, for a handler and for an import alike.
#[test]
fn a_module_in_a_folder_the_build_never_reads_says_so() {
    let help_of = |config: &str, files: &[(&str, &str)]| {
        let mut all = vec![("agent-bundle.config.ts", config)];
        all.extend_from_slice(files);
        let dir = project(&all);
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 1, "{report:#}");
        let diagnostic = &report["diagnostics"][0];
        (diagnostic["code"].as_str().unwrap().to_owned(), diagnostic["help"].as_str().unwrap().to_owned())
    };
    let (code, help) = help_of(&config("{ stop: './src/target/h.ts' }", "['claude']"), &[("src/target/h.ts", HANDLER)]);
    assert_eq!(code, "AB4217");
    assert!(help.contains("`src/target/h.ts` lies in a folder named `target`, which the build never reads"), "{help}");
    let importer = "import { t } from './target/x.ts';\nexport default () => { void t; };\n";
    let files = [("src/hooks/h.ts", importer), ("src/hooks/target/x.ts", "export const t = 1;\n")];
    let (code, help) = help_of(&config("{ stop: './src/hooks/h.ts' }", "['claude']"), &files);
    assert_eq!(code, "AB4837");
    assert!(help.contains("`src/hooks/target/x.ts` lies in a folder named `target`"), "{help}");
}

/// The warning's help says why: no selected host has the event, or the hook's own
/// `targets` names none of the selected hosts (none, when `--target` narrowed the build), or
/// the config names no `targets` (then an error).
#[test]
fn a_hook_that_reaches_no_host_says_whether_its_event_or_its_targets_are_why() {
    let help = |config: &str, extra: &[&str]| {
        let dir = project(&[("agent-bundle.config.ts", config), ("src/hooks/h.ts", HANDLER)]);
        let (code, report) = build_json(dir.path(), extra);
        assert_eq!(code, 0, "{report:#}");
        let diagnostics = report["diagnostics"].as_array().unwrap();
        let unreached = diagnostics.iter().find(|d| d["code"] == "AB4216").unwrap_or_else(|| panic!("{report:#}"));
        unreached["help"].as_str().unwrap().to_owned()
    };
    assert!(
        help(&config("{ stop: './src/hooks/h.ts' }", "['portable']"), &[]).contains("no selected host has this event")
    );
    let cursor_only = "{ stop: { handler: './src/hooks/h.ts', targets: ['cursor'] } }";
    let why = help(&config(cursor_only, "['claude']"), &[]);
    assert!(why.contains("its `targets` names none of the hosts this build selects"), "{why}");
    // `--target` narrowing the build on purpose, the hook is expected to get nothing.
    let dir = project(&[
        ("agent-bundle.config.ts", &config(cursor_only, "['claude', 'cursor']")),
        ("src/hooks/h.ts", HANDLER),
    ]);
    let (exit, report) = build_json(dir.path(), &["--target", "claude"]);
    assert_eq!((exit, report["diagnostics"].as_array().unwrap().len()), (0, 0), "{report:#}");
    // So is a route whose event the host it narrows to lacks (Codex has no SessionEnd).
    let route = "export default () => null;\n";
    let dir = project(&[
        ("agent-bundle.config.ts", &config("{}", "['claude', 'codex']")),
        ("src/events/session/end.tsx", route),
    ]);
    let (exit, report) = build_json(dir.path(), &["--target", "codex"]);
    assert_eq!((exit, report["diagnostics"].as_array().unwrap().len()), (0, 0), "{report:#}");
    // Without `targets`, the build is for `portable`, which runs no hooks: that is the fix.
    let unset = "export default { plugin: { name: 'p' }, hooks: { stop: './src/hooks/h.ts' } };\n";
    let dir = project(&[("agent-bundle.config.ts", unset), ("src/hooks/h.ts", HANDLER)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &"AB4216".into()), "an error: {report:#}");
    let why = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(why.starts_with("the config sets no `targets`, so the build is for `portable` alone"), "{why}");

    // A route is located by its file alone: the config does not name it.
    let route = "export default () => null;\n";
    let dir =
        project(&[("agent-bundle.config.ts", &config("{}", "['portable']")), ("src/events/stop/failure.tsx", route)]);
    let (_, report) = build_json(dir.path(), &[]);
    let unreached = report["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "AB4216").cloned();
    let unreached = unreached.unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        (&unreached["file"], &unreached["jsonPath"]),
        (&"src/events/stop/failure.tsx".into(), &serde_json::Value::Null)
    );
}

#[test]
fn a_config_workspace_open_hook_is_an_error_said_once() {
    // As in the original: workspaceOpen is an event route, never a config hook, on any host.
    let targets = "['claude', 'codex', 'cursor', 'portable']";
    expect_one(&config("{ workspaceOpen: './src/hooks/h.ts' }", targets), &[], "AB4204", "hooks.workspaceOpen", "");
    let hooks = "{ workspaceOpen: [{ handler: './src/hooks/h.ts', targets: ['claude'] }] }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4204", "hooks.workspaceOpen[0]", "");
}

#[test]
fn a_hook_that_names_a_host_without_its_event_is_an_error() {
    let hooks = "{ stop: { handler: './src/hooks/h.ts', targets: ['portable'] } }";
    expect_one(&config(hooks, "['claude', 'portable']"), &[], "AB4204", "hooks.stop.targets", "portable");
}

#[test]
fn codex_has_no_file_read_so_the_whole_hook_fails() {
    // The seed: tools ['file.read', 'shell'] targeting codex fails even though shell alone maps.
    let hooks = "{ beforeTool: { handler: './src/hooks/h.ts', tools: ['file.read', 'shell'] } }";
    expect_one(&config(hooks, "['codex']"), &[], "AB4214", "hooks.beforeTool.tools[0]", "codex");
}

#[test]
fn a_claude_only_native_selector_leaves_codex_without_a_matcher() {
    let hooks =
        "{ beforeTool: { handler: './src/hooks/h.ts', tools: ['claude:WebSearch'], targets: ['claude', 'codex'] } }";
    expect_one(&config(hooks, "['claude', 'codex']"), &[], "AB4215", "hooks.beforeTool.tools", "codex");
}

#[test]
fn a_config_factory_says_what_to_write_instead() {
    let text = "import { defineConfig } from 'agent-bundle/config';\nexport default defineConfig(() => ({ plugin: { name: 'x' } }));\n";
    let dir = project(&[("agent-bundle.config.ts", text)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["line"], 2);
    assert!(diagnostic["help"].as_str().unwrap().contains("export default defineConfig({"), "{diagnostic:#}");
}

#[test]
fn non_literal_values_are_located() {
    let text = "import { join } from 'node:path';\nexport default { plugin: { name: 'x' }, hooks: { stop: join('a', 'b') } };\n";
    let dir = project(&[("agent-bundle.config.ts", text)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!((diagnostic["line"].as_u64(), diagnostic["column"].as_u64()), (Some(2), Some(56)), "{diagnostic:#}");
    assert_eq!(diagnostic["jsonPath"], "hooks.stop");
}

#[test]
fn all_errors_of_a_build_are_reported_together() {
    let hooks = "{ stop: { handler: './src/hooks/missing.ts', timeout: 0 }, beforeTool: { handler: './src/hooks/h.ts', tools: ['nope'] } }";
    let (exit, diagnostics) = diagnose(&config(hooks, "['claude', 'nowhere']"), &[]);
    assert_eq!(exit, 1);
    let codes: Vec<_> = diagnostics.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(codes, ["AB4100", "AB4217", "AB4205", "AB4202"]);
}

#[test]
fn bare_npm_imports_are_a_build_error_in_the_handler() {
    let handler = "import lodash from 'lodash';\nexport default () => lodash;\n";
    let (exit, diagnostics) =
        diagnose(&config("{ stop: './src/hooks/bare.ts' }", "['claude']"), &[("src/hooks/bare.ts", handler)]);
    assert_eq!(exit, 1);
    assert_eq!(diagnostics[0].0, "AB4837");
}

#[test]
fn an_import_above_the_root_that_names_no_module_is_located() {
    let handler = "import { log } from '../../../no-such-shared-folder/log';\nexport default () => log;\n";
    let dir = project(&[
        ("agent-bundle.config.ts", &config("{ stop: './src/hooks/up.ts' }", "['claude']")),
        ("src/hooks/up.ts", handler),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!((diagnostic["code"].as_str(), diagnostic["line"].as_u64()), (Some("AB4837"), Some(1)));
    let message = diagnostic["message"].as_str().unwrap();
    assert_eq!(message, "cannot resolve \"../../../no-such-shared-folder/log\" from src/hooks/up.ts", "{diagnostic:#}");
    assert!(diagnostic["help"].as_str().unwrap().contains("the files directly in it"), "{diagnostic:#}");
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 1, "reported once: {report:#}");
}

#[test]
fn human_output_has_a_code_frame_and_help() {
    let dir = project(&[
        (
            "agent-bundle.config.ts",
            &config("{ beforeTool: { handler: './src/hooks/h.ts', tools: ['file.read'] } }", "['codex']"),
        ),
        ("src/hooks/h.ts", HANDLER),
    ]);
    let output = support::run(dir.path(), &["build"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    insta::assert_snapshot!(stderr.replace(&dir.path().display().to_string(), "<root>"));
}

/// A failed build's last line says what is in the artifact's place; a failed inspection's
/// says nothing of one.
#[test]
fn a_failure_s_summary_says_what_became_of_the_artifact() {
    let dir = project(&[
        ("agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
        ("src/hooks/h.ts", "export default () => {};\n"),
    ]);
    let last_line = |args: &[&str]| {
        let output = support::run(dir.path(), args);
        assert_eq!(output.status.code(), Some(1));
        String::from_utf8(output.stderr).unwrap().lines().last().unwrap().to_owned()
    };
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    fs::write(dir.path().join("src/hooks/h.ts"), "export default (;\n").unwrap();
    let kept = "Build failed: 1 error(s), 0 warning(s); the previous artifact was left as it was.";
    assert_eq!(last_line(&["build"]), kept);
    assert_eq!(last_line(&["inspect", "--hooks"]), "Inspection failed: 1 error(s), 0 warning(s).");
    // Nor does it claim, on stdout, to have inspected the project.
    let inspected = support::run(dir.path(), &["inspect", "--hooks"]).stdout;
    assert!(!String::from_utf8_lossy(&inspected).contains("Inspected "), "{}", String::from_utf8_lossy(&inspected));
}

#[test]
fn bad_command_line_arguments_exit_with_2() {
    let dir = project(&[]);
    assert_eq!(support::run(dir.path(), &["build", "--target", "gemini"]).status.code(), Some(2));
    assert_eq!(support::run(dir.path(), &["frobnicate"]).status.code(), Some(2));
    assert_eq!(support::run(dir.path(), &["build", "--jobs", "0"]).status.code(), Some(2));
    assert_eq!(support::run(dir.path(), &["--help"]).status.code(), Some(0));
}

#[test]
fn a_command_line_that_does_not_parse_still_answers_json_when_asked() {
    let dir = project(&[]);
    for args in [&["build", "--json", "--bogus"][..], &["cache", "gc", "--max-size", "5X", "--json"]] {
        let output = support::run(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["ok"], false, "{args:?}");
        let error = report["error"].as_str().unwrap();
        assert!(error.contains("--bogus") || error.contains("5X"), "{error}");
    }
    let after_separator = support::run(dir.path(), &["frobnicate", "--", "--json"]);
    assert!(after_separator.stdout.is_empty(), "a --json after -- is not the option");
}

#[test]
fn a_project_without_a_config_is_a_clear_error() {
    let dir = project(&[]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(report["diagnostics"][0]["code"], "AB4001");
    // Projects in its folders, or a config of another name, are what the build may mean.
    let config = "import { defineConfig } from 'agent-bundle/config';\nexport default defineConfig({});\n";
    let dir = project(&[
        ("a/agent-bundle.config.ts", config),
        ("b/agent-bundle.config.ts", config),
        ("plugin.config.ts", config),
        ("vite.config.ts", "export default {};\n"),
        ("node_modules/pkg/agent-bundle.config.ts", config),
    ]);
    // A config that is a link is never read: its folder holds no project.
    fs::create_dir(dir.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("a/agent-bundle.config.ts"),
        dir.path().join("linked/agent-bundle.config.ts"),
    )
    .unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    let workspace = format!(
        "its folders a, b hold projects: build them all with `agent-bundle build --workspace {}`",
        dir.path().display()
    );
    assert_eq!(help, format!("{workspace}; or if `plugin.config.ts` is the config, pass --config plugin.config.ts"));
    // A config of an extension no config has is named, with the ones that are.
    let dir = project(&[("agent-bundle.config.cts", config)]);
    let (_, report) = build_json(dir.path(), &[]);
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(help.starts_with("rename `agent-bundle.config.cts` to agent-bundle.config.ts (or .mts"), "{help}");
    assert!(help.ends_with("or pass --config agent-bundle.config.cts"), "{help}");
    // Not a backup of one, which is no config.
    let dir = project(&[("agent-bundle.config.ts.bak", config)]);
    let (_, report) = build_json(dir.path(), &[]);
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(!help.contains("agent-bundle.config.ts.bak"), "{help}");
}

#[test]
fn a_closed_stdout_stops_the_cli_quietly_instead_of_panicking() {
    use std::os::unix::process::ExitStatusExt;
    // The read end is closed before the child starts, so its first write finds no reader
    // (closing it after spawning raced with a child fast enough to write everything first).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = support::bin().arg("matrix").stdout(writer).stderr(std::process::Stdio::piped()).output().unwrap();
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{output:?}");
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// Input nested deeper than the parser can recurse, with brackets or with operators that nest
/// without them, is a located error, not a stack overflow: in a handler, and in the config.
#[test]
fn input_nested_too_deep_is_a_located_error() {
    let brackets = format!("export default () => {}0{};\n", "[".repeat(50_000), "]".repeat(50_000));
    let ternaries = format!("export default () => {}1{};\n", "1?".repeat(300_000), ":1".repeat(300_000));
    let base = config("{ stop: './src/hooks/h.ts' }", "['claude']");
    let in_config = format!("{base}const deep = {}1{};\n", "(".repeat(50_000), ")".repeat(50_000));
    let arrows_in_config = format!("{base}const deep = {}1;\n", "() => ".repeat(300_000));
    let cases = [
        (&base, brackets.as_str(), "AB4836", "src/hooks/h.ts"),
        (&base, ternaries.as_str(), "AB4836", "src/hooks/h.ts"),
        (&in_config, HANDLER, "AB4002", "agent-bundle.config.ts"),
        (&arrows_in_config, HANDLER, "AB4002", "agent-bundle.config.ts"),
    ];
    for (config, handler, code, file) in cases {
        let dir = project(&[("agent-bundle.config.ts", config), ("src/hooks/h.ts", handler)]);
        let (exit, report) = build_json(dir.path(), &[]);
        assert_eq!(exit, 1, "{report:#}");
        let diagnostic = &report["diagnostics"][0];
        assert_eq!((diagnostic["code"].as_str(), diagnostic["file"].as_str()), (Some(code), Some(file)));
        assert!(diagnostic["message"].as_str().unwrap().contains("nest more than"), "{diagnostic:#}");
        assert!(diagnostic["line"].as_u64().is_some() && diagnostic["column"].as_u64().unwrap() > 1_000);
    }
}

/// A module named like a route in a slip of `src/events/` is warned of (no host runs it),
/// unless a hook runs it as its handler.
#[test]
fn a_route_in_a_slip_of_the_events_folder_is_warned_of_unless_a_hook_runs_it() {
    let config = config("{ stop: './events/stop.ts' }", "['claude']");
    let stray = [("events/stop.ts", HANDLER), ("src/event/session/end.tsx", "export default () => null;\n")];
    let dir = project(&[[("agent-bundle.config.ts", config.as_str())].as_slice(), &stray].concat());
    let (exit, report) = build_json(dir.path(), &[]);
    assert_eq!(exit, 0, "{report:#}");
    let warned = support::diagnostic_fields(&report, "code", "file");
    assert_eq!(warned, [("AB4803", "src/event/session/end.tsx")]);
}

/// A route's hosts are its `config.targets`, and its helps say so.
#[test]
fn a_routes_help_names_its_config_targets() {
    let config = config("{}", "['codex']");
    let route = "export const config = { tools: ['file.read'] };\nexport default () => null;\n";
    let dir = project(&[("agent-bundle.config.ts", config.as_str()), ("src/events/tool/before.tsx", route)]);
    let (exit, report) = build_json(dir.path(), &[]);
    assert_eq!(exit, 1, "{report:#}");
    let error = &report["diagnostics"][0];
    assert_eq!(error["code"], "AB4214", "{report:#}");
    assert!(error["help"].as_str().unwrap().ends_with("or restrict the route's `config.targets`"), "{error:#}");
}

/// A route whose `config` is not exported, or exported under a typo of its name, would run
/// with every default (a `tools` narrowing lost widens the hook to every tool): a warning
/// where it is written, and the build goes on.
#[test]
fn a_route_config_not_exported_or_misnamed_is_warned_of() {
    let config = config("{}", "['claude']");
    for (route, message) in [
        ("const config = { tools: ['shell'] };", "`config` is declared but not exported"),
        ("export const confg = { tools: ['shell'] };", "`confg` is exported, not `config`"),
    ] {
        let source = format!("{route}\nexport default () => null;\n");
        let files = [("agent-bundle.config.ts", config.as_str()), ("src/events/tool/before.tsx", source.as_str())];
        let dir = project(&files);
        let (exit, report) = build_json(dir.path(), &[]);
        assert_eq!(exit, 0, "{report:#}");
        let warning = &report["diagnostics"][0];
        assert_eq!((warning["code"].as_str(), warning["severity"].as_str()), (Some("AB4806"), Some("warning")));
        assert_eq!((warning["message"].as_str(), warning["line"].as_u64()), (Some(message), Some(1)), "{warning:#}");
    }
}

/// Nesting a scan of the text cannot see (a `)` in each string closes a bracket as written;
/// a chain of a million divisions parses in a loop, but checks recurse down it) is found out
/// by compiling where an overflow harms nothing first: an error, never an abort of the
/// build, in a handler and in the config.
#[test]
fn nesting_hidden_from_the_scan_is_an_error_not_an_abort() {
    let hidden = |prefix: &str| format!("{prefix}{}1{};\n", "(\")\", ".repeat(400_000), ")".repeat(400_000));
    let base = config("{ stop: './src/hooks/h.ts' }", "['claude']");
    let handler = hidden("export default () => ");
    let chain = format!("export default () => a{};\nconst a = 1, b = 1;\n", "/b".repeat(1_000_000));
    let in_config = hidden(&format!("{base}const deep = "));
    let handler_cases = [(&base, &handler, "AB4836", "src/hooks/h.ts"), (&base, &chain, "AB4836", "src/hooks/h.ts")];
    let config_case = (&in_config, &HANDLER.to_owned(), "AB4002", "agent-bundle.config.ts");
    for (config, handler, code, file) in handler_cases.into_iter().chain([config_case]) {
        let dir = project(&[("agent-bundle.config.ts", config), ("src/hooks/h.ts", handler)]);
        let (exit, report) = build_json(dir.path(), &[]);
        assert_eq!(exit, 1, "{report:#}");
        let diagnostic = &report["diagnostics"][0];
        assert_eq!((diagnostic["code"].as_str(), diagnostic["file"].as_str()), (Some(code), Some(file)));
        assert!(diagnostic["message"].as_str().unwrap().contains("nests too deep to compile"), "{diagnostic:#}");
    }
}

#[test]
fn what_a_bundled_module_cannot_have_is_its_own_code() {
    let handler = "const config = await fetch('x');\nconsole.log(import.meta.url);\nlet __ab_mine = 1;\nexport default () => config;\n";
    let (exit, diagnostics) =
        diagnose(&config("{ stop: './src/hooks/h.ts' }", "['claude']"), &[("src/hooks/h.ts", handler)]);
    assert_eq!(exit, 1);
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(codes, ["AB4842", "AB4842", "AB4842"], "{diagnostics:?}");
}

#[test]
fn a_commonjs_require_in_a_handler_is_a_located_error() {
    let handler = "const fs = require('node:fs');\nexport default () => { fs.existsSync('/'); };\n";
    let dir = project(&[
        ("agent-bundle.config.ts", &config("{ stop: './src/hooks/h.ts' }", "['claude']")),
        ("src/hooks/h.ts", handler),
    ]);
    let (exit, report) = build_json(dir.path(), &[]);
    assert_eq!(exit, 1, "{report:#}");
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["code"], "AB4837", "{diagnostic:#}");
    assert_eq!((diagnostic["line"].as_u64(), diagnostic["column"].as_u64()), (Some(1), Some(12)));
}

/// The first 100 diagnostics get a code frame, the rest one line each: each frame renders a
/// whole source line, so thousands of them on one long line took seconds.
#[test]
fn past_a_hundred_diagnostics_each_is_one_line() {
    let tools = vec!["'nope'"; 150].join(", ");
    let hooks = format!("{{ beforeTool: {{ handler: './src/hooks/h.ts', tools: [{tools}] }} }}");
    let dir = project(&[("agent-bundle.config.ts", &config(&hooks, "['claude']")), ("src/hooks/h.ts", HANDLER)]);
    let output = support::run(dir.path(), &["build"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches(" --> agent-bundle.config.ts:").count(), 100, "{stderr}");
    let short: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error[AB4202]") && l.ends_with(')')).collect();
    assert_eq!(short.len(), 50, "{stderr}");
    assert!(short[49].contains("unknown tool selector `nope` (agent-bundle.config.ts:5:"), "{}", short[49]);
}

/// Invalid UTF-8 is located at its first bad byte, in a handler and in the config.
#[test]
fn invalid_utf8_is_located_at_its_first_bad_byte() {
    let base = config("{ stop: './src/hooks/h.ts' }", "['claude']");
    let dir = project(&[("agent-bundle.config.ts", &base), ("src/hooks/h.ts", HANDLER)]);
    std::fs::write(dir.path().join("src/hooks/h.ts"), b"const a = 1;\nconst b = '\xff';\nexport default () => b;\n")
        .unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!((diagnostic["code"].as_str(), diagnostic["line"].as_u64()), (Some("AB4836"), Some(2)), "{report:#}");
    assert_eq!(diagnostic["column"], 12);
    let mut config = base.into_bytes();
    config.extend_from_slice(b"// \xc3\n");
    std::fs::write(dir.path().join("agent-bundle.config.ts"), config).unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!((diagnostic["code"].as_str(), diagnostic["line"].as_u64()), (Some("AB4002"), Some(7)), "{report:#}");
    assert_eq!(diagnostic["column"], 4);
}

#[test]
fn an_empty_targets_list_is_an_error() {
    expect_one(&config("{}", "[]"), &[], "AB4004", "targets", "");
    let hooks = "{ stop: { handler: './src/hooks/h.ts', targets: [] } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4004", "hooks.stop.targets", "");
}

#[test]
fn an_empty_tools_list_selects_nothing_rather_than_everything() {
    let hooks = "{ beforeTool: { handler: './src/hooks/h.ts', tools: [] } }";
    expect_one(&config(hooks, "['claude']"), &[], "AB4215", "hooks.beforeTool.tools", "");
}

/// A hook target the config does not select is a warning (nothing is emitted for it); with
/// `--target` narrowing the build on purpose, it is not.
#[test]
fn a_hook_target_the_build_does_not_select_is_a_warning_unless_narrowed_by_the_cli() {
    let hooks = "{ stop: { handler: './src/hooks/h.ts', targets: ['claude', 'cursor'] } }";
    let (exit, diagnostics) = diagnose(&config(hooks, "['claude', 'codex']"), &[]);
    assert_eq!(exit, 0);
    assert_eq!(diagnostics, [("AB4203".into(), "hooks.stop.targets[1]".into(), "".into(), "warning".into())]);
    let dir =
        project(&[("agent-bundle.config.ts", &config(hooks, "['claude', 'codex']")), ("src/hooks/h.ts", HANDLER)]);
    let (exit, report) = build_json(dir.path(), &["--target", "claude"]);
    assert_eq!((exit, report["diagnostics"].as_array().unwrap().len()), (0, 0), "{report:#}");
}

/// A build with errors publishes nothing, and its report lists no hooks or files.
#[test]
fn a_failed_build_reports_no_hooks() {
    let dir = project(&[
        (
            "agent-bundle.config.ts",
            &config("{ stop: './src/hooks/h.ts', sessionStart: './src/hooks/none.ts' }", "['claude']"),
        ),
        ("src/hooks/h.ts", HANDLER),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!((&report["hooks"], &report["files"]), (&serde_json::json!([]), &serde_json::json!([])), "{report:#}");
}

#[test]
fn a_handler_without_a_default_export_is_shown_where_the_config_names_it() {
    let (exit, diagnostics) = diagnose(
        &config("{ stop: './src/hooks/none.ts' }", "['claude', 'codex']"),
        &[("src/hooks/none.ts", "export const handler = () => undefined;\n")],
    );
    assert_eq!(exit, 1);
    assert_eq!(
        diagnostics,
        [("AB4218".into(), "hooks.stop".into(), "".into(), "error".into())],
        "once, for every host"
    );
}

/// A route without a default export is told to export its component, and what it exports
/// by name is named.
#[test]
fn a_route_without_a_default_export_is_told_to_export_its_component() {
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'] };\n";
    let route = "export function ToolFailure() { return null; }\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/tool/failure.tsx", route)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(
        (&diagnostic["code"], &diagnostic["message"]),
        (&"AB4218".into(), &"route `src/events/tool/failure.tsx` has no default export".into())
    );
    assert_eq!(
        diagnostic["help"],
        "export the route's component: `export default function Route({ canonical }) { … }`; it exports \
         `ToolFailure` by name only"
    );
}

/// A name the tool's own modules lack is said by the specifier the route imported, with
/// the names it does export: the module's internal key means nothing to the author.
#[test]
fn a_name_the_route_runtime_lacks_lists_what_it_exports() {
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'] };\n";
    let route = "import { Foo } from '@agent-bundle/runtime';\nexport default () => <Foo/>;\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/stop.tsx", route)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4838")), "{report:#}");
    assert_eq!(report["diagnostics"][0]["message"], "`@agent-bundle/runtime` has no export named `Foo`");
    assert_eq!(report["diagnostics"][0]["help"], "import one of the names it exports: `Agent`");
}

/// A name a builtin lacks (as Node 20 has it, the oldest the wrappers run on) is refused
/// where it is imported, with the name it is likely a typo of: Node would refuse the
/// wrapper as it loads, and a shared route's would stop the whole runtime, every route in it.
#[test]
fn a_name_a_builtin_lacks_is_refused_where_it_is_imported() {
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    let handler = "import { readFilSync } from 'node:fs';\nexport default () => { void readFilSync; };\n";
    let route = "import { glob } from 'fs/promises';\nexport const config = { runtime: 'shared' };\n\
                 export default () => { void glob; return null; };\n";
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/stop.ts", handler),
        ("src/events/prompt/submit.tsx", route),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<(&str, &str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["message"].as_str().unwrap(),
                d["file"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("AB4838", "node:fs has no export named `readFilSync`", "src/stop.ts", 1),
            ("AB4838", "node:fs/promises has no export named `glob`", "src/events/prompt/submit.tsx", 1),
        ],
        "{report:#}"
    );
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(
        help.starts_with("did you mean `readFileSync`? the build checks a builtin's names against Node v20."),
        "{help}"
    );
    assert!(
        report["diagnostics"][1]["help"]
            .as_str()
            .unwrap()
            .contains("`import * as ns from \"node:fs/promises\"`, then `ns.glob`")
    );
}

/// A module that fails a check still says what it imports and exports: its own errors, the
/// names its imports lack and a handler's missing default export are said in one build, not
/// one fix at a time. Nothing is said of names asked of a module that does not parse, nor of
/// one re-exporting from a module that does not resolve (what it exports is not all known).
#[test]
fn every_error_of_a_module_graph_is_said_at_once() {
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'], \
                  hooks: { stop: './src/stop.ts', sessionStart: './src/start.ts' } };\n";
    let handler = "import { readFilSync } from 'node:fs';\nimport { helpr } from './lib.ts';\n\
                   import { broken } from './broken.ts';\nimport { foo } from './barrel.ts';\n\
                   console.log(__dirname, readFilSync, helpr, broken, foo);\n";
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/stop.ts", handler),
        ("src/lib.ts", "export const helper = require('node:os');\n"),
        ("src/broken.ts", "export const broken = ;\n"),
        ("src/barrel.ts", "export { foo } from './missing.js';\nexport * from './gone.js';\n"),
        ("src/start.ts", "export { default } from './impl.js';\n"),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["file"].as_str().unwrap(), d["line"].as_u64().unwrap_or(0)))
        .collect();
    assert_eq!(
        found,
        [
            ("AB4837", "src/start.ts", 1),
            ("AB4837", "src/stop.ts", 5),
            ("AB4837", "src/lib.ts", 1),
            ("AB4836", "src/broken.ts", 1),
            ("AB4837", "src/barrel.ts", 1),
            ("AB4837", "src/barrel.ts", 2),
            ("AB4838", "src/stop.ts", 1),
            ("AB4838", "src/stop.ts", 2),
            ("AB4218", "agent-bundle.config.ts", 1),
        ],
        "{report:#}"
    );
}

/// A builtin's name mistyped is said to be one, with the name it is likely a typo of.
#[test]
fn a_builtin_mistyped_is_named_as_one() {
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    let handler = "import fs from 'node:fss';\nimport cp from 'child_proces';\nimport { test } from 'test';\n\
                   export default () => { void fs, cp, test; };\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/stop.ts", handler)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<(&str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["message"].as_str().unwrap(), d["help"].as_str().unwrap().split('?').next().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            ("\"node:fss\" is not a Node builtin", "did you mean `node:fs`"),
            (
                "bare import \"child_proces\" is not supported: handlers may import relative files and node: builtins",
                "did you mean `child_process`"
            ),
            (
                "bare import \"test\" is not supported: handlers may import relative files and node: builtins",
                "did you mean `node:test`"
            ),
        ]
    );
}

/// A route that renders an `Agent.Result` its family never takes (a deny on an
/// observation-only family, a new tool input on `stop`) is warned of where the value is
/// written (AB4841), or where the route renders the component of another module that renders
/// it (through a re-export, and a component rendering another), from cached chunks as well;
/// a family that takes it, a value passed on (`updatedInput` may be `undefined`), and a
/// module the route only imports from (which may export such a component beside what the
/// route renders) say nothing.
#[test]
fn a_result_a_family_never_takes_is_warned_of_where_it_is_written() {
    let config = "export default { plugin: { name: 'res' }, targets: ['claude'] };\n";
    let helpers = "import { Agent } from '@agent-bundle/runtime';\n\
                   export const Deny = ({ reason }: { reason: string }) =>\n  \
                   <Agent.Result value={{ outcome: 'deny', reason }} />;\nexport const log = (_: string) => {};\n\
                   function Refuse() { return <Deny reason=\"no\" />; }\nexport { Refuse as Block };\n";
    let index = "export { Block as Stop } from './ui.tsx';\n";
    let through_index = "import { Stop } from '../components/index.ts';\nexport default () => <Stop />;\n";
    // (`up` leads from the route's folder to `src/events/`.)
    let route = |body: &str, up: &str| {
        format!(
            "import {{ Agent }} from '@agent-bundle/runtime';\nimport {{ Deny, log }} from '{up}components/ui.tsx';\n\
             export default (props: {{ input?: object }}) => {{ log('x'); return {body}; }};\n"
        )
    };
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/events/components/ui.tsx", helpers),
        ("src/events/components/index.ts", index),
        ("src/events/session/end.tsx", &route("<Deny reason=\"no\" />", "../")),
        ("src/events/agent/start.tsx", through_index),
        ("src/events/session/start.tsx", &route("<Agent.Result value={{ outcome: 'deny' as const }} />", "../")),
        ("src/events/stop.tsx", &route("<Agent.Result value={{ updatedInput: { command: 'ls' } }} />", "./")),
        ("src/events/agent/stop.tsx", &route("<Agent.Result value={{ updatedInput: props.input }} />", "../")),
        ("src/events/tool/before.tsx", &route("<Deny reason=\"no\" />", "../")),
    ]);
    let warnings = || {
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 0, "{report:#}");
        let said = report["diagnostics"].as_array().unwrap().iter();
        let field = |d: &serde_json::Value, key: &str| d[key].as_str().unwrap().to_owned();
        said.map(|d| (field(d, "code"), field(d, "file"), d["line"].as_u64().unwrap())).collect::<Vec<_>>()
    };
    let expected = [
        ("AB4841".to_owned(), "src/events/session/start.tsx".to_owned(), 3),
        ("AB4841".to_owned(), "src/events/session/end.tsx".to_owned(), 3),
        ("AB4841".to_owned(), "src/events/stop.tsx".to_owned(), 3),
        ("AB4841".to_owned(), "src/events/agent/start.tsx".to_owned(), 2),
    ];
    assert_eq!(warnings(), expected);
    let (_, report) = build_json(dir.path(), &[]);
    let through = report["diagnostics"].as_array().unwrap().iter().find(|d| d["file"] == "src/events/agent/start.tsx");
    let message = through.unwrap()["message"].as_str().unwrap();
    assert!(message.contains("that denies (through `Refuse`, src/events/components/ui.tsx)"), "{message}");
    // Another config: the stages run again, each module's chunk from the cache.
    std::fs::write(dir.path().join("agent-bundle.config.ts"), format!("// again\n{config}")).unwrap();
    assert_eq!(warnings(), expected, "a build from cached chunks warns as well");
}

/// A route whose file renders `Agent.Context` for a host that takes no context for its
/// family is warned of, for that host alone (AB4818), from a cached chunk too; leaving the
/// host out of the route's targets silences it.
#[test]
fn a_context_a_host_cannot_take_is_warned_of_for_that_host() {
    let config = "export default { plugin: { name: 'ctx' }, targets: ['claude', 'cursor'] };\n";
    let route = |config: &str| {
        format!(
            "import {{ Agent }} from '@agent-bundle/runtime';\n{config}export default () => <Agent.Context>hi</Agent.Context>;\n"
        )
    };
    let warnings = |dir: &std::path::Path| {
        let (code, report) = build_json(dir, &[]);
        assert_eq!(code, 0, "{report:#}");
        let found: Vec<(String, String, u64)> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().unwrap().to_owned(),
                    d["host"].as_str().unwrap().to_owned(),
                    d["line"].as_u64().unwrap(),
                )
            })
            .collect();
        found
    };
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", &route(""))]);
    let expected = [("AB4818".to_owned(), "cursor".to_owned(), 2)];
    assert_eq!(warnings(dir.path()), expected);
    assert_eq!(warnings(dir.path()), expected, "a build from the cache warns as well");
    let claude_only = route("export const config = { targets: ['claude'] };\n");
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", &claude_only)]);
    assert_eq!(warnings(dir.path()), []);
    // A route that reads which host it renders for chooses where the context goes.
    let guarded = "import { Agent } from '@agent-bundle/runtime';\n\
                   export default ({ canonical }: { canonical: { provenance: { host: string } } }) =>\n  \
                   canonical.provenance.host === 'cursor' ? null : <Agent.Context>hi</Agent.Context>;\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", guarded)]);
    assert_eq!(warnings(dir.path()), []);
    // Unless none of its hosts takes it (Cursor alone here): then it goes nowhere.
    let cursor_only =
        guarded.replace("export default", "export const config = { targets: ['cursor'] };\nexport default");
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", &cursor_only)]);
    assert_eq!(warnings(dir.path()), [("AB4818".to_owned(), "cursor".to_owned(), 4)]);
    // A component of another module's that renders it: where the route renders the component.
    let note =
        "import { Agent } from '@agent-bundle/runtime';\nexport default () => <Agent.Context>hi</Agent.Context>;\n";
    let through = "import Note from '../../lib/note.tsx';\n\nexport default () => <Note />;\n";
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/lib/note.tsx", note),
        ("src/events/prompt/submit.tsx", through),
    ]);
    assert_eq!(warnings(dir.path()), [("AB4818".to_owned(), "cursor".to_owned(), 3)]);
}

/// A config hook's handler that returns, written out, what its event never takes (a deny
/// from `sessionStart`) is warned of where the value is written (AB4841), and context a host
/// has no channel for on `agentStart` (Cursor) for those hosts alone (AB4818); a
/// handler that reads `context.host` chooses where its context goes, and a hook kept off
/// those hosts by its `targets` says nothing. Two hooks sharing a handler say it once.
#[test]
fn a_result_a_config_hook_cannot_take_is_warned_of_where_it_is_returned() {
    // (agentStart: Claude Code and Codex take its context, Cursor does not.)
    let config = |agent_start: &str| {
        format!(
            "export default {{ plugin: {{ name: 'ret' }}, targets: ['claude', 'codex', 'cursor'],\n  \
             hooks: {{ sessionStart: ['./src/start.ts', {{ handler: './src/start.ts', timeout: 9 }}], \
             agentStart: {agent_start} }} }};\n"
        )
    };
    let start = "export default (e: { source?: string }) => {\n  \
                 if (e.source === 'clear') return { outcome: 'deny' as const, reason: 'no' };\n};\n";
    let stop = "const stop = async () => {\n  return { additionalContext: 'done' };\n};\nexport default stop;\n";
    let by_host = "export default (_: object, context: { host: string }) =>\n  \
                   context.host === 'claude' ? { additionalContext: 'done' } : undefined;\n";
    let warnings = |agent_start: &str, handler: &str| {
        let dir = project(&[
            ("agent-bundle.config.ts", &config(agent_start)),
            ("src/start.ts", start),
            ("src/stop.ts", handler),
        ]);
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 0, "{report:#}");
        let said = report["diagnostics"].as_array().unwrap().iter();
        let field = |d: &Value, key: &str| d[key].as_str().unwrap_or_default().to_owned();
        said.map(|d| (field(d, "code"), field(d, "file"), d["line"].as_u64().unwrap(), field(d, "host")))
            .collect::<Vec<_>>()
    };
    let deny = ("AB4841".to_owned(), "src/start.ts".to_owned(), 2, String::new());
    let context = |host: &str| ("AB4818".to_owned(), "src/stop.ts".to_owned(), 2, host.to_owned());
    assert_eq!(warnings("'./src/stop.ts'", stop), [deny.clone(), context("cursor")]);
    assert_eq!(warnings("{ handler: './src/stop.ts', targets: ['claude'] }", stop), std::slice::from_ref(&deny));
    assert_eq!(warnings("'./src/stop.ts'", by_host), [deny]);
}

/// What a handler returns is said once, as what matters: a field no result has (a host's own
/// `decision`) alone; a deny with a new input on an event taking neither by the two it
/// refuses; a reason on an event with no decision as such; one warning per host for hooks
/// sharing a handler, wherever it is (a route's `lib/` too).
#[test]
fn a_handler_result_is_said_once_as_what_matters() {
    let config = "export default { plugin: { name: 'once' }, targets: ['claude', 'codex'],\n  hooks: {\n    \
                  stop: './src/stop.ts',\n    afterTool: './src/events/lib/after.ts',\n    \
                  sessionStart: './src/start.ts',\n    agentStop: [{ handler: './src/sub.ts', targets: ['claude', \
                  'codex'] }, { handler: './src/sub.ts', targets: ['codex'], timeout: 5 }] } };\n";
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/stop.ts", "export default () => ({ decision: 'block', reason: 'tests' });\n"),
        (
            "src/events/lib/after.ts",
            "export default () => ({ outcome: 'deny', reason: 'x', updatedInput: { a: 1 } });\n",
        ),
        ("src/start.ts", "export default () => ({ additionalContext: 'hi', reason: 'banner' });\n"),
        ("src/sub.ts", "export default () => ({ additionalContext: 'subagent finished' });\n"),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let said: Vec<(String, String, String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let field = |key: &str| d[key].as_str().unwrap_or_default().to_owned();
            (field("file"), field("host"), field("message"), field("help"))
        })
        .collect();
    let mut messages: Vec<(&str, &str, &str)> =
        said.iter().map(|(f, h, m, _)| (f.as_str(), h.as_str(), m.as_str())).collect();
    messages.sort();
    assert_eq!(
        messages,
        [
            (
                "src/events/lib/after.ts",
                "",
                "the `afterTool` hook's handler returns a result that denies, which afterTool never takes"
            ),
            (
                "src/events/lib/after.ts",
                "",
                "the `afterTool` hook's handler returns a result that gives a new tool input, which afterTool never \
                 takes"
            ),
            (
                "src/start.ts",
                "",
                "the `sessionStart` hook's handler returns a result with a reason and no decision, which no host \
                 takes: every run that returns it fails"
            ),
            (
                "src/stop.ts",
                "",
                "the `stop` hook's handler returns a result with a field it never has, which no host takes: every \
                 run that returns it fails"
            ),
            (
                "src/sub.ts",
                "",
                "the `agentStop` hook's handler returns `additionalContext`, which agentStop never takes: such a run \
                 fails (one that denies is answered without it)"
            ),
        ],
        "{report:#}"
    );
    let help = |file: &str| &said.iter().find(|(f, ..)| f == file).unwrap().3;
    assert!(help("src/stop.ts").contains("`decision: 'block'` is `outcome: 'deny'` here"), "{said:?}");
    assert!(help("src/start.ts").starts_with("sessionStart takes no decision, so no reason"), "{said:?}");
    assert!(help("src/sub.ts").starts_with("agentStop takes no context on any host"), "{said:?}");
}

/// What was refused says so once: two hooks apart only by a refused timeout are not "declared
/// twice", nor is a list whose every item was refused "empty".
#[test]
fn a_refused_value_makes_no_second_error() {
    let codes = |config: &str| {
        let dir = project(&[("agent-bundle.config.ts", config), ("src/a.ts", "export default () => undefined;\n")]);
        let (code, report) = build_json(dir.path(), &[]);
        assert_eq!(code, 1, "{report:#}");
        let diagnostics = report["diagnostics"].as_array().unwrap().clone();
        diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let twice = "export default { plugin: { name: 'p' }, targets: ['claude'], hooks: { beforeTool: [\n\
                 { handler: './src/a.ts', timeout: 0 }, { handler: './src/a.ts', timeout: 1.5 }] } };\n";
    assert_eq!(codes(twice), ["AB4205", "AB4205"]);
    let read_apart = twice.replace("timeout: 0 }", "timeout: '5' }").replace(", timeout: 1.5", "");
    assert_eq!(codes(&read_apart), ["AB4004"]);
    let lists = "export default { plugin: { name: 'p' }, targets: [1],\n\
                 hooks: { beforeTool: { handler: './src/a.ts', tools: [true] } } };\n";
    assert_eq!(codes(lists), ["AB4004", "AB4004"]);
    // A hook's own targets are not said unselected by `targets` that were refused.
    let one = "export default { plugin: { name: 'p' }, targets: 'claude',\n\
               hooks: { stop: { handler: './src/a.ts', targets: ['claude'] } } };\n";
    assert_eq!(codes(one), ["AB4004"]);
}

/// The route components reached through a module that re-exports them are checked as where
/// they are imported directly: `<Agent.Reslt>` is AB4838 at the name, suggesting `Result`;
/// another module's components are left alone.
#[test]
fn agent_through_a_re_export_is_checked() {
    let config = "export default { plugin: { name: 'p' }, targets: ['claude'] };\n";
    let ui = "export { Agent } from '@agent-bundle/runtime';\nexport const Other = { Box: () => null };\n";
    let route = |tag: &str| {
        format!(
            "import {{ Agent as A, Other }} from '../lib/ui.ts';\n\
             export default async function Route() {{\n  return <><{tag} value={{{{}}}} /><Other.Box /></>;\n}}\n"
        )
    };
    let build = |tag: &str| {
        let dir =
            project(&[("agent-bundle.config.ts", config), ("src/lib/ui.ts", ui), ("src/events/stop.tsx", &route(tag))]);
        build_json(dir.path(), &[])
    };
    let (code, report) = build("A.Reslt");
    assert_eq!(code, 1, "{report:#}");
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!((&diagnostic["code"], &diagnostic["file"]), (&"AB4838".into(), &"src/events/stop.tsx".into()));
    assert_eq!((&diagnostic["line"], &diagnostic["column"]), (&3.into(), &15.into()), "{diagnostic:#}");
    assert!(diagnostic["help"].as_str().unwrap().contains("did you mean `Result`?"), "{diagnostic:#}");
    let (code, report) = build("A.Result");
    assert_eq!(code, 0, "{report:#}");
}

/// What no family takes, written out in a route's own file: a deny with a new input, a
/// reason with no decision, text outside `Agent.Context` (AB4841); a computed outcome is not
/// taken to be none, nor whitespace between tags to be text.
#[test]
fn a_result_no_host_takes_is_warned_of_where_it_is_written() {
    let config = "export default { plugin: { name: 'res' }, targets: ['claude'] };\n";
    let route = |value: &str| {
        format!(
            "import {{ Agent }} from '@agent-bundle/runtime';\n\
             export default (props: {{ no: boolean }}) =>\n  <Agent.Result value={{{value}}} />;\n"
        )
    };
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/events/tool/before.tsx", &route("{ outcome: 'deny', reason: 'no', updatedInput: { command: 'pwd' } }")),
        ("src/events/stop.tsx", &route("{ outcome: 'continue', reason: 'r' }")),
        ("src/events/prompt/submit.tsx", &route("{ reason: 'r' }")),
        ("src/events/agent/stop.tsx", &route("{ outcome: props.no ? 'deny' : 'continue', reason: 'r' }")),
        (
            "src/events/session/start.tsx",
            "import { Agent } from '@agent-bundle/runtime';\nexport default () => (\n  <Agent.Result>\n    started {1}\n  </Agent.Result>\n);\n",
        ),
        (
            "src/events/agent/start.tsx",
            "import { Agent } from '@agent-bundle/runtime';\nexport default () => (\n  <Agent.Result>\n    <Agent.Context>fine</Agent.Context>\n  </Agent.Result>\n);\n",
        ),
    ]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let mut said: Vec<(String, String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let field = |key: &str| d[key].as_str().unwrap().to_owned();
            (field("code"), field("file"), field("message").split_once(" renders ").unwrap().1.to_owned())
        })
        .collect();
    said.sort();
    let warned = |file: &str, what: &str| {
        let message = format!("an `Agent.Result` {what}, which no host takes: every run that renders it fails");
        ("AB4841".to_owned(), file.to_owned(), message)
    };
    assert_eq!(
        said,
        [
            warned("src/events/prompt/submit.tsx", "with a reason and no decision"),
            warned("src/events/session/start.tsx", "holding text outside `Agent.Context`"),
            warned("src/events/stop.tsx", "with a reason and no decision"),
            warned("src/events/tool/before.tsx", "that denies and gives a new tool input"),
        ],
        "{report:#}"
    );
}

/// A handler named as an import would name it (`.js` for the `.ts` module) is pointed at its
/// module; an absolute one is told to be relative, inside the root or not.
#[test]
fn a_handler_path_a_module_would_import_or_an_absolute_one_says_what_to_write() {
    let hooks = "{ stop: './src/hooks/h.js', agentStart: '/src/hooks/h.ts', sessionStart: '.\\\\src\\\\hooks\\\\h.ts', \
                 afterTool: 'C:/src/hooks/h.ts', agentStop: '.' }";
    let dir = project(&[("agent-bundle.config.ts", &config(hooks, "['claude']")), ("src/hooks/h.ts", HANDLER)]);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let said = support::diagnostic_fields(&report, "message", "help");
    assert!(
        said.iter().any(|(message, help)| *message == "handler file `src/hooks/h.js` does not exist"
            && help.starts_with("did you mean `./src/hooks/h.ts`?")),
        "{said:?}"
    );
    assert!(
        said.iter().any(|(message, help)| *message == "handler `/src/hooks/h.ts` is an absolute path"
            && help.starts_with("write it relative to the project root")),
        "{said:?}"
    );
    let expected = [
        ("handler `.\\src\\hooks\\h.ts` holds `\\`, which separates no folders here", "write `/` between folders"),
        ("handler `C:/src/hooks/h.ts` is an absolute path", "write it relative to the project root"),
        ("handler `.` is the project root, a folder, not a module file", "a handler names its module's file"),
    ];
    for (message, help) in expected {
        assert!(said.iter().any(|(m, h)| *m == message && h.starts_with(help)), "{message}: {said:?}");
    }
}

/// A syntax error at an unclosed brace also points where the brace was opened: in the config
/// and in a handler, framed and in `--json`.
#[test]
fn an_unclosed_brace_says_where_it_was_opened() {
    let base = config("{ stop: './src/hooks/h.ts' }", "['claude']");
    let handler = "export default (e: unknown) => {\n  if (e) {\n    return undefined;\n\n";
    let dir = project(&[("agent-bundle.config.ts", &base), ("src/hooks/h.ts", handler)]);
    let (_, report) = build_json(dir.path(), &[]);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["code"], "AB4836", "{report:#}");
    assert_eq!(diagnostic["related"], serde_json::json!([{ "line": 2, "column": 10, "label": "Opened here" }]));
    let output = support::run(dir.path(), &["build"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("2 |   if (e) {\n  |          - Opened here"), "{stderr}");
    // (The error at the end, after the last line break, is on the line it is, as --json says.)
    assert!(stderr.contains("--> src/hooks/h.ts:5:1"), "{stderr}");
    assert_eq!((diagnostic["line"].as_u64(), diagnostic["column"].as_u64()), (Some(5), Some(1)));

    let unclosed = base.replacen("stop: './src/hooks/h.ts'", "stop: { handler: './src/hooks/h.ts'", 1);
    std::fs::write(dir.path().join("agent-bundle.config.ts"), &unclosed).unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["code"], "AB4002", "{report:#}");
    assert_eq!(diagnostic["related"][0]["label"], "Opened here", "{report:#}");
}
