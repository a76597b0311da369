use super::{Group, Precision, binding_list, declare_lint, flow_ending_at};
use crate::analysis::{Edge, Facts};
use crate::diagnostic::{Finding, Severity};
use crate::model::Program;

declare_lint! {
    /// ## What it finds
    /// An ABBA deadlock between the GIL and another lock `L` (a `std::call_once` flag, a
    /// function-local static's initialisation guard, a mutex): one path takes the GIL explicitly
    /// (`py::gil_scoped_acquire`, `PyGILState_Ensure`) while holding `L`, and another path waits
    /// for `L` while holding the GIL. The finding shows both paths, one per thread, and as
    /// further threads every other region that holds `L` while the GIL is taken (another caller
    /// of a shared helper that detaches, a region that runs Python under `L`): each closes the
    /// same cycle, so fixing one of them changes the finding.
    ///
    /// ## Why is this bad?
    /// Thread A owns `L` and waits for the GIL; thread B holds the GIL and waits for `L`. Neither
    /// can go on, and the process hangs. It happens only when the two calls overlap, so tests
    /// rarely catch it. The classic case is a lazy initialiser that acquires the GIL inside its
    /// `std::call_once` lambda because it is reached from a binding that released the GIL, while
    /// other bindings reach the same `call_once` holding the GIL.
    ///
    /// ## Example
    /// ```cpp
    /// void init_extension() {
    ///   std::call_once(flag, [] {
    ///     py::gil_scoped_acquire gil;  // thread A: holds `flag`, waits for the GIL
    ///     cls = py::module_::import("pkg.float8").attr("Float8Tensor");
    ///   });
    /// }
    /// // thread B: a binding that holds the GIL calls init_extension() and waits for `flag`.
    /// ```
    ///
    /// Use instead: never wait for the once flag while holding the GIL. pybind11's
    /// `gil_safe_call_once_and_store` releases the GIL before waiting and takes it inside:
    /// ```cpp
    /// py::object float8_tensor_class() {
    ///   PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
    ///   return storage
    ///       .call_once_and_store_result([] { return py::module_::import("pkg.float8").attr("Float8Tensor"); })
    ///       .get_stored();
    /// }
    /// ```
    /// or by hand: `py::gil_scoped_acquire` (for callers without it), then `py::gil_scoped_release`,
    /// then `std::call_once` with `py::gil_scoped_acquire` inside the lambda.
    ///
    /// ## Known problems
    /// Paths are combined without checking that the two threads can really run them at the same
    /// time (for example when one of them only runs during module import). Conditions are not
    /// evaluated, so a path guarded by `PyGILState_Check()` counts in both states.
    pub static GIL_LOCK_INVERSION = {
        id: "gil-lock-inversion",
        group: Group::Correctness,
        severity: Severity::Error,
        precision: Precision::Medium,
        tags: ["gil", "concurrency", "reliability", "deadlock", "external/cwe/cwe-833"],
        added_in: "0.1.0",
        summary: "the GIL is taken while holding a lock that is waited for while holding the GIL",
        check: check,
    }
}

