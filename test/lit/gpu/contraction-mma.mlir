// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=bf16}))' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=tf32}))' | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=fp16}))' | FileCheck %s --check-prefix=FP16

// With a tensor-core precision a small matmul runs 4 warps per 64x64 tile.
// f32 operands pass through registers, converted to the narrow type, into
// two shared-memory stages (A [m][k] with rows padded to 40, B as it lies,
// [k][n], rows padded to 72): the first slice before the loop, then per
// 32-deep step one barrier, the next slice fetched, 2 (k) x 2x4 mma tiles
// of 16x8 per warp, their fragments by ldmatrix.x4 (B's transposed from
// its [k][n] stage, A's as they lie), and the slice stored into the other
// stage; f32 accumulators. Operands whose contiguous extent is a multiple
// of 4 floats are fetched as 16-byte vectors when their buffer is 16-byte
// aligned at run time (else element by element), and A's k-contiguous
// chunks go to shared memory in one store.
// BF16-LABEL: func.func @matmul(
// BF16:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c128{{.*}}, {{.*}}) workgroup(%[[AS:.+]] : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<2x32x72xbf16, #gpu.address_space<workgroup>>)
// BF16:           memref.extract_aligned_pointer_as_index %[[A:.+]] : memref<100x200xf32> -> index
// BF16:           memref.extract_strided_metadata %[[A]]
// BF16:           memref.extract_aligned_pointer_as_index %[[B:.+]] : memref<200x300xf32> -> index
// BF16:           scf.if %{{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// BF16:             vector.load %[[A]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<100x200xf32>, vector<4xf32>
// BF16:           } else {
// BF16:             memref.load %[[A]]
// BF16:           scf.if %{{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// BF16:             vector.load %[[B]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<200x300xf32>, vector<4xf32>
// BF16:           arith.truncf %{{.+}} : f32 to bf16
// BF16:           vector.store %{{.+}}, %[[AS]][{{.*}}] {alignment = 8 : i64} : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// BF16-NOT:       gpu.barrier
// BF16-NOT:       nvvm.cp.async
// BF16:           scf.for
// BF16-NEXT:        gpu.barrier
// BF16:             memref.extract_aligned_pointer_as_index %[[BS]]
// BF16:             llvm.inttoptr %{{.+}} : i64 to !llvm.ptr<3>
// BF16:             nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// BF16:             memref.extract_aligned_pointer_as_index %[[AS]]
// BF16:             nvvm.ldmatrix %{{.+}} {{{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32{{.*}}}
// BF16-COUNT-16:    nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// BF16:             memref.store %{{.+}}, %[[AS]]
// BF16-NOT:         gpu.barrier
// BF16:             scf.yield

// tf32: f32 operands rounded to 10 mantissa bits, 16-deep steps of two
// m16n8k8.
// TF32-LABEL: func.func @matmul(
// TF32:         workgroup(%{{.+}} : memref<2x64x20xf32, #gpu.address_space<workgroup>>
// TF32:           arith.andi %{{.+}}, %c-8192_i32 : i32
// TF32-COUNT-16:  nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>

// fp16: pairs of halves as vector<2xf16> operands (ldmatrix's registers
// bitcast).
// FP16-LABEL: func.func @matmul(
// FP16:           nvvm.ldmatrix
// FP16:           vector.bitcast %{{.+}} : vector<1xi32> to vector<2xf16>
// FP16-COUNT-16:  nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @matmul(%a: tensor<100x200xf32>, %b: tensor<200x300xf32>) -> tensor<100x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>) -> tensor<100x300xf32>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x300xf32>) outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
  return %c : tensor<100x300xf32>
}

