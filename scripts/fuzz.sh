#!/usr/bin/env bash
# Runs one libFuzzer target built by `make fuzz` for a time or a number of
# executions, starting from its checked-in corpus; new crashing inputs land
# in test/fuzz/corpus/NAME/ (as crash-*/leak-*/timeout-*/oom-*), where
# `ctest -L fuzz` replays them once fixed.
#
#   scripts/fuzz.sh NAME [SECONDS] [RUNS] [extra libFuzzer flags...]
#
# NAME: npy, onnx_tensor, elf_header, logs, onnx_import, onnx_pipeline,
# pt2_import. Prints libFuzzer's final stats line (executions, rate,
# coverage). The grown working corpus goes to build-fuzz/corpus/NAME (not
# checked in).
set -euo pipefail
name=$1 seconds=${2:-60} runs=${3:--1}
shift $(( $# < 3 ? $# : 3 ))
root=$(cd "$(dirname "$0")/.." && pwd)
fuzzer=$root/build-fuzz/bin/kiln-fuzz-$name
[ -x "$fuzzer" ] || { echo "error: $fuzzer missing; run 'make fuzz'" >&2; exit 1; }
work=$root/build-fuzz/corpus/$name
mkdir -p "$work"
# allow_user_poisoning=0: see the Makefile (LLVM's allocator poisoning).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$work"
"$fuzzer" "$work" "$root/test/fuzz/corpus/$name" \
  -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$root/test/fuzz/corpus/$name/" \
  -print_final_stats=1 "$@" 2>&1 | tee "$root/build-fuzz/fuzz-$name.log" |
  grep -E "^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY|Done)" || true
