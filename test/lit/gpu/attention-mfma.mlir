// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mfma' | FileCheck %s
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mfma precision=bf16' \
// RUN:   | FileCheck %s --check-prefix=BF16

// fp32 attention on AMD matrix cores: 4 waves of 64 per 64 query rows, 32
// keys of K and V per LDS stage (head 24 padded to 24 for the f32 MFMA's
// depth of 4; values 40 wide padded to 48), walked 16 keys at a time:
// Sᵀ = K·Qᵀ as 6 MFMAs 16x16x4, the row max over 4 registers and two xor
// shuffles, Oᵀ += Vᵀ·Pᵀ as 3 column tiles x 4 MFMAs; the lane's sums added
// across the row's four lanes at the end.
// CHECK-LABEL: func.func @causal(
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c256{{[_0-9]*}},{{.*}}) workgroup(%[[KS:.+]] : memref<32x28xf32, #gpu.address_space<workgroup>>, %[[VS:.+]] : memref<32x52xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[END:.+]] = arith.minui
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[END]] step %c32{{[_0-9]*}}
// CHECK:             memref.store %{{.+}}, %[[KS]]
// CHECK:             memref.store %{{.+}}, %[[VS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for {{.*}} step %c16{{[_0-9]*}}
// CHECK-COUNT-6:       amdgpu.mfma 16x16x4 {{.*}} : f32, f32, vector<4xf32>
// CHECK-COUNT-4:       arith.cmpi ugt
// CHECK:               gpu.shuffle xor %{{.+}}, %c16_i32{{[_0-9]*}}, %c64_i32{{[_0-9]*}} : f32
// CHECK:               gpu.shuffle xor %{{.+}}, %c32_i32{{[_0-9]*}}, %c64_i32{{[_0-9]*}} : f32
// CHECK:               math.exp
// CHECK-COUNT-12:      amdgpu.mfma 16x16x4 {{.*}} : f32, f32, vector<4xf32>
// CHECK:             gpu.barrier
// CHECK:           gpu.shuffle xor
// CHECK:           gpu.shuffle xor
// CHECK:           arith.divf
// CHECK-NOT:     kiln.attention
func.func @causal(%q: tensor<1x2x90x24xf32>, %k: tensor<1x2x90x24xf32>, %v: tensor<1x2x90x40xf32>) -> tensor<1x2x90x40xf32> {
  %o = kiln.attention %q, %k, %v {causal = true, scale = 2.500000e-01 : f64} : (tensor<1x2x90x24xf32>, tensor<1x2x90x24xf32>, tensor<1x2x90x40xf32>) -> tensor<1x2x90x40xf32>
  return %o : tensor<1x2x90x40xf32>
}

// At bf16 the operands are staged as bf16 and each product is 16 deep:
// head 24 pads to 32 (2 MFMAs for Sᵀ), one MFMA per 16 output columns.
// BF16-LABEL: func.func @causal(
// BF16:         workgroup(%{{.+}} : memref<32x36xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<32x52xbf16, #gpu.address_space<workgroup>>)
// BF16-COUNT-2:   amdgpu.mfma 16x16x16 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// BF16:           gpu.shuffle xor
// BF16:           arith.truncf %{{.+}} : f32 to bf16
// BF16-COUNT-3:   amdgpu.mfma 16x16x16 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// BF16-NOT:       amdgpu.mfma

// -----

// Head sizes up to 128 fit the MFMA kernel (the SIMT one stops at 64).
// CHECK-LABEL: func.func @head128(
// BF16-LABEL:  func.func @head128(
// CHECK:         gpu.launch
// CHECK-COUNT-32:  amdgpu.mfma 16x16x4
// CHECK-NOT:     kiln.attention
func.func @head128(%q: tensor<2x20x128xf32>, %k: tensor<2x20x128xf32>, %v: tensor<2x20x128xf32>, %m: tensor<2x20x20xf32>) -> tensor<2x20x128xf32> {
  %o = kiln.attention %q, %k, %v, %m {causal = false, scale = 8.838835e-02 : f64} : (tensor<2x20x128xf32>, tensor<2x20x128xf32>, tensor<2x20x128xf32>, tensor<2x20x20xf32>) -> tensor<2x20x128xf32>
  return %o : tensor<2x20x128xf32>
}

// -----

// Past 128 the generic lowering stays.
// CHECK-LABEL: func.func @head256(
// CHECK-NOT:     gpu.launch
// CHECK:         kiln.attention
func.func @head256(%q: tensor<1x8x256xf32>, %k: tensor<1x8x256xf32>, %v: tensor<1x8x256xf32>) -> tensor<1x8x256xf32> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 6.250000e-02 : f64} : (tensor<1x8x256xf32>, tensor<1x8x256xf32>, tensor<1x8x256xf32>) -> tensor<1x8x256xf32>
  return %o : tensor<1x8x256xf32>
}

// -----

// An f16 model's attention reads and writes f16 and feeds the 16x16x16 f16
// MFMA; the softmax and the accumulators stay f32.
// CHECK-LABEL: func.func @half(
// CHECK:         %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x20x32xf16>
// CHECK:         gpu.launch {{.*}} workgroup(%{{.+}} : memref<32x36xf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<32x36xf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-2:   amdgpu.mfma 16x16x16 {{.*}} : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK:           math.exp %{{.+}} : f32
// CHECK-COUNT-2:   amdgpu.mfma 16x16x16 {{.*}} : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK:         arith.divf %{{.+}} : f32
// CHECK:         %[[H:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK:         memref.store %[[H]], %[[OUT]]
// CHECK-NOT:     kiln.attention
func.func @half(%q: tensor<2x20x32xf16>, %k: tensor<2x20x32xf16>, %v: tensor<2x20x32xf16>) -> tensor<2x20x32xf16> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 1.767767e-01 : f64} : (tensor<2x20x32xf16>, tensor<2x20x32xf16>, tensor<2x20x32xf16>) -> tensor<2x20x32xf16>
  return %o : tensor<2x20x32xf16>
}
