#!/usr/bin/env bash
# Installs what Kiln needs to build and test, only when something is missing.
# Idempotent: when every package is present, apt is not run at all.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkgconf
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  libprotobuf-dev protobuf-compiler libonnx-dev libfmt-dev catch2
  libonnx-testdata
  g++-aarch64-linux-gnu qemu-user
  rocm-device-libs libamdhip64-5
  graphviz libclang-rt-22-dev
  libcpp-httplib-dev nlohmann-json3-dev
  dpkg-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
