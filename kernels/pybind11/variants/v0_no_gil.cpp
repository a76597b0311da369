// V0: no GIL handling at all -- TransformerEngine's shape from 9dac78e (v2.14) to 3e7ae6ce.
//
// fp8_transpose is bound with call_guard<gil_scoped_release>; when it is the first binding called,
// the once-lambda imports a module without holding the GIL: a crash (scenarios S1, S2).
// GIL-holding bindings (quantize, dequantize) enter std::call_once holding the GIL while the
// winner runs an import that may drop and re-take the GIL: a deadlock (scenario S3).
#include <mutex>

#include "fp8ext.h"

static std::once_flag extension_init_flag;

void init_extension() {
  std::call_once(extension_init_flag, [] {  //~ gil-held-blocking
    delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
    Float8TensorClass = py::getattr(py::module_::import("fp8ext.float8_tensor"), "Float8Tensor").release().ptr();  //~ missing-gil
  });
}
