#!/usr/bin/env bash
# `make demo`: compiles each bundled example model, runs it on its sample
# input and prints the max abs error against onnxruntime's output.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
kiln="$build/bin/kiln"
out="$build/demo"
mkdir -p "$out"

for example in cnn transformer; do
  dir="$here/$example"
  echo "== $example: $dir/model.onnx"
  "$kiln" inspect "$dir/model.onnx" | sed -n '/^inputs:/,/^parameters:/p'
  "$kiln" compile "$dir/model.onnx" -o "$out/$example.so" -v
  args=()
  for f in "$dir"/*.npy; do
    name=$(basename "$f" .npy)
    case "$name" in
      expected_*) args+=(--expect "${name#expected_}=$f") ;;
      *) args+=(--input "$name=$f") ;;
    esac
  done
  "$kiln" run "$out/$example.so" "${args[@]}" --rtol 1e-4 --atol 1e-5 \
    --output-dir "$out/$example-outputs"
  echo
done
echo "demo: all examples match onnxruntime"
