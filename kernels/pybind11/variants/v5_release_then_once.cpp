// V5: hand-written lock ordering: acquire (some callers run without the GIL), release, then
// std::call_once, and acquire inside the lambda. Clean: the same order as pybind11's
// gil_safe_call_once_and_store, once-flag -> GIL; nobody waits on the flag while holding the GIL.
#include <mutex>

#include "fp8ext.h"

static std::once_flag extension_init_flag;

void init_extension() {
  py::gil_scoped_acquire gil;
  py::gil_scoped_release nogil;
  std::call_once(extension_init_flag, [] {
    delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
    py::gil_scoped_acquire gil_inside;
    Float8TensorClass = py::getattr(py::module_::import("fp8ext.float8_tensor"), "Float8Tensor").release().ptr();
  });
}
