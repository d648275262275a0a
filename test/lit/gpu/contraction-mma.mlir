// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=bf16}))' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=tf32}))' | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{precision=fp16}))' | FileCheck %s --check-prefix=FP16

// With a tensor-core precision the matmul runs 4 warps per 64x64 tile: the
// operands staged in shared memory in the narrow type, 2x4 mma tiles of
// 16x8 per warp and 16-deep step, f32 accumulators.
// BF16-LABEL: func.func @matmul(
// BF16:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c128{{.*}}, {{.*}}) workgroup(%[[AS:.+]] : memref<64x24xbf16, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x72xbf16, #gpu.address_space<workgroup>>)
// BF16:           arith.truncf %{{.+}} : f32 to bf16
// BF16:           gpu.barrier
// BF16:           vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// BF16-COUNT-8:   nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// BF16:           gpu.barrier

// tf32: f32 operands rounded to 10 mantissa bits, two m16n8k8 per step.
// TF32-LABEL: func.func @matmul(
// TF32:         workgroup(%{{.+}} : memref<64x24xf32, #gpu.address_space<workgroup>>
// TF32:           arith.andi %{{.+}}, %c-8192_i32 : i32
// TF32-COUNT-16:  nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>

// fp16: pairs of halves as vector<2xf16> operands.
// FP16-LABEL: func.func @matmul(
// FP16-COUNT-8:   nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @matmul(%a: tensor<100x200xf32>, %b: tensor<200x300xf32>) -> tensor<100x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>) -> tensor<100x300xf32>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x300xf32>) outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
  return %c : tensor<100x300xf32>
}
