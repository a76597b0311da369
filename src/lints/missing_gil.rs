use super::{Group, Precision, declare_lint};
use crate::analysis::{Facts, ReleasedUse};
use crate::diagnostic::{Finding, Flow, Severity, Step};
use crate::model::{Program, Span};

declare_lint! {
    /// ## What it finds
    /// A use of the Python API (an import, an attribute lookup, a call of a Python object, a
    /// conversion, constructing a Python object, a `Py*` C-API call) reachable from a binding on a
    /// path where the GIL is released and not acquired again: the binding is declared with
    /// `py::call_guard<py::gil_scoped_release>()`, or a `py::gil_scoped_release` block (or
    /// `Py_BEGIN_ALLOW_THREADS`) encloses a call that leads to the use.
    ///
    /// One finding is reported per function that uses the Python API without the GIL: its first
    /// such use is the primary location and the others are listed, since one fix (holding the GIL
    /// in that function) covers them all. The finding shows one full path from one binding and
    /// lists the other bindings that reach the same code without the GIL.
    ///
    /// ## Why is this bad?
    /// Touching Python objects without holding the GIL is undefined behaviour. It corrupts
    /// reference counts and the allocator's state and typically segfaults, but only on the call
    /// order that reaches the code without the GIL, for example when a lazily initialised import
    /// runs for the first time from a binding that released the GIL. pybind11 checks this only in
    /// debug builds.
    ///
    /// ## Example
    /// ```cpp
    /// void init_extension() {
    ///   std::call_once(flag, [] { cls = py::module_::import("pkg.float8").attr("Float8Tensor"); });
    /// }
    /// Tensor fp8_transpose(const Tensor& t) { init_extension(); /* ... */ }
    ///
    /// m.def("fp8_transpose", &fp8_transpose, py::call_guard<py::gil_scoped_release>());
    /// ```
    ///
    /// Use instead: initialise Python state while the GIL is held, and never block on a lock while
    /// holding it (see `gil-held-blocking`):
    /// ```cpp
    /// py::object float8_tensor_class() {
    ///   PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
    ///   return storage
    ///       .call_once_and_store_result([] { return py::module_::import("pkg.float8").attr("Float8Tensor"); })
    ///       .get_stored();
    /// }
    /// // Called from a binding that holds the GIL, or inside `py::gil_scoped_acquire`.
    /// ```
    ///
    /// ## Known problems
    /// Calls are resolved by name without types (see docs/call-graph.md): a call through a
    /// function pointer or a virtual call on a receiver of unknown type may be missed or may reach
    /// methods of the same name in unrelated classes. A GIL release or acquisition hidden inside a
    /// macro the knowledge files do not describe is not seen.
    pub static MISSING_GIL = {
        id: "missing-gil",
        group: Group::Correctness,
        severity: Severity::Error,
        precision: Precision::High,
        tags: ["gil", "concurrency", "reliability", "external/cwe/cwe-667"],
        added_in: "0.1.0",
        summary: "the Python API is used on a path where the GIL is released",
        check: check,
    }
}

fn check(program: &Program, facts: &Facts) -> Vec<Finding> {
    // The uses in one function are one mistake with one fix (hold the GIL in that function):
    // report the first and list the others.
    let mut findings: Vec<Finding> = Vec::new();
    let mut last_function = None;
    for (&(function, span, index), hit) in &facts.released_uses {
        let what = &program.functions[function].py_uses[index].what;
        if last_function == Some(function)
            && let Some(previous) = findings.last_mut()
        {
            let line = program.file(span.file).line_col(span.start).0;
            previous.notes.push(format!("line {line}: {what} too"));
            continue;
        }
        last_function = Some(function);
        findings.push(finding(program, span, function, what, hit));
    }
    findings
}

fn finding(
    program: &Program,
    span: Span,
    function: usize,
    what: &str,
    hit: &ReleasedUse,
) -> Finding {
    let binding = &program.bindings[hit.binding];
    let mut notes = vec![call_path(program, &hit.trace, function)];
    if !hit.others.is_empty() {
        let mut names: Vec<String> = hit
            .others
            .iter()
            .map(|&b| format!("`{}`", program.bindings[b].name))
            .collect();
        names.dedup();
        notes.push(format!(
            "also reached without the GIL from {} other binding{}: {}",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ));
    }
    Finding {
        rule: MISSING_GIL.id,
        severity: MISSING_GIL.default_severity,
        message: format!("{what} without holding the GIL"),
        primary: span,
        primary_label: format!(
            "needs the GIL, released on the path from binding `{}`",
            binding.name
        ),
        function: program.functions[function].qualname.clone(),
        flows: vec![Flow {
            title: String::new(),
            steps: hit.trace.clone(),
        }],
        notes,
        help: Some(if is_c_source(program, span) {
            // C has no guard classes: the C API's own spellings.
            "hold the GIL here (`Py_BLOCK_THREADS` ... `Py_UNBLOCK_THREADS` inside \
             `Py_BEGIN_ALLOW_THREADS`, or `PyGILState_Ensure()` ... `PyGILState_Release()`), or \
             move the Python work out of the released region"
                .to_string()
        } else {
            super::by_language(
                program,
                span,
                "hold the GIL here with `py::gil_scoped_acquire`, or move the Python work out of \
                 the released region; inside a once or static initialiser use \
                 `py::gil_safe_call_once_and_store` (see `gil-lint --explain gil-held-blocking`)",
                "attach first (`Python::attach`), or move the C-API call out of the `detach` \
                 closure",
            )
        }),
    }
}

