#!/usr/bin/env bash
# The real-GPU check of the CUDA backend (docs/gpu.md), in two halves:
#
#   scripts/gpu-check.sh bundle [BUILD_DIR]  here: exports the models, makes
#       onnxruntime's reference outputs, compiles CUDA artifacts for
#       sm_80,sm_90a and copies them with kiln-run into BUILD_DIR/gpu-bundle
#       (default build/), under 64 MiB
#   scripts/gpu-check.sh run BUNDLE OUT     on the GPU machine, from the
#       repository root: every model against its reference (rtol 1e-4,
#       atol 1e-5), then kiln-run bench beside torch eager and torch.compile
#       (scripts/gpu_check_torch.py); the table goes to OUT/gpu-check.md
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models=(cnn transformer bert_encoder gpt2_blocks inception_block
        attention:sdpa_causal attention:mha resnet18)

bundle() {
  local build=${1:-$root/build}
  local out=$build/gpu-bundle kiln=$build/bin/kiln
  [ -x "$kiln" ] || { echo "error: $kiln not built (make build)"; exit 1; }
  rm -rf "$out" && mkdir -p "$out/bin" "$out/models"
  cp "$build/bin/kiln-run" "$out/bin/"
  for entry in "${models[@]}"; do
    local name=${entry#*:} dir=$out/models/${entry#*:} src
    src=$(mktemp -d)
    case $entry in
      cnn|transformer) cp "$root/examples/$name"/* "$src/" ;;
      attention:*) python3 "$root/test/e2e/models/export_attention.py" "$name" "$src" >/dev/null ;;
      resnet18) python3 "$root/test/e2e/models/export_torchvision.py" resnet18 "$src" >/dev/null ;;
      *) python3 "$root/test/e2e/models/export_graph_models.py" "$name" "$src" >/dev/null ;;
    esac
    mkdir -p "$dir"
    "$kiln" compile "$src/model.onnx" -o "$dir/model.so" --target=cuda \
      --gpu-arch=sm_80,sm_90a
    cp "$src"/*.npy "$dir/"
    echo "$entry" > "$dir/source"
    rm -rf "$src"
    echo "bundled $name: $(du -sh "$dir" | cut -f1)"
  done
  local size
  size=$(du -sm "$out" | cut -f1)
  echo "bundle: $out, $size MiB"
  [ "$size" -lt 64 ] || { echo "error: the bundle is over 64 MiB"; exit 1; }
}

run() {
  local bundle=$1 out=$2
  mkdir -p "$out"
  local report=$out/gpu-check.md failures=0
  {
    echo "# GPU check, $(date -u +%Y-%m-%d)"
    echo
    echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
    echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
    echo
    echo "| model | numerics vs onnxruntime | kiln (host I/O) ms | kiln (on device) ms | kiln GPU kernel time ms | torch eager ms | torch.compile ms |"
    echo "|---|---|---|---|---|---|---|"
  } > "$report"
  for dir in "$bundle"/models/*/; do
    local name args=() check bench
    name=$(basename "$dir")
    for f in "$dir"/*.npy; do
      case "$(basename "$f")" in
        expected_*) n=$(basename "$f" .npy); args+=(--expect "${n#expected_}=$f") ;;
        *) args+=(--input "$(basename "$f" .npy)=$f") ;;
      esac
    done
    if check=$("$bundle/bin/kiln-run" "$dir/model.so" "${args[@]}" --rtol 1e-4 --atol 1e-5 2>&1); then
      check="PASS ($(grep -o 'max rel error [^)]*' <<<"$check" | sort -k4 -g | tail -1))"
    else
      check="FAIL: $(tail -1 <<<"$check")"
      failures=$((failures + 1))
    fi
    bench=$("$bundle/bin/kiln-run" bench "$dir/model.so" "${args[@]}" --repeat 100 --warmup 10 2>&1 || true)
    echo "$bench" > "$out/$name.bench.txt"
    local host device kernels torch
    host=$(grep -oP 'latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")
    device=$(grep -oP 'on-device latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")
    kernels=$(grep -oP 'GPU kernel time: \K[0-9.e+-]+' <<<"$bench" || echo "-")
    torch=$(python3 "$root/scripts/gpu_check_torch.py" "$(cat "$dir/source")" "$dir" 2>"$out/$name.torch.txt" || echo "- -")
    echo "| $name | $check | $host | $device | $kernels | ${torch% *} | ${torch#* } |" >> "$report"
  done
  cat "$report"
  [ "$failures" = 0 ]
}

case ${1:-} in
  bundle) shift; bundle "$@" ;;
  run) shift; [ $# = 2 ] || { echo "usage: $0 run BUNDLE OUT"; exit 2; }; run "$@" ;;
  *) echo "usage: $0 bundle [BUILD_DIR] | run BUNDLE OUT"; exit 2 ;;
esac
