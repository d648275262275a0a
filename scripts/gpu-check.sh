#!/usr/bin/env bash
# The real-GPU check of the CUDA backend (docs/gpu.md), in two halves:
#
#   scripts/gpu-check.sh bundle [BUILD_DIR]  here: exports the models, makes
#       onnxruntime's reference outputs, compiles CUDA artifacts for
#       sm_80,sm_90a and copies them with kiln-run into BUILD_DIR/gpu-bundle
#       (default build/), in groups g1, g2, ... that each fit one device
#       call (64 MiB carried); it prints the call for each group.
#       GPU_CHECK_MODELS="spec ..." bundles only those of the list below
#   scripts/gpu-check.sh run BUNDLE OUT     on the GPU machine, from the
#       repository root: every model carried (BUNDLE/models/*) against its
#       reference (fp32: rtol 1e-4, tf32/bf16/fp16: relative L2 error 1e-2;
#       atol 1e-5), then kiln-run bench beside torch eager and torch.compile
#       (scripts/gpu_check_torch.py); the table goes to OUT/gpu-check.md,
#       every command's output to OUT/gpu-check.log; a group with perf/
#       (benchmarks/gpu_models.py) also times issue 18's GEMM and attention
#       rows beside torch (benchmarks/gpu_peers.py); GPU_CHECK_NO_TORCH=1
#       skips torch eager and torch.compile of the checked models; the last
#       group also runs symbolic-dim artifacts at several sizes in one
#       session (scripts/gpu_check_symbolic.py)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# name[@precision]: the tensor-core variants are checked within 1e-2
# relative L2 error of onnxruntime's fp32 outputs.
# half-TYPE:KIND are export_half_models.py's native f16/bf16 models.
models=(cnn transformer bert_encoder gpt2_blocks inception_block
        attention:sdpa_causal attention:mha resnet18
        transformer@tf32 transformer@fp16 gpt2_blocks@bf16 bert_encoder@bf16
        attention:sdpa_causal@bf16 attention:mha@bf16
        half-bfloat16:sliced_matmul@bf16 half-float16:sliced_matmul@fp16
        half-bfloat16:attention@bf16 half-float16:attention@fp16)
[ -n "${GPU_CHECK_MODELS:-}" ] && read -ra models <<<"$GPU_CHECK_MODELS"

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
      half-*) local type=${entry%%:*}
        python3 "$root/test/e2e/models/export_half_models.py" "${type#half-}" "$src" "$name" >/dev/null ;;
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
  # The device machine takes 64 MiB per call, the repository's own files
  # (about 4 MiB) included: models go in groups, the largest first, each
  # with bin/ under 56 MiB.
  local groups=$out/groups.txt
  python3 - "$out" > "$groups" <<'PY'
