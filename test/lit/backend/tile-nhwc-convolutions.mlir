// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="vector-bits=256 registers=16" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="vector-bits=128 registers=32" --split-input-file | FileCheck %s --check-prefix=NEON
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="tile-k=256" --split-input-file | FileCheck %s --check-prefix=KC256

// A 3x3 NHWC convolution, direct: the filter [3, 3, 16, 40] is packed at
// compile time into 32-lane panels of K = 3*3*16 (40 filters -> two panels,
// the second zero-padded), the input is read in place as [N, H, W*C] by
// tensor.extract at each row's pixel (no im2col, no gather): one filter row
// (3 taps x 16 channels) is one run of 48 floats. 8 rows x 32 lanes
// accumulated with FMAs. The init is a zero fill: the first K block starts
// from the fill value (scf.if) and the result goes into the fill's tensor.
// 40 filters: the columns past F are masked (no in_bounds on the result
// transfers). 64 pixels (8 register tiles) and two panels: for at least 8
// equal tasks the panels split first (one per task), then the pixels into
// 4 tiles of 16.
// CHECK-LABEL: func.func @conv3x3
// CHECK-NOT: vector.gather
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<1x8x8x40xf32>
// CHECK: %[[PACKED:.+]] = arith.constant dense_resource<packed_filter> : tensor<2x144x32xf32>
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x10x10x16xf32> into tensor<1x10x160xf32>
// CHECK: tensor.collapse_shape %[[EMPTY]] {{\[}}[0], [1, 2], [3]] : tensor<1x8x8x40xf32> into tensor<1x64x40xf32>
// CHECK: scf.forall ({{.+}}) in (1, 4, 2) shared_outs
// CHECK: tensor.extract_slice {{.+}} : tensor<1x64x40xf32> to tensor<?x?xf32>
// CHECK: scf.for %[[BLOCK:.+]] = %{{.+}} to %c1{{.*}} step %c1
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[BLOCK]]
// CHECK: scf.if %[[FIRST]] -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: vector.broadcast %{{.+}} : f32 to vector<32xf32>
// CHECK: } else {
// CHECK-COUNT-8: vector.transfer_read %{{.+}}, %{{.+}} : tensor<?x?xf32>, vector<32xf32>
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<2x144x32xf32>, vector<32xf32>
// CHECK: tensor.extract %[[ROWS]][{{.+}}] : tensor<1x10x160xf32>
// CHECK: vector.broadcast %{{.+}} : f32 to vector<32xf32>
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-8: vector.transfer_write %{{.+}} : vector<32xf32>, tensor<?x?xf32>
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3]] output_shape [1, 8, 8, 40]
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @conv3x3
// AVX2: arith.constant dense_resource<packed_filter> : tensor<3x144x16xf32>
// AVX2: scf.for %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX2-COUNT-6: vector.fma
// NEON-LABEL: func.func @conv3x3
// NEON: arith.constant dense_resource<packed_filter> : tensor<5x144x8xf32>
// NEON: scf.for %{{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// NEON-COUNT-8: vector.fma
func.func @conv3x3(%x: tensor<1x10x10x16xf32>) -> tensor<1x8x8x40xf32> {
  %w = arith.constant dense<1.5> : tensor<3x3x16x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x40xf32>) -> tensor<1x8x8x40xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x16xf32>, tensor<3x3x16x40xf32>) outs(%f : tensor<1x8x8x40xf32>) -> tensor<1x8x8x40xf32>
  return %y : tensor<1x8x8x40xf32>
}

// -----

// Stride 2 and a tensor.pad producer: the padded tensor is read in place.
// 64 filters fill two panels exactly, so every result transfer is in bounds;
// 56x56 = 3136 pixels = 392 register tiles: the 25 thread-pool tiles of
// 128 rows MC asks for become 28 of 112 (a divisor of 392, so every task is
// the same size), 2 panels per tile (128 columns = 4 panels, capped at 2),
// and runs of 3 x 64 = 192 floats: K = 576 is one block of the default KC
// (1024); with KC = 256, three blocks of one filter row.
// CHECK-LABEL: func.func @padded_stride2
// CHECK: %[[PAD:.+]] = tensor.pad
// CHECK: arith.constant dense_resource<packed_filter> : tensor<2x576x32xf32>
// CHECK: %[[PROWS:.+]] = tensor.collapse_shape %[[PAD]] {{\[}}[0], [1], [2, 3]] : tensor<1x114x114x64xf32> into tensor<1x114x7296xf32>
// CHECK: scf.forall ({{.+}}) in (1, 28, 1)
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1{{.*}} step %c1
// KC256-LABEL: func.func @padded_stride2
// KC256: scf.forall ({{.+}}) in (1, 28, 1)
// KC256: scf.for %{{.+}} = %{{.+}} to %c3{{.*}} step %c1
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true]} : tensor<?x?xf32>, vector<32xf32>
// CHECK: tensor.extract %[[PROWS]][{{.+}}] : tensor<1x114x7296xf32>
// CHECK-COUNT-8: vector.fma
// CHECK: vector.transfer_write {{.+}} {in_bounds = [true]} : vector<32xf32>, tensor<?x?xf32>
func.func @padded_stride2(%x: tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x64x64xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x112x112x64xf32> to tensor<1x114x114x64xf32>
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : tensor<1x114x114x64xf32>, tensor<3x3x64x64xf32>) outs(%f : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %y : tensor<1x56x56x64xf32>
}

