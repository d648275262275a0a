// RUN: kiln-opt %s -kiln-cuda-serialize="archs=sm_80 toolkit=/nonexistent/cuda" -verify-diagnostics

// expected-error @below {{--target=cuda needs the CUDA toolkit's ptxas and fatbinary; looked in /nonexistent/cuda (set CUDA_ROOT to the toolkit folder)}}
module attributes {kiln.gpu.kernels = []} {
  gpu.module @kiln_kernels {
  }
}