/// Whether `span` is in a C source file (`.c`), which cannot use a C++ framework's guards.
fn is_c_source(program: &Program, span: Span) -> bool {
    program
        .file(span.file)
        .path
        .extension()
        .is_some_and(|extension| extension == "c")
}

/// "call path: `binding` -> `f` -> `g`", from the call steps of a trace.
fn call_path(program: &Program, trace: &[Step], function: usize) -> String {
    let mut hops: Vec<String> = vec![format!("`{}` (binding)", trace[0].function)];
    hops.extend(
        trace
            .iter()
            .filter(|s| s.note.starts_with("calls "))
            .map(|s| format!("`{}`", s.function)),
    );
    hops.push(format!("`{}`", program.functions[function].qualname));
    hops.dedup();
    format!("call path: {}", hops.join(" -> "))
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::test_support::{Seen, analyse, cpp, line_of, seen};

    /// The findings of this rule alone on `files`.
    fn findings(files: &[(&str, &str)]) -> Vec<Seen> {
        let (program, facts) = analyse(files);
        seen(&program, &check(&program, &facts))
    }

    fn one_cpp(body: &str) -> (String, Vec<Seen>) {
        let text = cpp(body);
        let found = findings(&[("ext.cpp", &text)]);
        (text, found)
    }

    #[test]
    fn a_path_through_resolved_calls_is_shown_before_a_guessed_one() {
        // `x.run()` is matched by name; `helper`'s `c.run()` is typed. Breadth first, the guessed
        // call reaches `C::run` first; the finding must still be sure.
        let text = cpp("struct C { void run() { py::print(\"x\"); } };\n\
             void helper(C& c) { c.run(); }\n\
             void entry(auto& x, C& c) { x.run(); helper(c); }\n\
             PYBIND11_MODULE(m, mod) {\n\
               mod.def(\"entry\", &entry, py::call_guard<py::gil_scoped_release>());\n\
             }\n");
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        let found = check(&program, &facts);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].confidence(), crate::diagnostic::Confidence::High);
        let path: Vec<&str> = found[0].flows[0]
            .steps
            .iter()
            .map(|s| s.note.as_str())
            .collect();
        assert!(path.contains(&"calls `helper`"), "{path:?}");
    }

    /// The call notes of the path that `found`'s one finding shows.
    fn shown_path(files: &[(&str, &str)]) -> Vec<String> {
        let (program, facts) = analyse(files);
        let found = check(&program, &facts);
        assert_eq!(found.len(), 1);
        found[0].flows[0]
            .steps
            .iter()
            .map(|s| s.note.clone())
            .collect()
    }

    /// `x.first(y)` and `y.second()` are matched by name. From `P::first` one more guess reaches
    /// `Sink::put`; from `Q::second` resolved calls do, through `c2`: a longer path, one guess.
    const GUESSES: &str = "struct Sink { void put() { py::print(\"x\"); } };\n\
             void c2() { Sink s; s.put(); }\n\
             void c1() { c2(); }\n\
             struct P { void first(auto& z) { z.put(); } };\n\
             struct Q { void second() { c1(); } };\n";

    #[test]
    fn of_guessed_paths_the_one_with_fewest_guesses_is_shown() {
        let one = cpp(&format!(
            "{GUESSES}void entry(auto& x, auto& y) {{ x.first(y); y.second(); }}\n\
             PYBIND11_MODULE(m, mod) {{\n\
               mod.def(\"entry\", &entry, py::call_guard<py::gil_scoped_release>());\n\
             }}\n"
        ));
        let path = shown_path(&[("ext.cpp", &one)]);
        assert!(path.contains(&"calls `c2`".to_string()), "{path:?}");
    }

    #[test]
    fn a_path_follows_at_most_one_guessed_call() {
        // `early` reaches `Sink::put` only through two guesses.
        let text = cpp(&format!(
            "{GUESSES}void early(auto& x, auto& y) {{ x.first(y); }}\n\
             PYBIND11_MODULE(m, mod) {{\n\
               mod.def(\"early\", &early, py::call_guard<py::gil_scoped_release>());\n\
             }}\n"
        ));
        assert_eq!(findings(&[("ext.cpp", &text)]), []);
    }

    #[test]
    fn of_bindings_the_one_whose_path_has_fewest_guesses_is_shown() {
        // As above, with the first binding's path two guesses long and the second's one.
        let two = cpp(&format!(
            "{GUESSES}void early(auto& x, auto& y) {{ x.first(y); }}\n\
             void late(auto& y) {{ y.second(); }}\n\
             PYBIND11_MODULE(m, mod) {{\n\
               mod.def(\"early\", &early, py::call_guard<py::gil_scoped_release>());\n\
               mod.def(\"late\", &late, py::call_guard<py::gil_scoped_release>());\n\
             }}\n"
        ));
        let path = shown_path(&[("ext.cpp", &two)]);
        assert!(path.contains(&"calls `c2`".to_string()), "{path:?}");
    }

    #[test]
    fn python_api_after_a_scoped_release_is_reported() {
        let (text, found) = one_cpp(
            "void work() {\n\
               py::gil_scoped_release release;\n\
               py::print(\"x\");  // here\n\
             }\n\
             PYBIND11_MODULE(m, mod) { mod.def(\"work\", &work); }\n",
        );
        assert_eq!(
            found,
            [Seen {
                rule: "missing-gil",
                line: line_of(&text, "// here"),
                function: "work".into(),
                message: "`py::print` is called without holding the GIL".into(),
            }]
        );
    }

    #[test]
    fn an_acquire_in_between_holds_the_gil_again() {
        let (_, found) = one_cpp(
            "void work() {\n\
               py::gil_scoped_release release;\n\
               {\n\
                 py::gil_scoped_acquire acquire;\n\
                 py::print(\"x\");\n\
               }\n\
             }\n\
             PYBIND11_MODULE(m, mod) { mod.def(\"work\", &work); }\n",
        );
        assert_eq!(found, []);
    }

    #[test]
    fn a_binding_entered_with_the_gil_is_not_reported() {
        let (_, found) = one_cpp(
            "void work() { py::print(\"x\"); }\n\
             PYBIND11_MODULE(m, mod) { mod.def(\"work\", &work); }\n",
        );
        assert_eq!(found, []);
    }

    /// Through a callee: the finding is in the callee, its path starts at the call guard, and
    /// every use in the callee is one finding.
    #[test]
    fn a_call_guard_reaches_the_callee_and_its_uses_are_one_finding() {
        let text = cpp("void helper() {\n\
               py::print(\"a\");  // first\n\
               py::print(\"b\");  // second\n\
             }\n\
             void work() { helper(); }\n\
             PYBIND11_MODULE(m, mod) {\n\
               mod.def(\"work\", &work, py::call_guard<py::gil_scoped_release>());  // guard\n\
               mod.def(\"other\", &work, py::call_guard<py::gil_scoped_release>());\n\
             }\n");
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        let found = check(&program, &facts);
        assert_eq!(
            seen(&program, &found),
            [Seen {
                rule: "missing-gil",
                line: line_of(&text, "// first"),
                function: "helper".into(),
                message: "`py::print` is called without holding the GIL".into(),
            }]
        );
        let finding = &found[0];
        assert_eq!(
            finding.notes,
            [
                "call path: `work` (binding) -> `work` -> `helper`".to_string(),
                "also reached without the GIL from 1 other binding: `other`".to_string(),
                format!(
                    "line {}: `py::print` is called too",
                    line_of(&text, "// second")
                ),
            ]
        );
        let first_step = &finding.flows[0].steps[0];
        assert_eq!(
            program.file(0).line_col(first_step.span.start).0,
            line_of(&text, "// guard")
        );
    }

    #[test]
    fn pyo3_c_api_in_a_detached_closure_is_reported_and_reattached_is_not() {
        let text = "use pyo3::ffi;\n\
            use pyo3::prelude::*;\n\
            #[pyfunction]\n\
            fn bump(py: Python<'_>, ptr: usize) {\n\
                py.detach(move || unsafe {\n\
                    ffi::Py_IncRef(ptr as *mut ffi::PyObject);  // here\n\
                });\n\
            }\n\
            #[pyfunction]\n\
            fn bump_reattached(py: Python<'_>, ptr: usize) {\n\
                py.detach(move || unsafe {\n\
                    let state = ffi::PyGILState_Ensure();\n\
                    ffi::Py_IncRef(ptr as *mut ffi::PyObject);\n\
                    ffi::PyGILState_Release(state);\n\
                });\n\
            }\n";
        let found = findings(&[("lib.rs", text)]);
        assert_eq!(
            found,
            [Seen {
                rule: "missing-gil",
                line: line_of(text, "// here"),
                function: "crate::bump::{closure#1}".into(),
                message: "`ffi::Py_IncRef` is called without holding the GIL".into(),
            }]
        );
    }
}
