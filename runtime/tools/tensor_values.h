// Element-wise views of tensors for the tools: read or write any element as
// a double, whatever the dtype. Slower than typed loops, but the tools only
// touch each output once.
#ifndef KILN_TOOLS_TENSOR_VALUES_H
#define KILN_TOOLS_TENSOR_VALUES_H

#include "kiln/runtime.hpp"

#include <random>
#include <string>

namespace kiln::runner {

bool isFloatDtype(kiln_dtype dtype);

// The i-th element converted to double (exact for all but 64-bit integers
// above 2^53).
double elementAt(const Tensor &tensor, size_t index);

// "[1,3,224,224]"
std::string shapeText(const Tensor &tensor);

// "float32 [2,3] min=-1 max=4.5 mean=0.25" (plus "nan=N" when there are NaNs).
std::string summarize(const Tensor &tensor);

// Random values: floats uniform in [-1,1), integers uniform in [0,10), bools
// 0 or 1. The generator is fixed (mt19937_64) so a seed means the same data
// everywhere.
Tensor randomTensor(kiln_dtype dtype, const std::vector<int64_t> &shape,
                    std::mt19937_64 &rng);

// ONNX's backend test data stores bfloat16 tensors as UINT16 tensors of the
// bit patterns (numpy has no bfloat16). When `wanted` is bf16 and `tensor` is
// uint16, returns the same bits as a bf16 tensor; otherwise `tensor` itself.
Tensor bfloat16FromBits(Tensor tensor, kiln_dtype wanted);

} // namespace kiln::runner

#endif // KILN_TOOLS_TENSOR_VALUES_H
