//===- TileNhwcConvolutions.cpp - NHWC convolutions as vector loops -------===//
//
// The pass driver: every f32 conv_2d_nhwc_hwcf with a constant filter and
// static channels (over an image of any size) becomes a direct convolution
// in register tiles (ConvNhwc.cpp), and so does
// the int8 convolution generic of kiln.conv {input_zero_point} where the CPU
// has AVX512-VNNI (`int8-dot`); every f32 depthwise_conv_2d_nhwc_hwc of
// static channels (over an image of any size) a channel-vectorized loop
// nest (DepthwiseNhwc.cpp); with `winograd`, 3x3
// stride-1 ones by Winograd's F(m x m, 3 x 3) (WinogradNhwc.cpp). Anything
// else is left to the generic lowering.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"
#include "backends/cpu/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_TILENHWCCONVOLUTIONS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

bool mlir::kiln::isTileableNhwcConvolution(Operation *op) {
  if (isInt8NhwcConvolution(op))
    return true;
  if (auto depthwise = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return isVectorizableDepthwise(depthwise);
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
    return isDirectNhwcConvolution(conv);
  return false;
}

namespace {
struct TileNhwcConvolutions
    : public kiln::impl::TileNhwcConvolutionsBase<TileNhwcConvolutions> {
  using TileNhwcConvolutionsBase::TileNhwcConvolutionsBase;

  void runOnOperation() override {
    if (winograd != -1 && winograd != 0 && winograd != 2 && winograd != 4) {
      getOperation().emitError()
          << "kiln-tile-nhwc-convolutions: winograd takes -1, 0, 2 or 4 (got "
          << static_cast<int64_t>(winograd) << ")";
      return signalPassFailure();
    }
    ContractionTileSizes tiles = contractionTileSizes(vectorBits, registers);
    tiles.kc = cacheTileK > 0 ? cacheTileK : nhwcConvolutionTileK(tiles);
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 1);
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> convs;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(op) ||
          (int8Dot && isInt8NhwcConvolution(op)))
        convs.push_back(op);
    });
    for (Operation *op : convs) {
      // The consumer applied in the kernel: lanes along the channels.
      std::optional<Epilogue> epilogue;
      if (fuseEpilogues && isTileableNhwcConvolution(op)) {
        std::string why;
        FailureOr<Epilogue> matched =
            matchEpilogue(rewriter, op, /*laneDim=*/3, why);
        if (succeeded(matched))
          epilogue = std::move(*matched);
        else
          recordNoEpilogue(op->getLoc(), why);
      }
      const Epilogue *fused = epilogue ? &*epilogue : nullptr;
      LogicalResult done = failure();
      Location loc = op->getLoc();
      StringRef name = op->getName().getStringRef();
      auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
      // Winograd: `winograd` -1 lets the cost model choose the tile (0 for
      // convolutions Winograd does not take).
      int64_t m = !conv ? 0
                  : winograd < 0
                      ? winogradTileSize(conv, tiles.mr, tiles.nr, lanes)
                  : isWinogradConvolution(conv) ? winograd
                                                : 0;
      if (m > 0) {
        done = winogradNhwcConvolution(rewriter, conv, m, lanes, fused);
        name = m == 4 ? "conv_2d_nhwc_hwcf (Winograd F(4x4,3x3))"
                      : "conv_2d_nhwc_hwcf (Winograd F(2x2,3x3))";
      }
      if (conv) {
        // The direct kernel, also where Winograd failed (op untouched).
        if (failed(done)) {
          done = tileNhwcConvolution(rewriter, conv, tiles, fused);
          name = "linalg.conv_2d_nhwc_hwcf";
        }
      } else if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
        done = tileInt8NhwcConvolution(rewriter, generic, tiles, fused);
      } else {
        done = tileDepthwiseNhwc(rewriter,
                                 cast<linalg::DepthwiseConv2DNhwcHwcOp>(op),
                                 lanes, tiles.mr, fused);
      }
      KILN_LOG("codegen", Info)
          << (succeeded(done) ? "tiled " : "left untiled ") << name << " at "
          << loc << "\n";
      if (failed(done) || !epilogue)
        continue;
      // The kernel's stores hold the consumer's values.
      linalg::GenericOp consumer = epilogue->consumer;
      Value result = consumer.getDpsInputs()[epilogue->resultInput];
      recordEpilogue(loc, *epilogue);
      rewriter.replaceOp(consumer, result);
    }
  }
};
} // namespace
