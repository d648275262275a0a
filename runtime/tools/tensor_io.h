// Reading and writing tensors as files: numpy .npy (read/write) and ONNX
// TensorProto .pb (read; the format of ONNX's test data sets). Malformed
// files throw kiln::Error with a message naming the file; they never crash.
#ifndef KILN_TOOLS_TENSOR_IO_H
#define KILN_TOOLS_TENSOR_IO_H

#include "kiln/runtime.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::io {

// A tensor and the name stored with it (TensorProto.name; "" for .npy).
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// The whole file; throws kiln::Error naming the path if it cannot be read.
std::vector<uint8_t> readFileBytes(const std::string &path);

// .npy format versions 1-3, little-endian, C order, dtypes f2/f4/f8,
// i1-i8, u1-u8, b1, and U<n> (unicode, as a string tensor). `what` names the
// source in messages.
Tensor parseNpy(const uint8_t *data, size_t size, const std::string &what);
Tensor readNpy(const std::string &path);
// The .npy encoding of `tensor`. bfloat16 has no numpy type code: it is
// written as uint16 ('<u2') holding the raw bits.
std::vector<uint8_t> encodeNpy(const Tensor &tensor);
void writeNpy(const std::string &path, const Tensor &tensor);

// An ONNX TensorProto in protobuf wire format (parsed by hand; no
// libprotobuf). Data in raw_data or in the typed repeated fields.
NamedTensor parseOnnxTensor(const uint8_t *data, size_t size,
                            const std::string &what);
NamedTensor readOnnxTensor(const std::string &path);

// .npy or .pb, by extension, else by content.
NamedTensor readTensorFile(const std::string &path);

} // namespace kiln::io

#endif // KILN_TOOLS_TENSOR_IO_H
