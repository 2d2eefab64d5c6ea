//! End-to-end tests: bundle small projects written to a temp dir and run them with `node`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::bundle::{
    BundleDiagnostic, BundleErrorKind, ModuleChunk, ModuleGraph, Span, assemble, compile_module, handler_body, resolve,
};

const HOOK_RUNTIME_KEY: &str = "agent-bundle:runtime/hook.mjs";
const JSX_RUNTIME_KEY: &str = "agent-bundle:runtime/jsx.mjs";

/// Stand-ins for the tool's virtual modules.
const HOOK_RUNTIME: &str = r#"
export async function runHook(spec, handler) {
  const result = await handler(spec);
  process.stdout.write(JSON.stringify({ name: handler.name, result }) + "\n");
}
"#;
const JSX_RUNTIME: &str = r#"
export function jsx(type, props, key) {
  return typeof type === "function" ? type(props) : { type, props, key };
}
export const jsxs = jsx;
export const Fragment = "fragment";
"#;

fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (key, source) in files {
        let path = root.join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, source).unwrap();
    }
}

/// Every file under `root`, by project-relative POSIX key.
fn read_project(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                let key: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                out.insert(key.join("/"), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Compiles every module reachable from the hook runtime and `entry`, with each module's
/// own diagnostics.
fn compile_graph(
    files: &BTreeMap<String, String>,
    entry: &str,
) -> (BTreeMap<String, ModuleChunk>, Vec<(String, BundleDiagnostic)>) {
    let mut sources = files.clone();
    sources.insert(HOOK_RUNTIME_KEY.into(), HOOK_RUNTIME.into());
    sources.insert(JSX_RUNTIME_KEY.into(), JSX_RUNTIME.into());
    let aliases = BTreeMap::from([("agent-bundle/jsx-runtime".to_owned(), JSX_RUNTIME_KEY.to_owned())]);
    let exists = |key: &str| sources.contains_key(key);

    let mut chunks = BTreeMap::new();
    let mut errors = Vec::new();
    let mut stack = vec![entry.to_owned(), HOOK_RUNTIME_KEY.to_owned()];
    while let Some(key) = stack.pop() {
        if chunks.contains_key(&key) {
            continue;
        }
        let source = &sources[&key];
        let chunk = compile_module(&key, source, &mut |specifier| resolve(&key, specifier, &aliases, &exists));
        errors.extend(chunk.diagnostics.iter().filter(|d| d.is_error()).map(|d| (key.clone(), d.clone())));
        stack.extend(chunk.imports.iter().rev().map(|import| import.key.clone()));
        chunks.insert(key, chunk);
    }
    (chunks, errors)
}

/// Bundles the graph of `entry` as a wrapper body does, with an epilogue that runs the
/// entry's default export. Panics on errors only the whole graph shows ([`link_errors`]).
fn bundle(files: &BTreeMap<String, String>, entry: &str) -> Result<String, Vec<(String, BundleDiagnostic)>> {
    let (chunks, errors) = compile_graph(files, entry);
    if !errors.is_empty() {
        return Err(errors);
    }
    let graph = ModuleGraph::collect(&[HOOK_RUNTIME_KEY, entry], |key| &chunks[key]);
    let links = graph.diagnostics();
    assert!(links.iter().all(|d| !d.is_error()), "{links:#?}");
    let epilogue = format!(
        "await __ab_require({HOOK_RUNTIME_KEY:?}).runHook({{ event: \"test\" }}, __ab_require({entry:?}).default);\n"
    );
    Ok(handler_body("// agent-bundle test bundle", &graph).with_epilogue(&epilogue))
}

/// The help of each of the graph's link diagnostics for `src/main.ts`, whose modules compile.
fn link_helps(files: &[(&str, &str)]) -> Vec<Option<String>> {
    let files: BTreeMap<String, String> = files.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let (chunks, errors) = compile_graph(&files, "src/main.ts");
    assert!(errors.is_empty(), "{errors:#?}");
    let graph = ModuleGraph::collect(&[HOOK_RUNTIME_KEY, "src/main.ts"], |key| &chunks[key]);
    graph.diagnostics().into_iter().map(|d| d.help).collect()
}

/// The graph's link errors for `entry`: (file, code, the text at the span, message).
fn link_errors(files: &[(&str, &str)], entry: &str) -> Vec<(String, &'static str, String, String)> {
    let files: BTreeMap<String, String> = files.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let (chunks, errors) = compile_graph(&files, entry);
    assert!(errors.is_empty(), "{errors:#?}");
    let graph = ModuleGraph::collect(&[HOOK_RUNTIME_KEY, entry], |key| &chunks[key]);
    graph
        .diagnostics()
        .into_iter()
        .map(|d| {
            let file = d.file.clone().unwrap_or_default();
            let span = d.span.unwrap_or_default();
            let text = files[&file][span.range()].to_owned();
            (file, d.code.as_str(), text, d.message)
        })
        .collect()
}

struct NodeRun {
    success: bool,
    stdout: String,
    stderr: String,
}

fn run_node(code: &str) -> NodeRun {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hook.mjs");
    std::fs::write(&path, code).unwrap();
    let output =
        Command::new("node").arg(&path).output().expect("`node` (Node 20) must be installed to run the bundler tests");
    NodeRun {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn bundle_and_run(files: &[(&str, &str)], entry: &str) -> NodeRun {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    let code = bundle(&read_project(dir.path()), entry).unwrap_or_else(|e| panic!("bundle failed: {e:#?}"));
    run_node(&code)
}

const GRAPH: &[(&str, &str)] = &[
    (
        "src/hooks/main.ts",
        r#"
import type { HookInput } from "@agent/types";
import type { Shape } from "./types";
import { helper, Color, counter, bump } from "./util.js";
import * as lib from "../lib";
import libDefault, { libName } from "../lib";
import { isEven, bReport } from "./cycle-a";
import { b as renamed, star1, ns, kind, nothing } from "./reexports";
import fs from "node:fs";
import { join } from "node:path";
import * as os from "os";
import { render } from "./view";

const config = { retries: 3 } satisfies Record<string, number>;
const modes = ["fast", "slow"] as const;
const shorthand = { helper, join };

export default async function (input: HookInput): Promise<Record<string, unknown>> {
  bump();
  bump();
  const lazy = await import("./lazy");
  const shape: Shape = { w: 2 };
  return {
    event: input.event,
    helper: helper(41),
    color: Color.Green,
    colorName: Color[Color.Red],
    counter,
    libCounter: lib.libName,
    libDefault: libDefault(),
    libDefaultName: libDefault.name,
    libName,
    even: isEven(10),
    bReport,
    renamed,
    star1,
    nsKeys: Object.keys(ns).sort(),
    kind,
    nothing: typeof nothing,
    fs: typeof fs.readFileSync,
    join: join("a", "b"),
    os: typeof os.platform(),
    view: render(["x"]),
    lazy: lazy.value,
    lazyAgain: (await import("./lazy")) === lazy,
    shape: shape.w,
    config: config.retries,
    modes,
    same: shorthand.helper === helper,
  };
}
"#,
    ),
    ("src/hooks/types.ts", "export interface Shape { w: number }\nexport type Id = string;\n"),
    (
        "src/hooks/util.ts",
        r#"
export enum Color { Red, Green = "green" }
export let counter = 0;
export function bump(): void { counter++; }
export const helper = (n: number): number => n + 1;
"#,
    ),
    (
        "src/lib/index.ts",
        r#"
export default () => "lib-default";
export const libName = "lib";
"#,
    ),
    (
        "src/hooks/cycle-a.ts",
        r#"
import { isOdd, hoistedWorks, tdz } from "./cycle-b";
export function isEven(n: number): boolean { return n === 0 ? true : isOdd(n - 1); }
export const A_READY = "a";
export const bReport = { hoistedWorks, tdz };
"#,
    ),
    (
        "src/hooks/cycle-b.ts",
        r#"
import { isEven, A_READY } from "./cycle-a";
export function isOdd(n: number): boolean { return n === 0 ? false : isEven(n - 1); }
// Evaluated while cycle-a is still evaluating: its hoisted function works, its const is in TDZ.
export const hoistedWorks = isEven(4);
export let tdz = "readable";
try { A_READY; } catch (error) { tdz = error instanceof ReferenceError ? "ReferenceError" : String(error); }
"#,
    ),
    (
        "src/hooks/reexports.ts",
        r#"
const a = "A";
export { a as b };
export * from "./star";
export * as ns from "./star";
export { kind } from "./star";
export { something as nothing } from "./no-default";
"#,
    ),
    (
        "src/hooks/star.ts",
        "export const star1 = 1;\nexport const star2 = 2;\nexport const kind = \"star\";\nexport default \"not re-exported\";\n",
    ),
    ("src/hooks/no-default.ts", "export const something = 1;\n"),
    ("src/hooks/lazy.ts", "export const value = \"lazy\";\n"),
    (
        "src/hooks/view.tsx",
        r#"
const Item = (props: { label: string }) => <li>{props.label}</li>;
export function render(items: string[]) {
  return <ul>{items.map((item) => <Item label={item} />)}</ul>;
}
"#,
    ),
];

const GRAPH_EXPECTED: &str = concat!(
    r#"{"name":"default","result":{"event":"test","helper":42,"color":"green","colorName":"Red","#,
    r#""counter":2,"libCounter":"lib","libDefault":"lib-default","libDefaultName":"default","libName":"lib","#,
    r#""even":true,"bReport":{"hoistedWorks":true,"tdz":"ReferenceError"},"renamed":"A","star1":1,"#,
    r#""nsKeys":["default","kind","star1","star2"],"kind":"star","nothing":"number","fs":"function","join":"a/b","#,
    r#""os":"string","view":{"type":"ul","props":{"children":[{"type":"li","props":{"children":"x"}}]}},"#,
    r#""lazy":"lazy","lazyAgain":true,"shape":2,"config":3,"modes":["fast","slow"],"same":true}}"#,
    "\n"
);

#[test]
fn graph_runs_in_node() {
    let run = bundle_and_run(GRAPH, "src/hooks/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(run.stdout, GRAPH_EXPECTED);
}

#[test]
fn output_is_deterministic_and_independent_of_the_directory() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let nested = second.path().join("some/deeper/place");
    write_files(first.path(), GRAPH);
    write_files(&nested, GRAPH);
    let a = bundle(&read_project(first.path()), "src/hooks/main.ts").unwrap();
    let again = bundle(&read_project(first.path()), "src/hooks/main.ts").unwrap();
    let b = bundle(&read_project(&nested), "src/hooks/main.ts").unwrap();
    assert_eq!(a, again);
    assert_eq!(a, b);
    let first_dir = first.path().to_string_lossy().into_owned();
    assert!(!a.contains(&first_dir));
    assert!(!a.contains("/tmp"));
}

#[test]
fn evaluation_is_depth_first_post_order_and_lazy() {
    let files = [
        (
            "src/main.ts",
            r#"
import "./x";
import { y } from "./y";
import { log } from "./log";
log.push("main");
export default () => [...log, y];
"#,
        ),
        ("src/log.ts", "export const log: string[] = [];\n"),
        ("src/x.ts", "import \"./z\";\nimport { log } from \"./log\";\nlog.push(\"x\");\n"),
        ("src/y.ts", "import { log } from \"./log\";\nlog.push(\"y\");\nexport const y = \"y\";\n"),
        ("src/z.ts", "import { log } from \"./log\";\nlog.push(\"z\");\n"),
        ("src/unused.ts", "throw new Error(\"never evaluated\");\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(run.stdout, "{\"name\":\"default\",\"result\":[\"z\",\"x\",\"y\",\"main\",\"y\"]}\n");
}

/// Runs `files`, JavaScript modules Node can load as they are, bundled and natively, each
/// entry run as the test bundle's epilogue runs it; both must print `expected`.
fn assert_runs_as_in_node(files: &[(&str, &str)], entry: &str, expected: &str) {
    let bundled = bundle_and_run(files, entry);
    assert!(bundled.success, "the bundle failed:\n{}", bundled.stderr);
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    let driver = format!(
        "const m = await import({entry:?});\nconst result = await m.default({{ event: \"test\" }});\n\
         process.stdout.write(JSON.stringify({{ name: m.default.name, result }}) + \"\\n\");\n",
        entry = format!("./{entry}")
    );
    std::fs::write(dir.path().join("driver.mjs"), driver).unwrap();
    let native = Command::new("node").arg(dir.path().join("driver.mjs")).output().unwrap();
    assert!(native.status.success(), "node failed:\n{}", String::from_utf8_lossy(&native.stderr));
    assert_eq!(String::from_utf8_lossy(&native.stdout), expected, "what Node gives");
    assert_eq!(bundled.stdout, expected, "what the bundle gives");
}

/// A hoisted function of a module in a cycle can be called before its module runs, which
/// runs later, in its turn: calling it (or reading any export) runs no module.
#[test]
fn calling_a_hoisted_function_in_a_cycle_does_not_run_its_module() {
    let files = [
        (
            "src/main.mjs",
            "import { fa } from './a.mjs';\nimport { r } from './b.mjs';\nimport { log } from './log.mjs';\n\
             export default () => [r, fa(), ...log];\n",
        ),
        ("src/log.mjs", "export const log = [];\n"),
        (
            "src/a.mjs",
            "import { r } from './b.mjs';\nimport { helper } from './c.mjs';\nimport { starred } from './hub.mjs';\n\
             export function fa() { return helper() + starred(); }\nexport const seenR = r;\n",
        ),
        (
            "src/b.mjs",
            "import { fa } from './a.mjs';\nimport { label } from './config.mjs';\n\
             // c and star have not run: their hoisted functions work, through `export *` too.\n\
             export const r = fa();\nexport const LATE = label;\n",
        ),
        (
            "src/c.mjs",
            "import { LATE } from './b.mjs';\nimport { log } from './log.mjs';\n\
             export function helper() { return 'h'; }\nexport const cInit = LATE.length;\nlog.push('c');\n",
        ),
        ("src/hub.mjs", "export * from './star.mjs';\n"),
        (
            "src/star.mjs",
            "import { log } from './log.mjs';\nimport './a.mjs';\nexport function starred() { return 's'; }\nlog.push('star');\n",
        ),
        ("src/config.mjs", "export const label = 'late';\n"),
    ];
    assert_runs_as_in_node(
        &files,
        "src/main.mjs",
        "{\"name\":\"default\",\"result\":[\"hs\",\"hs\",\"c\",\"star\"]}\n",
    );
}

/// In a cycle, bodies run in ESM's order, and reading a binding of a module that has not run
/// yet gives what ESM gives: `undefined` for a `var`, a ReferenceError for a `const` or a class.
#[test]
fn a_cycle_runs_its_bodies_in_node_order_with_esm_bindings() {
    let files = [
        (
            "src/main.mjs",
            "import { log } from './log.mjs';\nimport { fa } from './a.mjs';\nexport default () => [...log, fa()];\n",
        ),
        ("src/log.mjs", "export const log = [];\n"),
        (
            "src/a.mjs",
            "import { log } from './log.mjs';\nimport { fromB } from './b.mjs';\nimport { cval } from './c.mjs';\n\
             export function fa() { return 'fa sees ' + cval; }\nexport var early = 'set';\nexport class K {}\n\
             log.push('a fromB=' + fromB);\n",
        ),
        (
            "src/b.mjs",
            "import { log } from './log.mjs';\nimport * as a from './a.mjs';\n\
             const probe = (read) => { try { return String(read()); } catch (error) { return error.constructor.name; } };\n\
             log.push('b:' + [probe(a.fa), probe(() => a.early), probe(() => a.K)].join('/'));\nexport const fromB = 'b';\n",
        ),
        ("src/c.mjs", "import { log } from './log.mjs';\nlog.push('c');\nexport const cval = 'C';\n"),
    ];
    let expected = "{\"name\":\"default\",\"result\":[\"b:ReferenceError/undefined/ReferenceError\",\"c\",\"a fromB=b\",\"fa sees C\"]}\n";
    assert_runs_as_in_node(&files, "src/main.mjs", expected);
}

/// A module whose import failed before fails as it did, and its later imports do not run.
#[test]
fn an_import_that_failed_before_fails_its_importer_before_its_other_imports_run() {
    let files = [
        (
            "src/main.mjs",
            "globalThis.order = [];\nexport default async () => {\n  const r = [];\n  \
             try { await import('./x.mjs'); r.push('ok'); } catch (e) { r.push(e.message); }\n  \
             try { await import('./y.mjs'); r.push('ok'); } catch (e) { r.push(e.message); }\n  \
             return [...r, ...globalThis.order];\n};\n",
        ),
        ("src/x.mjs", "globalThis.order.push('x');\nthrow new Error('boom');\n"),
        ("src/y.mjs", "import './x.mjs';\nimport './z.mjs';\nglobalThis.order.push('y');\n"),
        ("src/z.mjs", "globalThis.order.push('z');\n"),
    ];
    assert_runs_as_in_node(&files, "src/main.mjs", "{\"name\":\"default\",\"result\":[\"boom\",\"boom\",\"x\"]}\n");
}

/// A module of a cycle that ran fails with the cycle when a later member throws, as in ESM
/// (its cycle had not finished running); a module outside the cycle that ran stays run.
#[test]
fn a_throw_fails_every_module_of_its_unfinished_cycle() {
    let files = [
        (
            "src/main.mjs",
            "globalThis.order = [];\nexport default async () => {\n  const r = [];\n  \
             const load = [() => import('./a.mjs'), () => import('./b.mjs'), () => import('./c.mjs'), () => import('./d.mjs')];\n  \
             for (const [at, m] of load.entries()) {\n    \
             try { await m(); r.push(at + ' ok'); } catch (e) { r.push(at + ' ' + e.message); }\n  }\n  \
             return [...r, ...globalThis.order];\n};\n",
        ),
        ("src/a.mjs", "import './b.mjs';\nimport './c.mjs';\nglobalThis.order.push('a');\nthrow new Error('boom');\n"),
        ("src/b.mjs", "import './d.mjs';\nimport './a.mjs';\nglobalThis.order.push('b');\n"),
        ("src/c.mjs", "globalThis.order.push('c');\n"),
        ("src/d.mjs", "globalThis.order.push('d');\n"),
    ];
    let expected =
        "{\"name\":\"default\",\"result\":[\"0 boom\",\"1 boom\",\"2 ok\",\"3 ok\",\"d\",\"b\",\"c\",\"a\"]}\n";
    assert_runs_as_in_node(&files, "src/main.mjs", expected);
}

/// `this` at a module's top level is undefined, as in ESM (not the runtime's record of it),
/// and a chain of imports links and runs however long it is: from a worklist and a stack of
/// its own, not by recursion (Node's own loader stops at about 3,500).
#[test]
fn modules_see_no_this_and_run_however_long_their_chain() {
    let chain = |length: usize| -> Vec<(String, String)> {
        let mut files = vec![(
            "src/main.mjs".to_owned(),
            "import { depth } from './m0.mjs';\nconst self = String(this);\nexport default () => [self, depth];\n"
                .to_owned(),
        )];
        for at in 0..length {
            let body = if at + 1 == length {
                "export const depth = 0;\n".to_owned()
            } else {
                format!("import {{ depth as next }} from './m{}.mjs';\nexport const depth = next + 1;\n", at + 1)
            };
            files.push((format!("src/m{at}.mjs"), body));
        }
        files
    };
    let expected = |length: usize| format!("{{\"name\":\"default\",\"result\":[\"undefined\",{}]}}\n", length - 1);
    let files = chain(2_500);
    let files: Vec<(&str, &str)> = files.iter().map(|(path, text)| (path.as_str(), text.as_str())).collect();
    assert_runs_as_in_node(&files, "src/main.mjs", &expected(2_500));
    let files = chain(8_000);
    let files: Vec<(&str, &str)> = files.iter().map(|(path, text)| (path.as_str(), text.as_str())).collect();
    let run = bundle_and_run(&files, "src/main.mjs");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout, expected(8_000));
}

#[test]
fn default_exports_keep_esm_names_and_live_bindings() {
    let files = [
        (
            "src/main.ts",
            r#"
import klass from "./klass";
import expr from "./expr";
import named, { rename } from "./named";
import * as counter from "./counter";
export default function handler() {
  const before = counter.count;
  counter.increment();
  rename();
  return { klass: klass.name, expr, named: named(), after: counter.count, before, tag: Object.prototype.toString.call(counter) };
}
"#,
        ),
        ("src/klass.ts", "export default class { static kind = \"k\"; }\n"),
        ("src/expr.ts", "let value = 1;\nexport default value;\nvalue = 2;\n"),
        (
            "src/named.ts",
            "export default function original() { return \"original\"; }\nexport function rename() { (original as any) = () => \"replaced\"; }\n",
        ),
        ("src/counter.ts", "export let count = 0;\nexport function increment() { count += 1; }\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"name\":\"handler\",\"result\":{\"klass\":\"default\",\"expr\":1,\"named\":\"replaced\",\"after\":1,\"before\":0,\"tag\":\"[object Module]\"}}\n"
    );
}

/// `export import X = N.Y` of a namespace holding types alone is left out, as tsc leaves it
/// (kept, it would read `N`, which is not there), at the top level and in a namespace.
#[test]
fn an_exported_alias_of_types_alone_is_left_out() {
    let main = "namespace Types { export interface Cfg { a: number } export namespace Deep { export type T = string } }\n\
                export import Cfg = Types.Cfg;\nexport import T = Types.Deep.T;\n\
                namespace Api { export import Cfg = Types.Cfg; export const v = 1; }\n\
                import * as Self from './main';\nconst c: Cfg = { a: 1 };\nconst t: T = 't';\n\
                export default () => [c, t, Object.keys(Api), Object.keys(Self)];\n";
    let run = bundle_and_run(&[("src/main.ts", main)], "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(run.stdout, "{\"name\":\"default\",\"result\":[{\"a\":1},\"t\",[\"v\"],[\"default\"]]}\n");
}

/// An enum member whose value oxc cannot compute maps back to its name only when the value
/// is a number, as tsc's does (a string member has no reverse mapping).
#[test]
fn an_enum_member_computed_at_run_time_maps_back_numbers_only() {
    let main = "import { PFX, BASE } from './lib';\nconst PREFIX = 'app';\n\
                enum Ev { start = PREFIX + ':start', lib = PFX + ':x', n = BASE + 1, m = 'x'.length }\n\
                export default () => Ev;\n";
    let files = [("src/main.ts", main), ("src/lib.ts", "export const PFX = 'lib';\nexport const BASE = 10;\n")];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    let expected = r#"{"1":"m","11":"n","start":"app:start","lib":"lib:x","n":11,"m":1}"#;
    assert_eq!(run.stdout, format!("{{\"name\":\"default\",\"result\":{expected}}}\n"));
}

#[test]
fn runtime_errors_are_clear() {
    let files = [
        (
            "src/main.ts",
            r#"
export default async function () {
  const results: string[] = [];
  for (let i = 0; i < 2; i++) {
    try { await import("./broken"); } catch (error) { results.push((error as Error).message); }
  }
  return results;
}
"#,
        ),
        ("src/broken.ts", "let n = 0;\nn++;\nthrow new Error(`broken ${n}`);\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    // The module is evaluated once; its error is thrown again on the next import.
    assert_eq!(run.stdout, "{\"name\":\"default\",\"result\":[\"broken 1\",\"broken 1\"]}\n");

    let missing = run_node(&assemble("// h", &[], "__ab_require(\"src/nope.ts\");\n").code);
    assert!(!missing.success);
    assert!(
        missing.stderr.contains("agent-bundle: module \"src/nope.ts\" is not in this bundle"),
        "{}",
        missing.stderr
    );
}

#[test]
fn compile_errors_point_into_the_original_source() {
    let files = BTreeMap::from([
        (
            "src/main.ts".to_owned(),
            "import type { T } from \"types-only\";\nimport _ from \"lodash\";\nimport { x } from \"./missing\";\nimport { y } from \"./bad\";\nimport \"./broken\";\nconsole.log(_, x, y);\n".to_owned(),
        ),
        (
            "src/bad.ts".to_owned(),
            concat!(
                "const name: string = \"./x\";\n",
                "export const y = () => import(name);\n",
                "await Promise.resolve();\n",
                "export const url = import.meta.url;\n",
                "const __ab_mine = 1;\n",
            )
            .to_owned(),
        ),
        ("src/broken.ts".to_owned(), "const s = \"ünïcödé\";\nexport const z = (1 + ;\n".to_owned()),
    ]);
    let errors = bundle(&files, "src/main.ts").unwrap_err();
    let found: Vec<(&str, BundleErrorKind, &str)> = errors
        .iter()
        .map(|(key, d)| (key.as_str(), d.kind, &files[key][d.span.start as usize..d.span.end as usize]))
        .collect();
    assert_eq!(
        found,
        [
            ("src/main.ts", BundleErrorKind::BareImport, "\"lodash\""),
            ("src/main.ts", BundleErrorKind::UnresolvedImport, "\"./missing\""),
            ("src/bad.ts", BundleErrorKind::DynamicImport, "name"),
            ("src/bad.ts", BundleErrorKind::TopLevelAwait, "await"),
            ("src/bad.ts", BundleErrorKind::ImportMeta, "import.meta"),
            ("src/bad.ts", BundleErrorKind::ReservedName, "__ab_mine"),
            ("src/broken.ts", BundleErrorKind::Syntax, ";"),
        ]
    );
    assert_eq!(errors[1].1.message, "cannot resolve \"./missing\" from src/main.ts");
    // Byte offsets: the `;` after the multi-byte string.
    let broken = &files["src/broken.ts"];
    let at = broken.rfind(';').unwrap() as u32;
    assert_eq!(errors[6].1.span, Span { start: at, end: at + 1 });
}

#[test]
fn barrels_resolve_star_exports_statically() {
    let files = [
        (
            "src/main.ts",
            r#"
import { aFn, early, bFn, cName, own, sep, deep } from "./index";
import * as barrel from "./index";
export default () => ({ a: aFn(), early, b: bFn(), cName, own, sep: typeof sep, deep, keys: Object.keys(barrel) });
"#,
        ),
        (
            "src/index.ts",
            "export * from \"./a\";\nexport * from \"./b\";\nexport { cName } from \"./c\";\nexport * from \"node:path\";\nexport * from \"./loop\";\nexport const own = \"index\";\n",
        ),
        // Imports the barrel that is still evaluating, and calls a hoisted function of a module
        // the barrel has not reached yet, as ESM allows.
        (
            "src/a.ts",
            "import { bFn } from \"./index\";\nexport function aFn() { return \"a\"; }\nexport const early = bFn();\n",
        ),
        (
            "src/b.ts",
            "export function bFn() { return \"b\"; }\nexport const own = \"shadowed by index\";\nexport default \"not re-exported\";\n",
        ),
        ("src/c.ts", "export const cName = \"c\";\n"),
        ("src/loop.ts", "export * from \"./loop2\";\nexport const deep = \"loop\";\n"),
        ("src/loop2.ts", "export * from \"./loop\";\nexport const loopTwo = 2;\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    let expected = r#"{"name":"default","result":{"a":"a","early":"b","b":"b","cName":"c","own":"index","sep":"string","deep":"loop","keys":["#;
    assert!(run.stdout.starts_with(expected), "{}", run.stdout);
    // Sorted like an ESM namespace; `default` of the star sources is not re-exported.
    assert!(
        run.stdout.contains(r#""aFn","bFn","basename","cName","deep","delimiter","dirname","early""#),
        "{}",
        run.stdout
    );
    let keys = run.stdout.split_once(r#""keys":"#).unwrap().1;
    assert!(!keys.contains(r#""default""#), "{}", run.stdout);
}

#[test]
fn a_cycle_reaches_a_hoisted_function_of_a_module_not_evaluated_yet() {
    let files = [
        (
            "src/main.ts",
            r#"
import { early } from "./a";
import { bFn } from "./b";
export function mainUsesB() { return bFn(); }
export default () => early;
"#,
        ),
        // Runs while main is still evaluating its imports, before b: ESM has b's hoisted
        // function ready; the bundle evaluates b on that first read instead.
        ("src/a.ts", "import { mainUsesB } from \"./main\";\nexport const early = mainUsesB();\n"),
        ("src/b.ts", "export function bFn() { return \"b\"; }\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(run.stdout, "{\"name\":\"default\",\"result\":\"b\"}\n");
}

/// Valid TypeScript that must compile without diagnostics and run: overloads, declaration
/// merging, ambient declarations, class features, assertion functions, and so on.
const GRAB_BAG: &str = r#"// A grab bag of valid TypeScript that must compile without diagnostics and run.
function over(a: string): string;
function over(a: number): number;
function over(a: any): any { return a; }

interface Merged { a: number }
interface Merged { b: number }
const Merged = { kind: "value" };

function withNs() { return 1; }
namespace withNs { export const extra = 2; }

enum Twice { A = 1 }
enum Twice { B = 2 }

declare module "some-ambient" { export const x: number; }
declare global { interface Window { y: number } }

abstract class Base<T> {
  #secret = 1;
  static count = 0;
  static { Base.count = 10; }
  protected abstract make(): T;
  get secret(): number { return this.#secret; }
  hasSecret(o: object): boolean { return #secret in o; }
}
class Impl extends Base<string> {
  constructor(public readonly label: string, private n = 2) { super(); }
  protected override make(): string { return this.label.repeat(this.n); }
  run(this: Impl): string { return this.make(); }
}

function assertString(x: unknown): asserts x is string { if (typeof x !== "string") throw new Error("no"); }
const sym: unique symbol = Symbol("s");
type Index = { [k: string]: number };
const idx: Index = { a: 1 };
const generic = <T,>(x: T): T => x;
let maybe: { deep?: { v: number } } | undefined = { deep: { v: 3 } };
outer: for (let i = 0; i < 3; i++) { for (const j of [1]) { if (i === 1) break outer; void j; } }
const tuple = [1, "a"] as [number, string];
const nonNull = maybe!.deep!.v;
const big = 10n ** 3n;
const re = /(?<year>\d{4})/v;
function args() { return arguments.length; }

export default function () {
  const s: unknown = "x";
  assertString(s);
  return {
    over: over(1), merged: Merged.kind, ns: withNs.extra + withNs(), twice: Twice.A + Twice.B,
    impl: new Impl("ab").run(), secret: new Impl("q").secret, has: new Impl("q").hasSecret(new Impl("r")),
    count: Base.count, sym: typeof sym, idx: idx.a, generic: generic("g"), opt: maybe?.deep?.v ?? 0,
    tuple: tuple[1], nonNull, big: String(big), year: re.exec("in 2024")?.groups?.year, args: args(1, 2),
  };
}
"#;

#[test]
fn typescript_grab_bag_runs() {
    let run = bundle_and_run(&[("src/main.ts", GRAB_BAG)], "src/main.ts");
    assert!(run.success, "node failed:\n{}", run.stderr);
    assert_eq!(
        run.stdout,
        concat!(
            r#"{"name":"default","result":{"over":1,"merged":"value","ns":3,"twice":3,"impl":"abab","secret":1,"#,
            r#""has":true,"count":10,"sym":"symbol","idx":1,"generic":"g","opt":3,"tuple":"a","nonNull":3,"#,
            r#""big":"1000","year":"2024","args":2}}"#,
            "\n"
        )
    );
}

/// Where Node says a bundled handler failed, read through the bundle's source map: in the
/// original TypeScript, past the types the transpiler dropped, the imports the linker
/// rewrote and characters that take two bytes.
#[test]
fn stack_traces_point_into_the_original_sources() {
    let files: &[(&str, &str)] = &[
        (
            "src/hooks/main.ts",
            "import type { Shape } from \"./types\";\nimport { explode, LIMIT } from \"./lib/boom\";\n\n\
             interface Input {\n  readonly n: Shape;\n}\n\n\
             export default function main(input: Input): string {\n  const é: string = `${input.n}`;\n  \
             return explode(`${é}/${LIMIT}`);\n}\n",
        ),
        (
            "src/hooks/lib/boom.ts",
            "// Types vanish; lines stay where the source has them.\ntype Label = string;\n\
             export const LIMIT: number = 3;\nexport function explode(label: Label): never {\n  \
             const ü = \"ü\"; throw new Error(label + ü);\n}\n",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    let code = bundle(&read_project(dir.path()), "src/hooks/main.ts").unwrap();
    let path = dir.path().join("hook.mjs");
    std::fs::write(&path, code).unwrap();
    let output = Command::new("node").arg("--enable-source-maps").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Error: undefined/3ü"), "{stderr}");
    assert!(stderr.contains("src/hooks/lib/boom.ts:5:24)"), "{stderr}");
    assert!(stderr.contains("src/hooks/main.ts:10:10)"), "{stderr}");
}

#[test]
fn the_runtime_is_emitted_without_its_comments_and_a_handler_keeps_its_own() {
    // (Builtins, and the runtime's own modules beside it.)
    let no_imports = &mut |specifier: &str| match (specifier.strip_prefix("node:"), specifier.strip_prefix("./")) {
        (Some(_), _) => Ok(crate::bundle::Resolved::Builtin(specifier.to_owned())),
        (_, Some(name)) => Ok(crate::bundle::Resolved::Module(format!("agent-bundle:runtime/{name}"))),
        _ => Err(crate::bundle::ResolveFailure::NotFound),
    };
    let key = crate::bundle::RUNTIME_KEY;
    let source = crate::bundle::virtual_module(key).unwrap();
    assert!(source.contains("This file is parsed on every tool call"));
    let runtime = compile_module(key, source, no_imports);
    assert!(runtime.diagnostics.is_empty(), "{:?}", runtime.diagnostics);
    assert!(!runtime.code.contains("This file is parsed on every tool call"), "the runtime's comments stay out");
    let handler = compile_module("src/h.ts", "// why this hook exists\nexport default () => undefined;\n", no_imports);
    assert!(handler.code.contains("// why this hook exists"), "{}", handler.code);
}

#[test]
fn an_import_of_a_name_its_module_does_not_export_is_an_error() {
    let files = [
        (
            "src/main.ts",
            "import { nope, real } from './a.js';\nimport def from './a.js';\nexport { gone } from './a.js';\n\
             import { readFileSynk } from 'node:fs';\nexport default () => [nope, real, def, readFileSynk];\n",
        ),
        ("src/a.ts", "export const real = 1;\n"),
    ];
    let missing = |name: &str| format!("src/a.ts has no export named `{name}`");
    assert_eq!(
        link_errors(&files, "src/main.ts"),
        [
            ("src/main.ts".into(), "AB4838", "nope".into(), missing("nope")),
            ("src/main.ts".into(), "AB4838", "def".into(), missing("default")),
            ("src/main.ts".into(), "AB4838", "gone".into(), missing("gone")),
            (
                "src/main.ts".into(),
                "AB4838",
                "readFileSynk".into(),
                "node:fs has no export named `readFileSynk`".into()
            ),
        ],
    );
}

/// A re-export of a name its source lacks is said where it is re-exported, once (as Node
/// says it); re-exports that lead back to themselves are refused where they are imported.
#[test]
fn a_broken_re_export_is_said_where_it_is() {
    let files = [
        ("src/main.ts", "import { x } from './b.js';\nexport default () => x;\n"),
        ("src/b.ts", "export { readFilSync as x } from 'node:fs';\n"),
    ];
    let expected =
        ("src/b.ts".into(), "AB4838", "readFilSync".into(), "node:fs has no export named `readFilSync`".into());
    assert_eq!(link_errors(&files, "src/main.ts"), [expected]);
    let files = [
        ("src/main.ts", "import { x } from './b.js';\nexport default () => x;\n"),
        ("src/b.ts", "export { x } from './c.js';\n"),
        ("src/c.ts", "export { x } from './b.js';\n"),
    ];
    let errors = link_errors(&files, "src/main.ts");
    let at_main: Vec<_> = errors.iter().filter(|(file, ..)| file == "src/main.ts").collect();
    assert_eq!(at_main.len(), 1, "{errors:#?}");
    assert_eq!(at_main[0].3, "src/b.ts has no export named `x`");
}

/// A builtin's names reach through `export *` as a module's do: present, missing, or given
/// twice by two builtins as different bindings (`constants` of `node:fs` and of `node:os`).
#[test]
fn a_builtins_names_through_export_star_resolve_as_esm_links_them() {
    let files = [
        (
            "src/main.ts",
            "import { join, readFileSync, nope } from './barrel.js';\nexport default () => [join, readFileSync, nope];\n",
        ),
        ("src/barrel.ts", "export * from 'node:path';\nexport * from './fs.js';\n"),
        ("src/fs.ts", "export * from 'node:fs';\n"),
    ];
    let errors = link_errors(&files, "src/main.ts");
    let expected = "src/barrel.ts has no export named `nope`";
    assert_eq!(errors, [("src/main.ts".into(), "AB4838", "nope".into(), expected.into())]);
    let files = [
        (
            "src/main.ts",
            "import * as ns from './barrel.js';\nexport default () => ['constants' in ns, typeof ns.EOL, typeof ns.stat];\n",
        ),
        ("src/barrel.ts", "export * from 'node:fs';\nexport * from 'node:os';\n"),
    ];
    let ambiguous = "src/barrel.ts exports `constants` ambiguously: two `export *` give it different bindings";
    let importing =
        [("src/main.ts", "import { constants } from './barrel.js';\nexport default () => constants;\n"), files[1]];
    assert_eq!(link_errors(&importing, "src/main.ts")[0].3, ambiguous);
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim(),
        r#"{"name":"default","result":[false,"string","function"]}"#,
        "as Node leaves it out"
    );
}

/// A newer Node's builtin loaded with `import()` is kept (a warning says Node 20 lacks it),
/// so a `catch` can take the refusal.
#[test]
fn a_newer_nodes_builtin_is_imported_dynamically_where_it_can_be_caught() {
    let main = "export default async () => {\n  try { return typeof (await import('node:sqlite')); }\n  \
                catch (error) { return (error as { code?: string }).code; }\n};\n";
    let files = [("src/main.ts", main)];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":"ERR_UNKNOWN_BUILTIN_MODULE"}"#);
    let chunk = compile_module("src/main.ts", main, &mut |specifier| {
        crate::bundle::resolve("src/main.ts", specifier, &BTreeMap::new(), &|_| false)
    });
    let said: Vec<_> = chunk.diagnostics.iter().map(|d| (d.severity, d.message.as_str())).collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, crate::bundle::Severity::Warning);
    assert!(said[0].1.starts_with("\"node:sqlite\" is not a builtin of Node v20."), "{said:?}");
}

/// A type imported or re-exported without `type`, as TypeScript allows, links: its uses are
/// types, and the name reads as nothing.
#[test]
fn a_type_re_exported_without_type_links() {
    let files = [
        (
            "src/main.ts",
            "import { Props, v, Alias } from './b.js';\nconst p: Props = { a: 1 };\nconst q: Alias = 2;\nexport default () => [p.a, q, v];\n",
        ),
        ("src/b.ts", "export { Props, v } from './a.js';\nimport { Alias } from './a.js';\nexport { Alias };\n"),
        ("src/a.ts", "export interface Props { a: number }\nexport type Alias = number;\nexport const v = 'v';\n"),
    ];
    assert_eq!(link_errors(&files, "src/main.ts"), []);
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":[1,2,"v"]}"#);
    // A value the module lacks is still said, and so is a type used as a value.
    let files = [("src/main.ts", "import { Prop } from './a.js';\nexport default () => Prop;\n"), files[2]];
    assert_eq!(link_errors(&files, "src/main.ts")[0].3, "src/a.ts has no export named `Prop`");
    let files = [("src/main.ts", "import { Props } from './a.js';\nexport default () => String(Props);\n"), files[1]];
    assert_eq!(
        link_errors(&files, "src/main.ts")[0].3,
        "`Props` is a type in src/a.ts, which this module uses as a value"
    );
}

/// A name a module lacks is said with the one it most likely meant.
#[test]
fn a_missing_name_is_said_with_the_one_meant() {
    let helps = link_helps(&[
        ("src/main.ts", "import { matchDenyed } from './rules.js';\nexport default () => matchDenyed;\n"),
        ("src/rules.ts", "export const matchDenied = 1;\nexport const other = 2;\n"),
    ]);
    let help = "did you mean `matchDenied`? export `matchDenyed` from src/rules.ts, or import a name it exports";
    assert_eq!(helps, [Some(help.to_owned())]);
}

/// A builtin's name misspelt is said as the one meant; one it lacks may be a newer Node's.
#[test]
fn a_builtin_name_it_lacks_is_a_typo_or_a_newer_nodes() {
    let helps = link_helps(&[(
        "src/main.ts",
        "import { readFilSync, notInAnyNode } from 'node:fs';\nexport default () => [readFilSync, notInAnyNode];\n",
    )]);
    let [Some(typo), Some(newer)] = &helps[..] else { panic!("{helps:?}") };
    assert!(typo.starts_with("did you mean `readFileSync`? the build checks"), "{typo}");
    assert!(!typo.contains("namespace"), "{typo}");
    assert!(newer.ends_with("then `ns.notInAnyNode` (`undefined` on an older Node)"), "{newer}");
}

/// `Agent` asked of the JSX runtime's specifier says where it comes from.
#[test]
fn agent_imported_from_the_jsx_runtime_says_where_it_is() {
    let helps = link_helps(&[(
        "src/main.ts",
        "import { Agent } from 'agent-bundle/jsx-runtime';\nexport default () => Agent;\n",
    )]);
    let help = "`Agent` comes from `@agent-bundle/runtime`: `import { Agent } from \"@agent-bundle/runtime\"`";
    assert_eq!(helps, [Some(help.to_owned())]);
}

/// A named import from JSON (which TypeScript allows) says how to read the name instead.
#[test]
fn a_named_import_from_json_says_to_read_the_data() {
    let helps = link_helps(&[
        ("src/main.ts", "import { deny } from './rules.json';\nexport default () => deny;\n"),
        ("src/rules.json", "{\"deny\": []}"),
    ]);
    let help = "a JSON module exports its data as `default` only: import that (`import data from …`) and read \
                `data.deny`";
    assert_eq!(helps, [Some(help.to_owned())]);
}

#[test]
fn names_through_export_star_resolve_as_esm_links_them() {
    let barrel = "export * from './a.js';\nexport * from './b.js';\nexport * from './c.js';\n";
    let files = [
        ("src/main.ts", "import { same, x } from './barrel.js';\nexport default () => [same, x];\n"),
        ("src/barrel.ts", barrel),
        ("src/a.ts", "export const x = 'a';\nexport { same } from './same.js';\n"),
        ("src/b.ts", "export const x = 'b';\nimport { same } from './same.js';\nexport { same };\n"),
        ("src/c.ts", "export default 'c';\n"),
        ("src/same.ts", "export const same = 1;\n"),
    ];
    // `same` reaches the barrel twice, as one binding; `x` as two.
    let errors = link_errors(&files, "src/main.ts");
    let expected = "src/barrel.ts exports `x` ambiguously: two `export *` give it different bindings";
    assert_eq!(errors, [("src/main.ts".into(), "AB4838", "x".into(), expected.into())]);
    // `export *` never re-exports a default.
    let files = [("src/main.ts", "import c from './barrel.js';\nexport default () => c;\n"), ("src/barrel.ts", barrel)]
        .into_iter()
        .chain(files[2..].iter().copied())
        .collect::<Vec<_>>();
    assert_eq!(link_errors(&files, "src/main.ts")[0].3, "src/barrel.ts has no export named `default`");
}

#[test]
fn a_name_two_export_stars_give_different_bindings_is_left_out_of_the_namespace() {
    let files = [
        (
            "src/main.ts",
            "import * as ns from './barrel.js';\n\
             export default () => [Object.keys(ns).join(','), 'x' in ns, ns.same];\n",
        ),
        ("src/barrel.ts", "export * from './a.js';\nexport * from './b.js';\n"),
        ("src/a.ts", "export const x = 'a';\nexport const onlyA = 1;\nexport { same } from './same.js';\n"),
        ("src/b.ts", "export const x = 'b';\nexport { same } from './same.js';\n"),
        ("src/same.ts", "export const same = 1;\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":["onlyA,same",false,1]}"#);
    // Through one more `export *`, a module with a single star, it is left out all the same.
    let mut outer = files.to_vec();
    outer[0].1 =
        "import * as ns from './outer.js';\nexport default () => [Object.keys(ns).join(','), 'x' in ns, ns.same];\n";
    outer.push(("src/outer.ts", "export * from './barrel.js';\n"));
    let run = bundle_and_run(&outer, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":["onlyA,same",false,1]}"#);
}

/// `import {} from` and `export {} from` take nothing in TypeScript, and tsc and esbuild drop
/// them: the module does not run. `import './x'` asks for its effects.
#[test]
fn an_import_or_export_of_no_name_in_typescript_runs_nothing() {
    let effect =
        |name: &str| format!("(globalThis as any).ran = ((globalThis as any).ran ?? '') + '{name};';\nexport {{}};\n");
    let files = [
        (
            "src/main.ts",
            "import {} from './empty.js';\nexport {} from './re-exported.js';\nimport './bare.js';\n\
             export default () => (globalThis as any).ran;\n"
                .to_owned(),
        ),
        ("src/empty.ts", effect("empty")),
        ("src/re-exported.ts", effect("re-exported")),
        ("src/bare.ts", effect("bare")),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(key, text)| (*key, text.as_str())).collect();
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":"bare;"}"#);
}

/// A type re-exported without `type` (which TypeScript allows) has no value: the namespace
/// leaves it out, as esbuild's does, and so does a namespace reaching it through `export *`.
#[test]
fn a_type_re_exported_without_type_is_left_out_of_the_namespace() {
    let files = [
        (
            "src/main.ts",
            "import * as rules from './rules.js';\nimport * as all from './all.js';\n\
             export default () => [Object.values(rules).map((r: any) => r.id).join(','), Object.keys(all).join(','), 'Rule' in rules];\n",
        ),
        ("src/types.ts", "export interface Rule { id: string }\nexport type Id = string;\n"),
        (
            "src/rules.ts",
            "export { Rule } from './types.js';\nimport { Id } from './types.js';\nexport { Id };\n\
             export const noRm = { id: 'no-rm' };\n",
        ),
        ("src/all.ts", "export * from './rules.js';\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"name":"default","result":["no-rm","noRm",false]}"#);
}

#[test]
fn a_namespace_can_be_neither_extended_nor_have_its_bindings_deleted_or_redefined() {
    let files = [
        (
            "src/main.ts",
            "import * as ns from './a.js';\nimport { a } from './a.js';\n\
             const attempts = [\n\
               () => { (ns as any).added = 1; },\n\
               () => { delete (ns as any).a; },\n\
               () => { Object.defineProperty(ns, 'a', { value: 'hijacked' }); },\n\
               () => { (ns as any).a = 2; },\n\
             ];\n\
             export default () => [attempts.map((f) => { try { f(); return 'allowed'; } catch (e) { return (e as Error).name; } }), \
             Object.isExtensible(ns), a];\n",
        ),
        ("src/a.ts", "export const a = 'a';\n"),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    let typed = r#"["TypeError","TypeError","TypeError","TypeError"]"#;
    assert_eq!(run.stdout.trim(), format!(r#"{{"name":"default","result":[{typed},false,"a"]}}"#));
}

#[test]
fn an_import_of_a_file_that_is_no_module_is_refused_where_it_is_imported() {
    let files = BTreeMap::from([
        ("src/main.ts".to_owned(), "import data from './d.txt';\nexport default () => data;\n".to_owned()),
        ("src/d.txt".to_owned(), "a\n".to_owned()),
    ]);
    let (chunks, errors) = compile_graph(&files, "src/main.ts");
    let found: Vec<_> = errors
        .iter()
        .map(|(key, d)| (key.as_str(), d.kind, &files[key][d.span.start as usize..d.span.end as usize]))
        .collect();
    assert_eq!(found, [("src/main.ts", BundleErrorKind::UnresolvedImport, "'./d.txt'")]);
    assert!(!chunks.contains_key("src/d.txt"), "the data file is not compiled as a module");
}

/// A JSON module is `JSON.parse` of its text, as Node makes one: its default export, with or
/// without `with { type: "json" }`, statically, re-exported or through `import()`; one
/// module however often it is imported.
#[test]
fn a_json_module_is_its_parsed_data() {
    let main = r#"
import rules from "./rules.json";
import same from "./rules.json" with { type: "json" };
import { rules as again } from "./reexport";
import edges from "./edges.json";
export default async () => {
  const loaded = await import("./rules.json", { with: { type: "json" } });
  console.log(JSON.stringify({
    rules,
    proto: Object.getPrototypeOf(rules) === Object.prototype && Object.hasOwn(rules, "__proto__"),
    one: rules === same && rules === again && rules === loaded.default,
    names: Object.keys(loaded),
  }));
  console.log(JSON.stringify([edges[0] === Infinity, edges[1].length, edges[1].charCodeAt(0), JSON.stringify(edges[2]).length]));
};
"#;
    // What `JSON.parse` takes that a tree of serde_json's would not: a byte order mark (Node's
    // JSON modules skip it), a number past f64, a lone surrogate escape, 300 levels.
    let edges = format!("\u{feff}[1e400, \"\\ud800\", {}{}]", "[".repeat(300), "]".repeat(300));
    let data = "{\n  \"deny\": [\"rm -rf\", \"a\u{2028}b\"],\n  \"__proto__\": {\"x\": 1},\n  \"n\": 1e3\n}\n";
    let files = [
        ("src/main.ts", main),
        ("src/rules.json", data),
        ("src/reexport.ts", "export { default as rules } from './rules.json';\n"),
        ("src/edges.json", &edges),
    ];
    let run = bundle_and_run(&files, "src/main.ts");
    assert!(run.success, "{}", run.stderr);
    let expected = r#"{"rules":{"deny":["rm -rf","a b"],"__proto__":{"x":1},"n":1000},"proto":true,"one":true,"names":["default"]}"#;
    let mut lines = run.stdout.lines();
    assert_eq!(lines.next(), Some(expected.replace("a b", "a\u{2028}b").as_str()));
    assert_eq!(lines.next(), Some("[true,1,55296,600]"));
}

/// Invalid JSON is a syntax error where the text goes wrong; a JSON attribute on a module
/// that is not JSON, or any other attribute, is refused where it is written.
#[test]
fn invalid_json_and_attributes_are_located() {
    let files = BTreeMap::from([
        (
            "src/main.ts".to_owned(),
            "import a from './a.json';\nimport b from './b.ts' with { type: 'json' };\n\
             import c from './c.json' with { type: 'css' };\nexport default () => [a, b, c];\n"
                .to_owned(),
        ),
        ("src/a.json".to_owned(), "\u{feff}{\r\n  \"é\": 1,\r\n  \"ü\": 2,\r\n}\r\n".to_owned()),
        ("src/b.ts".to_owned(), "export default 1;\n".to_owned()),
        ("src/c.json".to_owned(), "[]".to_owned()),
    ]);
    let (_, errors) = compile_graph(&files, "src/main.ts");
    let found: Vec<_> = errors
        .iter()
        .map(|(key, d)| (key.as_str(), &files[key][d.span.start as usize..], d.message.as_str()))
        .map(|(key, from, message)| (key, from.lines().next().unwrap_or_default(), message))
        .collect();
    assert_eq!(
        found,
        [
            (
                "src/main.ts",
                "'./b.ts' with { type: 'json' };",
                "`with { type: \"json\" }` imports \"./b.ts\", which is not a .json file"
            ),
            (
                "src/main.ts",
                "{ type: 'css' };",
                "import attributes other than `with { type: \"json\" }` are not supported"
            ),
            ("src/a.json", "}", "invalid JSON: trailing comma"),
        ]
    );
}
