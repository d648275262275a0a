//===- TileNhwcConvolutions.cpp - NHWC convolutions as vector loops -------===//
//
// The pass driver: every static f32 conv_2d_nhwc_hwcf with a constant filter
// becomes a direct convolution in register tiles (ConvNhwc.cpp), every
// static f32 depthwise_conv_2d_nhwc_hwc a channel-vectorized loop nest
// (DepthwiseNhwc.cpp). Anything else is left to the generic lowering.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"
#include "backends/cpu/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_TILENHWCCONVOLUTIONS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct TileNhwcConvolutions
    : public kiln::impl::TileNhwcConvolutionsBase<TileNhwcConvolutions> {
  using TileNhwcConvolutionsBase::TileNhwcConvolutionsBase;

  void runOnOperation() override {
    ContractionTileSizes tiles = contractionTileSizes(vectorBits, registers);
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 1);
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> convs;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(op))
        convs.push_back(op);
    });
    for (Operation *op : convs) {
      LogicalResult done = failure();
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
        done = tileNhwcConvolution(rewriter, conv, tiles);
      else
        done = tileDepthwiseNhwc(rewriter,
                                 cast<linalg::DepthwiseConv2DNhwcHwcOp>(op),
                                 lanes, tiles.mr);
      KILN_LOG("codegen", Info)
          << (succeeded(done) ? "tiled " : "left untiled ") << op->getName()
          << " at " << op->getLoc() << "\n";
    }
  }
};
} // namespace
