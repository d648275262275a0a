//===- NormalizationKernels.cpp - Row reductions as block kernels ---------===//
//
// kiln.layer_norm, kiln.softmax and kiln.log_softmax over the trailing dims
// of a static f32 tensor, as one kernel with a block of 128 threads per
// row: the threads stride over the row's columns (neighbours read
// neighbouring elements), combine their partial results through shared
// memory (a tree of 7 halving steps between barriers) and write the row in
// a last pass:
//
//   layer_norm   sum -> mean; sum of squared deviations -> variance (two
//                passes, as the reference); (x - mean) * rstd * scale + bias
//   softmax      max; sum of exp(x - max); exp(x - max) / sum
//   log_softmax  the same, then x - max - log(sum)
//
// Runs at the lowering stage for GPU targets (before kiln-lower-to-linalg,
// like the attention kernel); the kernel is written on buffers. Other
// shapes (a softmax over a middle axis, a scale that is neither per column
// nor a scalar, other element types) keep the generic lowering.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/KernelBuilder.h"
#include "backends/gpu/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_NORMALIZATIONKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
constexpr int64_t kThreads = 128;

enum class RowKind { LayerNorm, Softmax, LogSoftmax };

struct RowOp {
  Operation *op;
  RowKind kind;
  int64_t axis = 0, rows = 0, cols = 0;
  Value input, scale, bias;
  double epsilon = 0;
};

/// Elements of `value` if it is a static f32 tensor of `cols` elements or
/// one (read per column or as a scalar).
bool isColumnOperand(Value value, int64_t cols) {
  if (!value)
    return true;
  if (!isStaticF32Tensor(value))
    return false;
  int64_t n = cast<RankedTensorType>(value.getType()).getNumElements();
  return n == cols || n == 1;
}

FailureOr<RowOp> match(Operation *op) {
  RowOp row;
  row.op = op;
  int64_t axis = 0;
  if (auto ln = dyn_cast<LayerNormOp>(op)) {
    row.kind = RowKind::LayerNorm;
    row.input = ln.getInput();
    row.scale = ln.getScale();
    row.bias = ln.getBias();
    row.epsilon = ln.getEpsilon().convertToDouble();
    axis = ln.getAxis();
  } else if (auto sm = dyn_cast<SoftmaxOp>(op)) {
    row.kind = RowKind::Softmax;
    row.input = sm.getInput();
    axis = sm.getAxis();
  } else if (auto lsm = dyn_cast<LogSoftmaxOp>(op)) {
    row.kind = RowKind::LogSoftmax;
    row.input = lsm.getInput();
    axis = lsm.getAxis();
  } else {
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(row.input.getType());
  if (!type || !type.getElementType().isF32() ||
      op->getResult(0).getType() != type)
    return failure();
  int64_t rank = type.getRank();
  if (axis < 0)
    axis += rank;
  // Softmax normalizes one axis: it must be the last to make rows.
  if (axis < 0 || axis >= rank ||
      (row.kind != RowKind::LayerNorm && axis != rank - 1))
    return failure();
  row.axis = axis;
  row.rows = 1;
  row.cols = 1;
  // The rows may be run-time extents (a symbolic batch or sequence); each
  // row's columns are static.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d);
    if (d >= axis && ShapedType::isDynamic(size))
      return failure();
    if (d >= axis)
      row.cols *= size;
    else if (ShapedType::isDynamic(size) || ShapedType::isDynamic(row.rows))
      row.rows = ShapedType::kDynamic;
    else
      row.rows *= size;
  }
  if (row.cols == 0 || row.rows == 0 || !isColumnOperand(row.scale, row.cols) ||
      !isColumnOperand(row.bias, row.cols))
    return failure();
  return row;
}

class RowKernelWriter {
public:
  RowKernelWriter(OpBuilder &b, const RowOp &row) : b(b), row(row) {}
  Value write();

private:
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  /// The [rows, cols] view of a buffer of the input's shape.
  Value rowsView(Value buffer);
  /// A buffer of a scale/bias tensor's data as [cols] or one element.
  Value columnsView(Value tensor);
  /// The block's combination (sum or max) of every thread's `value`.
  Value blockReduce(Value value, bool max);
  /// `body(column, accumulator)` over this thread's columns.
  Value overColumns(Value init,
                    function_ref<Value(Value column, Value acc)> body);
  Value columnOperand(Value buffer, Value column);

