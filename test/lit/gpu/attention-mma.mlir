// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mma.sync precision=bf16' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mma.sync' \
// RUN:   | FileCheck %s --check-prefix=FP32

// bf16 attention on NVIDIA tensor cores: 4 warps per 64 query rows, 32
// keys of K ([key][d], head 24 padded to 32, +8) and V transposed ([d][key],
// values 40 wide, +8) per stage, walked 16 keys at a time: S = Q·Kᵀ as 2
// tiles x 2 m16n8k16, the row max over 4 registers and two xor shuffles
// (lanes 1 and 2 apart) for each of the lane's two rows, then
// O += P·V as 5 column tiles of one m16n8k16 each; the lanes' sums added
// across each row's group at the end.
// CHECK-LABEL: func.func @causal(
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c128{{[_0-9]*}},{{.*}}) workgroup(%[[KS:.+]] : memref<32x40xbf16, #gpu.address_space<workgroup>>, %[[VS:.+]] : memref<40x40xbf16, #gpu.address_space<workgroup>>)
// CHECK:           %[[END:.+]] = arith.minui
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[END]] step %c32{{[_0-9]*}}
// CHECK:             memref.store %{{.+}}, %[[KS]]
// CHECK:             memref.store %{{.+}}, %[[VS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for {{.*}} step %c16{{[_0-9]*}}
// CHECK-COUNT-2:       nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-COUNT-4:       arith.cmpi ugt
// CHECK-COUNT-2:       nvvm.mma.sync
// CHECK-COUNT-4:       arith.cmpi ugt
// CHECK:               gpu.shuffle xor %{{.+}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK:               gpu.shuffle xor %{{.+}}, %c2_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK:               math.exp
// CHECK-COUNT-5:       nvvm.mma.sync
// CHECK:             gpu.barrier
// CHECK:           gpu.shuffle xor
// CHECK:           arith.divf
// CHECK-NOT:     kiln.attention
// fp32 (and tf32) attention keeps the SIMT kernel: 64 threads, no mma.
// FP32-LABEL: func.func @causal(
// FP32:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c64{{[_0-9]*}},
// FP32-NOT:     nvvm.mma.sync
func.func @causal(%q: tensor<1x2x90x24xf32>, %k: tensor<1x2x90x24xf32>, %v: tensor<1x2x90x40xf32>) -> tensor<1x2x90x40xf32> {
  %o = kiln.attention %q, %k, %v {causal = true, scale = 2.500000e-01 : f64} : (tensor<1x2x90x24xf32>, tensor<1x2x90x24xf32>, tensor<1x2x90x40xf32>) -> tensor<1x2x90x40xf32>
  return %o : tensor<1x2x90x40xf32>
}

// -----

// A bf16 model's attention takes the kernel at any precision, its result
// stored as bf16.
// CHECK-LABEL: func.func @bf16_model(
// CHECK:         workgroup(%{{.+}} : memref<32x72xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<64x40xbf16, #gpu.address_space<workgroup>>)
// CHECK:           nvvm.mma.sync
// CHECK:           arith.truncf %{{.+}} : f32 to bf16
// FP32-LABEL: func.func @bf16_model(
// FP32:           nvvm.mma.sync
func.func @bf16_model(%q: tensor<2x128x64xbf16>, %k: tensor<2x128x64xbf16>, %v: tensor<2x128x64xbf16>) -> tensor<2x128x64xbf16> {
  %o = kiln.attention %q, %k, %v {scale = 1.250000e-01 : f64} : (tensor<2x128x64xbf16>, tensor<2x128x64xbf16>, tensor<2x128x64xbf16>) -> tensor<2x128x64xbf16>
  return %o : tensor<2x128x64xbf16>
}
