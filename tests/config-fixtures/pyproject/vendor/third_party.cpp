// Excluded by `exclude = ["vendor"]`: its bug is not reported.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void vendored() { py::print("vendored"); }

PYBIND11_MODULE(vendored_ext, m) {
  m.def("vendored", &vendored, py::call_guard<py::gil_scoped_release>());
}
