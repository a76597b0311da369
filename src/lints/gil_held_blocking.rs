use super::{Group, Precision, binding_list, declare_lint, flow_ending_at};
use crate::analysis::{Edge, Facts, Witness};
use crate::diagnostic::{Finding, Severity};
use crate::model::{LockKind, Program};

declare_lint! {
    /// ## What it finds
    /// A path that waits for a lock `L` (a `std::call_once` flag, the hidden guard of a
    /// function-local `static`'s initialisation, a mutex) while holding the GIL, where the code
    /// that runs while `L` is held (the initialiser, or another path's critical section) runs
    /// Python code: an import, a call of a Python object, an attribute lookup, a conversion.
    ///
    /// Waiting for other threads counts: `std::thread::join`, a future's `get`/`wait`, or
    /// `std::condition_variable::wait` while holding the GIL, when the thread waited for takes the
    /// GIL or runs Python code before it finishes or notifies. A barrier (`std::sync::Barrier`)
    /// waits for every other party to arrive: waiting at it holding the GIL deadlocks with another
    /// party that reaches it holding the GIL, or takes the GIL on its way there. A send on a
    /// rendezvous channel (`std::sync::mpsc::sync_channel(0)`) waits until the receiving thread
    /// takes the value: sending holding the GIL deadlocks with a receiver that takes the GIL
    /// before it reaches `recv()`.
    ///
    /// This includes the fix that acquires the GIL *before* `std::call_once`, and the
    /// function-local `static py::object x = py::module_::import(...)` that pybind11's
    /// `gil_safe_call_once.h` marks "BAD, DO NOT USE".
    ///
    /// ## Why is this bad?
    /// Python code can drop the GIL and take it back at any time: the eval loop switches threads
    /// every few milliseconds, `time.sleep` and I/O release it, an import waits on importlib's
    /// module locks. So the thread running the initialiser (which owns `L`) may need the GIL
    /// again, while another thread holds the GIL and waits for `L`: a deadlock. Taking the GIL
    /// first only makes the lock order consistent if the initialiser never releases the GIL,
    /// which Python code cannot promise. The hang is rare (it needs a cold import, an import hook,
    /// a sleeping module, or another thread mid-import), so it survives testing.
    ///
    /// ## Example
    /// ```cpp
    /// void init_extension() {
    ///   py::gil_scoped_acquire gil;                 // holds the GIL ...
    ///   std::call_once(flag, [] {                   // ... while waiting for `flag`
    ///     cls = py::module_::import("pkg.float8");  // runs Python code holding `flag`
    ///   });
    /// }
    /// ```
    ///
    /// Use instead: release the GIL while waiting, and take it inside the initialiser.
    /// pybind11's `gil_safe_call_once_and_store` does exactly that:
    /// ```cpp
    /// py::object float8_module() {
    ///   PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
    ///   return storage.call_once_and_store_result([] { return py::module_::import("pkg.float8"); })
    ///       .get_stored();
    /// }
    /// ```
    ///
    /// ## Known problems
    /// Any use of the Python API that can run Python code counts, even when in practice the
    /// module is always imported already (an import of an already imported module runs no
    /// bytecode). Paths are combined without checking that two threads can run them together.
    pub static GIL_HELD_BLOCKING = {
        id: "gil-held-blocking",
        group: Group::Correctness,
        severity: Severity::Error,
        precision: Precision::Medium,
        tags: ["gil", "concurrency", "reliability", "deadlock", "external/cwe/cwe-833"],
        added_in: "0.1.0",
        summary: "a lock is waited for while holding the GIL, and Python code runs while it is held",
        check: check,
    }
}

