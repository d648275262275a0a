// Element type names and sizes; names follow numpy/ONNX spelling so messages
// and tool output match what users see in their Python tooling.
#include "kiln/runtime.h"

extern "C" uint32_t kiln_runtime_abi_version(void) { return KILN_ABI_VERSION; }

extern "C" const char *kiln_dtype_name(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return "float32";
  case KILN_DTYPE_U8:
    return "uint8";
  case KILN_DTYPE_I8:
    return "int8";
  case KILN_DTYPE_U16:
    return "uint16";
  case KILN_DTYPE_I16:
    return "int16";
  case KILN_DTYPE_I32:
    return "int32";
  case KILN_DTYPE_I64:
    return "int64";
  case KILN_DTYPE_BOOL:
    return "bool";
  case KILN_DTYPE_STRING:
    return "string";
  case KILN_DTYPE_F16:
    return "float16";
  case KILN_DTYPE_F64:
    return "float64";
  case KILN_DTYPE_U32:
    return "uint32";
  case KILN_DTYPE_U64:
    return "uint64";
  case KILN_DTYPE_BF16:
    return "bfloat16";
  case KILN_DTYPE_UNDEFINED:
  case KILN_DTYPE_MIN_ENUM_:
  case KILN_DTYPE_MAX_ENUM_:
    break;
  }
  return "undefined";
}

extern "C" size_t kiln_dtype_size(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_U8:
  case KILN_DTYPE_I8:
  case KILN_DTYPE_BOOL:
    return 1;
  case KILN_DTYPE_U16:
  case KILN_DTYPE_I16:
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16:
    return 2;
  case KILN_DTYPE_F32:
  case KILN_DTYPE_I32:
  case KILN_DTYPE_U32:
    return 4;
  case KILN_DTYPE_I64:
  case KILN_DTYPE_F64:
  case KILN_DTYPE_U64:
    return 8;
  case KILN_DTYPE_STRING:
    return sizeof(const char *);
  case KILN_DTYPE_UNDEFINED:
  case KILN_DTYPE_MIN_ENUM_:
  case KILN_DTYPE_MAX_ENUM_:
    break;
  }
  return 0;
}