  OpBuilder &b;
  const RowOp &row;
  Location loc = row.op->getLoc();
  Value shared, tid, rowIndex, in;
};

Value RowKernelWriter::rowsView(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  ReassociationIndices lead, trail;
  for (int64_t d = 0; d < rank; ++d)
    (d < row.axis ? lead : trail).push_back(d);
  if (lead.size() == 1 && trail.size() == 1)
    return buffer;
  if (lead.empty()) {
    // One row: [cols] -> [1, cols].
    Value flat =
        rank == 1 ? buffer
                  : memref::CollapseShapeOp::create(
                        b, loc, buffer, ArrayRef<ReassociationIndices>{trail})
                        .getResult();
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1, row.cols}, b.getF32Type()), flat,
        ArrayRef<ReassociationIndices>{{0, 1}});
  }
  return memref::CollapseShapeOp::create(
      b, loc, buffer, ArrayRef<ReassociationIndices>{lead, trail});
}

Value RowKernelWriter::columnsView(Value tensor) {
  Value buffer = readOnlyBuffer(b, loc, tensor);
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() <= 1)
    return buffer;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return memref::CollapseShapeOp::create(b, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

Value RowKernelWriter::blockReduce(Value value, bool max) {
  memref::StoreOp::create(b, loc, value, shared, ValueRange{tid});
  gpu::BarrierOp::create(b, loc);
  for (int64_t stride = kThreads / 2; stride > 0; stride /= 2) {
    auto active =
        scf::IfOp::create(b, loc, lessThan(b, loc, tid, index(b, loc, stride)),
                          /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&active.getThenRegion().front());
      Value other =
          memref::LoadOp::create(b, loc, shared,
                                 ValueRange{arith::AddIOp::create(
                                     b, loc, tid, index(b, loc, stride))});
      Value mine = memref::LoadOp::create(b, loc, shared, ValueRange{tid});
      Value combined =
          max ? arith::MaximumFOp::create(b, loc, mine, other).getResult()
              : arith::AddFOp::create(b, loc, mine, other).getResult();
      memref::StoreOp::create(b, loc, combined, shared, ValueRange{tid});
    }
    gpu::BarrierOp::create(b, loc);
  }
  Value result =
      memref::LoadOp::create(b, loc, shared, ValueRange{index(b, loc, 0)});
  // Every thread has read the result before the next reduction writes.
  gpu::BarrierOp::create(b, loc);
  return result;
}

Value RowKernelWriter::overColumns(
    Value init, function_ref<Value(Value column, Value acc)> body) {
  auto loop = scf::ForOp::create(b, loc, tid, index(b, loc, row.cols),
                                 index(b, loc, kThreads), ValueRange{init});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  scf::YieldOp::create(
      b, loc, body(loop.getInductionVar(), loop.getRegionIterArgs()[0]));
  return loop.getResult(0);
}

Value RowKernelWriter::columnOperand(Value buffer, Value column) {
  auto type = cast<MemRefType>(buffer.getType());
  Value at = type.getNumElements() == 1 ? index(b, loc, 0) : column;
  return memref::LoadOp::create(
      b, loc, buffer, type.getRank() == 0 ? ValueRange{} : ValueRange{at});
}

