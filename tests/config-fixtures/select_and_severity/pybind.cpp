// The seed's bug, as in TransformerEngine before the fix: `fp8_transpose` is bound with the GIL
// released, and its first statement runs a lazy initialiser that imports Python modules.
#include <mutex>
#include <pybind11/pybind11.h>

#include "extensions.h"

namespace py = pybind11;

namespace fp8 {

PyTypeObject *Float8TensorClass = nullptr;
std::once_flag extension_init_flag;

void init_float8_extension() {
  auto module = py::module_::import("fp8.tensor.float8_tensor");  //~ missing-gil
  Float8TensorClass = reinterpret_cast<PyTypeObject *>(
      PyObject_GetAttrString(module.ptr(), "Float8Tensor"));
}

void init_extension() {
  std::call_once(extension_init_flag, []() { init_float8_extension(); });
}

}  // namespace fp8

PYBIND11_MODULE(fp8_ext, m) {
  m.def("quantize", &fp8::quantize, "Quantize to FP8", py::arg("input"));
  m.def("fp8_transpose", &fp8::fp8_transpose, "Transpose with FP8 I/O", py::arg("input"),
        py::call_guard<py::gil_scoped_release>());
}
