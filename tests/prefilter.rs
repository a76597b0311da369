//! The pre-filter changes nothing but speed: with and without it, and with one or many threads,
//! the findings (and both renderings) and the functions reached from the bindings are identical, on every fixture and on a large generated
//! tree that mixes bindings, cross-file calls, name collisions, inheritance, wrappers and files
//! that cannot matter.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gil_lint::check;
use gil_lint::config::Config;
use gil_lint::knowledge::Knowledge;

/// Every rendering of one whole check (suppressions reported when unused), and its errors.
fn run(roots: &[PathBuf], prefilter: bool, threads: usize) -> String {
    let pool = gil_lint::thread_pool(Some(threads)).unwrap();
    let root = gil_lint::repo::RepoRoot::at(Path::new(".")).unwrap();
    let report = pool
        .install(|| {
            check::run(check::Options {
                config: Config {
                    warn_unused_suppressions: Some(true),
                    ..Config::default()
                },
                prefilter,
                ..check::Options::new(roots.to_vec(), &root)
            })
        })
        .unwrap();
    let analysis = &report.analysis;
    let human = gil_lint::render::human::HumanRenderer::new(&analysis.program)
        .render_plain(&analysis.findings);
    let json =
        gil_lint::render::json::render(&analysis.program, &analysis.findings, &analysis.errors);
    let sarif = gil_lint::render::sarif::render(
        &analysis.program,
        &analysis.findings,
        gil_lint::lints::LINTS,
        &analysis.errors,
        &gil_lint::render::sarif::Options::new(&root),
    );
    format!(
        "{} findings, {} suppressed\n{human}\n{json}\n{sarif}\nreached:\n{}",
        analysis.findings.len(),
        report.suppressed,
        reached(&analysis.program).join("\n")
    )
}

/// The functions the call graph reaches from the bindings, by qualified name and file: the
/// pre-filter must keep every one of them, not only those that findings go through.
fn reached(program: &gil_lint::model::Program) -> Vec<String> {
    let graph = gil_lint::callgraph::CallGraph::build(program);
    let mut seen = vec![false; program.functions.len()];
    let mut stack: Vec<usize> = (0..program.bindings.len())
        .flat_map(|b| graph.binding_targets(b).to_vec())
        .collect();
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut seen[f], true) {
            continue;
        }
        for call in 0..program.functions[f].calls.len() {
            stack.extend_from_slice(graph.callees(f, call));
        }
    }
    let mut names: Vec<String> = (0..program.functions.len())
        .filter(|&f| seen[f])
        .map(|f| {
            let function = &program.functions[f];
            let file = program.file(function.span.file);
            format!("{} {}", function.qualname, file.path.display())
        })
        .collect();
    names.sort();
    names
}

/// Every configuration gives the output of the plain one (no pre-filter, one thread).
fn assert_all_identical(name: &str, roots: &[PathBuf]) -> String {
    let reference = run(roots, false, 1);
    for (prefilter, threads) in [(true, 1), (true, 4), (false, 4), (true, 2)] {
        let other = run(roots, prefilter, threads);
        assert!(
            other == reference,
            "{name}: output differs with prefilter={prefilter}, threads={threads}\n\
             --- without pre-filter, 1 thread:\n{reference}\n--- this run:\n{other}"
        );
    }
    reference
}

#[test]
fn fixtures_give_identical_output_with_and_without_prefilter_and_threads() {
    let mut roots: Vec<Vec<PathBuf>> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| vec![e.unwrap().path()])
        .filter(|p| p[0].is_dir())
        .collect();
    for variant in std::fs::read_dir("kernels/pybind11/variants").unwrap() {
        let variant = variant.unwrap().path();
        if variant.extension().is_some_and(|e| e == "cpp") {
            roots.push(vec![PathBuf::from("kernels/pybind11/csrc"), variant]);
        }
    }
    roots.push(vec![PathBuf::from("fixtures")]);
    roots.push(vec![PathBuf::from("tests/config-fixtures")]);
    roots.push(vec![PathBuf::from("kernels")]);
    roots.sort();
    for roots in roots {
        assert_all_identical(&format!("{roots:?}"), &roots);
    }
}