// A problem of 256 128x128 tiles takes them: 8 warps of 64x32, 2 (k) x 4x4
// mma tiles per step. Its run-time f32 operands are rounded to bf16 first,
// each by an elementwise op of its own (the kernel rounded them the same
// way while staging), so both go to shared memory by cp.async: three
// stages of 16 KiB.
// BF16-LABEL: func.func @large(
// BF16-SAME:      %[[LA:[a-z0-9]+]]: tensor<2048x256xf32>, %[[LB:[a-z0-9]+]]: tensor<256x2048xf32>)
// BF16:         linalg.generic {{.*}} ins(%[[LB]] : tensor<256x2048xf32>) outs(%{{.+}} : tensor<256x2048xbf16>)
// BF16:           arith.truncf %{{.+}} : f32 to bf16
// BF16:         linalg.generic {{.*}} ins(%[[LA]] : tensor<2048x256xf32>) outs(%{{.+}} : tensor<2048x256xbf16>)
// BF16:         gpu.launch blocks({{.*}}) in (%{{.+}} = %c16{{.*}}, %{{.+}} = %c16{{.*}}, %{{.+}} = %c1{{.*}}) threads({{.*}}) in (%{{.+}} = %c256{{.*}}, {{.*}}) workgroup(%{{.+}} : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// BF16-NOT:       vector.load {{.*}}xf32>
// BF16:           scf.for
// BF16-NEXT:        nvvm.cp.async.wait.group 1
// BF16-NEXT:        gpu.barrier
// BF16-COUNT-32:    nvvm.mma.sync
// BF16:             scf.yield
// TF32-LABEL: func.func @large(
// TF32:         workgroup(%{{.+}} : memref<2x128x20xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x16x136xf32, #gpu.address_space<workgroup>>)
// TF32-COUNT-32:  nvvm.mma.sync
func.func @large(%a: tensor<2048x256xf32>, %b: tensor<256x2048xf32>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %c = linalg.matmul ins(%a, %b : tensor<2048x256xf32>, tensor<256x2048xf32>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}

// B stored [n][k] (a Linear layer's weight): staged k-contiguous like A,
// [n][k] rows padded to 40, its fragments by ldmatrix.x4 as they lie.
// BF16-LABEL: func.func @transposed_b(
// BF16:         workgroup(%{{.+}} : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %[[TBS:.+]] : memref<2x64x40xbf16, #gpu.address_space<workgroup>>)
// BF16:           scf.for
// BF16:             memref.extract_aligned_pointer_as_index %[[TBS]]
// BF16-NOT:         nvvm.ldmatrix
// BF16:             nvvm.ldmatrix
// BF16-SAME:          layout = #nvvm.mma_layout<row>, num = 4 : i32
// BF16-COUNT-16:    nvvm.mma.sync
func.func @transposed_b(%a: tensor<100x200xf32>, %b: tensor<300x200xf32>) -> tensor<100x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>) -> tensor<100x300xf32>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<100x200xf32>, tensor<300x200xf32>) outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
  return %c : tensor<100x300xf32>
}

// A constant f32 weight is read as a bf16 (fp16) copy rounded at compile
// time (the kernel copies it to four swizzled stages by cp.async; A, a
// run-time f32 input of a problem too small for 128x128 tiles, is still
// rounded while staged through two padded register stages), and the f32
// constant is left to the cleanup. tf32 keeps f32 weights.
// BF16-LABEL: func.func @constant_weight(
// BF16:         %[[W:.+]] = arith.constant dense_resource<narrowed_weight{{.*}}> : tensor<4x8xbf16>
// BF16:         bufferization.to_buffer %[[W]] read_only : tensor<4x8xbf16> to memref<4x8xbf16>
// BF16:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<4x32x64xbf16, #gpu.address_space<workgroup>>)
// BF16:           memref.load %{{.+}} : memref<4x8xbf16>
// FP16-LABEL: func.func @constant_weight(
// FP16:         arith.constant dense_resource<narrowed_weight{{.*}}> : tensor<4x8xf16>
// TF32-LABEL: func.func @constant_weight(
// TF32-NOT:     narrowed_weight
func.func @constant_weight(%a: tensor<100x4xf32>) -> tensor<100x8xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.5, 0.25, 0.125, 1.5, 2.5, 3.5, 4.5, 5.5], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0], [1.0e-3, 2.0e-3, 3.0e-3, 4.0e-3, 5.0e-3, 6.0e-3, 7.0e-3, 8.0e-3]]> : tensor<4x8xf32>
  %e = tensor.empty() : tensor<100x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x8xf32>) -> tensor<100x8xf32>
  %c = linalg.matmul ins(%a, %w : tensor<100x4xf32>, tensor<4x8xf32>) outs(%f : tensor<100x8xf32>) -> tensor<100x8xf32>
  return %c : tensor<100x8xf32>
}

