#!/usr/bin/env bash
# The real-GPU check of the CUDA backend (docs/gpu.md), in two halves:
#
#   scripts/gpu-check.sh bundle [BUILD_DIR]  here: exports the models, makes
#       onnxruntime's reference outputs, compiles CUDA artifacts for
#       sm_80,sm_90a and copies them with kiln-run into BUILD_DIR/gpu-bundle
#       (default build/), in groups g1, g2, ... that each fit one device
#       call (64 MiB carried); it prints the call for each group
#   scripts/gpu-check.sh run BUNDLE OUT     on the GPU machine, from the
#       repository root: every model carried (BUNDLE/models/*) against its
#       reference (fp32: rtol 1e-4, tf32/bf16/fp16: relative L2 error 1e-2;
#       atol 1e-5), then kiln-run bench beside torch eager and torch.compile
#       (scripts/gpu_check_torch.py); the table goes to OUT/gpu-check.md
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# name[@precision]: the tensor-core variants are checked within 1e-2
# relative L2 error of onnxruntime's fp32 outputs.
models=(cnn transformer bert_encoder gpt2_blocks inception_block
        attention:sdpa_causal attention:mha resnet18
        transformer@tf32 transformer@fp16 gpt2_blocks@bf16 bert_encoder@bf16)

bundle() {
  local build=${1:-$root/build}
  local out=$build/gpu-bundle kiln=$build/bin/kiln
  [ -x "$kiln" ] || { echo "error: $kiln not built (make build)"; exit 1; }
  rm -rf "$out" && mkdir -p "$out/bin" "$out/models"
  cp "$build/bin/kiln-run" "$out/bin/"
  for spec in "${models[@]}"; do
    local entry=${spec%@*} precision=fp32 src
    [[ $spec == *@* ]] && precision=${spec#*@}
    local name=${entry#*:}
    local dir=$out/models/$name
    [ "$precision" = fp32 ] || dir=$dir-$precision
    src=$(mktemp -d)
    case $entry in
      cnn|transformer) cp "$root/examples/$name"/* "$src/" ;;
      attention:*) python3 "$root/test/e2e/models/export_attention.py" "$name" "$src" >/dev/null ;;
      resnet18) python3 "$root/test/e2e/models/export_torchvision.py" resnet18 "$src" >/dev/null ;;
      *) python3 "$root/test/e2e/models/export_graph_models.py" "$name" "$src" >/dev/null ;;
    esac
    mkdir -p "$dir"
    "$kiln" compile "$src/model.onnx" -o "$dir/model.so" --target=cuda \
      --gpu-arch=sm_80,sm_90a --gpu-precision="$precision"
    cp "$src"/*.npy "$dir/"
    echo "$entry" > "$dir/source"
    echo "$precision" > "$dir/precision"
    rm -rf "$src"
    echo "bundled $(basename "$dir"): $(du -sh "$dir" | cut -f1)"
  done
  # The device machine takes 64 MiB per call: models go in groups, the
  # largest first, each with bin/ under 60 MiB.
  local groups=$out/groups.txt
  python3 - "$out" > "$groups" <<'PY'
import os, sys
out = sys.argv[1]
def size(path):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(path) for f in fs)
limit, base = 60 << 20, size(os.path.join(out, "bin"))
models = sorted(os.listdir(os.path.join(out, "models")),
                key=lambda m: -size(os.path.join(out, "models", m)))
groups = []
for m in models:
    s = size(os.path.join(out, "models", m))
    for g in groups:
        if g[0] + s <= limit:
            g[0] += s
            g[1].append(m)
            break
    else:
        groups.append([base + s, [m]])
for total, names in groups:
    print(f"{total / 2**20:.1f} " + " ".join(names))
PY
  local index=0
  echo "bundle: $out; one device call per group:"
  while read -r mib names; do
    index=$((index + 1))
    local group=$out/g$index
    mkdir -p "$group/models"
    cp -r "$out/bin" "$group/"
    for n in $names; do mv "$out/models/$n" "$group/models/"; done
    echo "  g$index ($mib MiB: $names)"
    echo "    carry [\"build/gpu-bundle/g$index\"], command: scripts/gpu-check.sh run build/gpu-bundle/g$index \$OUT"
  done < "$groups"
  rm -rf "$out/bin" "$out/models"
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
    local name inputs=() expects=() check bench
    name=$(basename "$dir")
    for f in "$dir"/*.npy; do
      case "$(basename "$f")" in
        expected_*) n=$(basename "$f" .npy); expects+=(--expect "${n#expected_}=$f") ;;
        *) inputs+=(--input "$(basename "$f" .npy)=$f") ;;
      esac
    done
    local precision tolerance=(--rtol 1e-4 --atol 1e-5)
    precision=$(cat "$dir/precision")
    [ "$precision" = fp32 ] || tolerance=(--rel-l2 1e-2)
    if check=$("$bundle/bin/kiln-run" "$dir/model.so" "${inputs[@]}" "${expects[@]}" "${tolerance[@]}" 2>&1); then
      check="PASS ($(grep -o 'rel L2 error [^)]*' <<<"$check" | sort -k4 -g | tail -1))"
    else
      check="FAIL: $(tail -1 <<<"$check")"
      failures=$((failures + 1))
    fi
    bench=$("$bundle/bin/kiln-run" bench "$dir/model.so" "${inputs[@]}" --repeat 100 --warmup 10 2>&1 || true)
    echo "$bench" > "$out/$name.bench.txt"
    local host device kernels torch
    host=$(grep -oP '^latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")
    device=$(grep -oP 'on-device latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")
    kernels=$(grep -oP 'GPU kernel time: \K[0-9.e+-]+' <<<"$bench" || echo "-")
    torch=$(python3 "$root/scripts/gpu_check_torch.py" "$(cat "$dir/source")" "$dir" "$precision" 2>"$out/$name.torch.txt" || echo "- -")
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
