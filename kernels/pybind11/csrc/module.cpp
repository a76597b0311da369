// The bindings. build.py compiles this once per variant with -DFP8EXT_MODULE_NAME=fp8ext_vN so
// that every variant is its own importable module.
#include "fp8ext.h"
#include "kernels.h"

#ifndef FP8EXT_MODULE_NAME
#define FP8EXT_MODULE_NAME fp8ext_v0
#endif
#ifndef FP8EXT_VARIANT
#define FP8EXT_VARIANT "unknown"
#endif

PYBIND11_MODULE(FP8EXT_MODULE_NAME, m) {
  m.doc() = "fp8 E4M3 kernels with a lazily initialised Python dependency (gil-lint oracle)";
  m.attr("backend") = fp8ext::backend_name();
  m.attr("variant") = FP8EXT_VARIANT;

  m.def("quantize", &quantize, py::arg("x"), py::arg("scale") = 1.0f,
        "quantize(x, scale=1.0) -> (bytes, amax): E4M3 bytes of x*scale for a float32 1-D/2-D buffer");
  m.def("dequantize", &dequantize, py::arg("data"), py::arg("scale_inv") = py::none(),
        "dequantize(data, scale_inv=None) -> bytes: float32 values of fp8 bytes or a Float8Tensor");
  m.def("fp8_transpose", &fp8_transpose, py::arg("data"), py::arg("rows"), py::arg("cols"),
        py::call_guard<py::gil_scoped_release>(),
        "fp8_transpose(data, rows, cols) -> list[int]: transpose of a rows x cols fp8 matrix");
  m.def("benchmark", &benchmark, py::arg("rows"), py::arg("cols"), py::arg("iters") = 20,
        "benchmark(rows, cols, iters=20) -> dict: per-call kernel times in ms");
}
