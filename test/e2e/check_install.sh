#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it the way a user does:
# the installed `kiln` compiles the bundled CNN, then the C and C++
# embedding examples (examples/embed) are built out of tree against the
# prefix with find_package(KilnRuntime), and the C one again with
# pkg-config, and each runs the artifact and prints its output. Then the
# same for a runtime-only build (-DKILN_RUNTIME_ONLY=ON, no LLVM).
#
# usage: check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/kiln bin/kiln-run include/kiln/runtime.h include/kiln/runtime.hpp \
         lib/libkiln_rt.so lib/libkiln_rt_static.a \
         lib/cmake/KilnRuntime/KilnRuntimeConfig.cmake lib/pkgconfig/kiln-runtime.pc; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done

"$prefix/bin/kiln" compile "$src/examples/cnn/model.onnx" -o "$work/cnn.so"
expected=$("$prefix/bin/kiln" inspect "$work/cnn.so" | awk '/^outputs/ {getline; print $1; exit}')

cmake -S "$src/examples/embed" -B "$work/embed" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/embed.log"
cmake --build "$work/embed" >> "$work/embed.log"

PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
cc -std=c99 -Wall -Werror "$src/examples/embed/run_model.c" \
  $(pkg-config --cflags --libs kiln-runtime) -o "$work/run_model_pc"

for exe in "$work/embed/run_model" "$work/embed/run_model_cpp" "$work/run_model_pc"; do
  out=$("$exe" "$work/cnn.so")
  if ! grep -q "^output '$expected': float32 \[" <<<"$out"; then
    echo "$exe: $out (expected output '$expected')"
    exit 1
  fi
  # The installed library, not the build tree's.
  lib=$(ldd "$exe" | awk '/libkiln_rt/ {print $3}')
  case "$lib" in
    "$prefix"/*) ;;
    *) echo "$exe loads libkiln_rt from '$lib', not from $prefix"; exit 1 ;;
  esac
done
# The runtime-only build (no LLVM): configure, build, install, and the
# C++ example against it runs the same artifact; nothing installed links
# LLVM or MLIR.
rt=$work/runtime-only
cmake -S "$src" -B "$rt/build" -G Ninja -DKILN_RUNTIME_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Release > "$rt.log"
cmake --build "$rt/build" >> "$rt.log"
cmake --install "$rt/build" --prefix "$rt/prefix" >> "$rt.log"
[ ! -e "$rt/prefix/bin/kiln" ] || { echo "runtime-only install has kiln"; exit 1; }
for exe in "$rt/prefix/bin/kiln-run" "$rt/prefix/lib/libkiln_rt.so"; do
  if ldd "$exe" | grep -q -E "libLLVM|libMLIR"; then
    echo "$exe links LLVM/MLIR"; exit 1
  fi
done
cmake -S "$src/examples/embed" -B "$rt/embed" -G Ninja \
  -DCMAKE_PREFIX_PATH="$rt/prefix" -DCMAKE_BUILD_TYPE=Release >> "$rt.log"
cmake --build "$rt/embed" >> "$rt.log"
out=$("$rt/embed/run_model_cpp" "$work/cnn.so")
grep -q "^output '$expected': float32 \[" <<<"$out" || { echo "runtime-only: $out"; exit 1; }
echo "PASS: installed to $prefix; kiln compiled the CNN; C (CMake, pkg-config) and C++ examples ran it; the runtime-only install (no LLVM) ran it too"
