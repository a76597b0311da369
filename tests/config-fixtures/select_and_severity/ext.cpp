// The configuration ignores gil-held-blocking (the static `json` below would be one) and reports
// missing-gil as a warning.
#include <pybind11/pybind11.h>

namespace py = pybind11;

py::object json_module() {
  static py::object json = py::module_::import("json");
  return json;
}

py::object dumps(py::object value) { return json_module().attr("dumps")(value); }

void report(int n) {
  py::print("report", n);  //~ missing-gil
}

PYBIND11_MODULE(selected_ext, m) {
  m.def("dumps", &dumps);
  m.def("report", &report, py::call_guard<py::gil_scoped_release>());
}