fn check(program: &Program, facts: &Facts) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (id, lock) in facts.locks.iter().enumerate() {
        // Holding a lock while taking the GIL is `gil-lock-inversion`; a thread waited for that
        // takes the GIL is this rule's.
        let holders: Vec<_> = facts.blockers(id).collect();
        let acquires = holders
            .iter()
            .find_map(|&h| facts.witnesses(Edge::Acquire(h)).next());
        if acquires.is_some() && !lock.kind.is_work() {
            continue;
        }
        // Any holder will do, but a barrier's party does not wait for itself: it needs another
        // wait site that is reached holding the GIL.
        let runs_for = |wait: &Witness| {
            let other = |w: &&Witness| lock.kind != LockKind::Barrier || w.at != wait.at;
            holders
                .iter()
                .find_map(|&h| facts.witnesses(Edge::Acquire(h)).find(other))
                .or_else(|| {
                    holders
                        .iter()
                        .find_map(|&h| facts.witnesses(Edge::RunsPython(h)).find(other))
                })
        };
        for wait in facts.witnesses(Edge::Wait(id)) {
            let Some(runs) = runs_for(wait) else {
                continue;
            };
            let lock_name = lock.describe();
            let work = lock.kind.is_work();
            let (message, runner, deadlock) = if work {
                (
                    match lock.kind {
                        LockKind::Condvar | LockKind::Atomic => format!(
                            "waiting on {lock_name} while holding the GIL deadlocks: the notifying thread needs the GIL first"
                        ),
                        LockKind::Barrier => format!(
                            "waiting at {lock_name} while holding the GIL deadlocks: another party reaches it only with the GIL"
                        ),
                        LockKind::Channel => format!(
                            "sending on {lock_name} while holding the GIL deadlocks: the receiving thread needs the GIL before it receives"
                        ),
                        LockKind::Pool => format!(
                            "waiting for an item of {lock_name} while holding the GIL deadlocks: items come back only when the Python objects keeping them are freed, which needs the GIL"
                        ),
                        _ => format!(
                            "waiting for {lock_name} while holding the GIL deadlocks: that work needs the GIL to finish"
                        ),
                    },
                    match lock.kind {
                        LockKind::Barrier => {
                            format!("is another party of {lock_name} and needs the GIL to reach it")
                        }
                        LockKind::Pool => format!(
                            "keeps an item of {lock_name} in a Python object, which gives it back only when freed with the GIL"
                        ),
                        LockKind::Channel => {
                            format!("receives from {lock_name} and needs the GIL before it does")
                        }
                        _ => format!("runs as {lock_name} and needs the GIL"),
                    },
                    "deadlock: thread B holds the GIL and waits for thread A, which waits for the GIL"
                        .to_string(),
                )
            } else {
                (
                    format!(
                        "{lock_name} is waited for while holding the GIL, and Python code runs while it is held"
                    ),
                    format!(
                        "holds {lock_name} and runs Python code, which can drop the GIL and must take it back"
                    ),
                    format!(
                        "deadlock: when thread A's Python code drops the GIL, thread B takes it and waits for \
                         {lock_name}; thread A, owning {lock_name}, then waits for the GIL forever"
                    ),
                )
            };
            let mut notes = vec![deadlock];
            if !work {
                notes.push(
                    "taking the GIL before waiting is not enough: Python code can release and re-take \
                     it (eval-loop switches, `time.sleep`, I/O, import locks)"
                        .to_string(),
                );
            }
            notes.push(format!(
                "bindings that wait holding the GIL: {}",
                binding_list(program, &wait.bindings)
            ));
            findings.push(Finding {
                rule: GIL_HELD_BLOCKING.id,
                severity: GIL_HELD_BLOCKING.default_severity,
                message,
                primary: wait.at,
                primary_label: format!("{} while holding the GIL", wait.what),
                function: program.functions[wait.function].qualname.clone(),
                flows: vec![
                    flow_ending_at(program, runs, runner, format!("{}: needs the GIL", runs.what)),
                    // Thread B's path ends where it waits: the finding's location.
                    flow_ending_at(
                        program,
                        wait,
                        format!("holds the GIL, then waits for {lock_name}"),
                        format!("{} while holding the GIL", wait.what),
                    ),
                ],
                notes,
                help: Some(super::by_language(
                    program,
                    wait.at,
                    "release the GIL while waiting: use `py::gil_safe_call_once_and_store`, or \
                     `py::gil_scoped_release` before the wait and `py::gil_scoped_acquire` inside the initialiser",
                    "detach while waiting: use `PyOnceLock` (the GIL is its only lock), \
                     `OnceLockExt::get_or_init_py_attached` or `MutexExt::lock_py_attached`, or wait inside `py.detach(|| ...)`",
                )),
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::test_support::{Seen, analyse, cpp, line_of, seen};

    fn findings_in(text: &str) -> Vec<Seen> {
        let (program, facts) = analyse(&[("ext.cpp", text)]);
        seen(&program, &check(&program, &facts))
    }

    /// `emit` calls Python holding the mutex; `set_listener` waits for it holding the GIL.
    fn listeners(emit_body: &str) -> String {
        cpp(&format!(
            "std::mutex listeners_mutex;\n\
             py::function listener;\n\
             void set_listener(py::function f) {{\n\
               std::lock_guard<std::mutex> lock(listeners_mutex);  // waits\n\
               listener = f;\n\
             }}\n\
             void emit(int event) {{\n{emit_body}}}\n\
             PYBIND11_MODULE(m, mod) {{\n\
               mod.def(\"set_listener\", &set_listener);\n\
               mod.def(\"emit\", &emit);\n\
             }}\n"
        ))
    }

    const MESSAGE: &str = "mutex `listeners_mutex` is waited for while holding the GIL, and \
                           Python code runs while it is held";

    #[test]
    fn a_lock_held_while_python_runs_and_waited_for_with_the_gil_is_reported() {
        let text = listeners(
            "std::lock_guard<std::mutex> lock(listeners_mutex);  // holds\n\
             listener(event);\n",
        );
        let expected = |marker: &str, function: &str| Seen {
            rule: "gil-held-blocking",
            line: line_of(&text, marker),
            function: function.into(),
            message: MESSAGE.into(),
        };
        // Both waits are with the GIL held; `emit`'s own is one too.
        assert_eq!(
            findings_in(&text),
            [
                expected("// waits", "set_listener"),
                expected("// holds", "emit")
            ]
        );
    }

    /// No Python code runs while the mutex is held: waiting for it with the GIL is fine.
    #[test]
    fn a_lock_never_held_while_python_runs_is_not_reported() {
        let text = listeners(
            "py::function copy;\n\
             {\n\
               std::lock_guard<std::mutex> lock(listeners_mutex);\n\
               copy = listener;\n\
             }\n\
             copy(event);\n",
        );
        assert_eq!(findings_in(&text), []);
    }

    fn worker(join: &str) -> String {
        cpp(&format!(
            "#include <thread>\n\
             int run(py::function callback) {{\n\
               int result = 0;\n\
               std::thread worker([&] {{\n\
                 py::gil_scoped_acquire gil;\n\
                 result = callback().cast<int>();\n\
               }});\n\
               {join}\n\
               return result;\n\
             }}\n\
             PYBIND11_MODULE(m, mod) {{ mod.def(\"run\", &run); }}\n"
        ))
    }

    #[test]
    fn joining_a_thread_that_needs_the_gil_while_holding_it_is_reported() {
        let text = worker("worker.join();  // joins");
        assert_eq!(
            findings_in(&text),
            [Seen {
                rule: "gil-held-blocking",
                line: line_of(&text, "// joins"),
                function: "run".into(),
                message: "waiting for thread `worker` while holding the GIL deadlocks: that \
                          work needs the GIL to finish"
                    .into(),
            }]
        );
    }

    #[test]
    fn joining_it_with_the_gil_released_is_not_reported() {
        let text = worker("{ py::gil_scoped_release nogil; worker.join(); }");
        assert_eq!(findings_in(&text), []);
    }
}
