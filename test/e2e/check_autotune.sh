#!/usr/bin/env bash
# `kiln compile -O3 --autotune` on a 64x256x256 MatMul: the first compile
# times the candidates and writes the cache, the artifact computes what the
# untuned one does, and a second compile takes the choice from the cache.
# usage: check_autotune.sh KILN MODEL WORK_DIR
set -eu
kiln=$1 model=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cache="$work/cache/autotune.json"
log=$(KILN_LOGS=autotune "$kiln" compile "$model" -o "$work/tuned.so" -O3 \
  --autotune --autotune-cache="$cache" --autotune-threads=2 2>&1)
echo "$log"
grep -Eq "^\[kiln:autotune\] chose [0-9]+x[0-9]+x[0-9]+ for linalg.matmul at 'mm': " <<<"$log"
test -s "$cache"
"$kiln" compile "$model" -o "$work/plain.so" -O2
"$kiln" run "$work/plain.so" --random-inputs --seed 1 --output-dir "$work/plain"
"$kiln" run "$work/tuned.so" --random-inputs --seed 1 \
  --expect "y=$work/plain/y.npy" --rtol 1e-4 --atol 1e-5
log=$(KILN_LOGS=autotune "$kiln" compile "$model" -o "$work/again.so" -O3 \
  --autotune --autotune-cache="$cache" --autotune-threads=2 2>&1)
echo "$log"
grep -Eq "^\[kiln:autotune\] cached [0-9]+x[0-9]+x[0-9]+ for linalg.matmul at 'mm'$" <<<"$log"
