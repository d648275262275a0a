// The kiln_tensor object behind the opaque C handle.
#ifndef KILN_RUNTIME_TENSOR_H
#define KILN_RUNTIME_TENSOR_H

#include "kiln/runtime.h"

#include <memory>
#include <vector>

struct kiln_tensor {
  kiln_dtype dtype = KILN_DTYPE_UNDEFINED;
  std::vector<int64_t> shape;
  void *data = nullptr;
  size_t bytes = 0; // dense size: product(shape) * element size
  bool owned = false;
  // The text of a string tensor's elements when the tensor owns it
  // (kiln_tensor_set_strings, and every output of a run).
  std::unique_ptr<char[]> strings;
};

namespace kiln::rt {

// Computes product(shape) * element size, rejecting negative dimensions and
// overflow. On failure stores the message and returns the status.
kiln_status denseSize(kiln_dtype dtype, int32_t rank, const int64_t *shape,
                      size_t *elements, size_t *bytes);

// Whether `desc` has a dim known only at run time (a symbolic input dim, an
// output shaped by the run).
bool hasRunTimeExtent(const kiln_tensor_desc &desc);

} // namespace kiln::rt

#endif // KILN_RUNTIME_TENSOR_H