import os, sys
out = sys.argv[1]
def size(path):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(path) for f in fs)
limit, base = 56 << 20, size(os.path.join(out, "bin"))
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
  # Issue 18's speed rows (kernels only, a few KiB each) ride with the last
  # group.
  local perf=$out/g$index/perf
  python3 "$root/benchmarks/gpu_models.py" "$perf"
  for dir in "$perf"/*/; do
    "$kiln" compile "$dir/model.onnx" -o "$dir/model.so" --target=cuda \
      --gpu-arch=sm_80,sm_90a --gpu-precision="$(cut -d' ' -f2 "$dir/spec")"
    rm "$dir/model.onnx"
  done
  echo "  speed rows in g$index/perf: $(ls "$perf" | tr '\n' ' ')"
  # Symbolic dims: artifacts compiled with no --input-shape, run at a few
  # sizes in one session (scripts/gpu_check_symbolic.py, through the C
  # API of the runtime library carried with them).
  local sym=$out/g$index/symbolic
  python3 "$root/test/e2e/models/export_symbolic.py" "$sym" >/dev/null
  for model in "$sym"/*.onnx; do
    "$kiln" compile "$model" -o "${model%.onnx}.so" --target=cuda \
      --gpu-arch=sm_80,sm_90a --dim seq=1..512
    rm "$model"
  done
  cp -L "$build/lib/libkiln_rt.so" "$out/g$index/bin/"
  echo "  symbolic-dim models in g$index/symbolic: $(ls "$sym"/*.so | xargs -n1 basename | tr '\n' ' ')"
}

run() {
  local bundle=$1 out=$2
  mkdir -p "$out"
  # Two files come back: the table and one log with every command's output
  # (the device call returns at most 8 files).
  local report=$out/gpu-check.md log=$out/gpu-check.log failures=0
  : > "$log"
  local names=() checks=() hosts=() devices=() kernels=()
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
    # A hung kernel must not eat the device call: each step is bounded.
    if check=$(timeout 120 "$bundle/bin/kiln-run" "$dir/model.so" "${inputs[@]}" "${expects[@]}" "${tolerance[@]}" 2>&1); then
      check="PASS ($(grep -o 'rel L2 error [^)]*' <<<"$check" | sort -k4 -g | tail -1))"
    else
      check="FAIL: $(tail -1 <<<"$check" | tr '|' '/')"
      failures=$((failures + 1))
    fi
    bench=$(timeout 120 "$bundle/bin/kiln-run" bench "$dir/model.so" "${inputs[@]}" --repeat 100 --warmup 10 2>&1 || true)
    printf '== %s\n%s\n%s\n' "$name" "$check" "$bench" >> "$log"
    names+=("$name") checks+=("$check")
    hosts+=("$(grep -oP '^latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")")
    devices+=("$(grep -oP 'on-device latency: median \K[0-9.e+-]+' <<<"$bench" || echo "-")")
    kernels+=("$(grep -oP 'GPU kernel time: \K[0-9.e+-]+' <<<"$bench" || echo "-")")
    echo "checked $name: $check"
  done
  # torch eager and torch.compile of every model, in one process.
  local torch_times=""
  # (GPU_CHECK_NO_TORCH=1: numerics and Kiln's times only, for a short call.)
  [ -n "${GPU_CHECK_NO_TORCH:-}" ] ||
    torch_times=$(timeout 420 python3 "$root/scripts/gpu_check_torch.py" --bundle "$bundle" 2>>"$log" || true)
  echo "$torch_times" >> "$log"
  {
    echo "# GPU check, $(date -u +%Y-%m-%d)"
    echo
    echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
    echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
    echo
    echo "| model | numerics vs onnxruntime | kiln (host I/O) ms | kiln (on device) ms | kiln GPU kernel time ms | torch eager ms | torch.compile ms |"
    echo "|---|---|---|---|---|---|---|"
    for i in "${!names[@]}"; do
      local line
      line=$(awk -v n="${names[$i]}" '$1 == n {print $2 " | " $3}' <<<"$torch_times")
      echo "| ${names[$i]} | ${checks[$i]} | ${hosts[$i]} | ${devices[$i]} | ${kernels[$i]} | ${line:-- | -} |"
    done
  } > "$report"
  # Issue 18's speed rows (benchmarks/gpu_models.py), when the group has them.
  if [ -d "$bundle/perf" ]; then
    local peers
    peers=$(timeout 120 python3 "$root/benchmarks/gpu_peers.py" "$bundle/perf" 2>>"$log" || true)
    {
      echo
      echo "| speed row | kiln GPU kernel time ms | kiln TFLOP/s | torch ms | torch TFLOP/s | kiln / torch time |"
      echo "|---|---|---|---|---|---|"
    } >> "$report"
    for dir in "$bundle"/perf/*/; do
      local name bench ms peer_ms
      name=$(basename "$dir")
      bench=$(timeout 120 "$bundle/bin/kiln-run" bench "$dir/model.so" --repeat 20 --warmup 3 2>&1 || true)
      printf '== perf %s\n%s\n' "$name" "$bench" >> "$log"
      ms=$(grep -oP 'GPU kernel time: \K[0-9.e+-]+' <<<"$bench" || echo "-")
      read -r _ peer_ms peer_tflops _ < <(awk -v n="$name" '$1 == n' <<<"$peers") || true
      python3 - "$name" "$ms" "${peer_ms:--}" "${peer_tflops:--}" >> "$report" <<'PY'
import sys
name, ms, peer_ms, peer_tflops = sys.argv[1:]
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
k, p, pt = num(ms), num(peer_ms), num(peer_tflops)
tflops = f"{pt * p / k:.1f}" if k and p and pt else "-"
ratio = f"{k / p:.2f}" if k and p else "-"
print(f"| {name} | {ms} | {tflops} | {peer_ms} | {peer_tflops} | {ratio} |")
PY
    done
  fi
  if [ -d "$bundle/symbolic" ]; then
    local sym
    sym=$(timeout 120 python3 "$root/scripts/gpu_check_symbolic.py" \
      "$bundle/symbolic" "$bundle/bin/libkiln_rt.so" 2>&1) ||
      failures=$((failures + 1))
    printf '== symbolic\n%s\n' "$sym" >> "$log"
    { echo; echo "symbolic dims (one session, sizes in turn, graphs captured and replayed): $(tail -1 <<<"$sym")"; } >> "$report"
  fi
  cat "$report"
  [ "$failures" = 0 ]
}

case ${1:-} in
  bundle) shift; bundle "$@" ;;
  run) shift; [ $# = 2 ] || { echo "usage: $0 run BUNDLE OUT"; exit 2; }; run "$@" ;;
  *) echo "usage: $0 bundle [BUILD_DIR] | run BUNDLE OUT"; exit 2 ;;
esac
