// V4: a function-local "magic static" initialised by an import -- the pattern pybind11's
// gil_safe_call_once.h calls "BAD, DO NOT USE!" and TransformerEngine's MakePythonDType uses.
//
// The compiler's hidden static-init guard is a lock taken with the GIL held; its initialiser runs
// an import that can drop the GIL and must take it back while the guard is still held: a deadlock
// with any other caller (scenarios S2, S3). FP8EXT_LAMBDA_DELAY_MS does not apply here.
#include "fp8ext.h"

void init_extension() {
  py::gil_scoped_acquire gil;
  static py::object cls = py::module_::import("fp8ext.float8_tensor").attr("Float8Tensor");  //~ gil-held-blocking
  Float8TensorClass = cls.ptr();
}
