// `fastops::NoGil` releases the GIL; gil-lint knows it from the project's knowledge file, named in
// `[tool.gil-lint]` of pyproject.toml.
#include <Python.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace fastops {
struct NoGil {
  NoGil() : state(PyEval_SaveThread()) {}
  ~NoGil() { PyEval_RestoreThread(state); }
  PyThreadState *state;
};
}  // namespace fastops

int crunch(py::object progress) {
  fastops::NoGil released;
  int total = 0;
  for (int i = 0; i < 1000; ++i) total += i;
  progress(total);  //~ missing-gil
  return total;
}

PYBIND11_MODULE(fastops_ext, m) { m.def("crunch", &crunch); }