// -----

// 3 x 128 channels = 384 floats per filter row. KC = 1024 takes two whole
// rows per K block: blocks [0, 2) and [2, 3) of the three. Runs longer
// than KC are split: with KC = 256, two chunks of 192, six K blocks.
// CHECK-LABEL: func.func @split_runs
// CHECK: scf.for %[[BLOCK:.+]] = %{{.+}} to %c2{{.*}} step %c1
// CHECK: %[[TAP0:.+]] = arith.muli %[[BLOCK]], %c2
// CHECK: %[[TAPEND:.+]] = arith.minui %{{.+}}, %c3
// CHECK: scf.for %{{.+}} = %[[TAP0]] to %[[TAPEND]] step %c1
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c384{{.*}} step %c1{{.*}} iter_args
// KC256-LABEL: func.func @split_runs
// KC256: scf.for %[[BLOCK:.+]] = %{{.+}} to %c6{{.*}} step %c1
// KC256: %[[TAP:.+]] = arith.divui %[[BLOCK]], %c2
// KC256: %[[PART:.+]] = arith.remui %[[BLOCK]], %c2
// KC256: %[[BEGIN:.+]] = arith.muli %[[PART]], %c192
// KC256: %[[END:.+]] = arith.minui %{{.+}}, %c384
// KC256: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c1{{.*}} iter_args
func.func @split_runs(%x: tensor<1x6x6x128xf32>, %c: tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x128x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x128xf32>, tensor<3x3x128x32xf32>) outs(%c : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  return %y : tensor<1x4x4x32xf32>
}

// -----

// A 1x1 convolution is a matmul on the input rows: one run of K = C. The
// init is not a fill: every K block reads the accumulators.
// CHECK-LABEL: func.func @pointwise
// CHECK: arith.constant dense_resource<packed_filter> : tensor<1x24x32xf32>
// CHECK-NOT: scf.if
// CHECK: tensor.extract %{{.+}}[{{.+}}] : tensor<2x7x216xf32>
// CHECK-COUNT-8: vector.fma
func.func @pointwise(%x: tensor<2x7x9x24xf32>, %c: tensor<2x7x9x32xf32>) -> tensor<2x7x9x32xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x24x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x7x9x24xf32>, tensor<1x1x24x32xf32>) outs(%c : tensor<2x7x9x32xf32>) -> tensor<2x7x9x32xf32>
  return %y : tensor<2x7x9x32xf32>
}

// -----

// Depthwise: per output row (scf.forall over batch and rows), vectors of 16
// channels (AVX-512), 8 pixels per block, the 3x3 taps as loops of FMAs with
// the tap's weights as one vector. 20 channels: the second vector is masked.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: vector.gather
// CHECK: scf.forall ({{.+}}) in (1, 4) shared_outs
// CHECK: tensor.extract_slice {{.+}} : tensor<1x4x4x20xf32> to tensor<4x20xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16
// CHECK-COUNT-4: vector.transfer_read %{{.+}}, %{{.+}} : tensor<4x20xf32>, vector<16xf32>
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.transfer_read %arg1[{{.+}}], %{{.+}} : tensor<3x3x20xf32>, vector<16xf32>
// CHECK: vector.transfer_read %arg0[{{.+}}], %{{.+}} : tensor<1x10x10x20xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK-COUNT-4: vector.transfer_write
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
// AVX2-LABEL: func.func @depthwise
// AVX2: step %c8
// AVX2: vector.fma %{{.+}} : vector<8xf32>
// NEON-LABEL: func.func @depthwise
// NEON: step %c4
// NEON: vector.fma %{{.+}} : vector<4xf32>
func.func @depthwise(%x: tensor<1x10x10x20xf32>, %w: tensor<3x3x20xf32>, %c: tensor<1x4x4x20xf32>) -> tensor<1x4x4x20xf32> {
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x20xf32>, tensor<3x3x20xf32>) outs(%c : tensor<1x4x4x20xf32>) -> tensor<1x4x4x20xf32>
  return %y : tensor<1x4x4x20xf32>
}

