// RUN: kiln-opt %s -pass-pipeline='builtin.module(kiln-cpu-codegen{target=x86_64 cpu=znver5})' | FileCheck %s --check-prefixes=CHECK,TILED
// RUN: kiln-opt %s -pass-pipeline='builtin.module(kiln-cpu-codegen{target=aarch64-linux-gnu cpu=neoverse-n1 opt-level=0})' | FileCheck %s --check-prefixes=CHECK,O0
// RUN: not kiln-opt %s -pass-pipeline='builtin.module(kiln-cpu-codegen{target=riscv64})' 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// RUN: not kiln-opt %s -pass-pipeline='builtin.module(kiln-cpu-codegen{target=x86_64 cpu=pentium-9000})' 2>&1 | FileCheck %s --check-prefix=BAD-CPU

// The whole pipeline: one LLVM function taking bare pointers for the input,
// the output, the arena, the weights and the runtime callbacks; intermediates in the arena, the
// weight in the blob, erf inlined; nothing allocates or calls a runtime.
// With tiling (AVX-512: 32-lane panels) the 4x3 weight is stored as one
// zero-padded [4][32] panel and the 2x3 product as a padded 2x32 tile.
// TILED: module attributes {kiln.arena_size = 256 : i64, kiln.weights = {offsets = array<i64: 0>, size = 512 : i64, values = [dense_resource<packed_rhs> : tensor<1x4x32xf32>]}}
// O0: module attributes {kiln.arena_size = 64 : i64, kiln.weights = {offsets = array<i64: 0>, size = 64 : i64, values = [dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00, 9.000000e+00], [1.000000e+00, 0.000000e+00, -1.000000e+00]]> : tensor<4x3xf32>]}}
// CHECK-NOT: memref.
// CHECK-NOT: llvm.func @malloc
// CHECK-NOT: llvm.func @memrefCopy
// CHECK-NOT: @erff
// CHECK: llvm.func @main(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr {kiln.arena}, %{{.+}}: !llvm.ptr {kiln.weights}, %{{.+}}: !llvm.ptr {kiln.runtime})
// CHECK-NOT: memref.
// TILED: packed_rhs: "0x40000000
// TILED-SAME: 0000803F000000400000404000000000
// BAD-TARGET: unknown --target 'riscv64'; accepted: x86_64, x86_64-linux-gnu, aarch64, aarch64-linux-gnu
// BAD-CPU: unknown --cpu 'pentium-9000' for x86_64-unknown-linux-gnu
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<2x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, -1.0]]> : tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%f : tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = tensor.empty() : tensor<3x2xf32>
  %tr = linalg.transpose ins(%mm : tensor<2x3xf32>) outs(%t : tensor<3x2xf32>) permutation = [1, 0]
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tr : tensor<3x2xf32>) outs(%t : tensor<3x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
