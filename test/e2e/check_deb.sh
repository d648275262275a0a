#!/usr/bin/env bash
# The Debian package (cmake/KilnPackaging.cmake): cpack makes
# kiln_<version>_<arch>.deb from the build; its control file names the
# libraries it needs and lld-22; its files are the install's under /usr;
# unpacked into a scratch root, its kiln compiles the bundled CNN and the C
# embedding example, built against the unpacked tree with pkg-config (whose
# paths follow the tree), runs it.
#
# usage: check_deb.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
command -v dpkg-deb > /dev/null || { echo "skipped: needs dpkg-deb"; exit 77; }
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" > cpack.log)
deb=$(ls "$work"/kiln_*.deb)
info=$(dpkg-deb --info "$deb")
for field in "Package: kiln" "Depends: .*lld-22" "Depends: .*libmlir-22" \
             "Depends: .*libprotobuf"; do
  grep -q "^ $field" <<<"$info" || { echo "control file lacks '$field':"; echo "$info"; exit 1; }
done
files=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in ./usr/bin/kiln ./usr/bin/kiln-run ./usr/include/kiln/runtime.h \
         ./usr/lib/libkiln_rt.so ./usr/lib/libkiln_rt_static.a \
         ./usr/lib/cmake/KilnRuntime/KilnRuntimeConfig.cmake \
         ./usr/lib/pkgconfig/kiln-runtime.pc; do
  grep -qx "$f" <<<"$files" || { echo "$deb lacks $f"; exit 1; }
done
root=$work/root
dpkg-deb -x "$deb" "$root"
"$root/usr/bin/kiln" compile "$src/examples/cnn/model.onnx" -o "$work/cnn.so"
PKG_CONFIG_PATH=$root/usr/lib/pkgconfig
export PKG_CONFIG_PATH
cc -std=c99 -Wall -Werror "$src/examples/embed/run_model.c" \
  $(pkg-config --cflags --libs kiln-runtime) -o "$work/run_model"
out=$(LD_LIBRARY_PATH=$root/usr/lib "$work/run_model" "$work/cnn.so")
grep -q "^output 'logits': float32 \[" <<<"$out" || { echo "run_model: $out"; exit 1; }
echo "PASS: $(basename "$deb") ($(du -h "$deb" | cut -f1)): control file, contents, and its kiln and runtime compiled and ran the CNN"
