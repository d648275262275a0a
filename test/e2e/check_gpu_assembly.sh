#!/usr/bin/env bash
# Compiles a model for CUDA sm_80 and sm_90a and checks, from `kiln
# inspect`, that the artifact holds both architectures and that no kernel
# spills registers (ptxas's report, recorded per kernel and arch), and that
# the --report JSON lists the same kernels with both architectures.
# usage: check_gpu_assembly.sh KILN MODEL.onnx WORK_DIR [compile flags...]
set -euo pipefail
kiln=$1 model=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$model" -o "$work/model.so" --target=cuda \
  --gpu-arch=sm_80,sm_90a --report="$work/report.json" "$@"
"$kiln" inspect "$work/model.so" > "$work/inspect.txt"
grep -E "^gpu: +cuda, archs sm_80,sm_90a, [0-9]+ kernels" "$work/inspect.txt"
kernels=$(grep -cE "^  kiln_kernel_[0-9]+ " "$work/inspect.txt")
for arch in sm_80 sm_90a; do
  reports=$(grep -cE "^ +$arch [0-9]+ regs " "$work/inspect.txt")
  [ "$reports" = "$kernels" ] || { echo "FAIL: $reports of $kernels kernels have a $arch report"; exit 1; }
done
if grep -E " regs .* [1-9][0-9]* B spill$" "$work/inspect.txt"; then
  echo "FAIL: kernels above spill registers"
  exit 1
fi
python3 - "$work/report.json" "$kernels" <<'PY'
import json, sys
gpu = json.load(open(sys.argv[1]))["gpu"]
assert gpu["platform"] == "cuda" and gpu["archs"] == "sm_80,sm_90a", gpu["archs"]
assert len(gpu["kernels"]) == int(sys.argv[2]), len(gpu["kernels"])
for k in gpu["kernels"]:
    assert [r["arch"] for r in k["resources"]] == ["sm_80", "sm_90a"], k
PY
echo "PASS: $kernels kernels for sm_80 and sm_90a, none spills"
