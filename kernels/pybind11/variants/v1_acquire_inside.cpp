// V1: acquire the GIL inside the once-lambda -- the first revision of TransformerEngine PR #3255
// (ce243b2c).
//
// A released caller (fp8_transpose) takes the once-flag, then the GIL; a GIL-holding caller
// (quantize) takes the GIL, then the once-flag: a lock-order inversion (scenario S2). The import
// inside may also drop the GIL while two GIL-holding callers meet on the flag (scenario S3).
#include <mutex>

#include "fp8ext.h"

static std::once_flag extension_init_flag;

void init_extension() {
  std::call_once(extension_init_flag, [] {
    delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
    py::gil_scoped_acquire gil;  //~ gil-lock-inversion
    Float8TensorClass = py::getattr(py::module_::import("fp8ext.float8_tensor"), "Float8Tensor").release().ptr();
  });
}
