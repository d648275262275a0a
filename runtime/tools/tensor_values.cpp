#include "tensor_values.h"

#include "float16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kiln::runner {

bool isFloatDtype(kiln_dtype dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F64 ||
         dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

double elementAt(const Tensor &tensor, size_t index) {
  const void *data = tensor.data();
  switch (tensor.dtype()) {
  case KILN_DTYPE_F32:
    return static_cast<const float *>(data)[index];
  case KILN_DTYPE_F64:
    return static_cast<const double *>(data)[index];
  case KILN_DTYPE_F16:
    return io::halfToFloat(static_cast<const uint16_t *>(data)[index]);
  case KILN_DTYPE_BF16:
    return io::bfloat16ToFloat(static_cast<const uint16_t *>(data)[index]);
  case KILN_DTYPE_I8:
    return static_cast<const int8_t *>(data)[index];
  case KILN_DTYPE_U8:
  case KILN_DTYPE_BOOL:
    return static_cast<const uint8_t *>(data)[index];
  case KILN_DTYPE_I16:
    return static_cast<const int16_t *>(data)[index];
  case KILN_DTYPE_U16:
    return static_cast<const uint16_t *>(data)[index];
  case KILN_DTYPE_I32:
    return static_cast<const int32_t *>(data)[index];
  case KILN_DTYPE_U32:
    return static_cast<const uint32_t *>(data)[index];
  case KILN_DTYPE_I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[index]);
  case KILN_DTYPE_U64:
    return static_cast<double>(static_cast<const uint64_t *>(data)[index]);
  case KILN_DTYPE_STRING:
  case KILN_DTYPE_UNDEFINED:
  case KILN_DTYPE_MIN_ENUM_:
  case KILN_DTYPE_MAX_ENUM_:
    break;
  }
  return 0;
}

std::string shapeText(const Tensor &tensor) {
  std::string text = "[";
  std::vector<int64_t> shape = tensor.shape();
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

static std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string summarize(const Tensor &tensor) {
  std::string text =
      std::string(kiln_dtype_name(tensor.dtype())) + " " + shapeText(tensor);
  if (tensor.dtype() == KILN_DTYPE_STRING) {
    // The first few strings, quoted.
    size_t count = tensor.numElements(), shown = std::min<size_t>(count, 8);
    text += " [";
    for (size_t i = 0; i < shown; ++i)
      text += (i ? ", \"" : "\"") + tensor.string(i) + "\"";
    return text + (shown < count ? ", ...]" : "]");
  }
  size_t count = tensor.numElements(), nans = 0;
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -lowest, sum = 0;
  for (size_t i = 0; i < count; ++i) {
    double value = elementAt(tensor, i);
    if (std::isnan(value)) {
      ++nans;
      continue;
    }
    lowest = std::min(lowest, value);
    highest = std::max(highest, value);
    sum += value;
  }
  if (count == nans)
    return text + (count ? " all NaN" : " (empty)");
  text += " min=" + number(lowest) + " max=" + number(highest) +
          " mean=" + number(sum / static_cast<double>(count - nans));
  if (nans)
    text += " nan=" + std::to_string(nans);
  return text;
}

Tensor randomTensor(kiln_dtype dtype, const std::vector<int64_t> &shape,
                    std::mt19937_64 &rng) {
  if (dtype == KILN_DTYPE_STRING) {
    // Decimal numbers, so models that parse their strings get valid input.
    size_t count = 1;
    for (int64_t d : shape)
      count *= static_cast<size_t>(d);
    std::vector<std::string> strings(count);
    for (std::string &s : strings)
      s = std::to_string(static_cast<int>(rng() % 1000) - 500);
    return Tensor::strings(shape, strings);
  }
  Tensor tensor = Tensor::create(dtype, shape);
  size_t count = tensor.numElements();
  void *data = tensor.data();
  // uniform_real_distribution's algorithm is left to the library; the
  // explicit formula keeps a seed's data identical across toolchains.
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  for (size_t i = 0; i < count; ++i) {
    double real = 2 * unit() - 1;
    uint64_t small = rng() % 10;
    switch (dtype) {
    case KILN_DTYPE_F32:
      static_cast<float *>(data)[i] = static_cast<float>(real);
      break;
    case KILN_DTYPE_F64:
      static_cast<double *>(data)[i] = real;
      break;
    case KILN_DTYPE_F16:
      static_cast<uint16_t *>(data)[i] =
          io::floatToHalf(static_cast<float>(real));
      break;
    case KILN_DTYPE_BF16:
      static_cast<uint16_t *>(data)[i] =
          io::floatToBfloat16(static_cast<float>(real));
      break;
    case KILN_DTYPE_BOOL:
      static_cast<uint8_t *>(data)[i] = small & 1;
      break;
    case KILN_DTYPE_I8:
    case KILN_DTYPE_U8:
      static_cast<uint8_t *>(data)[i] = static_cast<uint8_t>(small);
      break;
    case KILN_DTYPE_I16:
    case KILN_DTYPE_U16:
      static_cast<uint16_t *>(data)[i] = static_cast<uint16_t>(small);
      break;
    case KILN_DTYPE_I32:
    case KILN_DTYPE_U32:
      static_cast<uint32_t *>(data)[i] = static_cast<uint32_t>(small);
      break;
    case KILN_DTYPE_I64:
    case KILN_DTYPE_U64:
      static_cast<uint64_t *>(data)[i] = small;
      break;
    case KILN_DTYPE_STRING:
    case KILN_DTYPE_UNDEFINED:
    case KILN_DTYPE_MIN_ENUM_:
    case KILN_DTYPE_MAX_ENUM_:
      break;
    }
  }
  return tensor;
}

Tensor bfloat16FromBits(Tensor tensor, kiln_dtype wanted) {
  if (wanted != KILN_DTYPE_BF16 || tensor.dtype() != KILN_DTYPE_U16)
    return tensor;
  Tensor bits = Tensor::create(KILN_DTYPE_BF16, tensor.shape());
  size_t bytes = tensor.numElements() * sizeof(uint16_t);
  if (bytes)
    std::memcpy(bits.data(), tensor.data(), bytes);
  return bits;
}

} // namespace kiln::runner
