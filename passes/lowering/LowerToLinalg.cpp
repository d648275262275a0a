//===- LowerToLinalg.cpp - kiln -> linalg on tensors ----------------------===//
//
// A dialect conversion: every kiln op is illegal, and functions are rewritten
// to signless signatures (uiN -> iN) by the same type converter. The pattern
// groups live in one file each (see Patterns.h); this file only combines
// them.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Passes.h"

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <atomic>

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERTOLINALG
#include "passes/lowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

void mlir::kiln::populateKilnToLinalgPatterns(RewritePatternSet &patterns,
                                              TypeConverter &typeConverter) {
  populateKilnConstantToLinalgPatterns(patterns, typeConverter);
  populateKilnElementwiseToLinalgPatterns(patterns, typeConverter);
  populateKilnContractionToLinalgPatterns(patterns, typeConverter);
  populateKilnQuantizedMatMulToLinalgPatterns(patterns, typeConverter);
  populateKilnQuantizedConvToLinalgPatterns(patterns, typeConverter);
  populateKilnPoolingToLinalgPatterns(patterns, typeConverter);
  populateKilnNormalizationToLinalgPatterns(patterns, typeConverter);
  populateKilnReductionToLinalgPatterns(patterns, typeConverter);
  populateKilnDataMovementToLinalgPatterns(patterns, typeConverter);
  populateKilnIndexingToLinalgPatterns(patterns, typeConverter);
  populateKilnAttentionToLinalgPatterns(patterns, typeConverter);
  populateKilnDynamicShapeToLinalgPatterns(patterns, typeConverter);
  populateKilnNonMaxSuppressionToLinalgPatterns(patterns, typeConverter);
  populateKilnUniqueToLinalgPatterns(patterns, typeConverter);
  populateKilnStringToLinalgPatterns(patterns, typeConverter);
}

namespace {
/// A tensor.cast of unsigned tensors (a model's If or Loop widening a
/// yielded type) casts the signless ones.
struct ConvertTensorCast : OpConversionPattern<tensor::CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, type, adaptor.getSource());
    return success();
  }
};

struct LowerToLinalgPass
    : public kiln::impl::LowerToLinalgBase<LowerToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    KilnTypeConverter typeConverter;

    ConversionTarget target(*ctx);
    target.addIllegalDialect<KilnDialect>();
    // scf is legal so patterns may emit loops where linalg cannot express
    // the op (scatters, top-k, the attention recurrence).
    target.addLegalDialect<
        linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
        math::MathDialect, scf::SCFDialect, vector::VectorDialect,
        cf::ControlFlowDialect, bufferization::BufferizationDialect,
        memref::MemRefDialect>();
    // Functions, calls and returns are legal once no uiN is left in them.
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return typeConverter.isSignatureLegal(op.getFunctionType()) &&
             typeConverter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp, tensor::CastOp>(
        [&](Operation *op) { return typeConverter.isLegal(op); });

    RewritePatternSet patterns(ctx);
    populateKilnToLinalgPatterns(patterns, typeConverter);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(
        patterns, typeConverter);
    populateCallOpTypeConversionPattern(patterns, typeConverter);
    populateReturnOpTypeConversionPattern(patterns, typeConverter);
    // A model's Loop and If (scf.while, scf.if) may carry unsigned tensors.
    scf::populateSCFStructuralTypeConversionsAndLegality(typeConverter,
                                                         patterns, target);
    patterns.add<ConvertTensorCast>(typeConverter, ctx);

    // A pattern that reports an error (an internal one: a run-time extent
    // it cannot find) fails the pass, so the compile stops there instead of
    // writing an artifact with the gap in it.
    std::atomic<bool> reported{false};
    ScopedDiagnosticHandler watch(ctx, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        reported = true;
      return failure(); // on to the compiler's own handler
    });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))) ||
        reported)
      signalPassFailure();
  }
};
} // namespace