// Operands already in the operand type (a bf16 model) go to shared memory
// by cp.async, 16 bytes per copy (zero-filled past the edges: the source
// size is 16 or 0), into unpadded stages whose 16-byte chunks are swizzled
// (XOR with row bits) for the ldmatrix reads: four stages of a 64x64
// tile's slices fit 48 KiB, three are in flight before the loop; each
// step waits for its own group (2 younger ones may stay in flight), passes
// the barrier, issues the slice 3 steps ahead into the stage the last step
// read and commits it; no copy is left in flight after the loop.
// BF16-LABEL: func.func @native_bf16(
// BF16:         gpu.launch {{.*}} workgroup(%[[NAS:.+]] : memref<4x64x32xbf16, #gpu.address_space<workgroup>>, %[[NBS:.+]] : memref<4x32x64xbf16, #gpu.address_space<workgroup>>)
// BF16:           %[[SIZE:.+]] = arith.select %{{.+}}, %c16_i32, %c0_i32 : i32
// BF16:           nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache =  cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// BF16-COUNT-3:   nvvm.cp.async.commit.group
// BF16-NOT:       gpu.barrier
// BF16:           scf.for
// BF16-NEXT:        nvvm.cp.async.wait.group 2
// BF16-NEXT:        gpu.barrier
// BF16:             nvvm.cp.async.shared.global
// BF16:             nvvm.cp.async.commit.group
// BF16:             arith.xori
// BF16:             nvvm.ldmatrix
// BF16-COUNT-16:    nvvm.mma.sync
// BF16-NOT:         memref.store
// BF16:             scf.yield
// BF16:           nvvm.cp.async.wait.group 0
func.func @native_bf16(%a: tensor<100x200xbf16>, %b: tensor<200x320xbf16>) -> tensor<100x320xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x320xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x320xf32>) -> tensor<100x320xf32>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xbf16>, tensor<200x320xbf16>) outs(%f : tensor<100x320xf32>) -> tensor<100x320xf32>
  return %c : tensor<100x320xf32>
}

