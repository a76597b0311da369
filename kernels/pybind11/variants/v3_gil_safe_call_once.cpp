// V3: pybind11's gil_safe_call_once_and_store (since pybind11 2.12). Clean.
//
// call_once_and_store_result() needs the GIL on entry (fp8_transpose runs without it, hence the
// acquire), then releases the GIL before it blocks on its once-flag and re-acquires it inside:
// the single lock order once-flag -> GIL, so the import may drop and re-take the GIL freely.
#include <pybind11/gil_safe_call_once.h>

#include "fp8ext.h"

void init_extension() {
  py::gil_scoped_acquire gil;
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
  Float8TensorClass = storage
                          .call_once_and_store_result([] {
                            delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
                            return py::module_::import("fp8ext.float8_tensor").attr("Float8Tensor");
                          })
                          .get_stored()
                          .ptr();
}