/// A small deterministic generator (an LCG), so that the tree is the same in every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const MODULES: usize = 24;
const HELPERS: usize = 30;
const NOISE: usize = 160;

/// One statement: a call (unqualified, qualified, on a typed or an untyped receiver, through a
/// wrapper), a Python use, a GIL switch or a lock.
fn statement(rng: &mut Rng, depth: usize) -> String {
    let k = rng.below(HELPERS);
    match rng.below(if depth > 0 { 17 } else { 19 }) {
        0 | 1 => format!("helper_{k}(x);"),
        2 => format!("util::helper_{k}(x);"),
        3 => format!("shared::common_{}(x);", k % 5),
        4 => format!("{{ Worker_{} w; w.compute(x); }}", k % 6),
        5 => format!("{{ Base_{} *b = get_base_{}(); b->run(x); }}", k % 3, k % 3),
        6 => format!("{{ auto g = make_gadget_{}(); g.tick(x); }}", k % 4),
        7 => "{ auto o = make_other(); o.step(x); }".to_string(),
        8 => "py::print(\"hello\");".to_string(),
        9 => "py::module_::import(\"os\");".to_string(),
        10 => "{ py::gil_scoped_acquire gil; py::print(x); }".to_string(),
        11 => format!(
            "{{ std::lock_guard<std::mutex> lock(mutex_{}); helper_{k}(x); }}",
            k % 4
        ),
        12 => format!("static py::object cached_{k} = py::module_::import(\"sys\");"),
        13 => format!("std::call_once(flag_{}, [&] {{ helper_{k}(x); }});", k % 3),
        14 => format!("overloaded_{}(x{});", k % 4, ", x".repeat(rng.below(3))),
        15 => format!("shape_{}(x) + x;", k % 3),
        16 => format!("Gadget_{}::make().tick(x);", k % 4),
        17 => format!(
            "{{ py::gil_scoped_release nogil; {} }}",
            statement(rng, depth + 1)
        ),
        _ => format!("RELEASE_GIL({{ {} }});", statement(rng, depth + 1)),
    }
}

fn body(rng: &mut Rng, out: &mut String) {
    for _ in 0..1 + rng.below(4) {
        let _ = writeln!(out, "  {}", statement(rng, 0));
    }
}

/// A Rust statement for the PyO3 part: calls by path, through `use`, on `self`, on typed
/// receivers (structs and traits), Python uses, attach/detach and locks.
fn rust_statement(rng: &mut Rng, depth: usize) -> String {
    let k = rng.below(8);
    match rng.below(if depth > 0 { 12 } else { 16 }) {
        0 => format!("helpers::work_{k}(x);"),
        1 => format!("crate::util::step_{k}(x);"),
        2 => format!("local_{}(x);", k % 4),
        3 => format!("{{ let w = Widget_{}::make(); poke_all(&w, x); }}", k % 3),
        4 => "unsafe { pyo3::ffi::PyErr_Occurred(); }".to_string(),
        5 => "Python::attach(|py| { let _ = py.import(\"os\"); });".to_string(),
        6 => format!(
            "{{ let _g = LOCK_{}.lock().unwrap(); helpers::work_{k}(x); }}",
            k % 2
        ),
        7 => format!("Shape_{}::area(x);", k % 3),
        8 => format!("crate::util::Tool::new().apply_{}(x);", k % 3),
        9 => format!("run_{}(x);", k % 5),
        // Found only by its unique name.
        13 if depth == 0 => format!("only_here_{}(x);", k % 2),
        // Functions named like C++ keywords, in files that only these calls lead to.
        14 if depth == 0 && k.is_multiple_of(2) => {
            format!("crate::kinds::k{0}::Kind{0}::new(x);", k % 3)
        }
        14 if depth == 0 => format!("crate::kinds::k{0}::Kind{0}::default();", k % 3),
        10 | 11 => format!("helpers::work_{}(x);", rng.below(8)),
        12 => format!(
            "Python::attach(|py| py.detach(|| {{ {} }}));",
            rust_statement(rng, depth + 1)
        ),
        _ => format!(
            "Python::attach(|py| py.detach(|| {{ {} }}));",
            rust_statement(rng, depth + 1)
        ),
    }
}

