#!/usr/bin/env bash
# Issue 18's whole-model rows on a real GPU (docs/gpu-performance.md), in
# two halves like scripts/gpu-check.sh:
#
#   benchmarks/gpu_bench.sh bundle [BUILD_DIR]   here (several minutes): exports
#       the rows of benchmarks/gpu_model_rows.py, compiles each for
#       sm_80,sm_90a at its precision (the compile time on this machine is
#       recorded: issue 18 asks <= 30 s for BERT-base), and stores the
#       artifacts xz-compressed with kiln-run in BUILD_DIR/gpu-bench
#   benchmarks/gpu_bench.sh run BUNDLE OUT       on the GPU machine, from the
#       repository root: each artifact decompressed, timed by kiln-run bench
#       (random inputs), beside torch eager and torch.compile of the same
#       module (benchmarks/gpu_peers.py, one process per row); the table
#       goes to OUT/gpu-bench.md, every command's output to OUT/gpu-bench.log
#
# Device call: run(carry=["build/gpu-bench"],
#                  command="benchmarks/gpu_bench.sh run build/gpu-bench $OUT")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

bundle() {
  local build=${1:-$root/build}
  local out=$build/gpu-bench kiln=$build/bin/kiln
  [ -x "$kiln" ] || { echo "error: $kiln not built (make build)"; exit 1; }
  rm -rf "$out" && mkdir -p "$out/bin" "$out/models"
  cp "$build/bin/kiln-run" "$out/bin/"
  local work
  work=$(mktemp -d)
  python3 "$root/benchmarks/gpu_model_rows.py" "$work"
  for dir in "$work"/*/; do
    local name precision start seconds
    name=$(basename "$dir")
    precision=$(cut -d' ' -f2 "$dir/spec")
    mkdir -p "$out/models/$name"
    start=$(date +%s%N)
    "$kiln" compile "$dir/model.onnx" -o "$dir/model.so" --target=cuda \
      --gpu-arch=sm_80,sm_90a --gpu-precision="$precision" \
      --report="$out/models/$name/report.json"
    seconds=$((($(date +%s%N) - start) / 1000000))
    xz -T2 -6 -c "$dir/model.so" > "$out/models/$name/model.so.xz"
    cp "$dir/spec" "$out/models/$name/"
    printf '%d.%d\n' $((seconds / 1000)) $((seconds % 1000 / 100)) \
      > "$out/models/$name/compile_seconds"
    echo "bundled $name: compiled in $(cat "$out/models/$name/compile_seconds") s, $(du -h "$dir/model.so" | cut -f1) -> $(du -h "$out/models/$name/model.so.xz" | cut -f1)"
    rm -rf "$dir"
  done
  rm -rf "$work"
  echo "bundle: $out ($(du -sh "$out" | cut -f1)); on the device:"
  echo "  carry [\"build/gpu-bench\"], command: benchmarks/gpu_bench.sh run build/gpu-bench \$OUT"
}

run() {
  local bundle=$1 out=$2
  mkdir -p "$out"
  local report=$out/gpu-bench.md log=$out/gpu-bench.log tmp
  tmp=$(mktemp -d)
  : > "$log"
  {
    echo "# GPU model rows, $(date -u +%Y-%m-%d)"
    echo
    echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
    echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
    echo
    echo "| row | precision | compile s (2-core host) | kiln on device ms | kiln GPU kernel time ms | torch eager ms | torch.compile ms (mode) | kiln / torch.compile |"
    echo "|---|---|---|---|---|---|---|---|"
  } > "$report"
  for dir in "$bundle"/models/*/; do
    local name precision mode so bench device kernels peer
    name=$(basename "$dir")
    precision=$(cut -d' ' -f2 "$dir/spec")
    mode=$(cut -d' ' -f3 "$dir/spec")
    so=$tmp/$name.so
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$dir/model.so.xz" "$so"
    bench=$(timeout 180 "$bundle/bin/kiln-run" bench "$so" --repeat 20 --warmup 3 2>&1 || true)
    printf '== %s\n%s\n' "$name" "$bench" >> "$log"
    rm -f "$so"
    device=$(grep -oP 'on-device latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")
    kernels=$(grep -oP 'GPU kernel time: \K[0-9.e+-]+' <<<"$bench" || echo "-")
    peer=$(timeout 240 python3 "$root/benchmarks/gpu_peers.py" "$bundle/models" "$name" 2>>"$log" || true)
    echo "$peer" >> "$log"
    local eager compiled
    read -r _ eager compiled _ <<<"${peer:-x - -}"
    python3 - "$name" "$precision" "$(cat "$dir/compile_seconds")" "$device" "$kernels" "${eager:--}" "${compiled:--}" "$mode" >> "$report" <<'PY'
import sys
name, precision, seconds, device, kernels, eager, compiled, mode = sys.argv[1:]
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
k, c = num(device), num(compiled)
ratio = f"{k / c:.2f}" if k and c else "-"
print(f"| {name} | {precision} | {seconds} | {device} | {kernels} | {eager} | {compiled} ({mode}) | {ratio} |")
PY
    echo "timed $name"
  done
  rm -rf "$tmp"
  cat "$report"
}

case ${1:-} in
  bundle) shift; bundle "$@" ;;
  run) shift; [ $# = 2 ] || { echo "usage: $0 run BUNDLE OUT"; exit 2; }; run "$@" ;;
  *) echo "usage: $0 bundle [BUILD_DIR] | run BUNDLE OUT"; exit 2 ;;
esac