// 128x128 tiles: three stages of 16 KiB (exactly 48 KiB), one group in
// flight past the wait, no register staging left.
// BF16-LABEL: func.func @native_bf16_large(
// BF16:         workgroup(%{{.+}} : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// BF16:           scf.for
// BF16-NEXT:        nvvm.cp.async.wait.group 1
// BF16-NEXT:        gpu.barrier
// BF16-NOT:         vector.load
// BF16:             scf.yield
// A large problem's constant weight is narrowed at compile time and its
// run-time f32 input by an elementwise op: both by cp.async.
// BF16-LABEL: func.func @large_constant_weight(
// BF16:         linalg.generic {{.*}} outs(%{{.+}} : tensor<2048x256xbf16>)
// BF16:         %[[NW:.+]] = arith.constant dense_resource<narrowed_weight{{.*}}> : tensor<256x2048xbf16>
// BF16:         bufferization.to_buffer %[[NW]]
// BF16:         workgroup(%{{.+}} : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// tf32 keeps f32 operands, rounded while staged: no copies, no cp.async.
// TF32-LABEL: func.func @large_constant_weight(
// TF32-NOT:     linalg.generic
// TF32-NOT:     nvvm.cp.async
func.func @native_bf16_large(%a: tensor<2048x256xbf16>, %b: tensor<256x2048xbf16>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %c = linalg.matmul ins(%a, %b : tensor<2048x256xbf16>, tensor<256x2048xbf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}

func.func @large_constant_weight(%a: tensor<2048x256xf32>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %b = arith.constant dense<0.5> : tensor<256x2048xf32>
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %c = linalg.matmul ins(%a, %b : tensor<2048x256xf32>, tensor<256x2048xf32>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}

// An operand that only the large contraction reads, made by an elementwise
// op (here the first product's ReLU epilogue), is rounded in that op: the
// first kernel's epilogue stores bf16, and the second kernel copies it by
// cp.async with no rounding op between them (the extf op that stood in for
// the f32 value is left unused, for the cleanup).
// BF16-LABEL: func.func @rounded_epilogue(
// BF16:         gpu.launch
// BF16:           arith.maximumf
// BF16:           %[[H:.+]] = arith.truncf %{{.+}} : f32 to bf16
// BF16:           memref.store %[[H]], %{{.+}} : memref<2048x2048xbf16>
// BF16:         gpu.terminator
// BF16:         %[[R:.+]] = bufferization.to_tensor %{{.+}} : memref<2048x2048xbf16> to tensor<2048x2048xbf16>
// BF16:         arith.extf
// BF16-NOT:     arith.truncf
// BF16:         bufferization.to_buffer %[[R]] read_only : tensor<2048x2048xbf16>
// At tf32 nothing is rounded ahead: the second product stages f32.
// TF32-LABEL: func.func @rounded_epilogue(
// TF32:         gpu.launch
// TF32:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<2x128x20xf32, #gpu.address_space<workgroup>>
// BF16:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// BF16-NOT:       vector.load {{.*}}xf32>
// BF16:           scf.for
func.func @rounded_epilogue(%a: tensor<2048x256xbf16>, %w1: tensor<256x2048xbf16>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %w2 = arith.constant dense<0.5> : tensor<2048x2048xf32>
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %p = linalg.matmul ins(%a, %w1 : tensor<2048x256xbf16>, tensor<256x2048xbf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<2048x2048xf32>) outs(%e : tensor<2048x2048xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2048x2048xf32>
  %c = linalg.matmul ins(%h, %w2 : tensor<2048x2048xf32>, tensor<2048x2048xf32>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}

// The same through the reshapes between them (a [B, S, K] GELU read by a
// [B*S, K] product, as a transformer's MLP has it): the reshapes are
// remade on the bf16 tensor.
// BF16-LABEL: func.func @rounded_through_reshape(
// BF16:         gpu.launch
// BF16:           arith.maximumf
// BF16:           %[[H:.+]] = arith.truncf %{{.+}} : f32 to bf16
// BF16:           memref.store %[[H]], %{{.+}} : memref<2x1024x2048xbf16>
// BF16:         gpu.terminator
// BF16:         tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : tensor<2x1024x2048xbf16> into tensor<2048x2048xbf16>
// BF16-NOT:     arith.truncf
// BF16:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// BF16-NOT:       vector.load {{.*}}xf32>
// BF16:           nvvm.cp.async
// TF32-LABEL: func.func @rounded_through_reshape(
// TF32-NOT:     2048x2048xbf16
// TF32:         return
func.func @rounded_through_reshape(%a: tensor<2048x256xbf16>, %w1: tensor<256x2048xbf16>) -> tensor<2048x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %w2 = arith.constant dense<0.5> : tensor<2048x2048xf32>
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %p = linalg.matmul ins(%a, %w1 : tensor<2048x256xbf16>, tensor<256x2048xbf16>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %p3 = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 1024, 2048] : tensor<2048x2048xf32> into tensor<2x1024x2048xf32>
  %e3 = tensor.empty() : tensor<2x1024x2048xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p3 : tensor<2x1024x2048xf32>) outs(%e3 : tensor<2x1024x2048xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x1024x2048xf32>
  %h2 = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x1024x2048xf32> into tensor<2048x2048xf32>
  %c = linalg.matmul ins(%h2, %w2 : tensor<2048x2048xf32>, tensor<2048x2048xf32>) outs(%f : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}
