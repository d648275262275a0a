#ifndef KILN_PASSES_LOWERING_TD
#define KILN_PASSES_LOWERING_TD

include "mlir/Pass/PassBase.td"

def LowerToLinalg : Pass<"kiln-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower kiln ops to linalg/tensor/arith/math on tensors";
  let description = [{
    Converts every kiln op into linalg on tensors: named ops where one fits
    (linalg.matmul, linalg.batch_matmul, linalg.conv_{1d,2d,3d}_nc*_fc*,
    linalg.depthwise_conv_2d_nchw_chw, linalg.pooling_nc[h]w_{max,sum},
    linalg.transpose, linalg.fill, linalg.broadcast), linalg.generic
    otherwise, plus tensor.pad / extract_slice / insert_slice /
    collapse_shape / expand_shape and arith/math scalar code.

    Unsigned ONNX integers (`uiN`) become signless `iN` everywhere, function
    signatures included; the signedness survives in the choice of ops
    (arith.divui, cmpi ult, uitofp, extui, maxui, ...).

    Broadcast operands have their unit dims collapsed away, so all indexing
    maps of elementwise generics are projected permutations. f16/bf16
    contractions, sums and normalization statistics accumulate in f32.

    Before:

    ```mlir
    func.func @f(%a: tensor<2x3xui8>, %b: tensor<3xui8>) -> tensor<2x3xui8> {
      %0 = kiln.div %a, %b : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
      return %0 : tensor<2x3xui8>
    }
    ```

    After:

    ```mlir
    #map = affine_map<(d0, d1) -> (d0, d1)>
    #map1 = affine_map<(d0, d1) -> (d1)>
    func.func @f(%a: tensor<2x3xi8>, %b: tensor<3xi8>) -> tensor<2x3xi8> {
      %0 = tensor.empty() : tensor<2x3xi8>
      %1 = linalg.generic {indexing_maps = [#map, #map1, #map],
                           iterator_types = ["parallel", "parallel"]}
          ins(%a, %b : tensor<2x3xi8>, tensor<3xi8>) outs(%0 : tensor<2x3xi8>) {
      ^bb0(%x: i8, %y: i8, %out: i8):
        %2 = arith.divui %x, %y : i8
        linalg.yield %2 : i8
      } -> tensor<2x3xi8>
      return %1 : tensor<2x3xi8>
    }
    ```

    A 2-D convolution with group 1 pads explicitly and seeds the accumulator
    with the bias:

    ```mlir
    %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { ... }
    %init = linalg.broadcast ins(%bias : tensor<4xf32>)
                             outs(%e : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
    %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<2> : tensor<2xi64>}
        ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>)
        outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    ```

    The pattern groups are available one by one for other pipelines
    (passes/lowering/Patterns.h).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect"
  ];
}

#endif // KILN_PASSES_LOWERING_TD
