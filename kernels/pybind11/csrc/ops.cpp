// Binding bodies. Like TransformerEngine's csrc/extensions/*.cpp, every one calls init_extension()
// first. Apart from that call, this file is GIL-correct: the GIL-holding bodies use the Python API
// freely, and fp8_transpose (released) touches only C++ types.
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "fp8ext.h"
#include "kernels.h"

PyObject* Float8TensorClass = nullptr;

void delay_from_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return;
  const long ms = std::strtol(value, nullptr, 10);
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

namespace {

bool is_float32_format(const std::string& format) {
  return format == "f" || format == "<f" || format == "=f" || format == "@f";
}

}  // namespace

py::tuple quantize(py::buffer x, float scale) {
  init_extension();
  py::buffer_info info = x.request();
  if (info.ndim < 1 || info.ndim > 2) throw py::value_error("quantize: expected a 1-D or 2-D buffer");
  if (info.itemsize != static_cast<py::ssize_t>(sizeof(float)) || !is_float32_format(info.format))
    throw py::type_error("quantize: expected a float32 buffer, got format '" + info.format + "'");
  py::ssize_t expected_stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != expected_stride)
      throw py::value_error("quantize: expected a C-contiguous buffer");
    expected_stride *= info.shape[d];
  }
  const size_t n = static_cast<size_t>(info.size);
  std::string out(n, '\0');
  const float amax =
      fp8ext::quantize_e4m3(static_cast<const float*>(info.ptr), reinterpret_cast<uint8_t*>(&out[0]), n, scale);
  return py::make_tuple(py::bytes(out), amax);
}

py::bytes dequantize(py::object data, py::object scale_inv) {
  init_extension();
  py::object payload = data;
  if (py::isinstance(data, py::handle(Float8TensorClass))) {
    payload = data.attr("_data");
    if (scale_inv.is_none()) scale_inv = data.attr("_scale_inv");
  }
  if (scale_inv.is_none()) throw py::type_error("dequantize: scale_inv is required for raw fp8 bytes");
  if (!py::isinstance<py::bytes>(payload)) throw py::type_error("dequantize: expected bytes or a Float8Tensor");
  const std::string raw = payload.cast<std::string>();
  const float sinv = scale_inv.cast<float>();
  std::string out(raw.size() * sizeof(float), '\0');
  fp8ext::dequantize_e4m3(reinterpret_cast<const uint8_t*>(raw.data()), reinterpret_cast<float*>(&out[0]),
                          raw.size(), sinv);
  return py::bytes(out);
}

std::vector<uint8_t> fp8_transpose(const std::string& data, int64_t rows, int64_t cols) {
  init_extension();
  if (rows < 0 || cols < 0 || static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) != data.size())
    throw std::invalid_argument("fp8_transpose: len(data) must equal rows * cols");
  std::vector<uint8_t> out(data.size());
  fp8ext::transpose_u8(reinterpret_cast<const uint8_t*>(data.data()), out.data(), static_cast<size_t>(rows),
                       static_cast<size_t>(cols));
  return out;
}

py::dict benchmark(int64_t rows, int64_t cols, int iters) {
  init_extension();
  if (rows <= 0 || cols <= 0 || iters <= 0) throw py::value_error("benchmark: rows, cols and iters must be positive");
  const fp8ext::BenchResult r = fp8ext::benchmark(static_cast<size_t>(rows), static_cast<size_t>(cols), iters);
  py::dict d;
  d["backend"] = fp8ext::backend_name();
  d["device"] = fp8ext::device_description();
  d["rows"] = rows;
  d["cols"] = cols;
  d["iters"] = r.iters;
  d["quantize_ms"] = r.quantize_ms;
  d["dequantize_ms"] = r.dequantize_ms;
  d["transpose_ms"] = r.transpose_ms;
  return d;
}
