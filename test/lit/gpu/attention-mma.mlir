// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mma.sync precision=bf16' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s -split-input-file \
// RUN:   -kiln-gpu-attention-kernels='matrix-unit=mma.sync' \
// RUN:   | FileCheck %s --check-prefix=FP32

// bf16 attention on NVIDIA tensor cores: f32 K and V are rounded to bf16
// by casts of their own, Q is read as f32 once. 4 warps of two m16 tiles
// (32 rows) each per 128 query rows (Sq 90 > 64, heads up to 64), two
// stages of 64 keys of K (head 24 padded to 32, +8) and V (values 40 wide
// padded to 48, +8), both [key][column], filled by cp.async: the first
// stage before the key loop, then each step waits for it, passes one
// barrier, issues the next stage into the other buffer, computes S = Q·Kᵀ
// as 8 tiles x 2 m16 tiles x 2 m16n8k16 (each K fragment by ldmatrix
// serving both m16 tiles), finishes the scores (times log2(e); the key and
// causal checks only where the stage may hold a masked key: past Sk or
// after the warp's first row), the row max over the lane's scores and two
// xor shuffles (lanes 1 and 2 apart), exp2, O += P·V as 4 x 6 x 2
// m16n8k16 (V by transposing ldmatrix); the lanes' sums are added across
// each row's group at the end.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<1x2x90x24xf32>, %[[K:[^:]+]]: tensor<1x2x90x24xf32>, %[[V:[^:]+]]: tensor<1x2x90x40xf32>)
// CHECK-DAG:     %[[VH:.+]] = kiln.cast %[[V]] {to = bf16} : (tensor<1x2x90x40xf32>) -> tensor<1x2x90x40xbf16>
// CHECK-DAG:     %[[KH:.+]] = kiln.cast %[[K]] {to = bf16} : (tensor<1x2x90x24xf32>) -> tensor<1x2x90x24xbf16>
// CHECK-DAG:     bufferization.to_buffer %[[Q]] read_only : tensor<1x2x90x24xf32>
// CHECK-DAG:     bufferization.to_buffer %[[KH]] read_only
// CHECK-DAG:     bufferization.to_buffer %[[VH]] read_only
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c128{{[_0-9]*}},{{.*}}) workgroup(%{{.+}} : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x64x56xbf16, #gpu.address_space<workgroup>>)
// CHECK:           %[[END:.+]] = arith.minui
// CHECK:           nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[END]] step %c64{{[_0-9]*}}
// CHECK-NOT:         nvvm.mma.sync
// CHECK:             nvvm.cp.async.wait.group 0
// CHECK-NEXT:        gpu.barrier
// CHECK:             nvvm.cp.async.shared.global
// CHECK:             nvvm.cp.async.commit.group
// CHECK:             nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK-COUNT-32:    nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT:         arith.cmpi ugt
// CHECK:             %[[INSIDE:.+]] = arith.andi
// CHECK:             scf.if %[[INSIDE]] -> (f32,
// CHECK-NOT:           arith.cmpi ugt
// CHECK:             } else {
// CHECK-COUNT-64:      arith.cmpi ugt
// CHECK:             gpu.shuffle xor %{{.+}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK:             gpu.shuffle xor %{{.+}}, %c2_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK:             math.exp2
// CHECK:             nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-COUNT-2:     nvvm.mma.sync
// CHECK:             scf.yield
// CHECK:           nvvm.cp.async.wait.group 0
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
// stored as bf16. Its K and V go to shared memory by cp.async: the first
// stage before the loop, then each step waits for it, passes the barrier
// and, unless it is the last, issues the next one into the other stage
// before the products.
// CHECK-LABEL: func.func @bf16_model(
// CHECK:         workgroup(%{{.+}} : memref<2x64x72xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x64x72xbf16, #gpu.address_space<workgroup>>)
// CHECK:           nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           scf.for
// CHECK-NEXT:        arith.constant
// CHECK:             nvvm.cp.async.wait.group 0
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        %[[MORE:.+]] = arith.cmpi ult
// CHECK-NEXT:        scf.if %[[MORE]] {
// CHECK:               nvvm.cp.async.shared.global
// CHECK:               nvvm.cp.async.commit.group
// CHECK:             nvvm.mma.sync
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK:           arith.truncf %{{.+}} : f32 to bf16
// FP32-LABEL: func.func @bf16_model(
// FP32:           nvvm.mma.sync
func.func @bf16_model(%q: tensor<2x128x64xbf16>, %k: tensor<2x128x64xbf16>, %v: tensor<2x128x64xbf16>) -> tensor<2x128x64xbf16> {
  %o = kiln.attention %q, %k, %v {scale = 1.250000e-01 : f64} : (tensor<2x128x64xbf16>, tensor<2x128x64xbf16>, tensor<2x128x64xbf16>) -> tensor<2x128x64xbf16>
  return %o : tensor<2x128x64xbf16>
}

// -----

// Operands made by transposes that keep the last dim are read from the
// transposes' inputs ([B, S, H, D] as the projections make them), and a
// result read only by such a transpose is written in its layout: no
// [B, H, S, D] copies around the kernel (the input transposes are left
// unused, for the cleanup).
// CHECK-LABEL: func.func @through_transposes(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<2x90x3x32xf32>, %[[K:[^:]+]]: tensor<2x90x3x32xf32>, %[[V:[^:]+]]: tensor<2x90x3x32xf32>)
// CHECK-DAG:     %[[KH:.+]] = kiln.cast %[[K]] {to = bf16} : (tensor<2x90x3x32xf32>) -> tensor<2x90x3x32xbf16>
// CHECK-DAG:     %[[VH:.+]] = kiln.cast %[[V]] {to = bf16} : (tensor<2x90x3x32xf32>) -> tensor<2x90x3x32xbf16>
// CHECK-DAG:     %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<2x90x3x32xf32>
// CHECK-DAG:     bufferization.to_buffer %[[KH]] read_only : tensor<2x90x3x32xbf16>
// CHECK-DAG:     bufferization.to_buffer %[[VH]] read_only : tensor<2x90x3x32xbf16>
// CHECK:         %[[OUT:.+]] = memref.alloc() {{.*}} : memref<2x90x3x32xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[QB]][%{{.+}}, %[[ROW:.+]], %{{.+}}, %{{.+}}] : memref<2x90x3x32xf32>
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK-NOT:     kiln.attention
// CHECK:         return %[[R]] : tensor<2x90x3x32xf32>
// The SIMT kernel (fp32) reads the transposed tensors.
// FP32-LABEL: func.func @through_transposes(
// FP32:         kiln.transpose
// FP32:         return %{{.+}} : tensor<2x90x3x32xf32>
func.func @through_transposes(%q: tensor<2x90x3x32xf32>, %k: tensor<2x90x3x32xf32>, %v: tensor<2x90x3x32xf32>) -> tensor<2x90x3x32xf32> {
  %qt = kiln.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x90x3x32xf32>) -> tensor<2x3x90x32xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x90x3x32xf32>) -> tensor<2x3x90x32xf32>
  %vt = kiln.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x90x3x32xf32>) -> tensor<2x3x90x32xf32>
  %o = kiln.attention %qt, %kt, %vt {scale = 1.250000e-01 : f64} : (tensor<2x3x90x32xf32>, tensor<2x3x90x32xf32>, tensor<2x3x90x32xf32>) -> tensor<2x3x90x32xf32>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x90x32xf32>) -> tensor<2x90x3x32xf32>
  return %ot : tensor<2x90x3x32xf32>
}
