//===- ImportNNBuilder.h - Composing NN ops from kiln ops -------*- C++ -*-===//
//
// Internal to the importer's NN handlers. Losses, recurrent cells and the
// normalizations without a kiln op of their own are written as chains of
// kiln ops; NNBuilder builds each one with inference and folding and threads
// failure through, so a handler reads like the ONNX spec's formula and checks
// for failure once at the end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNX_IMPORTNNBUILDER_H
#define KILN_COMPILER_IMPORT_ONNX_IMPORTNNBUILDER_H

#include "compiler/import/onnx/NodeContext.h"

namespace mlir::kiln::onnx_import {

class NNBuilder {
public:
  explicit NNBuilder(NodeContext &c) : c(c) {}

  NodeContext &c;
  /// Set once any op fails to build (the reason is in c.error).
  bool failed = false;

  template <typename OpTy>
  Value op(mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    if (failed)
      return Value();
    for (Value v : operands)
      if (!v)
        return failed = true, Value();
    auto r = c.make<OpTy>(operands, attrs);
    if (mlir::failed(r))
      return failed = true, Value();
    return *r;
  }

  mlir::Type elementType(Value v) { return c.type(v).getElementType(); }
  llvm::ArrayRef<int64_t> shape(Value v) { return c.type(v).getShape(); }
  int64_t rank(Value v) { return c.type(v).getRank(); }

  /// A rank-0 constant of `like`'s element type.
  Value k(Value like, double v) {
    if (!like)
      return failed = true, Value();
    return c.scalar(elementType(like), v);
  }
  Value splat(llvm::ArrayRef<int64_t> shape, mlir::Type type, double v);

  Value add(Value a, Value b) { return op<AddOp>({a, b}); }
  Value sub(Value a, Value b) { return op<SubOp>({a, b}); }
  Value mul(Value a, Value b) { return op<MulOp>({a, b}); }
  Value div(Value a, Value b) { return op<DivOp>({a, b}); }
  Value max(Value a, Value b) { return op<MaxOp>({a, b}); }
  Value min(Value a, Value b) { return op<MinOp>({a, b}); }
  Value pow(Value a, Value b) { return op<PowOp>({a, b}); }
  Value neg(Value a) { return op<NegOp>({a}); }
  Value sqrt(Value a) { return op<SqrtOp>({a}); }
  Value exp(Value a) { return op<ExpOp>({a}); }
  Value log(Value a) { return op<LogOp>({a}); }
  Value abs(Value a) { return op<AbsOp>({a}); }
  Value sigmoid(Value a) { return op<SigmoidOp>({a}); }
  Value tanh(Value a) { return op<TanhOp>({a}); }
  Value relu(Value a) { return op<ReluOp>({a}); }
  /// Round half to even (ONNX Round; QuantizeLinear's rounding).
  Value round(Value a) { return op<RoundOp>({a}); }
  Value equal(Value a, Value b) { return op<EqualOp>({a, b}); }
  Value less(Value a, Value b) { return op<LessOp>({a, b}); }
  Value greater(Value a, Value b) { return op<GreaterOp>({a, b}); }
  Value select(Value cond, Value a, Value b) {
    return op<WhereOp>({cond, a, b});
  }
  Value matmul(Value a, Value b) { return op<MatMulOp>({a, b}); }
  Value clip(Value a, std::optional<double> lo, std::optional<double> hi);
  Value cast(Value a, mlir::Type to);
  /// A one-element tensor as a rank-0 tensor of type `to` (a shape-like
  /// or flag input given as [1] or []).
  Value scalarOf(Value a, mlir::Type to) { return cast(reshape(a, {}), to); }

  Value reshape(Value v, llvm::ArrayRef<int64_t> shape);
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm);
  /// [start, end) of dim `axis`, step 1 (or a reversal with step -1).
  Value slice(Value v, int64_t axis, int64_t start, int64_t end,
              int64_t step = 1);
  Value concat(mlir::ValueRange values, int64_t axis);
  Value reduceSum(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMean(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMax(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMin(Value v, llvm::ArrayRef<int64_t> axes, bool keepdims);

  /// The node's results (null for outputs the node does not request), or
  /// failure if anything above failed.
  FailureOr<llvm::SmallVector<Value>> done(llvm::ArrayRef<Value> results);
};

/// The most entries buildDFT's constant twiddle matrices may hold: a
/// length from a hostile file must not ask for gigabytes of them.
constexpr int64_t kMaxDFTTwiddles = int64_t(1) << 26;

/// DFT of `x` [batch, ..., N, ..., 1 or 2] along `axis` with dft_length
/// `length` (ImportDFT.cpp): [..., bins, ..., 2].
FailureOr<Value> buildDFT(NodeContext &c, Value x, int64_t axis, int64_t length,
                          bool onesided, bool inverse);

/// ONNX STFT (ImportSTFT.cpp), registered with DFT.
Results importSTFT(NodeContext &c);

/// kiln.conv of `x` and `weight` (and `bias` unless null) with the node's
/// Conv window attributes (kernel_shape, strides, pads, auto_pad, dilations,
/// group), for Conv and its integer variants.
FailureOr<Value> buildConv(NodeContext &c, Value x, Value weight, Value bias);

/// Dims [from, to) as a list, for reduction axes.
llvm::SmallVector<int64_t> dimRange(int64_t from, int64_t to);

// Handler tables of the NN family, merged by registerNNHandlers.
void registerLossHandlers(llvm::StringMap<OpHandler> &table);
void registerRecurrentHandlers(llvm::StringMap<OpHandler> &table);
void registerNNNormHandlers(llvm::StringMap<OpHandler> &table);
void registerQuantHandlers(llvm::StringMap<OpHandler> &table);
void registerEinsumHandlers(llvm::StringMap<OpHandler> &table);
void registerDetHandlers(llvm::StringMap<OpHandler> &table);
void registerRoiAlignHandlers(llvm::StringMap<OpHandler> &table);
void registerNMSHandlers(llvm::StringMap<OpHandler> &table);
void registerDFTHandlers(llvm::StringMap<OpHandler> &table);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_IMPORTNNBUILDER_H
