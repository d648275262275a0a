#!/usr/bin/env bash
# The runtime-only install for aarch64, used the way a user on an Arm
# machine does: the runtime cross-built with Debian's g++-aarch64-linux-gnu
# (-DKILN_RUNTIME_ONLY=ON, no LLVM), installed into a fresh prefix; the C
# embedding example built against it with pkg-config and the C++ one with
# find_package(KilnRuntime); both run, under qemu-aarch64, an artifact the
# host kiln compiled with --target=aarch64-linux-gnu.
#
# usage: check_install_aarch64.sh KILN SOURCE_DIR WORK_DIR QEMU
set -eu
kiln=$1 src=$2 work=$3 qemu=$4
rm -rf "$work" && mkdir -p "$work"
build=$work/build prefix=$work/prefix log=$work/log
toolchain=$src/runtime/cmake/aarch64-linux-gnu.toolchain.cmake
cmake -S "$src" -B "$build" -G Ninja -DKILN_RUNTIME_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" > "$log"
cmake --build "$build" >> "$log"
cmake --install "$build" --prefix "$prefix" >> "$log"
for f in bin/kiln-run include/kiln/runtime.h include/kiln/runtime.hpp \
         lib/libkiln_rt.so lib/libkiln_rt_static.a \
         lib/cmake/KilnRuntime/KilnRuntimeConfig.cmake lib/pkgconfig/kiln-runtime.pc; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
[ ! -e "$prefix/bin/kiln" ] || { echo "runtime-only install has kiln"; exit 1; }
for f in bin/kiln-run lib/libkiln_rt.so; do
  readelf -h "$prefix/$f" | grep -q "Machine: *AArch64" ||
    { echo "$f is not an aarch64 binary"; exit 1; }
  if readelf -d "$prefix/$f" | grep NEEDED | grep -q -E "LLVM|MLIR"; then
    echo "$f links LLVM/MLIR"; exit 1
  fi
done

"$kiln" compile "$src/examples/cnn/model.onnx" -o "$work/cnn.so" \
  --target=aarch64-linux-gnu
# The CNN's output (an aarch64 artifact cannot be loaded here to ask it).
expected=logits

PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
aarch64-linux-gnu-gcc -std=c99 -Wall -Werror "$src/examples/embed/run_model.c" \
  $(pkg-config --cflags --libs kiln-runtime) -o "$work/run_model_pc"
cmake -S "$src/examples/embed" -B "$work/embed" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >> "$log"
cmake --build "$work/embed" >> "$log"

for exe in "$work/run_model_pc" "$work/embed/run_model_cpp"; do
  readelf -h "$exe" | grep -q "Machine: *AArch64" || { echo "$exe: not aarch64"; exit 1; }
  out=$("$qemu" -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$prefix/lib" \
        "$exe" "$work/cnn.so")
  if ! grep -q "^output '$expected': float32 \[" <<<"$out"; then
    echo "$exe: $out (expected output '$expected')"
    exit 1
  fi
done
echo "PASS: the aarch64 runtime-only install (no LLVM) in $prefix; the C (pkg-config) and C++ (CMake) examples built against it ran the aarch64 CNN under qemu"
