//===- RunTimeBroadcast.cpp - ONNX broadcasting of run-time extents -------===//
//
// An elementwise op's maps are fixed when it is lowered, but an input
// extent known only at run time may turn out to be 1 where the result's is
// larger, and ONNX broadcasts it then. For each result dim, the result
// extent is the first input extent that is not 1 (or the static one), and
// every input's must be that extent or 1 (a run-time check). An input whose
// extent may differ from the result's becomes
//
//   %same = arith.cmpi eq, %extent, %result_extent
//   %in = scf.if %same -> tensor<?x..> {
//     scf.yield %input                       // the usual case: no copy
//   } else {
//     // a gather that reads index 0 along the dims whose extent is 1
//   }
//
// When the extents are one value (one symbol: kiln-unify-symbol-dims), the
// comparison, the check and the scf.if fold away after lowering.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A dim of an input to broadcast when its run-time extent is 1: the
/// input's dim and the result extent along it.
struct PendingDim {
  int64_t dim;
  Value resultExtent;
};

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value isEqual(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
}

/// `input` with the extents of `dims` replaced by the result's: itself when
/// they agree, else a gather reading index 0 along those of extent 1.
Value broadcastOnes(OpBuilder &b, Location loc, Value input,
                    ArrayRef<PendingDim> dims, RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t offset = resultType.getRank() - type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<Value> extents(type.getRank()), isOne(type.getRank());
  Value same, one = indexConst(b, loc, 1);
  for (const PendingDim &p : dims) {
    shape[p.dim] = resultType.getDimSize(offset + p.dim);
    extents[p.dim] = p.resultExtent;
    Value extent = tensor::DimOp::create(b, loc, input, p.dim);
    isOne[p.dim] = isEqual(b, loc, extent, one);
    Value eq = isEqual(b, loc, extent, p.resultExtent);
    same = same ? arith::AndIOp::create(b, loc, same, eq).getResult() : eq;
  }
  auto wide = type.clone(shape);
  auto ifOp = scf::IfOp::create(
      b, loc, same,
      [&](OpBuilder &t, Location l) {
        Value v = input;
        if (wide != type)
          v = tensor::CastOp::create(t, l, wide, v);
        scf::YieldOp::create(t, l, v);
      },
      [&](OpBuilder &e, Location l) {
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < wide.getRank(); ++d)
          if (wide.isDynamicDim(d))
            sizes.push_back(
                extents[d] ? extents[d]
                           : tensor::DimOp::create(e, l, input, d).getResult());
        Value init = createEmptyTensor(e, l, wide, sizes);
        Value zero = indexConst(e, l, 0);
        auto gather = linalg::GenericOp::create(
            e, l, TypeRange{wide}, ValueRange{}, ValueRange{init},
            SmallVector<AffineMap>{e.getMultiDimIdentityMap(wide.getRank())},
            parallelIterators(wide.getRank()),
            [&](OpBuilder &g, Location gl, ValueRange) {
              SmallVector<Value> at;
              for (int64_t d = 0; d < wide.getRank(); ++d) {
                Value i = linalg::IndexOp::create(g, gl, d);
                if (isOne[d])
                  i = arith::SelectOp::create(g, gl, isOne[d], zero, i);
                at.push_back(i);
              }
              linalg::YieldOp::create(
                  g, gl,
                  tensor::ExtractOp::create(g, gl, input, at).getResult());
            });
        scf::YieldOp::create(e, l, gather.getResult(0));
      });
  return ifOp.getResult(0);
}
} // namespace

RunTimeBroadcast mlir::kiln::broadcastRunTimeExtents(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
    int64_t trailing, ValueRange known) {
  RunTimeBroadcast out{SmallVector<Value>(inputs), {}};
  int64_t rank = resultType.getRank();
  SmallVector<SmallVector<PendingDim>> pending(inputs.size());
  Value one = indexConst(b, loc, 1);
  for (int64_t d = 0; d + trailing < rank; ++d) {
    // The result extent: the result's static one or the caller's (fixed),
    // else an input's static extent that is not 1, else the first run-time
    // extent that is not 1.
    Value fixed;
    if (!resultType.isDynamicDim(d))
      fixed = indexConst(b, loc, resultType.getDimSize(d));
    else if (!known.empty() && known[d])
      fixed = known[d];
    SmallVector<std::tuple<size_t, int64_t, Value>> runTime;
    SmallVector<int64_t> statics;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto type = dyn_cast<RankedTensorType>(input.getType());
      int64_t at = type ? d - (rank - type.getRank()) : -1;
      if (at < 0)
        continue;
      if (type.isDynamicDim(at))
        runTime.push_back({i, at, tensor::DimOp::create(b, loc, input, at)});
      else if (type.getDimSize(at) != 1 &&
               !llvm::is_contained(statics, type.getDimSize(at)))
        statics.push_back(type.getDimSize(at));
    }
    Value extent = fixed;
    if (!extent && !statics.empty())
      extent = indexConst(b, loc, statics.front());
    for (auto &[i, at, e] : runTime) {
      if (fixed || !statics.empty())
        break;
      extent = !extent ? e
                       : arith::SelectOp::create(
                             b, loc, isEqual(b, loc, extent, one), e, extent)
                             .getResult();
    }
    if (!extent)
      extent = one; // every input has extent 1 here
    if (resultType.isDynamicDim(d))
      out.dynamicSizes.push_back(extent);
    // Each run-time extent is the result's or 1; those that may be 1 where
    // the result's is not are broadcast.
    Value ok;
    bool resultIsOne =
        !resultType.isDynamicDim(d) && resultType.getDimSize(d) == 1;
    // A run-time result extent the caller gave must match the static ones.
    if (fixed && resultType.isDynamicDim(d))
      for (int64_t size : statics) {
        Value fits = isEqual(b, loc, fixed, indexConst(b, loc, size));
        ok = ok ? arith::AndIOp::create(b, loc, ok, fits).getResult() : fits;
      }
    for (auto &[i, at, e] : runTime) {
      if (e == extent)
        continue;
      Value fits = arith::OrIOp::create(b, loc, isEqual(b, loc, e, extent),
                                        isEqual(b, loc, e, one));
      ok = ok ? arith::AndIOp::create(b, loc, ok, fits).getResult() : fits;
      if (!resultIsOne)
        pending[i].push_back({at, extent});
    }
    if (ok)
      emitRuntimeCheck(b, loc, ok,
                       "the inputs do not broadcast: along result dim " +
                           Twine(d) +
                           " a run-time extent is neither the others' nor 1");
  }
  for (auto [i, dims] : llvm::enumerate(pending))
    if (!dims.empty())
      out.inputs[i] = broadcastOnes(b, loc, out.inputs[i], dims, resultType);
  return out;
}
