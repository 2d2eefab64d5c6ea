//! `agent-bundle types`: the declarations it writes type-check every example with the real
//! TypeScript compiler (from npm, pinned), and catch what the build would refuse.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{self, repo};

/// The pinned TypeScript install (with Node's types), made on first use by the project's
/// own script.
fn typescript() -> PathBuf {
    let output = Command::new(repo().join("scripts/install-typescript.sh")).output().expect("the install script runs");
    assert!(output.status.success(), "installing TypeScript failed:\n{}", String::from_utf8_lossy(&output.stderr));
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// `tsc` on the project at `dir` (its tsconfig.json): exit code and what it printed.
fn tsc(dir: &Path) -> (Option<i32>, String) {
    let typescript = typescript();
    let output = Command::new("node")
        .arg(typescript.join("node_modules/typescript/bin/tsc"))
        .args(["-p", ".", "--pretty", "false", "--typeRoots"])
        .arg(typescript.join("node_modules/@types"))
        .current_dir(dir)
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

fn types(dir: &Path) -> serde_json::Value {
    let output = support::run(dir, &["types", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn every_example_type_checks_against_the_declarations() {
    let examples = ["policy", "routes", "guarded", "hooks-and-scripts", "prebuilt-plugin", "monorepo"];
    let copies: Vec<_> = examples.iter().map(|example| (*example, support::example(example))).collect();
    let roots = copies.iter().flat_map(|(example, dir)| match *example {
        "monorepo" => vec![(*example, dir.path().join("plugins/audit")), (*example, dir.path().join("plugins/guard"))],
        _ => vec![(*example, dir.path().to_owned())],
    });
    let roots: Vec<_> = roots.collect();
    for (example, root) in roots.iter().filter(|(example, _)| *example != "monorepo") {
        assert_eq!(types(root)["tsconfig"], "created", "{example}");
    }
    // The older import of `defineConfig`, which the build reads too.
    let legacy = "import { defineConfig } from 'agent-bundle';\n\
                  export default defineConfig({ plugin: { name: 'legacy' }, targets: ['claude'] });\n";
    std::fs::write(copies[0].1.path().join("legacy.config.ts"), legacy).unwrap();
    // The names the bundled `agent-bundle` exports, which the declarations say it does.
    let runtime = "import { createElement, Fragment, jsx, jsxs } from 'agent-bundle';\n\
                   export const made = createElement(Fragment, null, jsx(Fragment, {}), jsxs(Fragment, {}));\n";
    std::fs::write(copies[0].1.path().join("src/runtime-names.ts"), runtime).unwrap();
    // A monorepo's projects at once, as `build --workspace` finds them.
    let monorepo = &copies.iter().find(|(example, _)| *example == "monorepo").unwrap().1;
    let output = support::run(monorepo.path(), &["types", "--workspace", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let projects: Vec<(&str, &str)> = report["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|project| (project["project"].as_str().unwrap(), project["tsconfig"].as_str().unwrap()))
        .collect();
    assert_eq!(projects, [("plugins/audit", "created"), ("plugins/guard", "created")], "{report:#}");
    // (One compiler per project, two at a time: each takes a second or two to start.)
    std::thread::scope(|scope| {
        for pair in roots.chunks(roots.len().div_ceil(2)) {
            scope.spawn(move || {
                for (example, root) in pair {
                    let (code, printed) = tsc(root);
                    assert_eq!(code, Some(0), "{example}: {printed}");
                }
            });
        }
    });
}

/// What the build refuses, or a run would fail on, is a type error: an event no config hook
/// takes, a decision the event has no room for, a field of the wrong type, an HTML tag or a
/// component `Agent` has none of in a route.
#[test]
fn the_declarations_refuse_what_the_build_and_the_hosts_would() {
    let config = "import { defineConfig } from 'agent-bundle/config';\nexport default defineConfig({\n  plugin: { name: 'p' },\n  targets: ['claude', 'vim'],\n  hooks: { beforeToll: './src/hooks/stop.ts' },\n});\n";
    let handler = "import type { HookHandler } from 'agent-bundle';\nconst stop: HookHandler<'stop'> = (event) => {\n  const loops: number = event.stopHookActive;\n  return { outcome: 'allow', reason: String(loops) };\n};\nexport default stop;\n";
    let route =
        "import { Agent } from '@agent-bundle/runtime';\nexport default async () => <div><Agent.Contxt /></div>;\n";
    let files =
        [("agent-bundle.config.ts", config), ("src/hooks/stop.ts", handler), ("src/events/tool/before.tsx", route)];
    refused(
        &files,
        &[
            "agent-bundle.config.ts(4,23): error TS2322: Type '\"vim\"' is not assignable to type 'Target'",
            "agent-bundle.config.ts(5,12): error TS2561",
            "Did you mean to write 'beforeTool'?",
            "src/hooks/stop.ts(3,9): error TS2322: Type 'boolean' is not assignable to type 'number'",
            "Type '\"allow\"' is not assignable to type '\"deny\"'",
            "src/events/tool/before.tsx(2,28): error TS2339: Property 'div' does not exist on type 'JSX.IntrinsicElements'",
            "Property 'Contxt' does not exist",
        ],
    );

    // Each event's rules: a `sessionStart` deny, `tools` where the event takes none, an
    // unknown tool in a declaration of a list (said there, not as the handler's), an empty
    // `targets`, an empty list of hooks, a hook for the portable manifest (which runs none).
    // A keyed element and a keyed fragment are fine.
    let config = "import { defineConfig } from 'agent-bundle/config';\nexport default defineConfig({\n  plugin: { name: 'p' },\n  targets: [],\n  hooks: {\n    sessionStart: { handler: './src/hooks/start.ts', tools: ['shell'] },\n    beforeTool: [{ handler: './src/hooks/guard.ts', tools: ['file.edit'] }],\n    stop: [],\n    agentStop: { handler: './src/hooks/start.ts', targets: ['portable'] },\n  },\n});\n";
    let handler = "import type { HookHandler } from 'agent-bundle';\nconst start: HookHandler<'sessionStart'> = () => ({ outcome: 'deny', reason: 'no' });\nexport default start;\n";
    let route = "import { Fragment } from 'agent-bundle/jsx-runtime';\nimport { Agent } from '@agent-bundle/runtime';\nexport default async () => <Agent.Result>{[1, 2].map((i) => <Fragment key={i}><Agent.Context key={i}>n{i}</Agent.Context></Fragment>)}</Agent.Result>;\n";
    // A deny with a new input (a union member that takes `updatedInput` must not let it
    // through), and a route config selecting no host.
    let guard = "import type { HookHandler } from 'agent-bundle';\nexport const guard: HookHandler<'beforeTool'> = () => ({ outcome: 'deny', reason: 'r', updatedInput: {} });\n";
    let route_config = "import type { AgentEventRouteConfig } from 'agent-bundle';\nexport const config = { targets: [] } satisfies AgentEventRouteConfig;\nexport default async () => null;\n";
    let files = [
        ("agent-bundle.config.ts", config),
        ("src/hooks/start.ts", handler),
        ("src/hooks/guard.ts", guard),
        ("src/events/session/start.tsx", route),
        ("src/events/stop.tsx", route_config),
    ];
    let printed = refused(
        &files,
        &[
            "src/hooks/guard.ts(2,",
            "Type '{}' is not assignable to type 'undefined'",
            "src/events/stop.tsx(2,25): error TS2322: Type '[]' is not assignable to type 'readonly [HookHost, ...HookHost[]]'",
            "agent-bundle.config.ts(8,5): error TS2322: Type '[]' is not assignable to type",
            "agent-bundle.config.ts(9,",
            "Type '\"portable\"' is not assignable to type 'HookHost'",
            "agent-bundle.config.ts(4,3): error TS2322: Type '[]' is not assignable to type 'readonly [Target, ...Target[]]'",
            "agent-bundle.config.ts(6,5): error TS2322",
            "Types of property 'tools' are incompatible",
            "agent-bundle.config.ts(7,",
            "Type '\"file.edit\"' is not assignable to type 'ToolSelector'",
            "src/hooks/start.ts(2,53): error TS2322: Type '\"deny\"' is not assignable to type '\"continue\"'",
        ],
    );
    assert!(!printed.contains("src/events/session/"), "{printed}");
    assert!(!printed.contains("prebuilt"), "the handler is not blamed: {printed}");
}

/// A route's `Agent.Result` is checked as a config hook's result is: a deny needs a reason
/// and gives no new input, and with its family, `allow` only where the family takes it (with a
/// reason only where a host's answer has a place for it), and `tools` only on a tool family's
/// config. An interface-typed new input is an input (a `length` key too); an array or a
/// function is none.
#[test]
fn the_declarations_refuse_a_route_result_the_run_would() {
    let route = "import { Agent, type RouteResult } from '@agent-bundle/runtime';\n\
        import type { AgentEventRouteConfig } from 'agent-bundle';\n\
        export const config = { tools: ['shell'] } satisfies AgentEventRouteConfig<'stop'>;\n\
        interface BashInput { command: string; length: number }\n\
        declare const next: BashInput;\n\
        export const rewrite = <Agent.Result value={{ updatedInput: next }} />;\n\
        export const both = <Agent.Result value={{ outcome: 'deny', reason: 'no', updatedInput: next }} />;\n\
        export const bare = <Agent.Result value={{ outcome: 'deny' }} />;\n\
        export const approval = { outcome: 'allow' } satisfies RouteResult<'stop'>;\n\
        export const approved = { outcome: 'allow', reason: 'fine' } satisfies RouteResult<'tool/before'>;\n\
        export const unsaid = { outcome: 'allow', reason: 'fine' } satisfies RouteResult<'permission/request'>;\n\
        export const listed = { updatedInput: ['ls'] } satisfies RouteResult<'tool/before'>;\n\
        export const called = { updatedInput: () => 1 } satisfies RouteResult<'tool/before'>;\n\
        export default () => <Agent.Result value={{ outcome: 'deny', reason: 'stop' }} />;\n";
    let config = "export default { plugin: { name: 'p' }, targets: ['claude'] };\n";
    let printed = refused(
        &[("agent-bundle.config.ts", config), ("src/events/stop.tsx", route)],
        &[
            "src/events/stop.tsx(3,25): error TS2322: Type 'string[]' is not assignable to type 'undefined'",
            "src/events/stop.tsx(7,",
            "src/events/stop.tsx(8,",
            "Property 'reason' is missing",
            "src/events/stop.tsx(9,",
            "Type '\"allow\"' is not assignable to type '\"continue\" | \"deny\" | undefined'",
            "src/events/stop.tsx(11,",
            "src/events/stop.tsx(12,",
            "src/events/stop.tsx(13,",
        ],
    );
    assert!(!printed.contains("stop.tsx(6,") && !printed.contains("stop.tsx(10,"), "{printed}");
}

/// What `tsc` prints of a project of `files` with the declarations, which must fail it with
/// every one of `expected`.
fn refused(files: &[(&str, &str)], expected: &[&str]) -> String {
    let dir = support::project(files);
    types(dir.path());
    let (code, printed) = tsc(dir.path());
    assert_eq!(code, Some(2), "{printed}");
    for expected in expected {
        assert!(printed.contains(expected), "{expected}\n{printed}");
    }
    printed
}

/// A project's own tsconfig is kept (and said not to extend the declarations); a root
/// without a config writes nothing.
#[test]
fn types_keeps_a_project_tsconfig_and_needs_a_project() {
    let dir = support::example("policy");
    std::fs::write(dir.path().join("tsconfig.json"), "{ \"compilerOptions\": {} }\n").unwrap();
    let output = support::run(dir.path(), &["types"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("tsconfig.json does not extend the declarations"), "{stdout}");
    assert_eq!(std::fs::read_to_string(dir.path().join("tsconfig.json")).unwrap(), "{ \"compilerOptions\": {} }\n");
    // One that does not parse is said to, not guessed at (the `extends` is before the fault).
    let malformed = "{ \"extends\": \"./.agent-bundle/tsconfig.json\" \"compilerOptions\": {} }\n";
    std::fs::write(dir.path().join("tsconfig.json"), malformed).unwrap();
    let output = support::run(dir.path(), &["types", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["tsconfig"], "malformed", "{report}");
    let output = support::run(dir.path(), &["types"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("tsconfig.json does not parse as JSON with comments"), "{stdout}");

    let empty = tempfile::tempdir().unwrap();
    let output = support::run(empty.path(), &["types"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no agent-bundle config found"));
    assert!(!empty.path().join(".agent-bundle").exists());
}

/// A project tsconfig that extends the declarations but sets its own `paths` is said, with
/// the entries to add; added as said, `tsc` finds agent-bundle's modules again.
#[test]
fn types_says_when_a_project_tsconfig_sets_paths_over_the_declarations() {
    let dir = support::example("policy");
    let tsconfig = dir.path().join("tsconfig.json");
    let with_paths = |extra: &str| {
        format!(
            "{{\n  \"extends\": \"./.agent-bundle/tsconfig.json\",\n  // an alias of the project's\n  \
             \"compilerOptions\": {{ \"paths\": {{ \"@/*\": [\"./src/*\"]{extra} }} }},\n  \"exclude\": [\"artifact\"]\n}}\n"
        )
    };
    std::fs::write(&tsconfig, with_paths("")).unwrap();
    assert_eq!(types(dir.path())["tsconfigOverrides"], serde_json::json!(["paths"]));
    let (code, printed) = tsc(dir.path());
    assert_ne!(code, Some(0), "the alias hides agent-bundle's modules: {printed}");
    let said = support::run(dir.path(), &["types"]);
    let said = String::from_utf8_lossy(&said.stdout).into_owned();
    let entries = said.split_once("add ").and_then(|(_, rest)| rest.split_once(" to its `paths`")).unwrap().0;
    std::fs::write(&tsconfig, with_paths(&format!(", {entries}"))).unwrap();
    assert_eq!(types(dir.path())["tsconfigOverrides"], serde_json::json!([]));
    let (code, printed) = tsc(dir.path());
    assert_eq!(code, Some(0), "{printed}");
}

/// The README's typed handler and its route example type-check, and the handler builds.
#[test]
fn the_readme_examples_type_check() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let block = |opening: &str| {
        let (_, from) = readme.split_once(opening).unwrap_or_else(|| panic!("README.md has {opening:?}"));
        from[..from.find("```").unwrap()].to_owned()
    };
    let handler = block("```ts\n// src/hooks/guard.ts\nimport type");
    let handler = format!("import type{handler}");
    let route = block("```tsx\n// src/events/tool/before.tsx\n");
    let config = "import { defineConfig } from 'agent-bundle/config';\nexport default defineConfig({ plugin: { name: 'readme' }, targets: ['claude', 'codex', 'cursor'], hooks: { beforeTool: './src/hooks/guard.ts' } });\n";
    let dir = support::project(&[
        ("agent-bundle.config.ts", config),
        ("src/hooks/guard.ts", &handler),
        ("src/events/tool/before.tsx", &route),
    ]);
    types(dir.path());
    let (code, printed) = tsc(dir.path());
    assert_eq!(code, Some(0), "{printed}");
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
}