fn rust_body(rng: &mut Rng, out: &mut String) {
    for _ in 0..1 + rng.below(3) {
        let _ = writeln!(out, "    {}", rust_statement(rng, 0));
    }
}

/// A small PyO3 crate with look-alikes in another crate.
fn generate_rust(root: &Path, rng: &mut Rng) {
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let mut lib = String::from(
        "use pyo3::prelude::*;\nuse std::sync::Mutex;\nmod helpers;\nmod util;\nmod shapes;\nuse crate::locals::*;\n\
         mod extra {\n    pub fn local_0(x: u32) {}\n    pub fn local_1(x: u32) {}\n    pub fn local_2(x: u32) {}\n    pub fn local_3(x: u32) {}\n}\n\
         pub static LOCK_0: Mutex<u32> = Mutex::new(0);\npub static LOCK_1: Mutex<u32> = Mutex::new(0);\n",
    );
    for f in 0..10 {
        let _ = writeln!(
            lib,
            "#[pyfunction]\nfn api_{f}(py: Python<'_>, x: u32) -> u32 {{"
        );
        if rng.chance(50) {
            let _ = writeln!(lib, "    py.detach(|| {{");
            rust_body(rng, &mut lib);
            let _ = writeln!(lib, "    }});");
        } else {
            rust_body(rng, &mut lib);
        }
        lib.push_str("    x\n}\n");
    }
    // Detached calls into code each found one way only, with a definite finding there.
    lib.push_str(
        "#[pyfunction]\nfn reach_all(py: Python<'_>) {\n    py.detach(|| {\n        local_0(1); local_1(1); local_2(1); local_3(1);\n        only_here_0(1); only_here_1(1);\n        let w = Widget_1::make();\n        poke_all(&w, 1);\n    });\n}\n",
    );
    lib.push_str("#[pyclass]\nstruct Counter { n: u32 }\n#[pymethods]\nimpl Counter {\n    fn bump(&mut self, py: Python<'_>, x: u32) -> u32 {\n        py.detach(|| self.inner(x))\n    }\n}\nimpl Counter {\n    fn inner(&self, x: u32) -> u32 {\n");
    rust_body(rng, &mut lib);
    lib.push_str("        x\n    }\n}\n");
    write("rs/app/src/lib.rs", &lib);
    let mut helpers = String::from("use pyo3::prelude::*;\nuse crate::*;\n");
    for k in 0..8 {
        let _ = writeln!(helpers, "pub fn work_{k}(x: u32) {{");
        rust_body(rng, &mut helpers);
        helpers.push_str("}\n");
    }
    write("rs/app/src/helpers.rs", &helpers);
    let mut util = String::from(
        "use pyo3::prelude::*;\nuse crate::*;\npub struct Tool;\nimpl Tool {\n    pub fn new() -> Self { Tool }\n",
    );
    for a in 0..3 {
        let _ = writeln!(
            util,
            "    pub fn apply_{a}(&self, x: u32) {{ self.finish(x); }}"
        );
    }
    util.push_str("    fn finish(&self, x: u32) {\n");
    rust_body(rng, &mut util);
    util.push_str("    }\n}\n");
    for k in 0..8 {
        let _ = writeln!(util, "pub fn step_{k}(x: u32) {{");
        rust_body(rng, &mut util);
        util.push_str("}\n");
    }
    write("rs/app/src/util.rs", &util);
    // Found through `use crate::locals::*` only: seeds already define the same names elsewhere.
    let mut locals = String::from("use pyo3::prelude::*;\nuse crate::*;\n");
    for k in 0..4 {
        // No seed here (no attach or detach): only the lookup through the `use` finds this file.
        let _ = writeln!(
            locals,
            "pub fn local_{k}(x: u32) {{\n    unsafe {{ pyo3::ffi::PyErr_Occurred(); }}\n    helpers::work_{k}(x);\n}}"
        );
    }
    write("rs/app/src/locals.rs", &locals);
    write(
        "rs/app/src/more.rs",
        "use pyo3::prelude::*;\n#[pyfunction]\nfn more(x: u32) -> u32 { x }\npub fn local_0(x: u32) {}\npub fn local_1(x: u32) {}\npub fn local_2(x: u32) {}\npub fn local_3(x: u32) {}\n",
    );
    for k in 0..3 {
        let mut text =
            format!("pub struct Kind{k};\nimpl Kind{k} {{\n    pub fn new(x: u32) -> Self {{\n");
        if k != 1 {
            text.push_str("        unsafe { pyo3::ffi::PyErr_Occurred(); }\n");
        }
        let _ = write!(
            text,
            "        Kind{k}\n    }}\n}}\nimpl Default for Kind{k} {{\n    fn default() -> Self {{\n        let x = 0;\n"
        );
        rust_body(rng, &mut text);
        let _ = writeln!(text, "        Kind{k}\n    }}\n}}");
        write(&format!("rs/app/src/kinds/k{k}.rs"), &text);
    }
    for k in 0..2 {
        let text = format!(
            "use pyo3::prelude::*;\npub fn only_here_{k}(x: u32) {{\n    unsafe {{ pyo3::ffi::PyErr_Occurred(); }}\n    crate::util::step_{k}(x);\n}}\n"
        );
        write(&format!("rs/app/src/deep/d{k}.rs"), &text);
    }
    // A trait with implementations in several files, and typed calls through it.
    let mut shapes = String::from(
        "use pyo3::prelude::*;\nuse crate::*;\npub trait Poke {\n    fn poke(&self, x: u32) {\n        self.extra(x);\n",
    );
    rust_body(rng, &mut shapes);
    shapes.push_str("    }\n}\npub fn poke_all(p: &dyn Poke, x: u32) { p.poke(x); }\n");
    for w in 0..3 {
        let _ = writeln!(
            shapes,
            "pub struct Shape_{w};\nimpl Shape_{w} {{\n    pub fn area(x: u32) {{"
        );
        rust_body(rng, &mut shapes);
        shapes.push_str("    }\n}\n");
    }
    write("rs/app/src/shapes.rs", &shapes);
    for w in 0..3 {
        let mut text = format!(
            "use pyo3::prelude::*;\nuse crate::shapes::Poke;\npub struct Widget_{w};\nimpl Widget_{w} {{ pub fn make() -> Self {{ Widget_{w} }} }}\nimpl Poke for Widget_{w} {{\n    fn poke(&self, x: u32) {{\n"
        );
        rust_body(rng, &mut text);
        text.push_str("    }\n}\n");
        write(&format!("rs/app/src/widgets/w{w}.rs"), &text);
        // A method only `self.extra()` in the trait reaches, as a method of unknown receiver.
        let text = format!(
            "use pyo3::prelude::*;\nimpl crate::Widget_{w} {{\n    fn extra(&self, x: u32) {{\n        unsafe {{ pyo3::ffi::PyErr_Occurred(); }}\n    }}\n}}\n"
        );
        write(&format!("rs/app/src/zz_extras/e{w}.rs"), &text);
    }
    for r in 0..5 {
        let mut text = format!("use pyo3::prelude::*;\npub fn run_{r}(x: u32) {{\n");
        rust_body(rng, &mut text);
        text.push_str("}\n");
        write(&format!("rs/app/src/runs/r{r}.rs"), &text);
    }
    // Another crate with the same names in other modules, and unrelated code.
    for n in 0..40 {
        let mut text = format!("pub fn unrelated_{n}(x: u32) -> u32 {{ x + {n} }}\n");
        if rng.chance(30) {
            let _ = writeln!(
                text,
                "pub fn work_{}(x: u32) {{ unsafe {{ pyo3::ffi::PyErr_Occurred(); }} }}",
                rng.below(8)
            );
        }
        if rng.chance(20) {
            let _ = writeln!(
                text,
                "pub struct Other_{n};\nimpl Other_{n} {{ pub fn poke(&self, x: u32) {{ unsafe {{ pyo3::ffi::PyErr_Occurred(); }} }} pub fn finish(&self, x: u32) {{}} }}"
            );
        }
        if rng.chance(20) {
            let _ = writeln!(
                text,
                "pub struct Deep_{n};\nimpl crate::Poke for Deep_{n} {{ fn poke(&self, x: u32) {{}} }}"
            );
        }
        if rng.chance(15) {
            let _ = writeln!(text, "pub fn local_{}(x: u32) {{}}", rng.below(4));
        }
        write(&format!("rs/other/src/m{n}.rs"), &text);
    }
}

