#pragma once
#include <vector>

namespace fp8 {
void init_extension();
std::vector<float> quantize(const std::vector<float> &input);
std::vector<unsigned char> fp8_transpose(const std::vector<unsigned char> &input);
}  // namespace fp8
