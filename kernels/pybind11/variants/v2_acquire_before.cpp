// V2: acquire the GIL before std::call_once -- what landed upstream in TransformerEngine
// (6bafd344, "Acquire the GIL in lazy init_extension (#3255)").
//
// Every caller now holds the GIL while it waits on the once-flag. The import run by the winner can
// drop the GIL (time.sleep, I/O, importlib locks, an eval-loop thread switch) and must take it back
// while still owning the flag: a deadlock with any other caller (scenarios S2, S3).
#include <mutex>

#include "fp8ext.h"

static std::once_flag extension_init_flag;

void init_extension() {
  py::gil_scoped_acquire gil;
  std::call_once(extension_init_flag, [] {  //~ gil-held-blocking
    delay_from_env("FP8EXT_LAMBDA_DELAY_MS");
    Float8TensorClass = py::getattr(py::module_::import("fp8ext.float8_tensor"), "Float8Tensor").release().ptr();
  });
}
