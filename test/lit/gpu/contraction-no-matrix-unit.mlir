// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{matrix-unit=none}))' | FileCheck %s
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels{matrix-unit=none precision=tf32}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR

// Below sm_80 (no mma.sync m16n8k16) a half-precision matmul is a SIMT
// kernel: the f16 operands widened to f32 as they are staged in shared
// memory, FMAs in f32, the result narrowed back to f16.
// CHECK-LABEL: func.func @matmul_f16(
// CHECK:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<16x65xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK:           arith.extf %{{.+}} : f16 to f32
// CHECK-NOT:       nvvm.mma.sync
// CHECK:           math.fma
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT:       nvvm.mma.sync

// A tensor-core precision without tensor cores is refused.
// ERR: kiln-gpu-contraction-kernels: precision 'tf32' needs a matrix unit (matrix-unit=mma.sync or mfma)
func.func @matmul_f16(%a: tensor<100x200xf16>, %b: tensor<200x300xf16>) -> tensor<100x300xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<100x300xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<100x300xf16>) -> tensor<100x300xf16>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xf16>, tensor<200x300xf16>) outs(%f : tensor<100x300xf16>) -> tensor<100x300xf16>
  return %c : tensor<100x300xf16>
}
