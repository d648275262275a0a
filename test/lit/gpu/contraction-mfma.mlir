// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{matrix-unit=mfma}))' | FileCheck %s --check-prefix=F32
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{matrix-unit=mfma precision=bf16}))' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{matrix-unit=mfma precision=fp16}))' | FileCheck %s --check-prefix=FP16

// On AMD's matrix cores the matmul runs 4 waves of 64 per 64x64 tile: A and
// B staged in LDS in the operand type, 2x2 MFMA tiles of 16x16 per wave
// with f32 accumulators. fp32 keeps f32 operands: four 16x16x4 per
// 16-deep step and tile, 16 per step.
// F32-LABEL: func.func @matmul(
// F32:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c256{{.*}}, {{.*}}) workgroup(%{{.+}} : memref<64x20xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<16x68xf32, #gpu.address_space<workgroup>>)
// F32:           gpu.barrier
// F32-COUNT-16:  amdgpu.mfma 16x16x4 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : f32, f32, vector<4xf32>
// F32:           gpu.barrier
// F32-NOT:       amdgpu.mfma

// bf16 and fp16: a lane's four k values as one vector, one 16x16x16 per
// tile and step.
// BF16-LABEL: func.func @matmul(
// BF16:         workgroup(%{{.+}} : memref<64x20xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<16x68xbf16, #gpu.address_space<workgroup>>)
// BF16:           arith.truncf %{{.+}} : f32 to bf16
// BF16-COUNT-4:   amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// BF16-NOT:       amdgpu.mfma
// FP16-LABEL: func.func @matmul(
// FP16-COUNT-4:   amdgpu.mfma 16x16x16 {{.*}} : vector<4xf16>, vector<4xf16>, vector<4xf32>
// FP16-NOT:       amdgpu.mfma
func.func @matmul(%a: tensor<100x200xf32>, %b: tensor<200x300xf32>) -> tensor<100x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>) -> tensor<100x300xf32>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x300xf32>) outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
  return %c : tensor<100x300xf32>
}
