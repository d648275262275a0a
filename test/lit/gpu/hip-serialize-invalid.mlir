// RUN: kiln-opt %s -kiln-hip-serialize="archs=gfx942 toolkit=/nonexistent/rocm" -verify-diagnostics

// expected-error @below {{--target=hip needs ld.lld and ROCm's device libraries (Debian: lld-22 rocm-device-libs; scripts/install-deps.sh installs them); looked in /nonexistent/rocm (no /nonexistent/rocm/llvm/bin/ld.lld) (set ROCM_PATH to a folder with llvm/bin/ld.lld and amdgcn/bitcode)}}
module attributes {kiln.gpu.kernels = []} {
  gpu.module @kiln_kernels {
  }
}
