//! The Rust nesting bound against the stack it sizes: for each construct that recurses deepest in
//! syn, the front-end's walk or the syntax tree's drop, the deepest input the bound lets through
//! is modelled on a thread with a worker's stack, and one level more is refused with one line.
//! A construct that needs more stack per level than `STACK_PER_RUST_LEVEL` aborts this test.
//!
//! Stack use is measured for release builds (`tests/all.sh` tests them); a debug build's frames
//! are several times larger, so there the test is ignored.

use std::path::Path;

use gil_lint::frontend::{self, Language};
use gil_lint::knowledge::Knowledge;

const BINDING: &str = "#[pyfunction]\nfn f() {}\n";

/// A file with a construct nested to the given depth.
type Deep = Box<dyn Fn(usize) -> String>;

/// Deep constructs, each as a function of its depth.
fn constructs() -> Vec<(&'static str, Deep)> {
    let expr = |open: &'static str, close: &'static str, leaf: &'static str| {
        move |n: usize| {
            format!(
                "{BINDING}fn g() {{ let x = {}{leaf}{}; }}\n",
                open.repeat(n),
                close.repeat(n)
            )
        }
    };
    vec![
        ("unary", Box::new(expr("-", "", "1"))),
        ("references", Box::new(expr("& ", "", "x"))),
        ("parens", Box::new(expr("(", ")", "1"))),
        ("blocks", Box::new(expr("{", "}", "1"))),
        ("calls", Box::new(expr("h(", ")", "1"))),
        ("assignments", Box::new(expr("a = ", "", "1"))),
        ("sums", Box::new(expr("", " + 1", "1"))),
        ("method chain", Box::new(expr("", ".f()", "x"))),
        ("closures", Box::new(expr("|| ", "", "1"))),
        ("returns", Box::new(expr("return ", "", "1"))),
        ("ranges", Box::new(expr(".. ", "", "1"))),
        ("casts", Box::new(expr("", " as u8", "x"))),
        ("loops", Box::new(expr("loop { break ", "}", "1"))),
        (
            "reference types",
            Box::new(|n| format!("{BINDING}fn g(x: {}u8) {{}}\n", "&".repeat(n))),
        ),
        (
            "generic types",
            Box::new(|n| {
                format!(
                    "{BINDING}fn g(x: {}u8{}) {{}}\n",
                    "Vec<".repeat(n),
                    ">".repeat(n)
                )
            }),
        ),
        (
            "tuple types",
            Box::new(|n| {
                format!(
                    "{BINDING}fn g(x: {}u8{}) {{}}\n",
                    "(".repeat(n),
                    ",)".repeat(n)
                )
            }),
        ),
        (
            "reference patterns",
            Box::new(|n| format!("{BINDING}fn g() {{ let {}x = 1; }}\n", "&".repeat(n))),
        ),
        (
            "modules",
            Box::new(|n| format!("{BINDING}{}{}\n", "mod m { ".repeat(n), "}".repeat(n))),
        ),
    ]
}

fn model(text: String) -> Result<(), String> {
    let knowledge = Knowledge::builtin();
    std::thread::Builder::new()
        .stack_size(gil_lint::WORKER_STACK)
        .spawn(move || {
            frontend::extract(Language::Rust, Path::new("src/lib.rs"), &text, &knowledge).map(drop)
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
#[cfg_attr(debug_assertions, ignore = "stack use is measured for release builds")]
fn the_deepest_input_let_through_fits_a_workers_stack() {
    for (name, make) in constructs() {
        let accepted =
            |n: usize| gil_lint::frontend::rust_scan::rust_depth_within_bounds(&make(n)).is_ok();
        // The largest accepted depth: the bound grows with the depth, so bisect.
        let (mut low, mut high) = (1, gil_lint::frontend::rust_scan::MAX_RUST_DEPTH + 1);
        assert!(accepted(low) && !accepted(high), "{name}");
        while high - low > 1 {
            let middle = (low + high) / 2;
            if accepted(middle) {
                low = middle;
            } else {
                high = middle;
            }
        }
        assert_eq!(model(make(low)), Ok(()), "{name} at depth {low}");
        let refused = model(make(high)).unwrap_err();
        assert!(
            refused.starts_with("nested more than") && !refused.contains('\n'),
            "{name}: {refused}"
        );
    }
}

/// Files of any length stay within the bound: the count starts again after each item, statement
/// and match arm, and after `,` and `;`.
#[test]
fn long_files_of_shallow_code_are_modelled() {
    let n = 20_000;
    let mut items = String::from(BINDING);
    let mut getters = String::from("#[pyclass]\nstruct S;\n#[pymethods]\nimpl S {\n");
    let mut statements = String::from("fn g(x: u8) {\n");
    let mut arms = String::from("fn h(x: u32) -> u32 {\n    match x {\n");
    for i in 0..n {
        items.push_str(&format!(
            "fn g{i}() {{}}\nimpl T{i} {{ fn f(&self) {{}} }}\n"
        ));
        getters.push_str(&format!(
            "    #[getter]\n    fn a{i}(&self) -> u8 {{ 1 }}\n"
        ));
        statements.push_str(&format!(
            "    if x == {i} {{ call(x) }}\n    for y in 0..x {{}}\n"
        ));
        arms.push_str(&format!("        {i} => {{ x }}\n"));
    }
    getters.push_str("}\n");
    statements.push_str("}\n");
    arms.push_str("        _ => 0,\n    }\n}\n");
    for (name, text) in [
        ("items", items),
        ("getters", getters),
        ("statements", statements),
        ("arms", arms),
    ] {
        assert_eq!(
            gil_lint::frontend::rust_scan::rust_depth_within_bounds(&text),
            Ok(()),
            "{name}"
        );
    }
}