// -----

// Left alone: f16, dynamic shapes, a filter that is not a constant.
// CHECK-LABEL: func.func @not_f32
// CHECK-NOT: scf.forall
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @not_f32(%x: tensor<1x10x10x16xf16>, %c: tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf16> {
  %w = arith.constant dense<1.0> : tensor<3x3x16x8xf16>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x16xf16>, tensor<3x3x16x8xf16>) outs(%c : tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf16>
  return %y : tensor<1x8x8x8xf16>
}

// -----

// Run-time batch, height and width: the same packed filter and loop nests,
// the extents read from the destination. The pixel tasks are cut at run
// time: about 8 tasks over the 1 panel (ceil(m / 8) pixels rounded up to
// the 8-row register tile, at most the nominal 56x56 image's MC), one
// forall dim with the panel groups (task = pixel task * groups + group, so
// the pool splits it), the pixel of a row found by dividing by the
// run-time output width. The depthwise
// rows loop to the run-time width, the last pixel one before it.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x?x16xf32>, %[[C:.+]]: tensor<?x?x?x8xf32>, %[[DC:.+]]: tensor<?x?x?x16xf32>
// CHECK: arith.constant dense_resource<packed_filter> : tensor<1x144x32xf32>
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3]] : tensor<?x?x?x8xf32> into tensor<?x?x8xf32>
// CHECK: %[[N:.+]] = tensor.dim %[[C]], %c0
// CHECK: %[[OH:.+]] = tensor.dim %[[C]], %c1
// CHECK: %[[OW:.+]] = tensor.dim %[[C]], %c2
// CHECK: %[[CAPMC:.+]] = arith.constant 112 : index
// CHECK: %[[M:.+]] = arith.muli %[[OH]], %[[OW]]
// CHECK: %[[WANT:.+]] = arith.constant 8 : index
// CHECK: %[[PER:.+]] = arith.ceildivui %[[M]], %[[WANT]]
// CHECK: %[[MR:.+]] = arith.constant 8 : index
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[PER]], %[[MR]]
// CHECK: %[[ROUND:.+]] = arith.muli %[[TILES]],
// CHECK: %[[CAP:.+]] = arith.minui %[[ROUND]], %[[CAPMC]]
// CHECK: %[[MC:.+]] = arith.maxui %[[CAP]],
// CHECK: %[[TASKS:.+]] = arith.ceildivui %[[M]], %[[MC]]
// CHECK: %[[ALL:.+]] = arith.muli %[[TASKS]], %{{.+}}
// CHECK: scf.forall (%{{.+}}, %[[IV:.+]]) in (%[[N]], %[[ALL]]) shared_outs({{.+}} = %[[FLAT]])
// CHECK: arith.remui %[[IV]], %{{.+}}
// CHECK: arith.divui %[[IV]], %{{.+}}
// CHECK: arith.divui %{{.+}}, %[[OW]]
// CHECK: arith.remui %{{.+}}, %[[OW]]
// CHECK-COUNT-8: vector.fma
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3]] output_shape [%[[N]], %[[OH]], %[[OW]], 8] : tensor<?x?x8xf32> into tensor<?x?x?x8xf32>
// CHECK: %[[DN:.+]] = tensor.dim %[[DC]], %{{.+}}
// CHECK: %[[DH:.+]] = tensor.dim %[[DC]], %{{.+}}
// CHECK: %[[DW:.+]] = tensor.dim %[[DC]], %{{.+}}
// CHECK: scf.forall ({{.+}}) in (%[[DN]], %[[DH]]) shared_outs({{.+}} = %[[DC]])
// CHECK: tensor.extract_slice {{.+}} [1, 1, %[[DW]], 16] [1, 1, 1, 1] : tensor<?x?x?x16xf32> to tensor<?x16xf32>
// CHECK: %[[LAST:.+]] = arith.subi %[[DW]], %{{.+}}
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[DW]] step
// CHECK: arith.minui %{{.+}}, %[[LAST]]
// CHECK: vector.fma
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @dynamic(%x: tensor<?x?x?x16xf32>, %c: tensor<?x?x?x8xf32>, %dc: tensor<?x?x?x16xf32>, %dw: tensor<3x3x16xf32>) -> (tensor<?x?x?x8xf32>, tensor<?x?x?x16xf32>) {
  %w = arith.constant dense<1.0> : tensor<3x3x16x8xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x?x?x16xf32>, tensor<3x3x16x8xf32>) outs(%c : tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %dw : tensor<?x?x?x16xf32>, tensor<3x3x16xf32>) outs(%dc : tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %y, %d : tensor<?x?x?x8xf32>, tensor<?x?x?x16xf32>
}

