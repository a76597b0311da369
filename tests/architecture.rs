//! The architecture invariants of ARCHITECTURE.md, checked on the source: which module may name
//! which, and that call resolution lives in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/` as its tokens, without `#[cfg(test)]` items (tests may reach
/// across the layers they test) and without comments (doc links are not dependencies).
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let is_test = |attrs: &[syn::Attribute]| {
        attrs
            .iter()
            .any(|a| a.path().is_ident("cfg") && quote::quote!(#a).to_string().contains("test"))
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = fs::read_to_string(&path).unwrap();
            let mut file = syn::parse_file(&text).unwrap();
            let relative = path.strip_prefix(&root).unwrap().to_path_buf();
            // A module compiled only for tests.
            if relative == Path::new("test_support.rs") || is_test(&file.attrs) {
                return None;
            }
            file.attrs.clear();
            file.items.retain(|item| {
                let attrs = match item {
                    syn::Item::Mod(m) => &m.attrs,
                    syn::Item::Fn(f) => &f.attrs,
                    syn::Item::Use(u) => &u.attrs,
                    syn::Item::Impl(i) => &i.attrs,
                    _ => return true,
                };
                !is_test(attrs)
            });
            // Tokens are spaced (`crate :: model`); doc comments are string literals.
            let code = without_strings(&quote::quote!(#file).to_string()).replace(" :: ", "::");
            Some((relative, code))
        })
        .collect()
}

/// `code` with the contents of its string literals removed.
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => {
                        out.push('"');
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The top-level module a file belongs to (`frontend` for `frontend/cpp/scan.rs`); `None` for
/// the crate root and the binary.
fn module_of(path: &Path) -> Option<String> {
    let first = path.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The top-level modules that `code` names through `crate::`.
fn uses(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    code.match_indices("crate::")
        .filter_map(|(at, _)| {
            let rest = &code[at + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            modules.contains(name).then(|| name.to_string())
        })
        .collect()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let sources = sources();
    let modules: BTreeSet<String> = sources.iter().filter_map(|(p, _)| module_of(p)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, code) in &sources {
        if let Some(module) = module_of(path) {
            let mut used = uses(code, &modules);
            used.remove(&module);
            graph.entry(module).or_default().extend(used);
        }
    }
    graph
}

#[test]
fn the_model_imports_nothing_from_the_crate() {
    let graph = graph();
    assert_eq!(graph["model"], BTreeSet::new(), "model.rs must stand alone");
}

#[test]
fn the_layers_depend_only_downwards() {
    let graph = graph();
    // What each module may name, as ARCHITECTURE.md's table says.
    let allowed: &[(&str, &[&str])] = &[
        ("model", &[]),
        ("input", &[]),
        ("repo", &["input"]),
        ("knowledge", &["input", "model"]),
        ("frontend", &["knowledge", "model"]),
        ("discover", &["frontend", "input", "model"]),
        ("callgraph", &["model"]),
        (
            "prefilter",
            &["callgraph", "frontend", "knowledge", "model"],
        ),
        ("cache", &["frontend", "input", "knowledge", "model"]),
        ("diagnostic", &["model"]),
        (
            "analysis",
            &["callgraph", "diagnostic", "frontend", "knowledge", "model"],
        ),
        ("lints", &["analysis", "callgraph", "diagnostic", "model"]),
        ("suppress", &["diagnostic", "lints", "model"]),
        ("baseline", &["diagnostic", "input", "model", "repo"]),
        (
            "config",
            &["diagnostic", "discover", "input", "knowledge", "model"],
        ),
        (
            "render",
            &["baseline", "diagnostic", "input", "lints", "model", "repo"],
        ),
        (
            "check",
            &[
                "baseline",
                "cache",
                "config",
                "diagnostic",
                "discover",
                "frontend",
                "input",
                "knowledge",
                "lints",
                "model",
                "prefilter",
                "repo",
                "suppress",
            ],
        ),
    ];
    let allowed: BTreeMap<&str, BTreeSet<&str>> = allowed
        .iter()
        .map(|(m, deps)| (*m, deps.iter().copied().collect()))
        .collect();
    for (module, deps) in &graph {
        let Some(may) = allowed.get(module.as_str()) else {
            panic!("module `{module}` is not in ARCHITECTURE.md's table (and this test's)");
        };
        for dep in deps {
            assert!(
                may.contains(dep.as_str()),
                "`{module}` names `{dep}`, which ARCHITECTURE.md does not let it depend on"
            );
        }
    }
}

#[test]
fn no_import_loop() {
    let graph = graph();
    // Depth-first search for a back edge.
    fn visit<'g>(
        node: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(at) = path.iter().position(|n| *n == node) {
            panic!("import loop: {} -> {node}", path[at..].join(" -> "));
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(node);
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_front_ends_never_import_the_pre_filter() {
    for (path, code) in sources() {
        if path.starts_with("frontend") {
            assert!(
                !code.contains("prefilter"),
                "{} names the pre-filter",
                path.display()
            );
        }
    }
}

#[test]
fn only_the_resolver_matches_on_receiver() {
    // The model defines `Receiver`, the front-ends build it; only the resolver decides by it.
    for (path, code) in sources() {
        let may = path == Path::new("model.rs")
            || path.starts_with("frontend")
            || path == Path::new("callgraph/resolve.rs");
        assert!(
            may || !code.contains("Receiver"),
            "{} names `Receiver`: call resolution belongs in callgraph/resolve.rs",
            path.display()
        );
    }
}

#[test]
fn the_checker_sees_real_sources() {
    // The tests above would pass vacuously on an empty tree.
    let graph = graph();
    assert!(graph.len() >= 10, "{graph:?}");
    assert!(graph["prefilter"].contains("callgraph"), "{graph:?}");
}
