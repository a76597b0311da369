// Suppression comments on the finding's line and alone on the line above; the ones that
// suppress nothing are reported as `unused-suppression`.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void log_trailing() {
  py::print("a");  // gil-lint: allow(missing-gil) -- logging is best-effort here
}

void log_above() {
  // gil-lint: allow(missing-gil)
  py::print("b");
}

void log_block_comment() {
  /* gil-lint: allow(missing-gil) */
  py::print("c");
}

void log_reported() {
  py::print("d");  //~ missing-gil
}

void trailing_comment_covers_only_its_line(int x) {
  x += 1;  // gil-lint: allow(missing-gil)  //~ unused-suppression
  py::print(x);  //~ missing-gil
}

int add(int a, int b) {
  // gil-lint: allow(missing-gil)  //~ unused-suppression
  return a + b;
}

int sub(int a, int b) {
  // gil-lint: allow(missing-gill)  //~ unused-suppression
  // gil-lint: alow(missing-gil)  //~ unused-suppression
  // gil-lint: allow(gil-lock-inversion) -- the rule does not run: not reported
  return a - b;
}

void marker_in_a_string() {
  // A marker in a string literal is text, not a suppression.
  py::print("// gil-lint: allow(missing-gil)");  //~ missing-gil
}

PYBIND11_MODULE(suppressed_ext, m) {
  m.def("log_trailing", &log_trailing, py::call_guard<py::gil_scoped_release>());
  m.def("log_above", &log_above, py::call_guard<py::gil_scoped_release>());
  m.def("log_block_comment", &log_block_comment, py::call_guard<py::gil_scoped_release>());
  m.def("log_reported", &log_reported, py::call_guard<py::gil_scoped_release>());
  m.def("trailing", &trailing_comment_covers_only_its_line, py::call_guard<py::gil_scoped_release>());
  m.def("add", &add, py::call_guard<py::gil_scoped_release>());
  m.def("sub", &sub, py::call_guard<py::gil_scoped_release>());
  m.def("marker_in_a_string", &marker_in_a_string, py::call_guard<py::gil_scoped_release>());
}
