//===- QuantizedContraction.h - The int8 contraction marker ------*- C++
//-*-===//
//
// kiln.quantized_matmul lowers to a linalg.generic over 8-bit operands with
// an f32 accumulator (passes/lowering/QuantizedMatmul.cpp) and marks it, so
// the CPU backend can give it the VNNI micro-kernel without re-deriving the
// integer semantics from its body.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H
#define KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {
/// On the linalg.generic computing acc + sitofp(ext(a) * extsi(b)) over
/// (m, n, k) with i8 operands: a BoolAttr, true when `a` is unsigned.
constexpr llvm::StringLiteral kInt8ContractionAttr = "kiln.int8_contraction";

/// On such a generic that is an NHWC x HWCF convolution (kiln.conv with
/// input_zero_point, passes/lowering/QuantizedConv.cpp), looping over
/// (n, oh, ow, f, kh, kw, c): a DenseI64ArrayAttr [sh, sw, dh, dw].
constexpr llvm::StringLiteral kInt8ConvAttr = "kiln.int8_conv";

/// That generic's body: `acc + sitofp(ext(a) * extsi(b))`, the byte product
/// in i32 (exact), added as f32; `a` zero-extended when unsigned.
inline Value int8MultiplyAdd(OpBuilder &b, Location loc, Value a, Value w,
                             Value acc, bool aUnsigned) {
  Type i32 = b.getI32Type();
  Value x = aUnsigned ? Value(arith::ExtUIOp::create(b, loc, i32, a))
                      : Value(arith::ExtSIOp::create(b, loc, i32, a));
  Value y = arith::ExtSIOp::create(b, loc, i32, w);
  Value p = arith::SIToFPOp::create(b, loc, b.getF32Type(),
                                    arith::MulIOp::create(b, loc, x, y));
  return arith::AddFOp::create(b, loc, acc, p);
}
} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H
