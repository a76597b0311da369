// A whole file whose missing-gil findings are accepted.
// gil-lint: allow-file(missing-gil)
#include <pybind11/pybind11.h>

namespace py = pybind11;

void legacy_log() { py::print("legacy"); }

void legacy_import() { py::module_::import("json"); }

PYBIND11_MODULE(legacy_ext, m) {
  m.def("legacy_log", &legacy_log, py::call_guard<py::gil_scoped_release>());
  m.def("legacy_import", &legacy_import, py::call_guard<py::gil_scoped_release>());
}
