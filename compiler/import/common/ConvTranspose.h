//===- ConvTranspose.h - A transposed convolution as kiln ops --*- C++ -*-===//
//
// Both frontends' transposed convolutions (ONNX ConvTranspose, ATen's
// convolution with transposed=True and conv_transpose2d) are built the same
// way, as a kiln.conv over the input with zeros inserted between elements.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_COMMON_CONVTRANSPOSE_H
#define KILN_COMPILER_IMPORT_COMMON_CONVTRANSPOSE_H

#include "compiler/import/common/KilnOpBuilder.h"

namespace mlir::kiln {

/// y = conv_transpose(x, w) + bias: x [N, C, spatial..], w [C, M/group,
/// kernel..], `pads` ONNX's (begins then ends, negative ones extending the
/// end), one stride, dilation and output padding per spatial dim. Built as
/// a convolution: the input with (stride - 1) zeros between elements,
/// padded by dilation * (kernel - 1) less `pads`, convolved with the kernel
/// flipped in space and regrouped from [C, M/g] to [M, C/g]. Over extents
/// known only at run time, one kiln.pad with `interior` zeros spreads and
/// pads the input (pads beyond dilation * (kernel - 1) are refused there).
/// `bias` may be null. The caller checks the shapes (rank, channels, group); fails with
/// `c.error` set when an op does not build.
FailureOr<Value> buildConvTranspose(KilnOpBuilder &c, Value x, Value w,
                                    Value bias, ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> pads,
                                    ArrayRef<int64_t> dilations,
                                    ArrayRef<int64_t> outputPadding,
                                    int64_t group);

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_COMMON_CONVTRANSPOSE_H
