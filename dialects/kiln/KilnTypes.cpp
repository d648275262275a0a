//===- KilnTypes.cpp - Element types and the runtime ABI ------------------===//
#include "dialects/kiln/KilnTypes.h"

#include "kiln/abi.h"

using namespace mlir;

int32_t mlir::kiln::abiDtypeOf(Type t) {
  if (isa<StringType>(t))
    return KILN_DTYPE_STRING;
  if (t.isF32())
    return KILN_DTYPE_F32;
  if (t.isF64())
    return KILN_DTYPE_F64;
  if (t.isF16())
    return KILN_DTYPE_F16;
  if (t.isBF16())
    return KILN_DTYPE_BF16;
  if (t.isInteger(1))
    return KILN_DTYPE_BOOL;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8:
      return u ? KILN_DTYPE_U8 : KILN_DTYPE_I8;
    case 16:
      return u ? KILN_DTYPE_U16 : KILN_DTYPE_I16;
    case 32:
      return u ? KILN_DTYPE_U32 : KILN_DTYPE_I32;
    case 64:
      return u ? KILN_DTYPE_U64 : KILN_DTYPE_I64;
    }
  }
  return KILN_DTYPE_UNDEFINED;
}
