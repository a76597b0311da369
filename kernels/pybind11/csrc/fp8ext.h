// Shared declarations of the fp8ext extension (a TransformerEngine-shaped pybind11 module).
//
// The module is linked from: module.cpp (the bindings), ops.cpp (the binding bodies, each calling
// init_extension() first), a kernels backend (kernels.cu or kernels_cpu.cpp), and exactly one
// file of ../variants/ that defines init_extension(). The variants differ only in how that lazy
// initialisation handles the GIL; everything else is shared, and GIL-correct.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace py = pybind11;

// Lazy one-time initialisation, defined by the variant file. Imports fp8ext.float8_tensor and
// caches its Float8Tensor class in Float8TensorClass (TE: init_extension() in pybind.cpp, which
// imports transformer_engine.pytorch.tensor.float8_tensor). Called first by every binding, from
// bindings that hold the GIL and from fp8_transpose, which runs with the GIL released.
void init_extension();

// Set by init_extension(): a strong reference to fp8ext.float8_tensor.Float8Tensor, intentionally
// never released (TE keeps PyTypeObject* caches the same way), so that no destructor runs after
// the interpreter is finalised.
extern PyObject* Float8TensorClass;

// Test hook: sleeps for the number of milliseconds given by environment variable `name` (no-op if
// unset or not positive). Plain C++, no Python; the variants call it inside their once-region.
void delay_from_env(const char* name);

// ---- binding bodies (ops.cpp) ----

// x: a C-contiguous float32 buffer of 1 or 2 dimensions. Returns (fp8 E4M3 bytes of x*scale, amax
// of x). Runs with the GIL held.
py::tuple quantize(py::buffer x, float scale);

// data: fp8 bytes, or a fp8ext.float8_tensor.Float8Tensor (then scale_inv defaults to the
// tensor's). Returns the float32 values as bytes. Runs with the GIL held.
py::bytes dequantize(py::object data, py::object scale_inv);

// Transpose of a rows x cols fp8 matrix given as bytes; returns cols x rows bytes as a list of
// ints. Bound with call_guard<gil_scoped_release>: takes and returns C++ types only, converted by
// pybind11 while it still (or again) holds the GIL.
std::vector<uint8_t> fp8_transpose(const std::string& data, int64_t rows, int64_t cols);

// Times the kernels on a generated rows x cols matrix; returns a dict. Runs with the GIL held.
py::dict benchmark(int64_t rows, int64_t cols, int iters);
