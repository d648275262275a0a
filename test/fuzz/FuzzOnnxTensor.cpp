// Fuzz target: the ONNX TensorProto (.pb) reader of kiln run
// (runtime/tools/onnx_tensor_format.cpp): parses or throws
// std::runtime_error, nothing else.
#include "tensor_io.h"

#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    kiln::io::parseOnnxTensor(data, size, "fuzz.pb");
  } catch (const std::runtime_error &) {
  }
  return 0;
}
