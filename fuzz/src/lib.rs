//! What the fuzz targets share.

use std::sync::OnceLock;

use gil_lint::knowledge::Knowledge;

/// The built-in knowledge, loaded once.
pub fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(Knowledge::builtin)
}

/// Runs `f` as gil-lint runs a front-end: on a worker thread with the pool's stack size.
pub fn on_worker<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(gil_lint::WORKER_STACK)
            .spawn_scoped(s, f)
            .expect("a thread can be started")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// Text built from fragments, for inputs that byte-level mutation rarely reaches: nesting
/// thousands deep, lines of megabytes, files of thousands of items. Each pair of input bytes is
/// one step: a fragment (the first byte, modulo their number) repeated `1 << (second % 15)` times
/// (up to 16,384), so a few dozen bytes describe a large, deeply structured file. The output is
/// capped at `limit` bytes.
pub fn expand(data: &[u8], fragments: &[&str], limit: usize) -> String {
    let mut text = String::new();
    for step in data.chunks_exact(2) {
        let fragment = fragments[step[0] as usize % fragments.len()];
        let times = 1usize << (step[1] % 15);
        for _ in 0..times {
            if text.len() + fragment.len() > limit {
                return text;
            }
            text.push_str(fragment);
        }
    }
    text
}

/// Rust fragments: openers and closers of every kind, prefix and infix operators, chains,
/// separators, items, statements, match arms and PyO3 bindings.
pub const RUST_FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", "<", ">", "-", "!", "*", "&", "&mut ", "|| ", "move |x| ",
    "return ", "break ", ".. ", "a = ", " + 1", ".f()", ".x", "?", " as u8", "[0]", ",", ";",
    "\n", "fn g() {}\n", "impl S { fn f(&self) {} }\n", "#[pyfunction]\nfn f() {}\n",
    "#[pymethods]\nimpl P {\n", "    #[getter]\n    fn a(&self) -> u8 { 1 }\n", "if a {} ",
    "else ", "match x { ", "1 => {} ", "_ => 0, ", "loop { ", "let x = ", "Vec<", "Option<",
    "mod m { ", "py.detach(|| ", "Python::attach(|py| ", "static L: OnceLock<u8> = OnceLock::new();\n",
    "L.get_or_init(|| ", "M.lock().unwrap()", "x", "1", "\"s\"", "'a", "'c'", "r#\"raw\"#",
    "/* ", "*/", "// c\n", "\u{feff}", "#!x\n", "\r", "\r\n", "é",
];

/// C++ fragments: the same for pybind11 code, with templates, macros, conditional blocks, raw
/// strings and comments.
pub const CPP_FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", "<", ">", "-", "!", "*", "&", "h(", "A<", "a < ", " + 1",
    ".f()", "->g()", "::", ",", ";", "\n", "void g() {}\n", "struct S { void f(); };\n",
    "#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n",
    "PYBIND11_MODULE(m, mod) { mod.def(\"f\", &f, py::call_guard<py::gil_scoped_release>()); }\n",
    "void f() { py::print(\"x\"); }\n", "py::gil_scoped_acquire g; ",
    "static py::object o = py::module_::import(\"x\");\n", "std::call_once(flag, [] { ",
    "std::lock_guard<std::mutex> l(m); ", "[&]() { ", "}();", "#if 0\n", "#else\n", "#endif\n",
    "#define W(x) x\n", "\\\n", "R\"d(", ")d\"", "xR\"\"", "\"s\"", "'c'", "1'000",
    "/* ", "*/", "// c\n", "PYBIND11_NAMESPACE_BEGIN(d)\n", "AAA ", "template <typename T> ",
    "\u{feff}", "\r", "\r\n", "é",
];
