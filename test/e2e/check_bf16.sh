#!/usr/bin/env bash
# kiln compile --precision=bf16 on a transformer export: the matmul weights
# are stored in bf16 (the artifact's weights shrink), the result stays within
# relative L2 error 1e-2 of onnxruntime's fp32 output, `kiln inspect` says
# so, and the machine code is the one the CPU calls for:
#   native:    this machine's CPU with AVX512-BF16 (skipped without it):
#              vdpbf16ps on bf16 k-pairs;
#   converted: --cpu=x86-64-v3 (AVX2, no bf16 math): bf16 weights extended to
#              f32 as loaded, no vdpbf16ps.
# usage: check_bf16.sh KILN MODEL_DIR WORK_DIR native|converted
set -eu
kiln=$1 dir=$2 work=$3 mode=$4
rm -rf "$work" && mkdir -p "$work"
flags=(--precision=bf16)
if [ "$mode" = native ]; then
  if ! grep -qw avx512_bf16 /proc/cpuinfo; then
    echo "skipping: this CPU has no AVX512-BF16"
    exit 77
  fi
else
  flags+=(--cpu=x86-64-v3)
fi
"$kiln" compile "$dir/model.onnx" -o "$work/fp32.so" "${flags[@]:1}"
KILN_COMPILE_FLAGS="${flags[*]}" KILN_REL_L2=1e-2 \
  "$(dirname "$0")/run_example.sh" "$kiln" "$dir" "$work/bf16"
cp "$work/bf16/model.so" "$work/bf16.so"

inspect=$("$kiln" inspect "$work/bf16.so")
grep -q '^precision: *bf16$' <<<"$inspect" || {
  echo "FAIL: kiln inspect does not say precision bf16:"; echo "$inspect"; exit 1; }
if "$kiln" inspect "$work/fp32.so" | grep -q '^precision'; then
  echo "FAIL: the fp32 artifact claims a precision"; exit 1
fi

weights() { "$kiln" inspect "$1" | sed -n 's/^weights: *\([0-9.]*\) MB$/\1/p'; }
fp32=$(weights "$work/fp32.so") bf16=$(weights "$work/bf16.so")
python3 - "$fp32" "$bf16" <<'EOF'
import sys
fp32, bf16 = map(float, sys.argv[1:])
print(f"weights: fp32 {fp32} MB, bf16 {bf16} MB ({bf16 / fp32:.2f}x)")
# The matmul weights halve; biases, norms and embeddings stay f32.
if not bf16 < 0.65 * fp32:
    sys.exit("FAIL: bf16 weights are not about half the fp32 ones")
EOF

dots=$(objdump -d --no-show-raw-insn "$work/bf16.so" | grep -c vdpbf16ps || true)
if [ "$mode" = native ] && [ "$dots" -eq 0 ]; then
  echo "FAIL: no vdpbf16ps in the native bf16 artifact"; exit 1
fi
if [ "$mode" = converted ] && [ "$dots" -ne 0 ]; then
  echo "FAIL: vdpbf16ps in an artifact for a CPU without AVX512-BF16"; exit 1
fi
echo "ok: $mode bf16, $dots vdpbf16ps instructions"