fn check(program: &Program, facts: &Facts) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Waiting for another thread's work that takes the GIL is `gil-held-blocking`.
    for (id, lock) in facts
        .locks
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.kind.is_work())
    {
        let Some((waited, wait)) = facts.waits_blocked_by(id).next() else {
            continue;
        };
        for acquire in facts.witnesses(Edge::Acquire(id)) {
            let lock_name = lock.describe();
            let primary_label = format!(
                "{}: waits for the GIL while holding {lock_name}",
                acquire.what
            );
            let mut flows = vec![
                // Thread A's path ends where it takes the GIL: the finding's location.
                flow_ending_at(
                    program,
                    acquire,
                    format!("holds {lock_name}, then waits for the GIL"),
                    primary_label.clone(),
                ),
                flow_ending_at(
                    program,
                    wait,
                    format!("holds the GIL, then waits for {lock_name}"),
                    format!("{} while holding the GIL", wait.what),
                ),
            ];
            // The other regions holding the lock while the GIL is taken (the other callers of a
            // shared helper, the regions that run Python under it, in any mode that blocks
            // thread B's wait) close the same cycle with thread B: each is a bug of its own, and
            // a fix of one must change the report. Each is shown by its binding, its region and
            // where it needs the GIL.
            let others = facts
                .blockers(waited)
                .flat_map(|h| facts.holders(h).map(move |w| (h, w)))
                .filter(|(_, w)| w.holder != acquire.holder);
            for (held, other) in others {
                let mut flow = flow_ending_at(
                    program,
                    other,
                    format!(
                        "also holds {}, then needs the GIL",
                        facts.locks[held].describe()
                    ),
                    format!("{}: needs the GIL", other.what),
                );
                let last = flow.steps.len() - 1;
                let mut index = 0;
                flow.steps.retain(|step| {
                    index += 1;
                    index == 1 || index - 1 == last || Some(step.span) == other.holder
                });
                flows.push(flow);
            }
            let notes = vec![
                format!(
                    "deadlock: thread A owns {lock_name} and waits for the GIL; thread B holds the GIL and waits for {lock_name}"
                ),
                format!(
                    "thread A's bindings: {}",
                    binding_list(program, &acquire.bindings)
                ),
                format!(
                    "thread B's bindings: {}",
                    binding_list(program, &wait.bindings)
                ),
            ];
            findings.push(Finding {
                rule: GIL_LOCK_INVERSION.id,
                severity: GIL_LOCK_INVERSION.default_severity,
                message: format!(
                    "the GIL is taken while holding {lock_name}, which other paths wait for while holding the GIL"
                ),
                primary: acquire.at,
                primary_label: primary_label.clone(),
                function: program.functions[acquire.function].qualname.clone(),
                flows,
                notes,
                help: Some(super::by_language(
                    program,
                    acquire.at,
                    "do not wait for the lock while holding the GIL: use `py::gil_safe_call_once_and_store`, \
                     or release the GIL (`py::gil_scoped_release`) before waiting and take it inside",
                    "do not wait for the lock attached: use `PyOnceLock` (the GIL is its only lock), \
                     `OnceLockExt::get_or_init_py_attached` or `MutexExt::lock_py_attached`, or take the lock inside the `detach` closure",
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

    /// `add` waits for the mutex holding the GIL; `publish` takes the GIL holding it.
    const REGISTRY: &str = "class Registry {\n\
         public:\n\
          void add(int x) {\n\
            std::lock_guard<std::mutex> lock(mutex_);  // waits\n\
            items_ += x;\n\
          }\n\
          void publish() {\n\
            std::lock_guard<std::mutex> lock(mutex_);\n\
            py::gil_scoped_acquire gil;  // acquires\n\
            py::print(items_);\n\
          }\n\
         private:\n\
          std::mutex mutex_;\n\
          int items_ = 0;\n\
        };\n";

    fn module(add: &str, publish: &str) -> String {
        cpp(&format!(
            "{REGISTRY}PYBIND11_MODULE(m, mod) {{\n\
               py::class_<Registry>(mod, \"Registry\")\n\
                 .def(\"add\", &Registry::add{add})\n\
                 .def(\"publish\", &Registry::publish{publish});\n\
             }}\n"
        ))
    }

    const RELEASED: &str = ", py::call_guard<py::gil_scoped_release>()";

    #[test]
    fn the_gil_taken_under_a_lock_waited_for_with_the_gil_is_reported() {
        let text = module("", RELEASED);
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        let found = check(&program, &facts);
        assert_eq!(
            seen(&program, &found),
            [Seen {
                rule: "gil-lock-inversion",
                line: line_of(&text, "// acquires"),
                function: "Registry::publish".into(),
                message: "the GIL is taken while holding mutex `Registry::mutex_`, which other \
                          paths wait for while holding the GIL"
                    .into(),
            }]
        );
        // Thread A holds the lock and takes the GIL; thread B ends at the wait.
        let flows = &found[0].flows;
        assert_eq!(flows.len(), 2);
        let last = flows[1].steps.last().unwrap();
        assert_eq!(
            program.file(0).line_col(last.span.start).0,
            line_of(&text, "// waits")
        );
        assert_eq!(found[0].notes[1], "thread A's bindings: `Registry.publish`");
        assert_eq!(found[0].notes[2], "thread B's bindings: `Registry.add`");
    }

    /// `publish` entered with the GIL: the acquire takes nothing, so no lock is held while
    /// waiting for the GIL.
    #[test]
    fn an_acquire_with_the_gil_already_held_is_not_reported() {
        let text = module("", "");
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        assert_eq!(seen(&program, &check(&program, &facts)), []);
    }

    /// Nobody waits for the mutex with the GIL held: `add` releases it too.
    #[test]
    fn no_wait_with_the_gil_no_inversion() {
        let text = module(RELEASED, RELEASED);
        let (program, facts) = analyse(&[("ext.cpp", &text)]);
        assert_eq!(seen(&program, &check(&program, &facts)), []);
    }
}