Value RowKernelWriter::write() {
  in = rowsView(readOnlyBuffer(b, loc, row.input));
  Value scale = row.scale ? columnsView(row.scale) : Value();
  Value bias = row.bias ? columnsView(row.bias) : Value();
  // The result has the input's shape (its run-time rows read from it).
  Value outBuffer = newBufferLike(b, loc, row.input);
  Value out = rowsView(outBuffer);
  // One block per row: their count read at run time for run-time rows.
  Value rows = ShapedType::isDynamic(row.rows)
                   ? memref::DimOp::create(b, loc, in, 0).getResult()
                   : index(b, loc, row.rows);

  gpu::LaunchOp launch =
      createLaunch(b, loc, {rows}, {kThreads},
                   {workgroupMemRef({kThreads}, b.getF32Type())});
  shared = launch.getWorkgroupAttributions()[0];
  tid = launch.getThreadIds().x;
  rowIndex = launch.getBlockIds().x;
  auto x = [&](Value column) {
    return memref::LoadOp::create(b, loc, in, ValueRange{rowIndex, column})
        .getResult();
  };
  auto store = [&](function_ref<Value(Value column)> value) {
    auto loop = scf::ForOp::create(b, loc, tid, index(b, loc, row.cols),
                                   index(b, loc, kThreads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value column = loop.getInductionVar();
    memref::StoreOp::create(b, loc, value(column), out,
                            ValueRange{rowIndex, column});
  };
  Value cols = f32(double(row.cols));

  if (row.kind == RowKind::LayerNorm) {
    Value sum = overColumns(f32(0), [&](Value c, Value acc) -> Value {
      return arith::AddFOp::create(b, loc, acc, x(c));
    });
    Value mean = arith::DivFOp::create(b, loc, blockReduce(sum, false), cols);
    Value squares = overColumns(f32(0), [&](Value c, Value acc) -> Value {
      Value d = arith::SubFOp::create(b, loc, x(c), mean);
      return math::FmaOp::create(b, loc, d, d, acc);
    });
    Value variance =
        arith::DivFOp::create(b, loc, blockReduce(squares, false), cols);
    Value rstd = math::RsqrtOp::create(
        b, loc, arith::AddFOp::create(b, loc, variance, f32(row.epsilon)));
    store([&](Value c) -> Value {
      Value y = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, x(c), mean), rstd);
      y = arith::MulFOp::create(b, loc, y, columnOperand(scale, c));
      if (bias)
        y = arith::AddFOp::create(b, loc, y, columnOperand(bias, c));
      return y;
    });
  } else {
    Value negInf = f32(-std::numeric_limits<double>::infinity());
    Value localMax = overColumns(negInf, [&](Value c, Value acc) -> Value {
      return arith::MaximumFOp::create(b, loc, acc, x(c));
    });
    Value max = blockReduce(localMax, true);
    Value sum = overColumns(f32(0), [&](Value c, Value acc) -> Value {
      return arith::AddFOp::create(
          b, loc, acc,
          math::ExpOp::create(b, loc,
                              arith::SubFOp::create(b, loc, x(c), max)));
    });
    Value total = blockReduce(sum, false);
    if (row.kind == RowKind::Softmax) {
      store([&](Value c) -> Value {
        return arith::DivFOp::create(
            b, loc,
            math::ExpOp::create(b, loc,
                                arith::SubFOp::create(b, loc, x(c), max)),
            total);
      });
    } else {
      Value shift = arith::AddFOp::create(b, loc, max,
                                          math::LogOp::create(b, loc, total));
      store([&](Value c) -> Value {
        return arith::SubFOp::create(b, loc, x(c), shift);
      });
    }
  }
  b.setInsertionPointAfter(launch);
  return asTensor(b, loc, outBuffer);
}

struct NormalizationKernelsPass
    : public kiln::impl::NormalizationKernelsBase<NormalizationKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<RowOp> rows;
    getOperation().walk([&](Operation *op) {
      if (!isa<LayerNormOp, SoftmaxOp, LogSoftmaxOp>(op))
        return;
      FailureOr<RowOp> row = match(op);
      if (succeeded(row))
        rows.push_back(*row);
      else
        KILN_LOG("gpu", Info)
            << op->getName() << " at '" << onnxNodeName(op->getLoc())
            << "' keeps the generic lowering (needs static f32 trailing "
               "rows)\n";
    });
    for (RowOp &matched : rows) {
      // Matched again: an earlier kernel may have replaced this op's input
      // (a layer norm of a layer norm), which the first match still names.
      FailureOr<RowOp> current = match(matched.op);
      if (failed(current))
        continue;
      RowOp &row = *current;
      OpBuilder b(row.op);
      Value result = RowKernelWriter(b, row).write();
      KILN_LOG("gpu", Debug)
          << row.op->getName() << " at '" << onnxNodeName(row.op->getLoc())
          << "': "
          << (ShapedType::isDynamic(row.rows) ? std::string("run-time")
                                              : std::to_string(row.rows))
          << " rows of " << row.cols << ", a block of " << kThreads
          << " threads per row\n";
      report::count("gpu_row_kernels");
      if (ShapedType::isDynamic(row.rows))
        report::count("gpu_row_kernels_run_time_rows");
      row.op->getResult(0).replaceAllUsesWith(result);
      row.op->erase();
    }
  }
};
} // namespace