// -----

// Run-time channels: no packed filter or channel vectors; left to the
// generic lowering.
// CHECK-LABEL: func.func @run_time_channels
// CHECK-NOT: scf.forall
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
func.func @run_time_channels(%x: tensor<1x10x10x?xf32>, %dc: tensor<1x8x8x?xf32>, %dw: tensor<3x3x?xf32>) -> tensor<1x8x8x?xf32> {
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %dw : tensor<1x10x10x?xf32>, tensor<3x3x?xf32>) outs(%dc : tensor<1x8x8x?xf32>) -> tensor<1x8x8x?xf32>
  return %d : tensor<1x8x8x?xf32>
}

// -----

// CHECK-LABEL: func.func @variable_filter
// CHECK-NOT: packed_filter
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @variable_filter(%x: tensor<1x10x10x16xf32>, %w: tensor<3x3x16x8xf32>, %c: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x16xf32>, tensor<3x3x16x8xf32>) outs(%c : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// A depthwise convolution of a zero tensor.pad reads the pad's source: filter
// rows in the top/bottom padding are skipped (scf.if on the row), register
// blocks inside the image take the unchecked path, blocks at the left/right
// border clamp their reads and select zeros. The zero fill becomes splats.
// CHECK-LABEL: func.func @depthwise_padded
// CHECK: scf.forall ({{.+}}) in (1, 8) shared_outs(%{{.+}} = %[[EMPTY:.+]])
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.andi
// CHECK: scf.if %{{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.if
// CHECK-NOT: arith.select
// CHECK: vector.transfer_read %arg0[{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x8x40x32xf32>, vector<16xf32>
// CHECK: } else {
// CHECK: scf.if
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: vector.transfer_read %arg0[{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x8x40x32xf32>, vector<16xf32>
// CHECK: arith.select %{{.+}} : vector<16xf32>
// CHECK: vector.fma
func.func @depthwise_padded(%x: tensor<1x8x40x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x8x40x32xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x40x32xf32> to tensor<1x10x42x32xf32>
  %e = tensor.empty() : tensor<1x8x40x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x40x32xf32>) -> tensor<1x8x40x32xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x42x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x8x40x32xf32>) -> tensor<1x8x40x32xf32>
  return %y : tensor<1x8x40x32xf32>
}

// -----

// Padding with a non-zero value is read from the padded tensor.
// CHECK-LABEL: func.func @depthwise_padded_one
// CHECK: %[[PAD:.+]] = tensor.pad
// CHECK-NOT: arith.select
// CHECK: vector.transfer_read %[[PAD]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x10x42x32xf32>, vector<16xf32>
func.func @depthwise_padded_one(%x: tensor<1x8x40x32xf32>, %w: tensor<3x3x32xf32>, %c: tensor<1x8x40x32xf32>) -> tensor<1x8x40x32xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x8x40x32xf32> to tensor<1x10x42x32xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x42x32xf32>, tensor<3x3x32xf32>) outs(%c : tensor<1x8x40x32xf32>) -> tensor<1x8x40x32xf32>
  return %y : tensor<1x8x40x32xf32>
}

// -----

// 7x7 = 49 pixels: register tiles of 7 rows (7 tiles, none computing a
// pixel twice; 8-row tiles would compute 56), and 14 equal tasks: the two
// panels apart, the 7 row tiles apart (a divisor of 7, so no short tile).
// CHECK-LABEL: func.func @seven_by_seven
// CHECK: scf.forall ({{.+}}) in (1, 7, 2) shared_outs
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK-COUNT-7: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write
func.func @seven_by_seven(%x: tensor<1x9x9x32xf32>) -> tensor<1x7x7x64xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x32xf32>, tensor<3x3x32x64xf32>) outs(%f : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %y : tensor<1x7x7x64xf32>
}

// -----

// 150x150 = 22500 pixels = 2813 (29 x 97) row tiles: no divisor near the 176
// tiles MC asks for, so the tiles are 128 pixels with a shorter last one
// rather than 2813 tasks of 8 pixels each streaming all the filters.
// CHECK-LABEL: func.func @odd_rows
// CHECK: scf.forall ({{.+}}) in (1, 176, 1) shared_outs
func.func @odd_rows(%x: tensor<1x152x152x8xf32>) -> tensor<1x150x150x32xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x8x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x150x150x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x150x150x32xf32>) -> tensor<1x150x150x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x152x152x8xf32>, tensor<3x3x8x32xf32>) outs(%f : tensor<1x150x150x32xf32>) -> tensor<1x150x150x32xf32>
  return %y : tensor<1x150x150x32xf32>
}