fn generate(root: &Path) {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "include/common.h",
        "#pragma once\n#include <mutex>\n#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n\
         #define RELEASE_GIL(code) do { py::gil_scoped_release r; code } while (0)\n\
         extern std::mutex mutex_0, mutex_1, mutex_2, mutex_3;\n\
         extern std::once_flag flag_0, flag_1, flag_2;\n",
    );
    // A class hierarchy: bases and workers declared in headers that define no function, methods
    // defined out of line elsewhere, and subclasses among the noise.
    for c in 0..3 {
        let mut text = format!(
            "#pragma once\n#include \"common.h\"\nstruct Base_{c} {{\n  virtual void run(int x) {{\n"
        );
        body(&mut rng, &mut text);
        let _ = write!(text, "  }}\n}};\nBase_{c} *get_base_{c}();\n");
        write(&format!("include/base_{c}.h"), &text);
    }
    for w in 0..6 {
        write(
            &format!("include/worker_{w}.h"),
            &format!(
                "#pragma once\n#include \"base_{}.h\"\nstruct Worker_{w} : public Base_{} {{\n  void run(int x) override;\n  void compute(int x);\n}};\n",
                w % 3,
                w % 3
            ),
        );
        let mut text = format!("#include \"worker_{w}.h\"\nvoid Worker_{w}::run(int x) {{\n");
        body(&mut rng, &mut text);
        let _ = writeln!(text, "}}\nvoid Worker_{w}::compute(int x) {{");
        body(&mut rng, &mut text);
        text.push_str("}\n");
        write(&format!("src/workers/worker_{w}.cpp"), &text);
    }
    // Classes between the bases and some subclasses, defined nowhere else: only the inheritance
    // chain of a typed call needs them. `Mid_0` is defined twice, with different bases: the later
    // file (in path order) wins.
    for k in 0..3 {
        write(
            &format!("include/mid_{k}.h"),
            &format!("#pragma once\nstruct Mid_{k} : public Base_{k} {{}};\n"),
        );
    }
    write(
        "include/zz_override.h",
        "#pragma once\nstruct Mid_0 : public Base_1 {};\n",
    );
    // Few methods named `tick` (calls on an unknown receiver reach them all), out of line, their
    // classes in headers of their own.
    for g in 0..4 {
        write(
            &format!("include/gadget_{g}.h"),
            &format!(
                "#pragma once\nstruct Gadget_{g} {{\n  static Gadget_{g} make();\n  void tick(int x);\n}};\nGadget_{g} make_gadget_{g}();\n"
            ),
        );
        let mut text = format!(
            "#include \"gadget_{g}.h\"\n#include \"common.h\"\nvoid Gadget_{g}::tick(int x) {{\n"
        );
        body(&mut rng, &mut text);
        text.push_str("}\n");
        write(&format!("src/gadgets/gadget_{g}.cpp"), &text);
    }
    // Helpers: each defined in `util` and, for some, also unqualified (name collisions).
    for h in 0..HELPERS {
        let mut text = String::from("#include \"common.h\"\n");
        let _ = writeln!(text, "namespace util {{\nvoid helper_{h}(int x) {{");
        body(&mut rng, &mut text);
        text.push_str("}\n}  // namespace util\n");
        if rng.chance(60) {
            let _ = writeln!(text, "void helper_{h}(int x) {{");
            body(&mut rng, &mut text);
            text.push_str("}\n");
        }
        write(&format!("src/helpers/helper_{h}.cpp"), &text);
    }
    for c in 0..5 {
        let mut text =
            format!("#include \"common.h\"\nnamespace shared {{\nvoid common_{c}(int x) {{\n");
        body(&mut rng, &mut text);
        text.push_str("}\n}\n");
        // The same name in another namespace: only qualification tells them apart.
        let _ = write!(
            text,
            "namespace other {{\nvoid common_{c}(int x) {{ py::print(x); }}\n}}\n"
        );
        write(&format!("src/shared/common_{c}.cpp"), &text);
    }
    for o in 0..4 {
        let text = format!(
            "#include \"common.h\"\nvoid overloaded_{o}(int x) {{ py::print(x); }}\n\
             void overloaded_{o}(int x, int y) {{ helper_{o}(x + y); }}\n\
             void overloaded_{o}(int x, int y, int z) {{ py::gil_scoped_release r; helper_{}(z); }}\n",
            o + 1
        );
        write(&format!("src/overloads/overloaded_{o}.cpp"), &text);
    }
    for s in 0..3 {
        // Templates and operators.
        let text = format!(
            "#include \"common.h\"\ntemplate <typename T> T shape_{s}(T x) {{ py::print(x); return x; }}\n\
             struct Vec_{s} {{ int operator()(int x) const {{ return x; }} bool operator==(const Vec_{s} &) const {{ return true; }} }};\n"
        );
        write(&format!("src/templates/shape_{s}.hpp"), &text);
    }
    // Modules: bindings entered with and without the GIL.
    for m in 0..MODULES {
        let mut text = String::from("#include \"common.h\"\n");
        let mut defs = String::new();
        for f in 0..1 + rng.below(4) {
            let _ = writeln!(text, "int api_{m}_{f}(int x) {{");
            body(&mut rng, &mut text);
            text.push_str("  return x;\n}\n");
            let guard = if rng.chance(50) {
                ", py::call_guard<py::gil_scoped_release>()"
            } else {
                ""
            };
            let _ = writeln!(defs, "  m.def(\"api_{f}\", &api_{m}_{f}{guard});");
        }
        let _ = write!(text, "PYBIND11_MODULE(mod_{m}, m) {{\n{defs}}}\n");
        if m % 3 == 0 {
            // Suppresses this file's findings of one rule, or nothing (then it is reported).
            text.push_str("// gil-lint: allow-file(missing-gil)\n");
        }
        write(&format!("src/modules/mod_{m}.cpp"), &text);
    }
    // Files that cannot matter, and files that look like them but change how calls resolve.
    for n in 0..NOISE {
        let mut text = format!(
            "// noise {n}\n#include <vector>\nnamespace noise_{n} {{\nstatic int local_{n}(int x) {{ return x * {n}; }}\n\
             struct Thing_{n} {{ int value() const {{ return local_{n}(1); }} }};\n"
        );
        if n % 20 == 0 {
            // A suppression in a file that cannot matter: unused, so reported.
            let _ = writeln!(
                text,
                "int quiet_{n}();  // gil-lint: allow(gil-held-blocking)"
            );
        }
        if rng.chance(15) {
            // More than eight methods named `step`: a call on an unknown receiver reaches none.
            let _ = writeln!(
                text,
                "struct Other_{n} {{ void step(int x) {{ py::print(x); }} }};"
            );
        }
        if rng.chance(8) {
            let _ = writeln!(
                text,
                "void helper_{}(int x) {{ py::print(x); }}",
                rng.below(HELPERS)
            );
        }
        if rng.chance(12) {
            let _ = writeln!(
                text,
                "struct Sub_{n} : public {} {{\n  void run(int x) override {{ py::print(x); }}\n  void compute(int x) {{ py::module_::import(\"m\"); }}\n}};",
                match rng.below(9) {
                    k @ 0..6 => format!("Worker_{k}"),
                    k => format!("Mid_{}", k - 6),
                }
            );
        }
        if rng.chance(8) {
            // Unrelated classes with the same method names: typed calls do not reach them.
            let _ = writeln!(
                text,
                "struct Lone_{n} {{ void compute(int x) {{ py::print(x); }} void run(int x) {{}} }};"
            );
        }
        if rng.chance(5) {
            let _ = writeln!(
                text,
                "template <typename T> T shape_{}(T x, int y) {{ return x; }}",
                rng.below(3)
            );
        }
        text.push_str("}\n");
        let ext = ["cpp", "h", "cu", "cc"][n % 4];
        write(&format!("src/noise/n{n}/noise_{n}.{ext}"), &text);
    }
    generate_rust(root, &mut rng);
}

