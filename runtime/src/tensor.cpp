#include "tensor.h"

#include "aligned_buffer.h"
#include "status.h"

#include <algorithm>
#include <new>

using namespace kiln::rt;

kiln_status kiln::rt::denseSize(kiln_dtype dtype, int32_t rank,
                                const int64_t *shape, size_t *elements,
                                size_t *bytes) {
  size_t elementSize = kiln_dtype_size(dtype);
  if (elementSize == 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "unknown dtype " + std::to_string(static_cast<int>(dtype)));
  if (rank < 0 || (rank > 0 && !shape))
    return fail(KILN_ERROR_INVALID_ARGUMENT, "invalid tensor rank or shape");
  size_t count = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "negative dimension in shape " + shapeString(shape, rank));
    size_t dim = static_cast<size_t>(shape[i]);
    if (dim != 0 && count > SIZE_MAX / elementSize / dim)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "tensor of shape " +
                                                   shapeString(shape, rank) +
                                                   " is too large");
    count *= dim;
  }
  *elements = count;
  *bytes = count * elementSize;
  return KILN_OK;
}

namespace {
kiln_status makeTensor(kiln_dtype dtype, int32_t rank, const int64_t *shape,
                       kiln_tensor **out, size_t *bytes) {
  if (!out)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "output pointer is NULL");
  *out = nullptr;
  size_t elements;
  if (kiln_status status = denseSize(dtype, rank, shape, &elements, bytes))
    return status;
  auto *tensor = new (std::nothrow) kiln_tensor;
  if (!tensor)
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  try {
    tensor->shape.assign(shape, shape + rank);
  } catch (const std::bad_alloc &) {
    delete tensor;
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  tensor->dtype = dtype;
  tensor->bytes = *bytes;
  *out = tensor;
  return KILN_OK;
}
} // namespace

extern "C" kiln_status kiln_tensor_create(kiln_dtype dtype, int32_t rank,
                                          const int64_t *shape,
                                          kiln_tensor **out) {
  size_t bytes;
  if (kiln_status status = makeTensor(dtype, rank, shape, out, &bytes))
    return status;
  (*out)->data = allocateAligned(bytes);
  if (!(*out)->data) {
    delete *out;
    *out = nullptr;
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "out of memory allocating a tensor of " +
                    std::to_string(bytes) + " bytes");
  }
  (*out)->owned = true;
  return KILN_OK;
}

extern "C" kiln_status kiln_tensor_wrap(kiln_dtype dtype, int32_t rank,
                                        const int64_t *shape, void *data,
                                        size_t bytes, kiln_tensor **out) {
  size_t needed;
  if (kiln_status status = makeTensor(dtype, rank, shape, out, &needed))
    return status;
  std::string problem;
  if (!data && needed > 0)
    problem = "data is NULL";
  else if (bytes < needed)
    problem = "buffer has " + std::to_string(bytes) + " bytes, shape " +
              shapeString(shape, rank) + " needs " + std::to_string(needed);
  // Generated code may use aligned element loads.
  else if (reinterpret_cast<uintptr_t>(data) % kiln_dtype_size(dtype) != 0)
    problem = "data is not aligned to its element size";
  if (!problem.empty()) {
    delete *out;
    *out = nullptr;
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_wrap: " + problem);
  }
  (*out)->data = data;
  return KILN_OK;
}

extern "C" void kiln_tensor_destroy(kiln_tensor *tensor) {
  if (!tensor)
    return;
  if (tensor->owned)
    freeAligned(tensor->data);
  delete tensor;
}

extern "C" kiln_dtype kiln_tensor_dtype(const kiln_tensor *tensor) {
  return tensor ? tensor->dtype : KILN_DTYPE_UNDEFINED;
}

extern "C" int32_t kiln_tensor_rank(const kiln_tensor *tensor) {
  return tensor ? static_cast<int32_t>(tensor->shape.size()) : 0;
}

extern "C" const int64_t *kiln_tensor_shape(const kiln_tensor *tensor) {
  return tensor ? tensor->shape.data() : nullptr;
}

extern "C" size_t kiln_tensor_num_elements(const kiln_tensor *tensor) {
  if (!tensor)
    return 0;
  return tensor->bytes / kiln_dtype_size(tensor->dtype);
}

extern "C" size_t kiln_tensor_size_bytes(const kiln_tensor *tensor) {
  return tensor ? tensor->bytes : 0;
}

extern "C" void *kiln_tensor_data(kiln_tensor *tensor) {
  return tensor ? tensor->data : nullptr;
}

bool kiln::rt::hasRunTimeExtent(const kiln_tensor_desc &desc) {
  return std::any_of(desc.shape, desc.shape + desc.rank,
                     [](int64_t d) { return d < 0; });
}