#[test]
fn a_generated_tree_gives_identical_output_with_and_without_prefilter_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path());
    let roots = [dir.path().to_path_buf()];
    let output = assert_all_identical("generated tree", &roots);
    let findings: usize = output.split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        findings > 20,
        "the tree should have many findings:\n{output}"
    );
    assert!(
        output.contains("unused-suppression") && !output.contains(", 0 suppressed"),
        "suppressions, used and unused, are part of the test:\n{output}"
    );

    // And the pre-filter did skip files.
    let found =
        gil_lint::discover::discover(&roots, &gil_lint::discover::exclude_set(&[]).unwrap());
    let files = found.files;
    assert!(files.len() > 200, "{} files", files.len());
    let texts: Vec<Result<String, String>> = files
        .iter()
        .map(|(p, _)| std::fs::read_to_string(p).map_err(|e| e.to_string()))
        .collect();
    let knowledge = Knowledge::builtin();
    let modelled = std::sync::atomic::AtomicUsize::new(0);
    let scanner = gil_lint::prefilter::Scanner::new(&knowledge);
    let scans = gil_lint::prefilter::Scans::new(
        files
            .iter()
            .zip(&texts)
            .map(|((path, language), text)| scanner.scan(path, *language, text.as_deref().ok()))
            .collect(),
    );
    let models = gil_lint::prefilter::model_relevant(&files, scans, |i| {
        modelled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (path, language) = &files[i];
        gil_lint::frontend::extract(*language, path, texts[i].as_ref().unwrap(), &knowledge)
    });
    let modelled = modelled.into_inner();
    assert_eq!(modelled, models.iter().filter(|m| m.is_some()).count());
    assert!(
        modelled < files.len() * 3 / 4,
        "only {modelled} of {} files should need parsing",
        files.len()
    );
}

/// The same through the command line: `--threads 1` and `--threads 4`, with and without the
/// pre-filter, print the same JSON and SARIF for the fixtures.
#[test]
fn the_command_line_prints_the_same_for_any_thread_count() {
    let output = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gil-lint"))
            .args([
                "check",
                "--quiet",
                "--warn-unused-suppressions",
                "fixtures",
                "kernels",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        // SARIF records the command line, which differs.
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        if let Some(run) = value.pointer_mut("/runs/0") {
            run.as_object_mut().unwrap().remove("invocations");
        }
        value.to_string()
    };
    for format in ["json", "sarif"] {
        let reference = output(&["--format", format, "--threads", "1", "--no-prefilter"]);
        assert!(reference.contains("missing-gil"));
        for args in [
            ["--threads", "1", "--format", format],
            ["--threads", "4", "--format", format],
        ] {
            assert_eq!(output(&args), reference, "{args:?}");
        }
        assert_eq!(
            output(&["--format", format, "--threads", "4", "--no-prefilter"]),
            reference
        );
    }
}
